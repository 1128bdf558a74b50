/* jp_message: build, encode, decode and verify Jupyter messages.
 * Pure code, no threads. Frames are plain (data, size) pairs, not
 * zframe_t/zmsg_t: decoding reads borrowed views of the received
 * zmq_msg_t parts (no copy, no heap frame each), and jp_channels keeps
 * the socket side (see there for the measurement). */
#include "jp_message.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "jp_json.h"
#include "jp_random.h"
#include "jp_time.h"
#include "jp_utf8.h"

jp_msg_t *
jp_msg_new (const char *msg_type, const char *session, const char *username)
{
    jp_msg_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    char msg_id[JP_UUID_LEN + 1], date[JP_DATE_LEN + 1];
    if (jp_random_uuid (msg_id)) {
        free (self);
        return NULL;
    }
    jp_time_iso8601 (date);
    self->header = json_pack ("{s:s, s:s, s:s, s:s, s:s, s:s}", "msg_id", msg_id,
                              "session", session ? session : "", "username",
                              username ? username : "codebox", "date", date,
                              "msg_type", msg_type, "version", JP_PROTOCOL_VERSION);
    self->parent_header = json_object ();
    self->metadata = json_object ();
    self->content = json_object ();
    if (!self->header || !self->parent_header || !self->metadata || !self->content)
        jp_msg_destroy (&self);
    return self;
}

void
jp_frames_free (jp_frame_t *frames, size_t n)
{
    if (!frames)
        return;
    for (size_t i = 0; i < n; i++)
        free (frames[i].data);
    free (frames);
}

void
jp_msg_destroy (jp_msg_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    jp_msg_t *self = *self_p;
    jp_frames_free (self->ids, self->n_ids);
    jp_frames_free (self->buffers, self->n_buffers);
    json_decref (self->header);
    json_decref (self->parent_header);
    json_decref (self->metadata);
    json_decref (self->content);
    free (self);
    *self_p = NULL;
}

void
jp_msg_set_content (jp_msg_t *self, json_t *content)
{
    json_decref (self->content);
    self->content = content ? content : json_object ();
}

void
jp_msg_set_parent (jp_msg_t *self, const jp_msg_t *parent)
{
    json_t *copy = json_deep_copy (parent->header);
    if (copy) {
        json_decref (self->parent_header);
        self->parent_header = copy;
    }
}

/* Copies size bytes into a new frame. Returns 0 or JP_ERR_NOMEM. */
static int
s_frame_set (jp_frame_t *frame, const void *data, size_t size)
{
    frame->data = malloc (size ? size : 1);
    if (!frame->data)
        return JP_ERR_NOMEM;
    if (size)
        memcpy (frame->data, data, size);
    frame->size = size;
    return 0;
}

int
jp_msg_add_id (jp_msg_t *self, const void *data, size_t size)
{
    jp_frame_t *ids = realloc (self->ids, (self->n_ids + 1) * sizeof *ids);
    if (!ids)
        return JP_ERR_NOMEM;
    self->ids = ids;
    if (s_frame_set (&ids[self->n_ids], data, size))
        return JP_ERR_NOMEM;
    self->n_ids++;
    return 0;
}

/* Borrowed string member key of object, or "". */
static const char *
s_str (const json_t *object, const char *key)
{
    const char *s = json_string_value (json_object_get (object, key));
    return s ? s : "";
}

const char *
jp_msg_type (const jp_msg_t *self)
{
    return s_str (self->header, "msg_type");
}

const char *
jp_msg_id (const jp_msg_t *self)
{
    return s_str (self->header, "msg_id");
}

const char *
jp_msg_parent_id (const jp_msg_t *self)
{
    return s_str (self->parent_header, "msg_id");
}

bool
jp_msg_is_idle (const jp_msg_t *self)
{
    const char *state = json_string_value (json_object_get (self->content, "execution_state"));
    return strcmp (jp_msg_type (self), "status") == 0 && state && strcmp (state, "idle") == 0;
}

