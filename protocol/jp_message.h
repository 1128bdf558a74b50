/* jp_message: one Jupyter wire-protocol message (protocol version 5.3), its
 * construction, and its encoding to and decoding from ZeroMQ frames:
 *
 *   [routing ids...] "<IDS|MSG>" signature header parent_header metadata
 *   content [buffers...]
 *
 * Decoding checks the HMAC over the exact received bytes before it parses
 * any JSON, and rejects missing delimiters, truncated messages, bad
 * signatures and frames that are not JSON objects with a distinct error.
 * Pure code, no threads; a message belongs to one thread at a time. */
#ifndef JP_MESSAGE_H
#define JP_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "jp_sign.h"

#define JP_PROTOCOL_VERSION "5.3"
#define JP_DELIMITER "<IDS|MSG>"

/* Errors of jp_msg_decode, as negative numbers. */
typedef enum {
    JP_ERR_NOMEM = -1,
    JP_ERR_NO_DELIMITER = -2,   /* no "<IDS|MSG>" frame */
    JP_ERR_TRUNCATED = -3,      /* fewer than five frames after the delimiter */
    JP_ERR_SIGNATURE = -4,      /* signature missing, of the wrong length or wrong */
    JP_ERR_JSON = -5,           /* a JSON frame is not a valid JSON object */
    JP_ERR_HEADER = -6,         /* header lacks msg_id or msg_type strings */
    JP_ERR_CRYPTO = -7,         /* OpenSSL failed */
    JP_ERR_TOO_MANY_VALUES = -8,    /* a frame holds more than JP_VALUES_MAX JSON values */
} jp_error_t;

/* The most JSON values one frame of a message may hold once parsed. A
 * value costs jansson about 50 bytes of memory however short its text
 * ("0,"), so 60 MB of [0, 0, ...] would take 1.5 GB: a display, result or
 * display update over the bound is kept as a note of what it was (its
 * content is replaced by one text/plain that says so); any other message
 * over it is refused with JP_ERR_TOO_MANY_VALUES. */
#define JP_VALUES_MAX (1u << 20)

/* One owned frame. */
typedef struct {
    uint8_t *data;
    size_t size;
} jp_frame_t;

/* A message. Every field is owned by the message. header, parent_header,
 * metadata and content are always JSON objects. */
typedef struct {
    jp_frame_t *ids;
    size_t n_ids;
    json_t *header;
    json_t *parent_header;
    json_t *metadata;
    json_t *content;
    jp_frame_t *buffers;
    size_t n_buffers;
} jp_msg_t;

/* Returns a new message of msg_type with a full header (fresh msg_id,
 * session, username, ISO 8601 date, version 5.3) and empty parent_header,
 * metadata and content; NULL when out of memory. */
jp_msg_t *jp_msg_new (const char *msg_type, const char *session, const char *username);

/* Frees the message and nulls *self_p. Safe on NULL. */
void jp_msg_destroy (jp_msg_t **self_p);

/* Replaces content with content (stolen). */
void jp_msg_set_content (jp_msg_t *self, json_t *content);

/* Copies parent's header into self's parent_header. */
void jp_msg_set_parent (jp_msg_t *self, const jp_msg_t *parent);

/* Adds one routing id (copied). Returns 0 or JP_ERR_NOMEM. */
int jp_msg_add_id (jp_msg_t *self, const void *data, size_t size);

/* Borrowed strings from the header; "" when absent. */
const char *jp_msg_type (const jp_msg_t *self);
const char *jp_msg_id (const jp_msg_t *self);
/* The msg_id of parent_header, "" when absent. */
const char *jp_msg_parent_id (const jp_msg_t *self);
/* True for a status message whose execution_state is "idle" (the kernel
 * is done with the request its parent header names). */
bool jp_msg_is_idle (const jp_msg_t *self);

/* Encodes self into a new array of frames (*frames_p, *n_p), signed with
 * key. The caller frees them with jp_frames_free. Returns 0 or a jp_error_t. */
int jp_msg_encode (const jp_msg_t *self, const uint8_t *key, size_t key_len,
                   jp_frame_t **frames_p, size_t *n_p);

/* Decodes n frames (borrowed) into a new message in *msg_p, verifying the
 * signature with key. Returns 0 or a jp_error_t; *msg_p stays NULL on error. */
int jp_msg_decode (const jp_part_t *frames, size_t n, const uint8_t *key,
                   size_t key_len, jp_msg_t **msg_p);

/* The parent_header a connection decoded last: its bytes and its value.
 * Every message a kernel sends for one request carries the same parent
 * bytes, so the next ones take the value (shared: read it, never change
 * it; jp_msg_set_parent replaces, not edits) instead of parsing it again.
 * Owned by one thread. */
typedef struct {
    uint8_t *raw;
    size_t len;
    json_t *value;
} jp_msg_memo_t;

#define JP_MSG_MEMO_MAX 4096    /* a longer parent_header is parsed each time */

/* jp_msg_decode with a memo of the parent_header (NULL: none). */
int jp_msg_decode_memo (const jp_part_t *frames, size_t n, const uint8_t *key,
                        size_t key_len, jp_msg_memo_t *memo, jp_msg_t **msg_p);

/* Frees what the memo holds. */
void jp_msg_memo_release (jp_msg_memo_t *memo);

/* Frees an array of n frames. Safe on NULL. */
void jp_frames_free (jp_frame_t *frames, size_t n);

/* A short English text for a jp_error_t. */
const char *jp_strerror (int code);

#endif
