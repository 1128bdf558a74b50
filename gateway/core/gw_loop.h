/* gw_loop: the event loop, and nothing else: it sleeps in one poll(2) on
 * the mailbox's eventfd, a signalfd for SIGTERM/SIGINT and the items of
 * its registered sources (zmq_pollitem_t, polled by jp_poll: a kernel
 * channel, JP_POLL_ZMTP, is served there and counts as readable while a
 * whole message waits in it), until an item is posted, a signal, a
 * readable poll item or the earliest deadline a source asks for. No busy
 * polling. A source that gives a ZeroMQ socket must set JP_POLL_USED on
 * it whenever it used the socket since its last poll (see jp_poll.h). It
 * knows nothing of sessions, kernels, requests or transports (as Redis'
 * ae.c knows nothing of the server): the server (gw_server) and the stdio
 * transport register sources; posted items run themselves.
 *
 * One turn: poll; each source dispatches its poll items (in the order they
 * were added); a signal stops the loop; the posted items run (told whether
 * the loop is stopping); each source ticks; what the ticks posted runs
 * and the sources tick again (twice at most). Items the loop thread posts
 * itself write no eventfd (gw_mailbox_set_owner): the loop does not sleep
 * while any wait.
 *
 * Threads: gw_loop_post, gw_loop_call and gw_loop_stop may be called from
 * any thread; everything else runs in the thread that calls gw_loop_run. */
#ifndef GW_LOOP_H
#define GW_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#include <zmq.h>

#include "gw_mailbox.h"

typedef struct gw_loop gw_loop_t;

/* Something posted to the loop, embedded in its owner (a request, a
 * call): run in the loop thread, told whether the loop is stopping (then
 * it should only answer that it cannot be done). */
typedef struct gw_loop_item gw_loop_item_t;
struct gw_loop_item {
    gw_mailbox_item_t link;     /* first: the mailbox's */
    void (*run) (gw_loop_item_t *item, bool stopping);
    void *arg;                  /* the owner (the request, the call) */
    void *ctx;                  /* who it is for (the server) */
};

/* Something the loop polls and wakes for. Every function is optional. */
typedef struct {
    /* how many items poll_items may fill at most */
    int (*poll_count) (void *arg);
    /* fills up to max items, returns how many */
    int (*poll_items) (void *arg, zmq_pollitem_t *items, int max);
    /* the same items after polling (also when nothing was readable) */
    void (*dispatch) (void *arg, const zmq_pollitem_t *items, int n);
    /* the next time (jp_time_now_ms clock) the source needs a tick, or -1 */
    int64_t (*deadline) (void *arg, int64_t now);
    /* after the turn's requests */
    void (*tick) (void *arg, int64_t now);
} gw_loop_source_t;

#define GW_LOOP_MAX_SOURCES 8

/* Makes the loop with its mailbox and signalfd. SIGTERM and SIGINT must
 * already be blocked in every thread. NULL with err set on failure. */
gw_loop_t *gw_loop_new (char *err, size_t err_len);

/* Runs what is left in the mailbox (as stopping), frees. */
void gw_loop_destroy (gw_loop_t **self_p);

/* SIGUSR1 (first true) and SIGUSR2 (false) call fn in the loop thread;
 * without it they are ignored. SIGTERM and SIGINT stop the loop. */
void gw_loop_on_user_signal (gw_loop_t *self, void (*fn) (bool first, void *arg), void *arg);

/* Adds a source (source is borrowed and must outlive the loop). Returns 0
 * or -ENOSPC past GW_LOOP_MAX_SOURCES. */
int gw_loop_add_source (gw_loop_t *self, const gw_loop_source_t *source, void *arg);

/* Takes a source out (arg as it was added). */
void gw_loop_remove_source (gw_loop_t *self, const gw_loop_source_t *source, void *arg);

/* Turns until SIGTERM/SIGINT or gw_loop_stop. Returns 0. */
int gw_loop_run (gw_loop_t *self);

/* Asks the loop to stop after this turn (any thread). */
void gw_loop_stop (gw_loop_t *self);

/* True once stopping was asked for. */
bool gw_loop_stopping (const gw_loop_t *self);

/* Runs fn(arg) in the loop thread soon (any thread may call this; for
 * example a worker thread handing back a finished result). Returns 0 or
 * -ENOMEM. If the loop stops first, fn runs in gw_loop_drain or
 * gw_loop_destroy. */
typedef void (gw_loop_call_fn) (void *arg);
int gw_loop_call (gw_loop_t *self, gw_loop_call_fn *fn, void *arg);

/* Posts item (run and arg set) to the loop (any thread). */
void gw_loop_post (gw_loop_t *self, gw_loop_item_t *item);

/* Runs the waiting items as stopping. */
void gw_loop_drain (gw_loop_t *self);

#endif
