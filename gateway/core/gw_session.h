/* gw_session: one session: its folder (STATE_DIR/<id>/ with input/ and
 * output/, the kernel's working directory), its kernel, and its jobs, run
 * one at a time in the order they came. It applies the execution timeout
 * (interrupt, then after a grace period restart the kernel), restarts a
 * kernel that died, and diffs output/ around each execution for its new
 * artifacts. A session never frees itself from inside a kernel callback:
 * restarts wait for gw_session_tick.
 *
 * Threads: the loop thread only (it owns the kernel's sockets). */
#ifndef GW_SESSION_H
#define GW_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "gw_exec_options.h"
#include "gw_job.h"
#include "gw_launch.h"
#include "gw_session_record.h"
#include "ks_kernel.h"

typedef struct gw_server gw_server_t;
struct gw_pool;

/* What a session needs of the server that holds it (the server's,
 * alive as long as it): how its kernels start (with the features' hooks),
 * the warm pool, the job store, and the server itself, only to hand back
 * through gw_session_server. */
typedef struct {
    gw_launch_ctx_t launch;
    struct gw_pool *pool;       /* NULL once the loop stopped */
    gw_jobs_t *jobs;
    gw_server_t *server;
} gw_session_host_t;

typedef struct {
    long ttl_s;
    long idle_s;
    long exec_timeout_s;
    long max_output_bytes;
} gw_limits_t;

/* Told once the session's first start is over: the kernel is ready (ok),
 * or it failed or the session ended first (ok false; gw_session_error says
 * why). The waiter's memory is its owner's. */
typedef struct gw_session_started gw_session_started_t;
typedef void (gw_session_started_fn) (gw_session_t *session, bool ok,
                                      gw_session_started_t *waiter);
struct gw_session_started {
    gw_session_started_fn *fn;
    void *arg;                  /* the owner's */
    gw_session_started_t *next;   /* the session's list */
};

/* What a session is, for every layer (the struct is core-private:
 * gw_session_internal.h). Strings are borrowed and live as long as the
 * session. */
const char *gw_session_id (const gw_session_t *self);
const char *gw_session_tenant (const gw_session_t *self);
const ks_spec_t *gw_session_spec (const gw_session_t *self);
gw_server_t *gw_session_server (const gw_session_t *self);
const gw_limits_t *gw_session_limits (const gw_session_t *self);
int64_t gw_session_created_ms (const gw_session_t *self);
/* Why the kernel failed or died, "" when it did not. */
const char *gw_session_error (const gw_session_t *self);
/* The folders on the host, and as kernel code sees them (they differ
 * under the sandbox). */
const char *gw_session_workdir (const gw_session_t *self);
const char *gw_session_input_dir (const gw_session_t *self);
const char *gw_session_visible_workdir (const gw_session_t *self);
const char *gw_session_visible_input (const gw_session_t *self);
/* The record of the cells it ran (borrowed; NULL for a one-shot run's),
 * and its settings as the record keeps them (new: session_id, tenant,
 * kernel, kernelspec {name, display_name, language}, created (RFC 3339),
 * created_ms (that date in ms since 1970: wall time, where
 * gw_session_created_ms is jp_time's), limits, execution_options). */
gw_session_record_t *gw_session_cell_record (const gw_session_t *self);
json_t *gw_session_settings_json (const gw_session_t *self);
/* A one-shot run's session: listed by no one. */
bool gw_session_ephemeral (const gw_session_t *self);
void gw_session_set_ephemeral (gw_session_t *self);

/* Makes the folders and starts the kernel of spec (stolen), with exec
 * (execution_options, copied; NULL: none; a warm kernel of the pool only
 * without custom ones). NULL with a sentence in err when the folder cannot
 * be made or the kernel launched. */
gw_session_t *gw_session_new (const gw_session_host_t *host, const char *id,
                              const char *tenant, ks_spec_t **spec_p,
                              const gw_limits_t *limits, const gw_exec_options_t *exec,
                              char *err, size_t err_len);

