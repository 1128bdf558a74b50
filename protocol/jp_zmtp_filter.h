/* jp_zmtp_filter: reads one direction of a ZMTP 3 connection (RFC 23 and
 * 37: a 64-byte greeting, then frames) as bytes arrive and writes to its
 * output buffer what may pass: the greeting as it comes, each command
 * whole, each message whole once its last frame is in, and nothing of a
 * message over the bounds (more than message_max bytes of frame bodies or
 * frames_max frames), whose bodies it skips as they come instead of
 * holding them. The kernel relay (gw_cmd_kernel_relay.c) runs one per
 * connection from a kernel, so that a kernel's socket talks to the
 * gateway's directly (routing ids, subscriptions and signatures pass
 * unchanged) while the relay holds at most one message of it.
 *
 * Only the NULL mechanism is accepted (with CURVE or PLAIN the frames
 * would not be readable); a greeting of ZMTP 1 or 2, reserved flag bits,
 * a command with MORE or over COMMAND_MAX bytes end the connection.
 *
 * Pure code, no threads: the caller owns the filter. */
#ifndef JP_ZMTP_FILTER_H
#define JP_ZMTP_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jp_message.h"

#define JP_ZMTP_GREETING 64
#define JP_ZMTP_FLAG_MORE 0x01          /* a frame's flags (RFC 23) */
#define JP_ZMTP_FLAG_LONG 0x02
#define JP_ZMTP_FLAG_COMMAND 0x04
#define JP_ZMTP_FLAGS_RESERVED 0xF8
#define JP_ZMTP_COMMAND_MAX (64u << 10)   /* bytes of one command body */
#define JP_ZMTP_PARENT_MAX (64u << 10)    /* a parent header kept for on_drop */

/* A message over the bounds was skipped: it had `bytes` bytes in `frames`
 * frames, and the frame after its "<IDS|MSG>" delimiter's signature and
 * header (the Jupyter parent header, borrowed, parent_len bytes; NULL when
 * it had none or was over JP_ZMTP_PARENT_MAX). The callback may add to the
 * output (jp_zmtp_filter_put_message): it is at a message boundary. */
typedef void (jp_zmtp_drop_fn) (void *arg, uint64_t bytes, uint64_t frames,
                                const uint8_t *parent, size_t parent_len);

typedef struct {
    uint8_t *data;
    size_t len, cap, sent;      /* sent: bytes the caller has written out */
} jp_zmtp_buf_t;

typedef struct {
    uint64_t message_max, frames_max;
    jp_zmtp_drop_fn *on_drop;
    void *arg;
    jp_zmtp_buf_t out;          /* what may pass, for the caller to write */
    uint64_t commands;          /* whole commands seen (the first is READY) */
    /* where the reader is */
    size_t greeting_seen;
    uint8_t head[9];
    size_t head_len;
    uint64_t body_left;
    bool in_body, command, more;
    /* the message being read */
    jp_zmtp_buf_t message;      /* its frames, encoded, unless skipping */
    uint64_t bytes, frames;
    bool skipping;
    int64_t delimiter;          /* index of its "<IDS|MSG>" frame, or -1 */
    jp_zmtp_buf_t frame;        /* the body of a frame kept to look at */
    bool keeping;
    jp_zmtp_buf_t parent;
    const char *error;          /* why the connection must end, or NULL */
} jp_zmtp_filter_t;

/* Makes room for more bytes past buf->len (the capacity doubles, from 4
 * KiB). Returns 0 or -ENOMEM. */
int jp_zmtp_buf_reserve (jp_zmtp_buf_t *buf, size_t more);

/* Frees buf's memory and zeroes it. */
void jp_zmtp_buf_free (jp_zmtp_buf_t *buf);

/* Byte i of a peer's greeting: NULL when it can be one accepted here
 * (the signature, ZMTP 3 or later, the NULL mechanism), else why not.
 * The filter checks each byte as it comes; jp_zmtp_client the 64 once
 * they are in. */
const char *jp_zmtp_greeting_byte (size_t i, uint8_t b);

/* Sets up a filter with the bounds and the drop callback (may be NULL). */
void jp_zmtp_filter_init (jp_zmtp_filter_t *self, uint64_t message_max, uint64_t frames_max,
                          jp_zmtp_drop_fn *on_drop, void *arg);

/* Frees what the filter holds. */
void jp_zmtp_filter_release (jp_zmtp_filter_t *self);

/* Reads n bytes. Returns 0, -ENOMEM, or -EPROTO with self->error saying
 * why (the filter stays failed). */
int jp_zmtp_filter_feed (jp_zmtp_filter_t *self, const uint8_t *data, size_t n);

/* Appends a message of n frames (borrowed) to the output, as data
 * frames. Call it at a message boundary only (from on_drop). Returns 0 or
 * -ENOMEM. */
int jp_zmtp_filter_put_message (jp_zmtp_filter_t *self, const jp_frame_t *frames, size_t n);

/* Bytes of the output not yet written; the caller writes from
 * out.data + out.sent and then calls jp_zmtp_filter_wrote. */
size_t jp_zmtp_filter_pending (const jp_zmtp_filter_t *self);

/* Marks n more bytes of the output as written; frees the space once all
 * of it is. */
void jp_zmtp_filter_wrote (jp_zmtp_filter_t *self, size_t n);

#endif
