/* gw_job: one execution request as clients see it: its request_id, the
 * session it runs in, its status from queued to an end, its execution
 * (outputs), its new artifacts, and who watches it (observers); and the
 * bounded store of all of them (finished ones are dropped after an hour,
 * or when more than GW_JOBS_MAX or CODEBOX_RESULT_STORE_MB are kept, the
 * largest holder's first; then their id answers 404).
 *
 * Threads: the loop thread only. */
#ifndef GW_JOB_H
#define GW_JOB_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "gw_artifacts.h"
#include "gw_execution.h"

#define GW_JOBS_MAX 2000

/* A request id: "<session id>~<uuid>", so that an HTTP router in front of
 * many nodes can send /execute/{rid}/... to the node of its session. */
#define GW_JOB_ID_SIZE (64 + 1 + 36 + 1)
#define GW_JOB_KEEP_MS (3600 * 1000)

typedef struct gw_session gw_session_t;
typedef struct gw_job gw_job_t;

/* What an observer is told: each output (item borrowed), then one of the
 * ends, after which it is off the job's list: the job finished, the
 * observer's own wait ran out (until_ms), or the server shuts down (or the
 * job is dropped from the store). */
typedef enum {
    GW_JOB_OUTPUT,
    GW_JOB_INPUT,               /* the code's input() waits: item {"prompt","password"} */
    GW_JOB_FINISHED,
    GW_JOB_WAIT_OVER,
    GW_JOB_SHUTDOWN,
} gw_job_event_t;

typedef struct gw_job_observer gw_job_observer_t;
typedef void (gw_job_observer_fn) (gw_job_t *job, gw_job_event_t event, json_t *item,
                                   gw_job_observer_t *observer);

/* One watcher of a job: a REST long poll, an MCP call, a package install.
 * The observer's memory is its owner's; the job links it. */
struct gw_job_observer {
    gw_job_observer_fn *fn;
    void *arg;                  /* the owner's */
    int64_t until_ms;           /* > 0: told GW_JOB_WAIT_OVER at that time */
    gw_job_observer_t *next;    /* the job's list */
    /* the store's list of timed observers (until_ms > 0), so a loop turn
       looks at the waits, not at every job kept; set by gw_job_observe */
    gw_job_t *timed_job;
    gw_job_observer_t *timed_prev, *timed_next;
};

/* What a job is, for every layer (the struct is core-private:
 * gw_job_internal.h). */
const char *gw_job_id (const gw_job_t *job);
const char *gw_job_session_id (const gw_job_t *job);
/* Its session, or NULL once the session is gone. */
gw_session_t *gw_job_session (const gw_job_t *job);
gw_exec_status_t gw_job_status (const gw_job_t *job);
/* Its execution (outputs), NULL until it started. */
gw_execution_t *gw_job_execution (const gw_job_t *job);
bool gw_job_kernel_restarted (const gw_job_t *job);
/* The new or changed files of output/ it made (borrowed; NULL until it
 * finished). */
json_t *gw_job_new_artifacts (const gw_job_t *job);
/* Nobody will ask for it once finished (MCP): dropped at the next
 * expiry pass. */
void gw_job_set_transient (gw_job_t *job);

typedef struct gw_jobs gw_jobs_t;

gw_jobs_t *gw_jobs_new (void);
/* Completes every waiter (503) and frees every job. */
void gw_jobs_destroy (gw_jobs_t **self_p);

/* A new queued job for session (borrowed) with code (copied), kept in
 * the store. NULL on OOM. */
gw_job_t *gw_jobs_add (gw_jobs_t *self, gw_session_t *session, const char *session_id,
                       const char *tenant, const char *code, long timeout_ms);

/* The job with id visible to tenant, or NULL. */
gw_job_t *gw_jobs_find (gw_jobs_t *self, const char *id, const char *tenant);

