/* gw_jupyter_wire: Jupyter messages over a kernel's websocket (see the
 * header). Pure code, no threads. */
#include "gw_jupyter_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "gw_base64.h"
#include "jp_json.h"

int
gw_jupyter_channel (const char *name)
{
    for (int i = 0; name && i < JP_CHANNEL_COUNT; i++)
        if (strcmp (name, jp_channel_name ((jp_channel_t) i)) == 0)
            return i;
    return -1;
}

static uint64_t
s_le64 (const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static void
s_put_le64 (uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++, v >>= 8)
        p[i] = (uint8_t) v;
}

static uint32_t
s_be32 (const uint8_t *p)
{
    return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

static void
s_put_be32 (uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t) (v >> 24);
    p[1] = (uint8_t) (v >> 16);
    p[2] = (uint8_t) (v >> 8);
    p[3] = (uint8_t) v;
}

/* A JSON object from len bytes, or NULL. */
static json_t *
s_object (const uint8_t *data, size_t len)
{
    json_t *v = json_loadb ((const char *) data, len, JSON_REJECT_DUPLICATES, NULL);
    if (v && !json_is_object (v)) {
        json_decref (v);
        return NULL;
    }
    return v;
}

/* Copies buffers[0..n) (data, len pairs) into msg. */
static int
s_set_buffers (jp_msg_t *msg, const uint8_t *const *data, const size_t *len, size_t n)
{
    if (!n)
        return 0;
    msg->buffers = calloc (n, sizeof *msg->buffers);
    if (!msg->buffers)
        return -1;
    for (size_t i = 0; i < n; i++) {
        msg->buffers[i].data = malloc (len[i] ? len[i] : 1);
        if (!msg->buffers[i].data)
            return -1;
        memcpy (msg->buffers[i].data, data[i], len[i]);
        msg->buffers[i].size = len[i];
        msg->n_buffers = i + 1;
    }
    return 0;
}

/* Checks the message's header (msg_id and msg_type strings) and fills the
 * missing parts with empty objects. */
static bool
s_complete (jp_msg_t *msg, char *err, size_t err_len)
{
    if (!msg->header || !json_is_string (json_object_get (msg->header, "msg_id"))
        || !json_is_string (json_object_get (msg->header, "msg_type"))) {
        snprintf (err, err_len, "the message's header needs msg_id and msg_type strings");
        return false;
    }
    json_t **parts[] = {&msg->parent_header, &msg->metadata, &msg->content};
    for (size_t i = 0; i < 3; i++)
        if (!*parts[i] && !(*parts[i] = json_object ())) {
            snprintf (err, err_len, "out of memory");
            return false;
        }
    return true;
}

/* A message from a JSON object (parts borrowed from it). */
static jp_msg_t *
s_from_object (json_t *root, char *err, size_t err_len)
{
    jp_msg_t *msg = calloc (1, sizeof *msg);
    if (!msg) {
        snprintf (err, err_len, "out of memory");
        return NULL;
    }
    const char *keys[] = {"header", "parent_header", "metadata", "content"};
    json_t **parts[] = {&msg->header, &msg->parent_header, &msg->metadata, &msg->content};
    for (size_t i = 0; i < 4; i++) {
        json_t *v = json_object_get (root, keys[i]);
        if (v && !json_is_object (v) && !json_is_null (v)) {
            snprintf (err, err_len, "the message's %s must be an object", keys[i]);
            jp_msg_destroy (&msg);
            return NULL;
        }
        if (json_is_object (v))
            *parts[i] = json_incref (v);
    }
    if (!s_complete (msg, err, err_len))
        jp_msg_destroy (&msg);
    return msg;
}