/* Ends the kernel (SIGKILL to its group), ends its jobs as cancelled,
 * answers start waiters, removes the folder when asked, frees. */
void gw_session_destroy (gw_session_t **self_p, bool remove_folder);

/* Queues job (kept by the job store) and starts it when the kernel is free. */
void gw_session_enqueue (gw_session_t *self, gw_job_t *job);

/* True (with why) when code of code_len bytes may not join the queue: it
 * already holds CODEBOX_MAX_QUEUED_EXECUTIONS jobs, or GW_SESSION_QUEUE_BYTES
 * of code. */
#define GW_SESSION_QUEUE_BYTES (64u << 20)
bool gw_session_queue_full (const gw_session_t *self, size_t code_len, char *why,
                            size_t why_len);

/* Cancels a queued job at once, or interrupts a running one. */
void gw_session_cancel (gw_session_t *self, gw_job_t *job);

/* Ends the session after this loop turn (a handler or a kernel callback
 * must not free it under its caller); nothing when it is already ending. */
void gw_session_end_later (gw_session_t *self);

/* Tells waiter when the first start is over (at once when it is). */
void gw_session_when_started (gw_session_t *self, gw_session_started_t *waiter);

/* Deadline and timers, as ks_kernel's (its kernel is polled and
 * dispatched by the server's gw_kernel_epoll). */
int64_t gw_session_deadline (const gw_session_t *self);
void gw_session_tick (gw_session_t *self, int64_t now);

/* Sends a client's message to the kernel (signed with its key). Returns 0,
 * -EAGAIN while the kernel is not ready, or another negative code. */
int gw_session_send (gw_session_t *self, jp_channel_t channel, const jp_msg_t *msg);
/* Interrupts the kernel as an interrupt_request would. 0 or negative. */
int gw_session_interrupt (gw_session_t *self);
/* Replaces the kernel now (its state is lost): a running job ends
 * cancelled, queued jobs run on the new kernel. */
void gw_session_restart (gw_session_t *self);
/* Jupyter's execution_state: "starting", "idle", "busy", "restarting" or
 * "dead". */
const char *gw_session_execution_state (const gw_session_t *self);
int64_t gw_session_last_used_ms (const gw_session_t *self);

/* The bytes the session may still write to its folder: the free space of
 * its own file system (gw_disk), else CODEBOX_DISK_QUOTA_MB less what the
 * folder holds (a walk), and never more than the disk has. May be <= 0. */
long long gw_session_disk_room (gw_session_t *self);

/* ---- paused sessions (gw_session_durable.c) ---- */

/* What the first answer after a paused session's kernel started again
 * says (a stderr stream item before the code's own outputs). */
#define GW_SESSION_RESUMED_NOTICE \
    "codebox: the kernel was restarted (the session was paused): variables are gone, " \
    "files are kept"

/* True when the session has no kernel: paused (status "paused"). */
bool gw_session_paused (const gw_session_t *self);
/* True when the session could be paused now: a kernel that is ready and
 * idle, nothing queued or running, kept (not a one-shot run's). */
bool gw_session_can_pause (const gw_session_t *self);
/* Stops the kernel (its process, relay and sandbox go; its memory is
 * freed), keeping the folder, settings and record. */
void gw_session_pause (gw_session_t *self);
/* Starts a kernel again for a paused session (same kernelspec,
 * execution_options and limits; never a warm one): the record starts a
 * new run, Jupyter clients see status "restarting", and the next job's
 * first output is GW_SESSION_RESUMED_NOTICE. Returns 0 (also when not
 * paused), or -errno with gw_session_error set (it stays paused). */
int gw_session_resume (gw_session_t *self);

/* Marks the session used now (idle time restarts). */
void gw_session_touch (gw_session_t *self);

/* "starting", "idle", "busy" or "dead". */
const char *gw_session_status (const gw_session_t *self);

/* The session as the API shows it (new): session_id, kernel, workdir,
 * input_dir, output_dir, age_seconds, idle_seconds, status; and the
 * effective limits when with_limits. */
json_t *gw_session_json (const gw_session_t *self, bool with_limits);

#endif