int
jp_msg_encode (const jp_msg_t *self, const uint8_t *key, size_t key_len,
               jp_frame_t **frames_p, size_t *n_p)
{
    size_t n = self->n_ids + 6 + self->n_buffers;
    jp_frame_t *frames = calloc (n, sizeof *frames);
    if (!frames)
        return JP_ERR_NOMEM;
    size_t i = 0;
    int rc = 0;
    for (size_t k = 0; k < self->n_ids && !rc; k++, i++)
        rc = s_frame_set (&frames[i], self->ids[k].data, self->ids[k].size);
    if (!rc)
        rc = s_frame_set (&frames[i++], JP_DELIMITER, strlen (JP_DELIMITER));
    size_t sig_at = i++;
    const json_t *parts[4] = {self->header, self->parent_header, self->metadata,
                              self->content};
    jp_part_t signed_parts[4];
    for (int k = 0; k < 4 && !rc; k++, i++) {
        char *text = jp_json_dump (parts[k], NULL);
        if (!text) {
            rc = JP_ERR_NOMEM;
            break;
        }
        frames[i].data = (uint8_t *) text;
        frames[i].size = strlen (text);
        signed_parts[k] = (jp_part_t) {frames[i].data, frames[i].size};
    }
    for (size_t k = 0; k < self->n_buffers && !rc; k++, i++)
        rc = s_frame_set (&frames[i], self->buffers[k].data, self->buffers[k].size);
    char sig[JP_SIGNATURE_HEX_LEN + 1];
    if (!rc && jp_sign (key, key_len, signed_parts, sig))
        rc = JP_ERR_CRYPTO;
    if (!rc)
        rc = s_frame_set (&frames[sig_at], sig, strlen (sig));
    if (rc) {
        jp_frames_free (frames, n);
        return rc;
    }
    *frames_p = frames;
    *n_p = n;
    return 0;
}

