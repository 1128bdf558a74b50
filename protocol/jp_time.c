/* jp_time: ISO 8601 dates and a monotonic clock. Any thread. */
#include "jp_time.h"

#include <stdio.h>
#include <time.h>

void
jp_time_iso8601 (char out[JP_DATE_LEN + 1])
{
    struct timespec ts;
    struct tm tm;
    clock_gettime (CLOCK_REALTIME, &ts);
    gmtime_r (&ts.tv_sec, &tm);
    size_t n = strftime (out, JP_DATE_LEN + 1, "%Y-%m-%dT%H:%M:%S", &tm);
    /* tv_nsec is below 10^9, so the microseconds take exactly six digits */
    snprintf (out + n, JP_DATE_LEN + 1 - n, ".%06uZ", (unsigned) (ts.tv_nsec / 1000) % 1000000u);
}

int64_t
jp_time_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
