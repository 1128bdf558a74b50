/* jp_log: one log line per event on stderr, each opened by an RFC 3339 UTC
 * timestamp with milliseconds and the level, then "codebox: " and the
 * caller's text ("key=value" fields by convention, values quoted where
 * they need it: key="a b"). Lines below the level
 * set with jp_log_set_level are dropped. Keys, tokens, code and connection
 * strings are never passed here.
 *
 * Threads: any; each line is written with one write(2) so lines from
 * several threads never interleave. */
#ifndef JP_LOG_H
#define JP_LOG_H

#include <stdbool.h>
#include <stddef.h>

/* JP_LOG_ALWAYS is written at every level (banners), shown as "info". */
typedef enum { JP_LOG_DEBUG, JP_LOG_INFO, JP_LOG_WARN, JP_LOG_ERROR, JP_LOG_ALWAYS } jp_log_level_t;

/* Sets the lowest level written (default JP_LOG_INFO). */
void jp_log_set_level (jp_log_level_t level);

/* Parses "debug", "info", "warn" or "error"; returns -1 for anything else. */
int jp_log_level_parse (const char *name);

/* True when a line at this level would be written. */
bool jp_log_enabled (jp_log_level_t level);

/* Writes one line (a newline is added; longer than 8 KiB is cut). A
 * string that is a field's value (a %s right after '=' in fmt, as in
 * "path=%s") goes through jp_log_quote, so a value with a space or '='
 * (a request's path, a user agent, a tool's name...) stays one field and
 * cannot forge another. Control characters in the text (a newline, an
 * escape sequence, DEL) are then written as \xHH, so no text a client
 * sends can start a line of its own or drive a terminal. */
void jp_log (jp_log_level_t level, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* Copies len bytes of text to out + at, each control character (below
 * 0x20, and 0x7f) as \xHH, stopping before cap; returns the new end. */
size_t jp_log_escape (char *out, size_t at, size_t cap, const char *text, size_t len);

/* Copies the len bytes of value to out + at as a field's value: as they
 * are, or, when value is empty or holds a space, '=' or '"', between
 * double quotes with '"' and '\' as \" and \\. Stops before cap and
 * keeps the closing quote (a cut value stays one field); returns the new
 * end. Control characters pass (jp_log escapes the whole line). Pure: for
 * callers that put fields together before they are logged. */
size_t jp_log_quote (char *out, size_t at, size_t cap, const char *value, size_t len);

#define jp_log_debug(...) jp_log (JP_LOG_DEBUG, __VA_ARGS__)
#define jp_log_info(...) jp_log (JP_LOG_INFO, __VA_ARGS__)
#define jp_log_warn(...) jp_log (JP_LOG_WARN, __VA_ARGS__)
#define jp_log_error(...) jp_log (JP_LOG_ERROR, __VA_ARGS__)

#endif
