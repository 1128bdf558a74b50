/* gw_loop: the loop thread. It owns every kernel socket (through the
 * sessions), the session table and the job store. It sleeps in zmq_poll
 * on the mailbox's eventfd, a signalfd for SIGTERM/SIGINT and every
 * kernel's sockets and pidfd, until a message, a request, a signal or the
 * next timer (kernel handshakes and heartbeats, execution timeouts, long
 * polls, the session reaper). No busy polling.
 *
 * Threads: gw_loop_post may be called from any thread; everything else
 * runs in the thread that calls gw_loop_run. */
#ifndef GW_LOOP_H
#define GW_LOOP_H

#include "gw_config.h"
#include "gw_job.h"
#include "gw_metrics.h"
#include "gw_request.h"
#include "gw_session.h"

typedef struct gw_loop gw_loop_t;

/* Handles one request in the loop thread; must complete it (now or later). */
typedef void (gw_loop_handler_fn) (gw_loop_t *loop, gw_request_t *req);

/* Makes the loop: state dir (made absolute), a short runtime folder for
 * kernel connection files and sockets, the mailbox and the signalfd.
 * SIGTERM and SIGINT must already be blocked in every thread. NULL with
 * err set on failure. */
gw_loop_t *gw_loop_new (const gw_config_t *config, gw_loop_handler_fn *handler, char *err,
                        size_t err_len);

/* Ends every session (and so every kernel), answers what waits with 503,
 * removes the runtime folder, frees. */
void gw_loop_destroy (gw_loop_t **self_p);

/* Runs until SIGTERM/SIGINT or gw_loop_stop. Returns 0. */
int gw_loop_run (gw_loop_t *self);

/* Asks the loop to stop (any thread). */
void gw_loop_stop (gw_loop_t *self);

/* Runs fn(arg) in the loop thread soon (any thread may call this; for
 * example a worker thread handing back a finished result). Returns 0 or
 * -ENOMEM. If the loop stops first, fn runs during gw_loop_destroy. */
typedef void (gw_loop_call_fn) (gw_loop_t *loop, void *arg);
int gw_loop_call (gw_loop_t *self, gw_loop_call_fn *fn, void *arg);

/* Hands a request to the loop (any thread); matches gw_http_post_fn. */
void gw_loop_post (gw_request_t *req, void *loop);

/* Extensions (set before gw_loop_run, called in the loop thread): one
 * extra file descriptor to watch (stdin for MCP over stdio), a timer
 * source (deadline returns the next time or -1; tick runs after each
 * turn), and the application object the handler may need. */
typedef void (gw_loop_fd_fn) (gw_loop_t *loop, void *arg);
typedef int64_t (gw_loop_deadline_fn) (void *arg);
typedef void (gw_loop_tick_fn) (void *arg, int64_t now);
void gw_loop_watch_fd (gw_loop_t *self, int fd, gw_loop_fd_fn *fn, void *arg);
void gw_loop_set_timer (gw_loop_t *self, gw_loop_deadline_fn *deadline, gw_loop_tick_fn *tick,
                        void *arg);
void gw_loop_set_app (gw_loop_t *self, void *app);
void *gw_loop_app (gw_loop_t *self);

/* Loop-thread accessors. */
const gw_config_t *gw_loop_config (gw_loop_t *self);
void *gw_loop_zmq (gw_loop_t *self);
const char *gw_loop_runtime_dir (gw_loop_t *self);
const char *gw_loop_state_dir (gw_loop_t *self);
gw_jobs_t *gw_loop_jobs (gw_loop_t *self);
gw_metrics_t *gw_loop_metrics (gw_loop_t *self);
/* The SQL workers (exec_sql). */
struct gw_sql *gw_loop_sql (gw_loop_t *self);
/* The Azure Blob uploader, or NULL when blob upload is off. */
struct gw_blob *gw_loop_blob (gw_loop_t *self);
/* The sandbox policy for kernels. */
struct gw_sandbox *gw_loop_sandbox (gw_loop_t *self);
/* The warm pool (NULL once the loop stopped). */
struct gw_pool *gw_loop_pool (gw_loop_t *self);

/* Sessions: find by id within a tenant; add; count; the i-th. */
gw_session_t *gw_loop_find_session (gw_loop_t *self, const char *id, const char *tenant);
int gw_loop_add_session (gw_loop_t *self, gw_session_t *session);
size_t gw_loop_session_count (gw_loop_t *self);
gw_session_t *gw_loop_session_at (gw_loop_t *self, size_t i);
/* Ends a session and removes its folder. */
void gw_loop_remove_session (gw_loop_t *self, gw_session_t *session);

#endif
