/* jp_json: compact JSON text of a jansson value (see the header). Pure
 * code, any thread. */
#include "jp_json.h"
#include "jp_utf8.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where the text goes: a buffer of the size counted first, or only a
 * count (counting). */
typedef struct {
    char *buf;
    size_t len, cap;
    bool counting, failed;
} s_out_t;

static void
s_put (s_out_t *o, const char *p, size_t n)
{
    if (o->failed)
        return;
    if (!o->counting) {
        if (o->len + n >= o->cap) {
            o->failed = true;   /* the value changed since it was counted */
            return;
        }
        memcpy (o->buf + o->len, p, n);
    }
    o->len += n;
}

/* 1 for the bytes a JSON string must escape. */
static const unsigned char s_escape[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    ['"'] = 1, ['\\'] = 1,
};

/* True when none of the 8 bytes at p needs escaping: no control
 * character, '"' or '\\' (the "has a byte less than" and "has a zero
 * byte" tests, each exact for the word as a whole; bytes of 0x80 and up,
 * UTF-8's, never match). Long text such as base64 images goes 8 bytes a
 * step. */
static bool
s_plain8 (const char *p)
{
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    uint64_t v;
    memcpy (&v, p, 8);
    uint64_t quote = v ^ (ones * '"'), slash = v ^ (ones * '\\');
    uint64_t hits = ((v - ones * 0x20) & ~v) | ((quote - ones) & ~quote)
                    | ((slash - ones) & ~slash);
    return (hits & highs) == 0;
}

static void
s_string (s_out_t *o, const char *s, size_t n)
{
    s_put (o, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        while (i + 8 <= n && s_plain8 (s + i))
            i += 8;
        if (i == n)
            break;
        unsigned char c = (unsigned char) s[i];
        if (!s_escape[c])
            continue;
        s_put (o, s + run, i - run);
        run = i + 1;
        char seq[8];
        switch (c) {
        case '"': s_put (o, "\\\"", 2); break;
        case '\\': s_put (o, "\\\\", 2); break;
        case '\b': s_put (o, "\\b", 2); break;
        case '\f': s_put (o, "\\f", 2); break;
        case '\n': s_put (o, "\\n", 2); break;
        case '\r': s_put (o, "\\r", 2); break;
        case '\t': s_put (o, "\\t", 2); break;
        default:
            snprintf (seq, sizeof seq, "\\u%04X", c);
            s_put (o, seq, 6);
        }
    }
    s_put (o, s + run, n - run);
    s_put (o, "\"", 1);
}

static void
s_value (s_out_t *o, const json_t *v, int depth)
{
    if (depth > JP_JSON_DEPTH_MAX) {
        o->failed = true;
        return;
    }
    char num[64];
    switch (json_typeof (v)) {
    case JSON_OBJECT: {
        s_put (o, "{", 1);
        bool first = true;
        for (void *it = json_object_iter ((json_t *) v); it && !o->failed;
             it = json_object_iter_next ((json_t *) v, it)) {
            if (!first)
                s_put (o, ",", 1);
            first = false;
            s_string (o, json_object_iter_key (it), json_object_iter_key_len (it));
            s_put (o, ":", 1);
            s_value (o, json_object_iter_value (it), depth + 1);
        }
        s_put (o, "}", 1);
        break;
    }
    case JSON_ARRAY: {
        s_put (o, "[", 1);
        size_t n = json_array_size (v);
        for (size_t i = 0; i < n && !o->failed; i++) {
            if (i)
                s_put (o, ",", 1);
            s_value (o, json_array_get (v, i), depth + 1);
        }
        s_put (o, "]", 1);
        break;
    }
    case JSON_STRING:
        s_string (o, json_string_value (v), json_string_length (v));
        break;
    case JSON_INTEGER: {
        int n = snprintf (num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value (v));
        s_put (o, num, (size_t) n);
        break;
    }
    case JSON_REAL: {
        /* rare, and jansson's own rules (shortest text that reads back) */
        char *text = json_dumps (v, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!text) {
            o->failed = true;
            return;
        }
        s_put (o, text, strlen (text));
        free (text);
        break;
    }
    case JSON_TRUE: s_put (o, "true", 4); break;
    case JSON_FALSE: s_put (o, "false", 5); break;
    case JSON_NULL: s_put (o, "null", 4); break;
    }
}