/* JSON mode: a text frame, or the binary frame of a message with buffers. */
static jp_msg_t *
s_decode_json_mode (const uint8_t *data, size_t len, bool binary, jp_channel_t *channel,
                    char *err, size_t err_len)
{
    const uint8_t *json = data, *bufs[GW_JUPYTER_MAX_BUFFERS];
    size_t json_len = len, lens[GW_JUPYTER_MAX_BUFFERS], nbufs = 0;
    if (binary) {
        uint32_t n = len >= 4 ? s_be32 (data) : 0;
        if (n < 1 || n > GW_JUPYTER_MAX_BUFFERS + 1 || len < 4 * ((size_t) n + 1)) {
            snprintf (err, err_len, "a binary frame must start with a count of 1 to %d parts "
                      "and their offsets", GW_JUPYTER_MAX_BUFFERS + 1);
            return NULL;
        }
        size_t offs[GW_JUPYTER_MAX_BUFFERS + 2];
        for (uint32_t i = 0; i < n; i++)
            offs[i] = s_be32 (data + 4 * (i + 1));
        offs[n] = len;
        for (uint32_t i = 0; i < n; i++)
            if (offs[i] < 4 * ((size_t) n + 1) || offs[i] > offs[i + 1]) {
                snprintf (err, err_len, "a binary frame's offsets are out of order or bounds");
                return NULL;
            }
        json = data + offs[0];
        json_len = offs[1] - offs[0];
        for (uint32_t i = 1; i < n; i++) {
            bufs[nbufs] = data + offs[i];
            lens[nbufs++] = offs[i + 1] - offs[i];
        }
    }
    json_t *root = s_object (json, json_len);
    if (!root) {
        snprintf (err, err_len, "the message is not a JSON object");
        return NULL;
    }
    /* no channel is shell, as Jupyter Server reads it (jupyter_server's
       own gateway client sends none) */
    json_t *name = json_object_get (root, "channel");
    int ch = name && !json_is_null (name) ? gw_jupyter_channel (json_string_value (name))
                                          : JP_CHANNEL_SHELL;
    jp_msg_t *msg = NULL;
    if (ch < 0)
        snprintf (err, err_len, "the message's channel must be shell, control, stdin or iopub");
    else
        msg = s_from_object (root, err, err_len);
    json_decref (root);
    if (msg && s_set_buffers (msg, bufs, lens, nbufs)) {
        snprintf (err, err_len, "out of memory");
        jp_msg_destroy (&msg);
    }
    if (msg)
        *channel = (jp_channel_t) ch;
    return msg;
}

/* v1: [n][offsets...][channel][header][parent][metadata][content][buffers...] */
static jp_msg_t *
s_decode_v1 (const uint8_t *data, size_t len, jp_channel_t *channel, char *err, size_t err_len)
{
    uint64_t n = len >= 8 ? s_le64 (data) : 0;
    if (n < 6 || n > GW_JUPYTER_MAX_BUFFERS + 6 || len < 8 * (n + 1)) {
        snprintf (err, err_len, "a v1 frame must start with its offsets (6 to %d)",
                  GW_JUPYTER_MAX_BUFFERS + 6);
        return NULL;
    }
    uint64_t offs[GW_JUPYTER_MAX_BUFFERS + 6];
    for (uint64_t i = 0; i < n; i++) {
        offs[i] = s_le64 (data + 8 * (i + 1));
        if (offs[i] < 8 * (n + 1) || offs[i] > len || (i && offs[i] < offs[i - 1])) {
            snprintf (err, err_len, "a v1 frame's offsets are out of order or bounds");
            return NULL;
        }
    }
    char name[16];
    size_t name_len = offs[1] - offs[0];
    if (name_len >= sizeof name) {
        snprintf (err, err_len, "unknown channel");
        return NULL;
    }
    memcpy (name, data + offs[0], name_len);
    name[name_len] = '\0';
    int ch = gw_jupyter_channel (name);
    if (ch < 0) {
        snprintf (err, err_len, "unknown channel '%s'", name);
        return NULL;
    }
    jp_msg_t *msg = calloc (1, sizeof *msg);
    if (!msg) {
        snprintf (err, err_len, "out of memory");
        return NULL;
    }
    json_t **parts[] = {&msg->header, &msg->parent_header, &msg->metadata, &msg->content};
    for (size_t i = 0; i < 4; i++) {
        size_t a = offs[i + 1], b = i + 2 < n ? offs[i + 2] : len;
        if (!(*parts[i] = s_object (data + a, b - a))) {
            snprintf (err, err_len, "a v1 frame's header, parent_header, metadata and content "
                      "must be JSON objects");
            jp_msg_destroy (&msg);
            return NULL;
        }
    }
    const uint8_t *bufs[GW_JUPYTER_MAX_BUFFERS];
    size_t lens[GW_JUPYTER_MAX_BUFFERS], nbufs = 0;
    for (uint64_t i = 5; i + 1 < n; i++) {
        bufs[nbufs] = data + offs[i];
        lens[nbufs++] = offs[i + 1] - offs[i];
    }
    if (!s_complete (msg, err, err_len) || s_set_buffers (msg, bufs, lens, nbufs)) {
        if (!err[0])
            snprintf (err, err_len, "out of memory");
        jp_msg_destroy (&msg);
        return NULL;
    }
    *channel = (jp_channel_t) ch;
    return msg;
}

jp_msg_t *
gw_jupyter_decode (const uint8_t *data, size_t len, bool binary, bool v1,
                   jp_channel_t *channel, char *err, size_t err_len)
{
    err[0] = '\0';
    if (v1 && binary)
        return s_decode_v1 (data, len, channel, err, err_len);
    return s_decode_json_mode (data, len, binary, channel, err, err_len);
}

