/* gw_job: one execution request as clients see it: its request_id, the
 * session it runs in, its status from queued to an end, its execution
 * (outputs), its new artifacts, and the long polls waiting for it; and the
 * bounded store of all of them (finished ones are dropped after an hour or
 * when more than GW_JOBS_MAX are kept, then their id answers 404).
 *
 * Threads: the loop thread only. */
#ifndef GW_JOB_H
#define GW_JOB_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "gw_artifacts.h"
#include "gw_execution.h"
#include "gw_request.h"

#define GW_JOBS_MAX 2000
#define GW_JOB_KEEP_MS (3600 * 1000)

typedef struct gw_session gw_session_t;
typedef struct gw_job gw_job_t;

typedef enum { GW_JOB_OUTPUT, GW_JOB_FINISHED } gw_job_event_t;

/* Told of each output (item borrowed) and of the end (item NULL). */
typedef void (gw_job_observer_fn) (gw_job_t *job, gw_job_event_t event, json_t *item,
                                   void *arg);

struct gw_job {
    char id[40];
    char session_id[65];
    char tenant[65];
    gw_session_t *session;      /* NULL once the session is gone */
    char *code;
    gw_execution_t *exec;       /* made when it starts */
    gw_exec_status_t status;
    gw_exec_status_t stop_as;   /* TIMEOUT or CANCELLED once asked to stop */
    long timeout_ms;
    int64_t created_ms, deadline_ms, grace_ms, finished_ms;
    bool kernel_restarted;
    json_t *new_artifacts;
    gw_snapshot_t *before;
    gw_request_t *waiters;      /* long polls, linked by ->next */
    gw_job_observer_fn *observer;   /* an MCP call watching it, or NULL */
    bool transient;             /* nobody will ask for it once finished (MCP):
                                   dropped at the next expiry pass */
    void *observer_arg;
    gw_job_t *next_queued;
    bool held;                  /* the kernel is done; a feature holds its end
                                   (gw_server_end_job) */
    long messages;              /* kernel messages fed to its execution */
    long long bytes;            /* and their bytes, every frame */
    long long cpu_start_ns;     /* the kernel's CPU time when it started */
    int64_t cpu_check_ms;       /* next look at its CPU time, 0 = none */
};

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

/* Drops finished jobs past their keeping time, over the count, or (oldest
 * first) over the byte bound. Returns the bytes freed. */
size_t gw_jobs_expire (gw_jobs_t *self, int64_t now);

/* Bounds the bytes finished results may hold (CODEBOX_RESULT_STORE_MB). */
void gw_jobs_set_max_bytes (gw_jobs_t *self, size_t max_bytes);

/* Forgets session in every job that points at it (the session is going). */
void gw_jobs_detach_session (gw_jobs_t *self, const gw_session_t *session);

/* Answers long polls whose wait ran out (409 with the status). Returns the
 * earliest remaining wait deadline, or -1. */
int64_t gw_jobs_expire_waits (gw_jobs_t *self, int64_t now);

/* Completes every waiting long poll of every job with 503 (shutdown). */
void gw_jobs_fail_all_waiters (gw_jobs_t *self);

/* Marks job finished with status (its execution, if any, is ended), and
 * answers its long polls with the results. */
void gw_job_finish (gw_job_t *job, gw_exec_status_t status);

/* {"request_id","status"} (new). */
json_t *gw_job_status_json (const gw_job_t *job);
/* The full results object of the contract (new). */
json_t *gw_job_results_json (gw_job_t *job);

bool gw_job_finished (const gw_job_t *job);

#endif
