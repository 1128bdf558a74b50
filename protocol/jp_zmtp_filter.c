/* jp_zmtp_filter: one direction of a ZMTP 3 connection, read as bytes
 * arrive; passes the greeting, whole commands and whole messages within
 * the bounds, skips the rest (see jp_zmtp_filter.h).
 *
 * Threads: none of its own; pure code run by the caller's thread. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jp_zmtp_filter.h"

#define FLAG_MORE JP_ZMTP_FLAG_MORE
#define FLAG_LONG JP_ZMTP_FLAG_LONG
#define FLAG_COMMAND JP_ZMTP_FLAG_COMMAND
#define FLAGS_RESERVED JP_ZMTP_FLAGS_RESERVED
#define SHRINK_OVER (1u << 20)  /* an emptied buffer bigger than this is freed */

int
jp_zmtp_buf_reserve (jp_zmtp_buf_t *buf, size_t more)
{
    if (buf->cap - buf->len >= more)
        return 0;
    if (more > SIZE_MAX / 2 - buf->len)
        return -ENOMEM;
    size_t cap = buf->cap ? buf->cap : 4096;
    while (cap - buf->len < more)
        cap *= 2;
    uint8_t *data = realloc (buf->data, cap);
    if (!data)
        return -ENOMEM;
    buf->data = data;
    buf->cap = cap;
    return 0;
}

static int
s_append (jp_zmtp_buf_t *buf, const void *data, size_t n)
{
    if (!n)
        return 0;
    int rc = jp_zmtp_buf_reserve (buf, n);
    if (rc)
        return rc;
    memcpy (buf->data + buf->len, data, n);
    buf->len += n;
    return 0;
}

void
jp_zmtp_buf_free (jp_zmtp_buf_t *buf)
{
    free (buf->data);
    *buf = (jp_zmtp_buf_t) {0};
}

/* Empties buf, freeing a big one so a past burst is not held. */
static void
s_empty (jp_zmtp_buf_t *buf)
{
    if (buf->cap > SHRINK_OVER)
        jp_zmtp_buf_free (buf);
    buf->len = buf->sent = 0;
}

void
jp_zmtp_filter_init (jp_zmtp_filter_t *self, uint64_t message_max, uint64_t frames_max,
                     jp_zmtp_drop_fn *on_drop, void *arg)
{
    *self = (jp_zmtp_filter_t) {.message_max = message_max, .frames_max = frames_max,
                                .on_drop = on_drop, .arg = arg, .delimiter = -1};
}

void
jp_zmtp_filter_release (jp_zmtp_filter_t *self)
{
    jp_zmtp_buf_free (&self->out);
    jp_zmtp_buf_free (&self->message);
    jp_zmtp_buf_free (&self->frame);
    jp_zmtp_buf_free (&self->parent);
}

static int
s_fail (jp_zmtp_filter_t *self, const char *why)
{
    self->error = why;
    return -EPROTO;
}

const char *
jp_zmtp_greeting_byte (size_t i, uint8_t b)
{
    static const char mechanism[20] = "NULL";
    if (i == 0 && b != 0xFF)
        return "not a ZMTP 3 greeting";
    if (i == 9 && !(b & 1))
        return "not a ZMTP 3 greeting";
    if (i == 10 && b < 3)
        return "a ZMTP version before 3";
    if (i >= 12 && i < 32 && b != (uint8_t) mechanism[i - 12])
        return "a security mechanism other than NULL";
    return NULL;
}

/* The message being read is complete: to the output, or dropped. */
static int
s_message_done (jp_zmtp_filter_t *self)
{
    int rc = 0;
    if (self->skipping) {
        if (self->on_drop)
            self->on_drop (self->arg, self->bytes, self->frames,
                           self->parent.len ? self->parent.data : NULL, self->parent.len);
    } else if (jp_zmtp_filter_pending (self) == 0) {
        /* the usual case: the message becomes the output, no copy */
        jp_zmtp_buf_t spare = self->out;
        self->out = self->message;
        self->out.sent = 0;
        self->message = spare;      /* emptied below */
    } else {
        rc = s_append (&self->out, self->message.data, self->message.len);
    }
    s_empty (&self->message);
    self->bytes = self->frames = 0;
    self->skipping = false;
    self->delimiter = -1;
    self->parent.len = 0;
    return rc;
}

/* A frame's body is all read. */
static int
s_frame_done (jp_zmtp_filter_t *self)
{
    self->in_body = false;
    size_t head_len = self->head_len;
    self->head_len = 0;
    if (self->command) {
        self->commands++;
        int rc = s_append (&self->out, self->head, head_len);
        if (!rc)
            rc = s_append (&self->out, self->frame.data, self->frame.len);
        self->frame.len = 0;
        return rc;
    }
    uint64_t index = self->frames - 1;
    if (self->keeping) {
        self->keeping = false;
        if (self->delimiter < 0 && self->frame.len == 9
            && memcmp (self->frame.data, "<IDS|MSG>", 9) == 0)
            self->delimiter = (int64_t) index;
        else if (self->delimiter >= 0 && index == (uint64_t) self->delimiter + 3) {
            self->parent.len = 0;
            if (s_append (&self->parent, self->frame.data, self->frame.len))
                self->parent.len = 0;
        }
        self->frame.len = 0;
    }
    return self->more ? 0 : s_message_done (self);
}

