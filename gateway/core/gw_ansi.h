/* gw_ansi: removing ANSI escape sequences (the colours of IPython's
 * tracebacks) from text handed to clients. Pure; any thread. */
#ifndef GW_ANSI_H
#define GW_ANSI_H

#include <stddef.h>

#include <jansson.h>

/* Removes every CSI sequence (ESC '[' parameters, final byte '@'..'~')
 * and any other two-byte ESC sequence from the NUL-terminated s, in place.
 * An unfinished sequence at the end is dropped. Returns the new length. */
size_t gw_ansi_strip (char *s);

/* A new JSON string: text without escape sequences (NULL when out of
 * memory). */
json_t *gw_ansi_strip_json (const char *text);

#endif
