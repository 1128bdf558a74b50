/* gw_jupyter_waiting: what a websocket client sent that its kernel cannot
 * take yet, in order: the kernel starts or restarts, its queue is full, or
 * the kernel has as many requests to answer as it may (gw_jupyter.c). A
 * FIFO of messages with their channel, bounded in count and bytes; a
 * flush sends what may go, keeping each channel's order (a shell request
 * that must wait does not hold back an interrupt on control or an answer
 * on stdin).
 *
 * Pure code, no threads (the loop thread uses it). */
#ifndef GW_JUPYTER_WAITING_H
#define GW_JUPYTER_WAITING_H

#include <stdbool.h>
#include <stddef.h>

#include "jp_channels.h"
#include "jp_message.h"

#define GW_WAITING_MAX 4096                 /* messages */
#define GW_WAITING_BYTES ((size_t) 16 << 20) /* as they came over the websocket */

typedef struct {
    jp_msg_t *msg;
    jp_channel_t channel;
    size_t bytes;
} gw_waiting_msg_t;

typedef struct {
    gw_waiting_msg_t *items;
    int n, cap;
    size_t bytes;
} gw_waiting_t;

/* Appends msg (taken) unless the FIFO is past its bounds or memory is out:
 * then returns false and msg stays the caller's. */
bool gw_waiting_push (gw_waiting_t *self, jp_msg_t *msg, jp_channel_t channel, size_t bytes);

/* True when the FIFO has reached a bound: its client is not read. */
bool gw_waiting_full (const gw_waiting_t *self);

/* Sends one message (borrowed): 0 when it went, -EAGAIN when it must
 * wait, another negative errno when it failed. */
typedef int gw_waiting_send_fn (void *arg, jp_channel_t channel, const jp_msg_t *msg);

/* Offers each message to send, in order; one that must wait makes every
 * later message of its channel wait too. A message that went, or failed
 * with an error other than -EAGAIN (send logs it), is freed. */
void gw_waiting_flush (gw_waiting_t *self, gw_waiting_send_fn *send, void *arg);

/* True when a message of channel waits (a new one of it must queue). */
bool gw_waiting_has (const gw_waiting_t *self, jp_channel_t channel);

/* Frees every message and the FIFO's memory. */
void gw_waiting_clear (gw_waiting_t *self);

#endif