char *
jp_json_dump (const json_t *value, size_t *len_p)
{
    /* counted first, so the text is written once into memory of its size
       (growing it by doubling copied it again and again) */
    size_t size = jp_json_size (value);
    if (size == (size_t) -1)
        return NULL;
    s_out_t o = {.buf = malloc (size + 1), .cap = size + 1};
    if (!o.buf)
        return NULL;
    s_value (&o, value, 0);
    if (o.failed) {
        free (o.buf);
        return NULL;
    }
    o.buf[o.len] = '\0';
    if (len_p)
        *len_p = o.len;
    return o.buf;
}

size_t
jp_json_size (const json_t *value)
{
    s_out_t o = {.counting = true};
    if (!value)
        return (size_t) -1;
    s_value (&o, value, 0);
    return o.failed ? (size_t) -1 : o.len;
}

/* What jansson allocates for one value (its struct and malloc's header),
 * for an array's slot, and for an object's entry (beside its key). */
#define S_NODE_BYTES 48
#define S_SLOT_BYTES 8
#define S_ENTRY_BYTES 64

static size_t
s_weight (const json_t *value, int depth)
{
    if (depth > JP_JSON_DEPTH_MAX)
        return (size_t) -1;
    size_t total = S_NODE_BYTES, i, part;
    const char *key;
    json_t *item;
    switch (json_typeof (value)) {
    case JSON_STRING:
        return total + json_string_length (value) + 1;
    case JSON_ARRAY:
        json_array_foreach ((json_t *) value, i, item) {
            if ((part = s_weight (item, depth + 1)) == (size_t) -1)
                return part;
            total += S_SLOT_BYTES + part;
        }
        return total;
    case JSON_OBJECT:
        json_object_foreach ((json_t *) value, key, item) {
            if ((part = s_weight (item, depth + 1)) == (size_t) -1)
                return part;
            total += S_ENTRY_BYTES + strlen (key) + 1 + part;
        }
        return total;
    default:
        return total;
    }
}

size_t
jp_json_weight (const json_t *value)
{
    return value ? s_weight (value, 0) : (size_t) -1;
}

/* The index after the JSON whitespace from at. */
static size_t
s_skip_ws (const char *p, size_t at, size_t len)
{
    while (at < len && (p[at] == ' ' || p[at] == '\t' || p[at] == '\n' || p[at] == '\r'))
        at++;
    return at;
}

/* A string at p[at] with no escape and no control character: its body in
 * [*start, *end) and the index after its closing quote, or 0. */
static size_t
s_plain_string (const char *p, size_t at, size_t len, size_t *start, size_t *end)
{
    if (at >= len || p[at] != '"')
        return 0;
    size_t i = at + 1;
    while (i < len && p[i] != '"') {
        unsigned char c = (unsigned char) p[i];
        if (c == '\\' || c < 0x20)
            return 0;
        i++;
    }
    if (i >= len || !jp_utf8_valid (p + at + 1, i - at - 1))
        return 0;
    *start = at + 1;
    *end = i;
    return i + 1;
}

json_t *
jp_json_load_flat (const char *p, size_t len)
{
    size_t at = s_skip_ws (p, 0, len);
    if (at >= len || p[at] != '{')
        return NULL;
    json_t *object = json_object ();
    if (!object)
        return NULL;
    at = s_skip_ws (p, at + 1, len);
    bool closed = at < len && p[at] == '}';     /* {} */
    while (!closed && at < len) {
        size_t ks, ke, vs, ve;
        if (!(at = s_plain_string (p, at, len, &ks, &ke)))
            break;
        at = s_skip_ws (p, at, len);
        if (at >= len || p[at] != ':')
            break;
        if (!(at = s_plain_string (p, s_skip_ws (p, at + 1, len), len, &vs, &ve)))
            break;
        json_t *value = json_stringn_nocheck (p + vs, ve - vs);
        if (!value || json_object_setn_new_nocheck (object, p + ks, ke - ks, value) != 0)
            break;  /* (setn_new frees value when it fails) */
        at = s_skip_ws (p, at, len);
        if (at < len && p[at] == ',') {
            at = s_skip_ws (p, at + 1, len);
            continue;
        }
        closed = at < len && p[at] == '}';
        break;
    }
    if (closed && s_skip_ws (p, at + 1, len) == len)
        return object;
    json_decref (object);
    return NULL;
}
