/* jp_json: compact JSON text of a jansson value, byte for byte what
 * json_dumps (value, JSON_COMPACT | JSON_ENCODE_ANY) writes, about ten
 * times faster on long strings (jansson decodes every character of a
 * string as UTF-8 to write it; jansson's strings are valid UTF-8 already,
 * so only '"', '\\' and control characters need a look here). Kernels send
 * plots and tables of megabytes, and every answer, event and websocket
 * message of the gateway is written on the loop thread: 50 MB took
 * jansson 1.5 s there.
 *
 * Pure code, any thread. */
#ifndef JP_JSON_H
#define JP_JSON_H

#include <stddef.h>

#include <jansson.h>

/* The text (malloc'd, NUL-terminated; its length in *len_p when len_p is
 * not NULL), or NULL when out of memory or nested deeper than
 * JP_JSON_DEPTH_MAX. */
#define JP_JSON_DEPTH_MAX 2048
char *jp_json_dump (const json_t *value, size_t *len_p);

/* The length jp_json_dump's text would have, without writing it;
 * (size_t) -1 when nested too deep. */
size_t jp_json_size (const json_t *value);

/* About how many bytes of memory value holds as jansson keeps it: each
 * value's struct, each array slot and object entry, the text of strings
 * and keys. A million zeros are 2 MB of text but about 56 MB here: what
 * a budget of memory must count. (size_t) -1 when nested too deep. */
size_t jp_json_weight (const json_t *value);

/* A JSON object whose values are all plain strings (no escapes), as a
 * Jupyter header and parent_header are, parsed without jansson's lexer
 * (which reads a byte at a time through a stream and a string buffer:
 * about half of decoding a message's header): a new object equal to what
 * json_loadb (text, len, 0, NULL) gives. NULL when the text is anything
 * else (a number, an escape, nesting, bad UTF-8, not JSON) or out of
 * memory: then parse it with jansson. */
json_t *jp_json_load_flat (const char *text, size_t len);

#endif
