/* gw_http: the HTTP server (libmicrohttpd, run by the loop thread). It
 * turns each HTTP request into a gw_request_t, hands it to post (which
 * posts it to the loop's mailbox), keeps the connection suspended, and
 * sends the answer once the loop completes the request. A PUT whose route
 * writes its body to a file (gw_routes) is posted first without it
 * (GW_BODY_AHEAD) and again once the body is in the upload the loop gave.
 *
 * Threads: the loop thread (gw_http_run, post, completion); new and
 * destroy run on the main thread, which is the loop thread. */
#ifndef GW_HTTP_H
#define GW_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "gw_auth.h"
#include "gw_metrics.h"
#include "gw_origin.h"
#include "gw_request.h"
#include "gw_stream.h"

typedef struct gw_http gw_http_t;

/* Hands a request to the loop (called inside gw_http_run). */
typedef void (gw_http_post_fn) (gw_request_t *req, void *arg);

/* The client of a streamed answer left before its end (inside
 * gw_http_run; stream is borrowed: take a reference to keep it). */
typedef void (gw_http_gone_fn) (gw_stream_t *stream, void *arg);

/* Serves on listen_fd (a listening socket, see gw_bind_listen; taken
 * over, also on failure) within limits, judging every request's Host and
 * Origin with origin (may be NULL: no checks, for tests only). NULL with
 * err set. */
typedef struct {
    unsigned per_address;       /* connections one client address may hold */
    unsigned idle_s;            /* a connection idle this long is closed (long polls
                                   and streams, suspended, are not idle) */
    unsigned request_s;         /* a connection that has not delivered a whole request
                                   this long after it was ready for one is cut
                                   (gw_conns); the idle timeout when that is longer */
} gw_http_limits_t;

gw_http_t *gw_http_new (int listen_fd, const gw_http_limits_t *limits, const gw_auth_t *auth,
                        const gw_origin_t *origin, gw_http_post_fn *post, gw_http_gone_fn *gone,
                        void *arg, char *err, size_t err_len);

/* Tells whether the node drains (any thread); /healthz says "draining"
 * then. Set before serving. */
typedef bool (gw_http_state_fn) (void *arg);
void gw_http_set_draining (gw_http_t *self, gw_http_state_fn *fn, void *arg);

/* Counts each answered request into metrics (set before serving). */
void gw_http_set_metrics (gw_http_t *self, gw_metrics_t *metrics);

/* The loop runs the server: it polls gw_http_poll_fd (libmicrohttpd's
 * epoll set; readable: call gw_http_run), calls gw_http_tick at the end of
 * every turn (it runs the server when a connection was resumed since the
 * last run, which does not wake that fd, or a timer is due; while bodies
 * are being written to files, it looks each second at those that stalled
 * for a client that left) and when
 * gw_http_timeout_ms has passed (-1: no timer; 0 when a connection was
 * resumed after the tick, by what the tick posted). A turn with no HTTP work
 * costs no call into libmicrohttpd (each is an epoll_wait). */
int gw_http_poll_fd (const gw_http_t *self);
void gw_http_run (gw_http_t *self);
void gw_http_tick (gw_http_t *self);
int64_t gw_http_timeout_ms (gw_http_t *self);

/* The port listened on. */
int gw_http_port (const gw_http_t *self);

/* Stops listening and ends every connection. Every posted request must
 * have been completed first. */
void gw_http_destroy (gw_http_t **self_p);

#endif
