/* gw_server: the application the loop serves: it owns the state folder
 * (locked, one server each), the runtime folder for kernels, the session
 * table, the job store, the metrics and the services (sandbox, warm pool,
 * SQL workers, downloads, package installs), and registers with its
 * gw_loop the source that polls every kernel's sockets and pidfd and runs
 * the timers (kernel handshakes and heartbeats, execution timeouts, long
 * polls, the session reaper, the result store's bounds). Transports hand
 * it requests (gw_server_post) and get the server passed to their
 * handlers; they reach its sessions through gw_sessions (the table is the
 * core's own: gw_server_internal.h).
 *
 * Threads: gw_server_post, gw_server_call and gw_server_stop may be called
 * from any thread; everything else runs in the loop thread. */
#ifndef GW_SERVER_H
#define GW_SERVER_H

#include "gw_config.h"
#include "gw_hooks.h"
#include "gw_job.h"
#include "gw_loop.h"
#include "gw_metrics.h"
#include "gw_request.h"
#include "gw_session.h"
#include "jp_connection.h"
#include "jp_message.h"

typedef struct gw_server gw_server_t;
struct gw_sql;
struct gw_downloads;
struct gw_packages;
struct gw_volumes;
struct gw_sandbox;

/* Handles one request in the loop thread; must complete it (now or later). */
typedef void (gw_server_handler_fn) (gw_server_t *server, gw_request_t *req, void *arg);

/* Makes the server and its loop: state dir (made absolute, locked, swept),
 * a short runtime folder for kernel connection files and sockets, the
 * services. SIGTERM and SIGINT must already be blocked in every thread.
 * NULL with err set on failure. */
gw_server_t *gw_server_new (const gw_config_t *config, char *err, size_t err_len);

/* Sets the request handler (before gw_server_run; until then, and
 * without one, requests get 404). */
void gw_server_set_handler (gw_server_t *self, gw_server_handler_fn *handler, void *arg);

/* Ends every session (and so every kernel), answers what waits with 503,
 * removes the runtime folder, frees. */
void gw_server_destroy (gw_server_t **self_p);

/* Runs the loop until SIGTERM/SIGINT or gw_server_stop, then ends every
 * session and answers what waits. Returns 0. */
int gw_server_run (gw_server_t *self);

/* Asks the loop to stop (any thread). */
void gw_server_stop (gw_server_t *self);

/* Runs fn(server, arg) in the loop thread soon (any thread; for example a
 * worker thread handing back a finished result). Returns 0 or -ENOMEM. If
 * the loop stops first, fn runs while the server is destroyed. */
typedef void (gw_server_call_fn) (gw_server_t *server, void *arg);
int gw_server_call (gw_server_t *self, gw_server_call_fn *fn, void *arg);

/* Hands a request to the loop (any thread); matches gw_http_post_fn. */
void gw_server_post (gw_request_t *req, void *server);

/* The loop, for transports that add sources of their own (stdin). */
gw_loop_t *gw_server_loop (gw_server_t *self);

/* Adds or removes a feature's hooks (gw_hooks.h; hooks borrowed).
 * Returns 0 or -ENOSPC. */
int gw_server_add_hooks (gw_server_t *self, const gw_session_hooks_t *hooks, void *arg);
void gw_server_remove_hooks (gw_server_t *self, const gw_session_hooks_t *hooks, void *arg);
/* True while those hooks are on (a late answer's check that its feature
 * still exists). */
bool gw_server_has_hooks (gw_server_t *self, const gw_session_hooks_t *hooks, void *arg);
/* Lets every feature annotate a listing of session's artifacts. */
void gw_server_annotate (gw_server_t *self, const gw_session_t *session, json_t *artifacts);

/* The features' services, held for whoever needs them (set by the
 * program that made them, before gw_server_run; it destroys them after
 * gw_server_run returns, before gw_server_destroy). */
void gw_server_set_sql (gw_server_t *self, struct gw_sql *sql);
void gw_server_set_downloads (gw_server_t *self, struct gw_downloads *downloads);
void gw_server_set_packages (gw_server_t *self, struct gw_packages *packages);
void gw_server_set_volumes (gw_server_t *self, struct gw_volumes *volumes);

/* Loop-thread accessors. */
const gw_config_t *gw_server_config (gw_server_t *self);
const char *gw_server_state_dir (gw_server_t *self);
gw_jobs_t *gw_server_jobs (gw_server_t *self);
gw_metrics_t *gw_server_metrics (gw_server_t *self);
/* The SQL workers (exec_sql). */
struct gw_sql *gw_server_sql (gw_server_t *self);

/* The session directory shared with other nodes (CODEBOX_DIRECTORY_URL),
 * or NULL on one machine. */
struct gw_registry *gw_server_registry (gw_server_t *self);

/* Draining: the node takes no new session (its live ones go on); /healthz
 * says so. Any thread may read it. */
void gw_server_set_draining (gw_server_t *self, bool draining);
bool gw_server_draining (gw_server_t *self);
/* upload_file's downloads, or NULL (none, or the server stops). */
struct gw_downloads *gw_server_downloads (gw_server_t *self);
/* Package installs, or NULL (none, or the server stops). */
struct gw_packages *gw_server_packages (gw_server_t *self);
/* The tenants' named volumes, or NULL (none, or the server stops). */
struct gw_volumes *gw_server_volumes (gw_server_t *self);
/* The sandbox policy for kernels. */
struct gw_sandbox *gw_server_sandbox (gw_server_t *self);
/* What a client's execution_options may ask of this server (the
 * sandbox's and settings' bounds; this server's own folders, which no
 * mount shows). */
gw_exec_rules_t gw_server_exec_rules (gw_server_t *self);

#endif
