/* jp_log: timestamped, levelled log lines on stderr (see jp_log.h). The
 * caller's format is walked here, one conversion at a time, so that a
 * field's string value ("key=%s") is quoted in this one place, whichever
 * file logs it; every other conversion is printf's own.
 * Threads: any. */
#include "jp_log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
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

/* True when a field's value must be quoted to stay one field. */
static bool
s_needs_quotes (const char *value, size_t len)
{
    if (len == 0)
        return true;
    for (size_t i = 0; i < len; i++)
        if (value[i] == ' ' || value[i] == '=' || value[i] == '"')
            return true;
    return false;
}

size_t
jp_log_quote (char *out, size_t at, size_t cap, const char *value, size_t len)
{
    if (!s_needs_quotes (value, len)) {
        size_t n = cap > at ? cap - at : 0;
        n = len < n ? len : n;
        memcpy (out + at, value, n);
        return at + n;
    }
    if (at + 2 > cap)
        return at;      /* not even "": nothing, never half a field */
    out[at++] = '"';
    for (size_t i = 0; i < len; i++) {
        bool escaped = value[i] == '"' || value[i] == '\\';
        if (at + (escaped ? 2 : 1) + 1 > cap)
            break;
        if (escaped)
            out[at++] = '\\';
        out[at++] = value[i];
    }
    out[at++] = '"';
    return at;
}

/* Formats one conversion (spec, stars already replaced by their numbers)
 * of the type its conversion character and length say (h and hh read an
 * int, as the argument was promoted to one), taking its
 * argument from *ap, into out + at before cap. field: a string that is a
 * field's value, quoted. Returns the new end, or SIZE_MAX for a
 * conversion this does not know (the caller stops there). */
static size_t
s_conversion (char *out, size_t at, size_t cap, const char *spec, char conv,
              const char *length, long precision, bool field, va_list *ap)
{
    size_t room = cap - at;
    int n = 0;
    bool l = strcmp (length, "l") == 0, ll = strcmp (length, "ll") == 0;
    bool z = strcmp (length, "z") == 0, j = strcmp (length, "j") == 0;
    bool t = strcmp (length, "t") == 0;
    switch (conv) {
    case 'd':
    case 'i':
        n = ll ? snprintf (out + at, room, spec, va_arg (*ap, long long))
            : l ? snprintf (out + at, room, spec, va_arg (*ap, long))
            : z ? snprintf (out + at, room, spec, va_arg (*ap, ssize_t))
            : j ? snprintf (out + at, room, spec, va_arg (*ap, intmax_t))
            : t ? snprintf (out + at, room, spec, va_arg (*ap, ptrdiff_t))
                : snprintf (out + at, room, spec, va_arg (*ap, int));
        break;
    case 'u':
    case 'o':
    case 'x':
    case 'X':
        n = ll ? snprintf (out + at, room, spec, va_arg (*ap, unsigned long long))
            : l ? snprintf (out + at, room, spec, va_arg (*ap, unsigned long))
            : z ? snprintf (out + at, room, spec, va_arg (*ap, size_t))
            : j ? snprintf (out + at, room, spec, va_arg (*ap, uintmax_t))
            : t ? snprintf (out + at, room, spec, va_arg (*ap, ptrdiff_t))
                : snprintf (out + at, room, spec, va_arg (*ap, unsigned));
        break;
    case 'c':
        if (length[0])
            return SIZE_MAX;    /* wide characters: not used */
        n = snprintf (out + at, room, spec, va_arg (*ap, int));
        break;
    case 'p':
        n = snprintf (out + at, room, spec, va_arg (*ap, void *));
        break;
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
    case 'a':
    case 'A':
        n = strcmp (length, "L") == 0 ? snprintf (out + at, room, spec, va_arg (*ap, long double))
                                      : snprintf (out + at, room, spec, va_arg (*ap, double));
        break;
    case 's': {
        if (length[0])
            return SIZE_MAX;    /* wide strings: not used */
        const char *value = va_arg (*ap, const char *);
        if (!value)
            value = "(null)";
        if (field)
            return jp_log_quote (out, at, cap - 1, value,
                                 precision >= 0 ? strnlen (value, (size_t) precision)
                                                : strlen (value));
        n = snprintf (out + at, room, spec, value);
        break;
    }
    default:
        return SIZE_MAX;
    }
    size_t wrote = n > 0 ? (size_t) n : 0;
    return wrote < room ? at + wrote : cap - 1;
}

/* printf into out (cap bytes, NUL-terminated) with field values quoted
 * (see jp_log). Returns the length written. */
static size_t
s_format (char *out, size_t cap, const char *fmt, va_list *ap)
{
    size_t at = 0;
    const char *p = fmt;
    while (*p && at + 1 < cap) {
        if (*p != '%' || p[1] == '%') {
            out[at++] = *p;
            p += *p == '%' ? 2 : 1;
            continue;
        }
        /* %[flags][width][.precision][length]conversion, each star
           replaced by its argument */
        const char *start = p++;
        char spec[48] = "%";
        size_t k = 1;
        while (*p && strchr ("-+ #0", *p) && k < 8)
            spec[k++] = *p++;
        if (*p == '*') {
            k += (size_t) snprintf (spec + k, sizeof spec - k, "%d", va_arg (*ap, int));
            p++;
        } else
            while (*p >= '0' && *p <= '9' && k < 16)
                spec[k++] = *p++;
        long precision = -1;
        if (*p == '.') {
            p++;
            if (*p == '*') {
                precision = va_arg (*ap, int);
                p++;
            } else {
                precision = 0;
                while (*p >= '0' && *p <= '9' && precision < 1000000)
                    precision = precision * 10 + (*p++ - '0');
            }
            if (precision >= 0)
                k += (size_t) snprintf (spec + k, sizeof spec - k, ".%ld", precision);
        }
        char length[3] = "";
        size_t m = 0;
        while (*p && strchr ("hlzjtL", *p) && m < 2)
            length[m++] = *p++;
        length[m] = '\0';
        k += (size_t) snprintf (spec + k, sizeof spec - k, "%s", length);
        char conv = *p ? *p++ : '\0';
        snprintf (spec + k, sizeof spec - k, "%c", conv);
        bool field = conv == 's' && start > fmt && start[-1] == '=';
        size_t end = s_conversion (out, at, cap, spec, conv, length, precision, field, ap);
        if (end == SIZE_MAX) {
            /* unknown: the rest as it is */
            size_t n = strnlen (start, cap - 1 - at);
            memcpy (out + at, start, n);
            at += n;
            break;
        }
        at = end;
    }
    out[at] = '\0';
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
    size_t body = s_format (text, sizeof text, fmt, &ap);
    va_end (ap);
    n = jp_log_escape (line, n, sizeof line - 1, text, body);
    line[n++] = '\n';
    /* one write per line; a short write to a pipe is not retried */
    ssize_t w = write (STDERR_FILENO, line, n);
    (void) w;
}
