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
    va_list ap;
    va_start (ap, fmt);
    int body = vsnprintf (line + n, sizeof line - n - 1, fmt, ap);
    va_end (ap);
    if (body > 0)
        n += (size_t) body < sizeof line - n - 1 ? (size_t) body : sizeof line - n - 2;
    line[n++] = '\n';
    /* one write per line; a short write to a pipe is not retried */
    ssize_t w = write (STDERR_FILENO, line, n);
    (void) w;
}
