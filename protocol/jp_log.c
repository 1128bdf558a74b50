/* jp_log: timestamped, levelled log lines on stderr (see jp_log.h).
 * Threads: any. */
#include "jp_log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_int s_level = JP_LOG_INFO;
static const char *const s_names[] = {"debug", "info", "warn", "error", "info"};

void
jp_log_set_level (jp_log_level_t level)
{
    atomic_store (&s_level, (int) level);
}

int
jp_log_level_parse (const char *name)
{
    for (int i = 0; i < 4; i++)
        if (name && strcmp (name, s_names[i]) == 0)
            return i;
    return -1;
}

bool
jp_log_enabled (jp_log_level_t level)
{
    return (int) level >= atomic_load (&s_level);
}

size_t
jp_log_escape (char *out, size_t at, size_t cap, const char *text, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char) text[i];
        bool plain = c >= 0x20 && c != 0x7f;
        if (at + (plain ? 1 : 4) > cap)
            break;
        if (plain)
            out[at++] = (char) c;
        else {
            out[at++] = '\\';
            out[at++] = 'x';
            out[at++] = hex[c >> 4];
            out[at++] = hex[c & 15];
        }
    }
    return at;
}

void
jp_log (jp_log_level_t level, const char *fmt, ...)
{
    if (!jp_log_enabled (level))
        return;
    char line[8192];
    struct timespec now;
    clock_gettime (CLOCK_REALTIME, &now);
    struct tm tm;
    gmtime_r (&now.tv_sec, &tm);
    size_t n = strftime (line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
    int head = snprintf (line + n, sizeof line - n, ".%03ldZ %s codebox: ",
                         now.tv_nsec / 1000000, s_names[level]);
    n += head > 0 ? (size_t) head : 0;
    char text[sizeof line];
    va_list ap;
    va_start (ap, fmt);
    int body = vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    if (body > 0)
        n = jp_log_escape (line, n, sizeof line - 1, text,
                           (size_t) body < sizeof text ? (size_t) body : sizeof text - 1);
    line[n++] = '\n';
    /* one write per line; a short write to a pipe is not retried */
    ssize_t w = write (STDERR_FILENO, line, n);
    (void) w;
}