/* Drops finished jobs past their keeping time (or transient); then,
 * while the store is over its count or its bytes, the oldest finished
 * result of the tenant that holds the most results (over the count) or
 * bytes (over the bytes), so one tenant's flood evicts its own results
 * and never another's while it holds more. A result someone waits on
 * stays. Returns the bytes freed. */
size_t gw_jobs_expire (gw_jobs_t *self, int64_t now);

/* Bounds the bytes finished results may hold (CODEBOX_RESULT_STORE_MB). */
void gw_jobs_set_max_bytes (gw_jobs_t *self, size_t max_bytes);
/* Bounds the jobs kept, running ones too (GW_JOBS_MAX unless set). */
void gw_jobs_set_max_count (gw_jobs_t *self, size_t max_count);

/* Forgets session in every job that points at it (the session is going). */
void gw_jobs_detach_session (gw_jobs_t *self, const gw_session_t *session);

/* Tells the observers whose wait ran out (GW_JOB_WAIT_OVER). Returns the
 * earliest remaining wait, or -1. */
int64_t gw_jobs_expire_waits (gw_jobs_t *self, int64_t now);

/* Tells every observer of every job GW_JOB_SHUTDOWN. */
void gw_jobs_shutdown (gw_jobs_t *self);

/* Adds observer to job (fn and arg set; until_ms 0 or a time). */
void gw_job_observe (gw_job_t *job, gw_job_observer_t *observer);

/* Takes observer off job's list, if it is on it. */
void gw_job_unobserve (gw_job_t *job, gw_job_observer_t *observer);

/* Lets the job's input() wait for an answer (gw_job_answer_input) and
 * tell its observers GW_JOB_INPUT, instead of failing at once. Before it
 * starts. */
void gw_job_allow_input (gw_job_t *job);
/* The prompt of the input() that waits ({"prompt","password"}, borrowed),
 * or NULL when none waits. */
json_t *gw_job_input_waiting (const gw_job_t *job);
/* Answers the waiting input(). Returns 0 or -ENOENT (none waits). */
int gw_job_answer_input (gw_job_t *job, const char *value);
/* Tells every observer that input() waits (item borrowed); the session
 * calls it. */
void gw_job_input (gw_job_t *job, json_t *item);

/* Tells every observer of an output item (borrowed). */
void gw_job_output (gw_job_t *job, json_t *item);

/* Marks job finished with status (its execution, if any, is ended), and
 * tells its observers. */
void gw_job_finish (gw_job_t *job, gw_exec_status_t status);

/* What a polling client sees as the status: "queued", "running",
 * "completed" or "error" (a timeout or cancel is an error too, so a
 * client that polls until completed/failed/error always stops). */
const char *gw_job_client_status (const gw_job_t *job);

/* Why a finished job is an error: "timeout", "cpu_time", "cancelled",
 * "kernel_died", or NULL (completed, not finished, or an exception of the
 * code itself). */
const char *gw_job_reason (const gw_job_t *job);

/* {"request_id","status","reason"?} (new). */
json_t *gw_job_status_json (const gw_job_t *job);
/* The full results object of the contract (new): "error" is null or the
 * failure ({"ename","evalue","traceback","reason"?}); tracebacks without
 * ANSI colours; "files" the base64 PNGs in the order they came, each sent
 * only there: its output item names it by "file": INDEX instead
 * (gw_job_client_output). The stored outputs keep their images. */
json_t *gw_job_results_json (gw_job_t *job);

/* One stored output item as clients get it (new, NULL on OOM):
 * tracebacks without ANSI colours, no "metadata" (the notebook's, kept
 * for the record of cells), and an item that holds a base64
 * "image/png" in its data gets it out and "file": *files instead (then
 * *files counts it), the index of that PNG in the results' "files".
 * Start *files at 0 for the first item and pass the items in order. The
 * item is left as it is. */
json_t *gw_job_client_output (json_t *item, size_t *files);

bool gw_job_finished (const gw_job_t *job);

#endif