/* The 16-bit value of the 4 hex digits at p, or -1. */
static long
s_hex4 (const uint8_t *p)
{
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int c = p[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* A copy of JSON text with invalid UTF-8 bytes and lone surrogate escapes
 * (\udcff, which Python writes for undecodable bytes) replaced by U+FFFD,
 * as Jupyter's own clients do. New buffer of *out_len bytes, or NULL. */
static uint8_t *
s_repair_text (const uint8_t *in, size_t n, size_t *out_len)
{
    uint8_t *out = malloc (n * 3 + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        if (in[i] == '\\' && i + 1 < n && in[i + 1] == 'u' && i + 6 <= n) {
            long hi = s_hex4 (in + i + 2);
            bool pair = hi >= 0xD800 && hi <= 0xDBFF && i + 12 <= n && in[i + 6] == '\\'
                        && in[i + 7] == 'u' && s_hex4 (in + i + 8) >= 0xDC00
                        && s_hex4 (in + i + 8) <= 0xDFFF;
            size_t keep = pair ? 12 : 6;
            if (hi >= 0xD800 && hi <= 0xDFFF && !pair) {
                memcpy (out + o, "\\ufffd", 6);
                o += 6;
            } else {
                memcpy (out + o, in + i, keep);
                o += keep;
            }
            i += keep;
            continue;
        }
        if (in[i] == '\\' && i + 1 < n) {     /* any other escape: both bytes */
            out[o++] = in[i++];
            out[o++] = in[i++];
            continue;
        }
        size_t len = jp_utf8_char (in + i, n - i, NULL);
        if (len) {
            memcpy (out + o, in + i, len);
            o += len;
            i += len;
        } else {
            memcpy (out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
        }
    }
    *out_len = o;
    return out;
}

/* A header or parent_header: a flat object of plain strings, read
 * without jansson's lexer when it is one (jp_json_load_flat), else as any
 * other frame. */
static json_t *s_parse_object (const jp_part_t *frame);

static json_t *
s_parse_header (const jp_part_t *frame)
{
    json_t *flat = jp_json_load_flat (frame->data, frame->size);
    return flat ? flat : s_parse_object (frame);
}

/* Parses one frame as a JSON object, repairing invalid UTF-8 and lone
 * surrogates when the strict parse fails. Returns a new reference or
 * NULL. */
static json_t *
s_parse_object (const jp_part_t *frame)
{
    if (frame->size == 2 && memcmp (frame->data, "{}", 2) == 0)
        return json_object ();      /* most metadata: no parser to set up */
    json_t *value = json_loadb (frame->data, frame->size, JSON_ALLOW_NUL, NULL);
    if (!value) {
        size_t len;
        uint8_t *repaired = s_repair_text (frame->data, frame->size, &len);
        if (repaired)
            value = json_loadb ((const char *) repaired, len, JSON_ALLOW_NUL, NULL);
        free (repaired);
    }
    if (value && !json_is_object (value)) {
        json_decref (value);
        return NULL;
    }
    return value;
}

/* Copies n borrowed parts into a new frame array. Returns 0 or JP_ERR_NOMEM. */
static int
s_copy_frames (const jp_part_t *parts, size_t n, jp_frame_t **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    if (n == 0)
        return 0;
    jp_frame_t *frames = calloc (n, sizeof *frames);
    if (!frames)
        return JP_ERR_NOMEM;
    for (size_t i = 0; i < n; i++)
        if (s_frame_set (&frames[i], parts[i].data, parts[i].size)) {
            jp_frames_free (frames, i);
            return JP_ERR_NOMEM;
        }
    *out = frames;
    *n_out = n;
    return 0;
}

/* About how many JSON values the text of frame holds (its commas,
 * colons and openings outside strings, plus one): an upper bound on what
 * parsing it would allocate, found without allocating. Small frames are
 * not counted (0). */
static size_t
s_count_values (const jp_part_t *frame)
{
    if (frame->size < JP_VALUES_MAX)     /* fewer bytes than the bound: fewer values */
        return 0;
    const uint8_t *p = frame->data, *end = p + frame->size;
    size_t count = 1;
    while (p < end) {
        const uint8_t *hit = p;
        while (hit < end && *hit != '"' && *hit != ',' && *hit != ':' && *hit != '['
               && *hit != '{')
            hit++;
        if (hit == end)
            break;
        if (*hit != '"') {
            count++;
            p = hit + 1;
            continue;
        }
        for (p = hit + 1; p < end && *p != '"'; p++)   /* a string: skip to its end */
            if (*p == '\\')
                p++;
        p++;
    }
    return count;
}

/* True for the message types that carry a MIME bundle to show. */
static bool
s_is_display (const char *msg_type)
{
    return msg_type && (strcmp (msg_type, "display_data") == 0
                        || strcmp (msg_type, "execute_result") == 0
                        || strcmp (msg_type, "update_display_data") == 0);
}

/* The content that stands for a display too large to hold (new). */
static json_t *
s_dropped_display (size_t bytes, size_t values)
{
    char note[256];
    snprintf (note, sizeof note, "[codebox: a display of %zu bytes holding about %zu JSON "
              "values was not kept: more than %u values take too much memory; save large "
              "data to a file]", bytes, values, JP_VALUES_MAX);
    return json_pack ("{s:{s:s}, s:{}}", "data", "text/plain", note, "metadata");
}

/* The parent_header of parts: the memo's value when the bytes are the
 * memo's, else parsed (and kept in the memo when short enough). */
static json_t *
s_parent (const jp_part_t *part, jp_msg_memo_t *memo)
{
    if (memo && memo->value && part->size == memo->len
        && memcmp (part->data, memo->raw, part->size) == 0)
        return json_incref (memo->value);
    json_t *value = s_parse_header (part);
    if (memo && value && part->size <= JP_MSG_MEMO_MAX) {
        uint8_t *raw = part->size > memo->len || !memo->raw ? realloc (memo->raw, part->size + 1)
                                                           : memo->raw;
        if (raw) {
            memcpy (raw, part->data, part->size);
            memo->raw = raw;
            memo->len = part->size;
            json_decref (memo->value);
            memo->value = json_incref (value);
        }
    }
    return value;
}

void
jp_msg_memo_release (jp_msg_memo_t *memo)
{
    free (memo->raw);
    json_decref (memo->value);
    *memo = (jp_msg_memo_t) {0};
}

int
jp_msg_decode (const jp_part_t *frames, size_t n, const uint8_t *key,
               size_t key_len, jp_msg_t **msg_p)
{
    return jp_msg_decode_memo (frames, n, key, key_len, NULL, msg_p);
}

int
jp_msg_decode_memo (const jp_part_t *frames, size_t n, const uint8_t *key,
                    size_t key_len, jp_msg_memo_t *memo, jp_msg_t **msg_p)
{
    *msg_p = NULL;
    size_t delim = n;
    size_t dlen = strlen (JP_DELIMITER);
    for (size_t i = 0; i < n; i++)
        if (frames[i].size == dlen && memcmp (frames[i].data, JP_DELIMITER, dlen) == 0) {
            delim = i;
            break;
        }
    if (delim == n)
        return JP_ERR_NO_DELIMITER;
    if (n - delim < 6)
        return JP_ERR_TRUNCATED;
    const jp_part_t *sig = &frames[delim + 1];
    const jp_part_t *parts = &frames[delim + 2];
    int rc = jp_sign_verify (key, key_len, parts, sig->data, sig->size);
    if (rc)
        return rc == -EBADMSG ? JP_ERR_SIGNATURE : JP_ERR_CRYPTO;

    for (int i = 0; i < 3; i++)
        if (s_count_values (&parts[i]) > JP_VALUES_MAX)
            return JP_ERR_TOO_MANY_VALUES;
    jp_msg_t *self = calloc (1, sizeof *self);
    if (!self)
        return JP_ERR_NOMEM;
    self->header = s_parse_header (&parts[0]);
    self->parent_header = s_parent (&parts[1], memo);
    self->metadata = s_parse_object (&parts[2]);
    size_t values = s_count_values (&parts[3]);
    if (values <= JP_VALUES_MAX)
        self->content = s_parse_object (&parts[3]);
    else if (self->header && s_is_display (json_string_value (json_object_get (self->header,
                                                                                "msg_type"))))
        self->content = s_dropped_display (parts[3].size, values);
    else
        rc = JP_ERR_TOO_MANY_VALUES;
    if (!rc && (!self->header || !self->parent_header || !self->metadata || !self->content))
        rc = JP_ERR_JSON;
    else if (!rc && (!json_is_string (json_object_get (self->header, "msg_id"))
                     || !json_is_string (json_object_get (self->header, "msg_type"))))
        rc = JP_ERR_HEADER;
    if (!rc)
        rc = s_copy_frames (frames, delim, &self->ids, &self->n_ids);
    if (!rc)
        rc = s_copy_frames (frames + delim + 6, n - delim - 6, &self->buffers,
                            &self->n_buffers);
    if (rc) {
        jp_msg_destroy (&self);
        return rc;
    }
    *msg_p = self;
    return 0;
}

const char *
jp_strerror (int code)
{
    switch (code) {
    case 0: return "no error";
    case JP_ERR_NOMEM: return "out of memory";
    case JP_ERR_NO_DELIMITER: return "no <IDS|MSG> delimiter";
    case JP_ERR_TRUNCATED: return "truncated message";
    case JP_ERR_SIGNATURE: return "bad signature";
    case JP_ERR_JSON: return "a frame is not a JSON object";
    case JP_ERR_HEADER: return "header lacks msg_id or msg_type";
    case JP_ERR_CRYPTO: return "HMAC computation failed";
    case JP_ERR_TOO_MANY_VALUES: return "a frame holds too many JSON values to keep";
    default: return "unknown error";
    }
}
