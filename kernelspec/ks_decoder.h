/* ks_decoder: verifies and decodes a kernel's large messages on a worker
 * thread of its own, so that one kernel's 60 MB display (seconds of HMAC
 * and JSON parsing) does not stall the thread that serves every other
 * kernel and client. One worker for the process, started on first use;
 * each kernel has an inbox whose descriptor becomes readable when a
 * message it handed over is decoded. The kernel keeps order itself: it
 * reads nothing more from a channel while a message of it is away.
 *
 * Threads: ks_decoder_submit, _take and the inbox's new/destroy from the
 * kernel's thread; the worker is the module's own; a mutex guards each
 * inbox and the queue. */
#ifndef KS_DECODER_H
#define KS_DECODER_H

#include <stdbool.h>

#include "jp_channels.h"

/* Messages over this many bytes are decoded by the worker. */
#define KS_DECODER_MIN_BYTES (1u << 20)

typedef struct ks_decoder_inbox ks_decoder_inbox_t;

/* A new inbox (an eventfd for the caller's poll), or NULL. */
ks_decoder_inbox_t *ks_decoder_inbox_new (void);

/* Ends an inbox and nulls *self_p: what is decoded for it later is freed
 * by the worker. Safe on NULL. */
void ks_decoder_inbox_destroy (ks_decoder_inbox_t **self_p);

/* The descriptor that is readable while decoded messages wait. */
int ks_decoder_inbox_fd (const ks_decoder_inbox_t *self);

/* Hands *raw_p (taken and nulled) of channel to the worker. Returns 0, or
 * -ENOMEM / -EAGAIN (no worker could start: the caller decodes itself). */
int ks_decoder_submit (ks_decoder_inbox_t *self, int channel, jp_raw_t **raw_p);

/* Takes the oldest decoded message: returns true with its channel, the
 * message (owned; NULL when it was refused) and jp_raw_decode's code;
 * false when none waits (the descriptor is then quiet again). */
bool ks_decoder_take (ks_decoder_inbox_t *self, int *channel_p, jp_msg_t **msg_p, int *rc_p);

#endif
