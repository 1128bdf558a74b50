/* jp_zmtp_client: the client end of one ZMTP 3.0 connection (RFC 23 and
 * 37, NULL mechanism) to a kernel's socket, made and served by the thread
 * that owns it, without libzmq: a DEALER (shell, control, stdin; with a
 * routing id for shell and stdin), a SUB subscribed to everything (iopub)
 * or a REQ (heartbeat) over a Unix or TCP stream.
 *
 * Why not libzmq: every message crossed libzmq's I/O thread and its
 * mailbox (an eventfd written and read, a thread woken) both ways; that
 * was most of the gateway's CPU per call (docs/PERFORMANCE.md). Here a
 * send is one write(2) and a turn's messages one read(2), on the loop
 * thread.
 *
 * What it does as libzmq's did: connects without blocking and, while the
 * kernel is not listening (it starts) or after the connection ends, tries
 * again (10 ms, doubling to 100 ms); messages sent meanwhile wait and go
 * once connected (bytes of an ended connection are dropped). Receiving
 * holds at most one message past what was read whole: a message of more
 * than JP_ZMTP_PARTS_MAX frames or JP_ZMTP_MESSAGE_MAX bytes is skipped as
 * it comes (never held) and reported as JP_ERR_TRUNCATED. A peer that
 * breaks ZMTP (another mechanism, ZMTP 1 or 2, bad flags, a command in a
 * message) has its connection ended, as libzmq does.
 *
 * Polling: poll jp_zmtp_client_fd for jp_zmtp_client_poll_events, give
 * what came back to jp_zmtp_client_service; a message already read whole
 * (jp_zmtp_client_readable) wakes nothing, so ask before sleeping.
 *
 * Threads: none of its own; one thread owns a client. */
#ifndef JP_ZMTP_CLIENT_H
#define JP_ZMTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "jp_message.h"

#define JP_ZMTP_PARTS_MAX 256                   /* frames of one message kept */
#define JP_ZMTP_MESSAGE_MAX (64ull << 20)       /* bytes of one message kept */
#define JP_ZMTP_SEND_MAX (64ull << 20)          /* bytes waiting to be written */

typedef enum { JP_ZMTP_DEALER, JP_ZMTP_SUB, JP_ZMTP_REQ } jp_zmtp_type_t;

typedef struct jp_zmtp_client jp_zmtp_client_t;

/* A client of this type for the socket at addr (copied), with routing_id
 * (NULL or "": none) sent in its READY. Starts connecting at once.
 * Returns NULL and sets errno on failure. */
jp_zmtp_client_t *jp_zmtp_client_new (jp_zmtp_type_t type, const char *routing_id,
                                      const struct sockaddr_storage *addr, socklen_t addr_len);

/* Closes the connection and frees the client; nulls *self_p. Safe on NULL. */
void jp_zmtp_client_destroy (jp_zmtp_client_t **self_p);

/* The connection's descriptor, or -1 while it waits to connect again. */
int jp_zmtp_client_fd (const jp_zmtp_client_t *self);

/* The poll(2) events to wait for: POLLIN, and POLLOUT while connecting
 * or with bytes to write. 0 without a descriptor. */
short jp_zmtp_client_poll_events (const jp_zmtp_client_t *self);

/* Serves what poll(2) said of the descriptor: finishes a connect, writes
 * what waits, reads what came. */
void jp_zmtp_client_service (jp_zmtp_client_t *self, short revents);

/* Reads what came now, as if poll(2) had said POLLIN: for a caller that
 * does not watch the descriptor for a while (jp_channels_pull). Nothing
 * unless connected. */
void jp_zmtp_client_read_now (jp_zmtp_client_t *self);

/* True if jp_zmtp_client_recv has a message without reading. */
bool jp_zmtp_client_readable (const jp_zmtp_client_t *self);

/* True if the client needs a poll of its own rather than a plain POLLIN
 * on its descriptor: a message read whole, bytes to write, a connect in
 * progress. */
bool jp_zmtp_client_busy (const jp_zmtp_client_t *self);

/* When to connect again (jp_time_now_ms's clock), or -1. */
int64_t jp_zmtp_client_deadline (const jp_zmtp_client_t *self);

/* Connects again if it is time. */
void jp_zmtp_client_tick (jp_zmtp_client_t *self, int64_t now);

/* Ends the connection and connects again at once (a REQ stuck without
 * its reply); what waited to be sent or read is dropped. */
void jp_zmtp_client_reconnect (jp_zmtp_client_t *self);

/* How many times the descriptor changed (a connect, a close). */
uint64_t jp_zmtp_client_fd_changes (const jp_zmtp_client_t *self);

/* Queues one message of n frames (a REQ adds its empty delimiter) and
 * writes what it can. Returns 0, or -EAGAIN when JP_ZMTP_SEND_MAX bytes
 * wait already, or -ENOMEM. */
int jp_zmtp_client_send (jp_zmtp_client_t *self, const jp_frame_t *frames, size_t n);

/* Takes the next message: its frames as views into the client's buffer
 * (parts, up to JP_ZMTP_PARTS_MAX; a REQ's delimiter left out), valid
 * until the next call on the client, and *bytes the size of every frame.
 * Returns the number of frames; -EAGAIN when no whole message is here
 * (reads first if the descriptor may have more); JP_ERR_TRUNCATED for a
 * message skipped (*bytes says how big it was). */
int jp_zmtp_client_recv (jp_zmtp_client_t *self, jp_part_t *parts, size_t *bytes);

/* After jp_zmtp_client_recv: hands over the memory its views point into
 * (free it), so they outlive the client's next call. NULL on ENOMEM. */
void *jp_zmtp_client_detach (jp_zmtp_client_t *self);

#endif
