/* gw_loop: the event loop, and nothing else: it sleeps in zmq_poll on the
 * mailbox's eventfd, a signalfd for SIGTERM/SIGINT and the items of its
 * registered sources, until a request, a cross-thread call, a signal, a
 * readable item or the earliest deadline a source asks for. No busy
 * polling. It knows nothing of sessions, kernels or transports (as Redis'
 * ae.c knows nothing of the server): the server (gw_server) and the stdio
 * transport register sources; requests go to one handler.
 *
 * One turn: poll; each source dispatches its items (in the order they were
 * added); a signal stops the loop; the mailbox's calls run and its requests
 * go to the handler (or get 503 once stopping); each source ticks.
 *
 * Threads: gw_loop_post, gw_loop_call and gw_loop_stop may be called from
 * any thread; everything else runs in the thread that calls gw_loop_run. */
#ifndef GW_LOOP_H
#define GW_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#include <zmq.h>

#include "gw_request.h"

typedef struct gw_loop gw_loop_t;

/* Handles one request in the loop thread; must complete it (now or later). */
typedef void (gw_loop_request_fn) (gw_request_t *req, void *arg);

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

/* Makes the loop with its mailbox and signalfd; handler gets every request.
 * SIGTERM and SIGINT must already be blocked in every thread. NULL with
 * err set on failure. */
gw_loop_t *gw_loop_new (gw_loop_request_fn *handler, void *arg, char *err, size_t err_len);

/* Runs what is left in the mailbox (calls run, requests get 503), frees. */
void gw_loop_destroy (gw_loop_t **self_p);

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

/* Hands a request to the loop (any thread); matches gw_http_post_fn. */
void gw_loop_post (gw_request_t *req, void *loop);

/* Runs the waiting calls and answers the waiting requests with 503. */
void gw_loop_drain (gw_loop_t *self);

#endif
