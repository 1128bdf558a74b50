/* jp_time: the clocks the protocol needs: ISO 8601 UTC dates for message
 * headers and a monotonic millisecond clock for deadlines. Any thread. */
#ifndef JP_TIME_H
#define JP_TIME_H

#include <stdint.h>

#define JP_DATE_LEN 27          /* 2026-11-22T09:30:00.123456Z */

/* Writes the current UTC time as 2026-11-22T09:30:00.123456Z and a NUL. */
void jp_time_iso8601 (char out[JP_DATE_LEN + 1]);

/* Milliseconds from CLOCK_MONOTONIC. */
int64_t jp_time_now_ms (void);

#endif