static uint8_t *
s_encode_v1 (const jp_msg_t *msg, jp_channel_t channel, size_t *len)
{
    const char *name = jp_channel_name (channel);
    char *json[4] = {
        jp_json_dump (msg->header, NULL), jp_json_dump (msg->parent_header, NULL),
        jp_json_dump (msg->metadata, NULL), jp_json_dump (msg->content, NULL),
    };
    size_t nparts = 5 + msg->n_buffers, n = nparts + 1, total = 8 * (n + 1);
    uint8_t *out = NULL;
    if (!json[0] || !json[1] || !json[2] || !json[3])
        goto done;
    total += strlen (name);
    for (size_t i = 0; i < 4; i++)
        total += strlen (json[i]);
    for (size_t i = 0; i < msg->n_buffers; i++)
        total += msg->buffers[i].size;
    if (!(out = malloc (total)))
        goto done;
    s_put_le64 (out, n);
    size_t at = 8 * (n + 1), k = 0;
    s_put_le64 (out + 8 * (++k), at);
    memcpy (out + at, name, strlen (name));
    at += strlen (name);
    s_put_le64 (out + 8 * (++k), at);
    for (size_t i = 0; i < 4; i++) {
        memcpy (out + at, json[i], strlen (json[i]));
        at += strlen (json[i]);
        s_put_le64 (out + 8 * (++k), at);
    }
    for (size_t i = 0; i < msg->n_buffers; i++) {
        if (msg->buffers[i].size)
            memcpy (out + at, msg->buffers[i].data, msg->buffers[i].size);
        at += msg->buffers[i].size;
        s_put_le64 (out + 8 * (++k), at);
    }
    *len = total;
done:
    for (size_t i = 0; i < 4; i++)
        free (json[i]);
    return out;
}

static uint8_t *
s_encode_json_mode (const jp_msg_t *msg, jp_channel_t channel, size_t *len, bool *binary)
{
    json_t *root = json_pack ("{s:O, s:O, s:O, s:O, s:s, s:O, s:O, s:[]}", "header",
                              msg->header, "parent_header", msg->parent_header, "metadata",
                              msg->metadata, "content", msg->content, "channel",
                              jp_channel_name (channel), "msg_id",
                              json_object_get (msg->header, "msg_id"), "msg_type",
                              json_object_get (msg->header, "msg_type"), "buffers");
    char *text = root ? jp_json_dump (root, NULL) : NULL;
    json_decref (root);
    if (!text)
        return NULL;
    size_t text_len = strlen (text);
    if (!msg->n_buffers) {
        *binary = false;
        *len = text_len;
        return (uint8_t *) text;
    }
    size_t n = 1 + msg->n_buffers, head = 4 * (n + 1), total = head + text_len;
    for (size_t i = 0; i < msg->n_buffers; i++)
        total += msg->buffers[i].size;
    uint8_t *out = total <= UINT32_MAX ? malloc (total) : NULL;
    if (out) {
        s_put_be32 (out, (uint32_t) n);
        size_t at = head;
        s_put_be32 (out + 4, (uint32_t) at);
        memcpy (out + at, text, text_len);
        at += text_len;
        for (size_t i = 0; i < msg->n_buffers; i++) {
            s_put_be32 (out + 4 * (i + 2), (uint32_t) at);
            if (msg->buffers[i].size)
                memcpy (out + at, msg->buffers[i].data, msg->buffers[i].size);
            at += msg->buffers[i].size;
        }
        *binary = true;
        *len = total;
    }
    free (text);
    return out;
}

uint8_t *
gw_jupyter_encode (const jp_msg_t *msg, jp_channel_t channel, bool v1, size_t *len,
                   bool *binary)
{
    if (v1) {
        *binary = true;
        return s_encode_v1 (msg, channel, len);
    }
    return s_encode_json_mode (msg, channel, len, binary);
}

bool
gw_jupyter_ws_accept (const char *key, char *out, size_t out_len)
{
    uint8_t *raw = NULL;
    size_t raw_len = 0;
    if (!key || strlen (key) != 24 || gw_base64_decode (key, 24, &raw, &raw_len) || raw_len != 16
        || out_len < 29) {
        free (raw);
        return false;
    }
    free (raw);
    char joined[64];
    snprintf (joined, sizeof joined, "%s258EAFA5-E914-47DA-95CA-C5AB0DC85B11", key);
    uint8_t digest[EVP_MAX_MD_SIZE];
    unsigned int digest_len = 0;
    if (!EVP_Digest (joined, strlen (joined), digest, &digest_len, EVP_sha1 (), NULL))
        return false;
    char *b64 = gw_base64_encode (digest, digest_len);
    if (!b64)
        return false;
    snprintf (out, out_len, "%s", b64);
    free (b64);
    return true;
}