/* A frame's header is all read: weighs the frame. */
static int
s_head_done (jp_zmtp_filter_t *self)
{
    uint8_t flags = self->head[0];
    uint64_t size = 0;
    for (size_t i = 1; i < self->head_len; i++)
        size = size << 8 | self->head[i];
    if (size >> 63)
        return s_fail (self, "a frame size over 2^63");
    self->command = flags & FLAG_COMMAND;
    self->more = flags & FLAG_MORE;
    self->body_left = size;
    self->in_body = true;
    if (self->command) {
        if (self->more)
            return s_fail (self, "a command with MORE set");
        if (size > JP_ZMTP_COMMAND_MAX)
            return s_fail (self, "a command over 64 KiB");
        self->frame.len = 0;
        if (jp_zmtp_buf_reserve (&self->frame, size))
            return -ENOMEM;
    } else {
        uint64_t index = self->frames;
        if (!self->skipping
            && (self->frames + 1 > self->frames_max || size > self->message_max
                || self->bytes + size > self->message_max)) {
            self->skipping = true;
            jp_zmtp_buf_free (&self->message);
        }
        self->frames++;
        self->bytes = size > UINT64_MAX - self->bytes ? UINT64_MAX : self->bytes + size;
        if (!self->skipping && s_append (&self->message, self->head, self->head_len))
            return -ENOMEM;
        self->keeping = (self->delimiter < 0 && size == 9)
                        || (self->delimiter >= 0 && index == (uint64_t) self->delimiter + 3
                            && size <= JP_ZMTP_PARENT_MAX);
        self->frame.len = 0;
    }
    return size ? 0 : s_frame_done (self);
}

int
jp_zmtp_filter_feed (jp_zmtp_filter_t *self, const uint8_t *data, size_t n)
{
    if (self->error)
        return -EPROTO;
    size_t at = 0;
    /* the greeting passes byte by byte once checked: libzmq sends its
       first ten bytes and waits for the peer's before the rest */
    const char *why = NULL;
    while (at < n && self->greeting_seen < JP_ZMTP_GREETING && !why) {
        why = jp_zmtp_greeting_byte (self->greeting_seen, data[at]);
        if (!why) {
            self->greeting_seen++;
            at++;
        }
    }
    if (at && s_append (&self->out, data, at)) {
        self->error = "out of memory";
        return -ENOMEM;
    }
    if (why)
        return s_fail (self, why);
    while (at < n) {
        int rc = 0;
        if (!self->in_body) {
            if (self->head_len == 0) {
                if (data[at] & FLAGS_RESERVED)
                    return s_fail (self, "reserved flag bits set");
                self->head[self->head_len++] = data[at++];
                continue;
            }
            size_t want = (self->head[0] & FLAG_LONG) ? 9 : 2;
            while (at < n && self->head_len < want)
                self->head[self->head_len++] = data[at++];
            if (self->head_len < want)
                break;
            rc = s_head_done (self);
        } else {
            size_t take = n - at;
            if ((uint64_t) take > self->body_left)
                take = (size_t) self->body_left;
            if (!self->command && !self->skipping)
                rc = s_append (&self->message, data + at, take);
            if (!rc && (self->command || self->keeping))
                rc = s_append (&self->frame, data + at, take);
            at += take;
            self->body_left -= take;
            if (!rc && self->body_left == 0)
                rc = s_frame_done (self);
        }
        if (rc == -EPROTO)
            return rc;
        if (rc) {
            self->error = "out of memory";
            return -ENOMEM;
        }
    }
    return 0;
}

int
jp_zmtp_filter_put_message (jp_zmtp_filter_t *self, const jp_frame_t *frames, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t head[9];
        size_t hl, size = frames[i].size;
        uint8_t more = i + 1 < n ? FLAG_MORE : 0;
        if (size > 255) {
            head[0] = more | FLAG_LONG;
            for (int k = 0; k < 8; k++)
                head[1 + k] = (uint8_t) ((uint64_t) size >> (56 - 8 * k));
            hl = 9;
        } else {
            head[0] = more;
            head[1] = (uint8_t) size;
            hl = 2;
        }
        if (s_append (&self->out, head, hl) || s_append (&self->out, frames[i].data, size))
            return -ENOMEM;
    }
    return 0;
}

size_t
jp_zmtp_filter_pending (const jp_zmtp_filter_t *self)
{
    return self->out.len - self->out.sent;
}

void
jp_zmtp_filter_wrote (jp_zmtp_filter_t *self, size_t n)
{
    self->out.sent += n;
    if (self->out.sent >= self->out.len)
        s_empty (&self->out);
}
