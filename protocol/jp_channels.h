/* jp_channels: a client's five ZMTP connections to one kernel
 * (jp_zmtp_client, no libzmq): shell and control (DEALER), stdin (DEALER
 * with the shell's routing id), iopub (SUB, subscribed to everything) and
 * heartbeat (REQ, connected again after a missed beat). Sends and
 * receives signed messages.
 *
 * Threads: the connections belong to the thread that made the channels;
 * every call must come from that thread. */
#ifndef JP_CHANNELS_H
#define JP_CHANNELS_H

#include <stdbool.h>

#include "jp_connection.h"
#include "jp_message.h"
#include "jp_poll.h"

typedef struct jp_channels jp_channels_t;

/* Connects the five channels to the endpoints of conn (copied); a
 * kernel not listening yet is tried again (jp_channels_tick). Nothing is
 * read before it is asked for: what the gateway has not read waits in the
 * kernel's socket (and its PUB's queue drops past its bound). Returns
 * NULL and sets errno on failure. */
jp_channels_t *jp_channels_new (const jp_connection_t *conn);

/* Closes the connections and nulls *self_p. Safe on NULL. */
void jp_channels_destroy (jp_channels_t **self_p);

/* The connection of a channel, borrowed, for a jp_poll item (with
 * JP_POLL_ZMTP). */
void *jp_channels_socket (jp_channels_t *self, jp_channel_t channel);

/* The channel's descriptor, -1 while it waits to connect again. */
int jp_channels_fd (const jp_channels_t *self, jp_channel_t channel);

/* True if a channel needs its own poll item this turn rather than a
 * plain POLLIN on its descriptor (jp_zmtp_client_busy): a message read
 * whole, bytes to write, a connect in progress. */
bool jp_channels_any_busy (const jp_channels_t *self);

/* Reads what waits on the channel's connection now, for a caller that
 * does not watch its descriptor for a while (ks_kernel's iopub rest):
 * then jp_channels_recv_or_defer takes it. */
void jp_channels_pull (jp_channels_t *self, jp_channel_t channel);

/* True (once) if a descriptor changed since the last call: a connect, an
 * end, a connect again. */
bool jp_channels_take_fds_changed (jp_channels_t *self);

/* When a channel is to connect again (jp_time_now_ms), or -1; and the
 * tick that does it. */
int64_t jp_channels_deadline (const jp_channels_t *self);
void jp_channels_tick (jp_channels_t *self, int64_t now);

/* A new message of msg_type with this client's session in its header. */
jp_msg_t *jp_channels_msg_new (jp_channels_t *self, const char *msg_type);

/* Signs and sends msg on the channel without blocking. Returns 0, -EAGAIN
 * when the channel cannot take it now, or another negative code. */
int jp_channels_send (jp_channels_t *self, jp_channel_t channel, const jp_msg_t *msg);

/* A message taken from a socket but not yet verified and decoded (its
 * frames and the key to check them with), so that a large one can be
 * decoded on another thread: verifying and parsing 60 MB takes seconds. */
typedef struct jp_raw jp_raw_t;
#define JP_CHANNELS_DEFERRED 1

/* Receives one message without blocking into *msg_p (new, owned by the
 * caller). Returns 0; -EAGAIN when nothing is waiting; or a jp_error_t when a
 * message arrived but was rejected (it is consumed and dropped). A message
 * of more than defer_bytes (every frame together) is not decoded: it comes
 * back in *raw_p (owned by the caller) and the return is
 * JP_CHANNELS_DEFERRED. */
int jp_channels_recv_or_defer (jp_channels_t *self, jp_channel_t channel, size_t defer_bytes,
                               jp_msg_t **msg_p, jp_raw_t **raw_p);

/* Verifies and decodes *raw_p (taken and nulled) into *msg_p, as
 * jp_channels_recv_or_defer would have. Any thread. Returns 0 or a jp_error_t. */
int jp_raw_decode (jp_raw_t **raw_p, jp_msg_t **msg_p);

/* Frees a raw message not decoded, and nulls *raw_p. Any thread. */
void jp_raw_destroy (jp_raw_t **raw_p);

/* The bytes of every frame of the last message jp_channels_recv_or_defer took (or
 * dropped), so readers can bound their work by bytes. */
size_t jp_channels_last_bytes (const jp_channels_t *self);

/* Heartbeat: sends one ping (0 or -errno); reads a pong if one is waiting
 * (0, or -EAGAIN); connects the REQ again after a missed beat (0). */
int jp_channels_hb_ping (jp_channels_t *self);
int jp_channels_hb_recv (jp_channels_t *self);
int jp_channels_hb_reset (jp_channels_t *self);

#endif
