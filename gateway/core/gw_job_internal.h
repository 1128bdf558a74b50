/* gw_job_internal: the job's struct, for the core only (the other layers
 * use gw_job.h's accessors; `make layers` keeps it so).
 * Threads: the loop thread only. */
#ifndef GW_JOB_INTERNAL_H
#define GW_JOB_INTERNAL_H

#include "gw_job.h"
#include "gw_id.h"

struct gw_job {
    gw_jobs_t *store;           /* the store that keeps it */
    char id[GW_JOB_ID_SIZE];
    char session_id[GW_ID_SIZE];
    char tenant[GW_ID_SIZE];
    gw_session_t *session;      /* NULL once the session is gone */
    char *code;
    gw_execution_t *exec;       /* made when it starts */
    gw_exec_status_t status;
    gw_exec_status_t stop_as;   /* TIMEOUT or CANCELLED once asked to stop */
    const char *reason;         /* why it ends as an error (gw_job_reason; static), or NULL */
    long timeout_ms;
    int64_t created_ms, deadline_ms, grace_ms, finished_ms;
    bool kernel_restarted;
    json_t *new_artifacts;
    gw_snapshot_t *before;
    gw_job_observer_t *observers;   /* long polls, MCP calls, installs */
    bool allow_input;           /* input() asks the observers (MCP) */
    json_t *input;              /* the prompt input() waits on, or NULL */
    bool transient;             /* nobody will ask for it once finished (MCP):
                                   dropped at the next expiry pass */
    gw_job_t *next_queued;
    bool held;                  /* the kernel is done; a feature holds its end
                                   (gw_hooks_end_job) */
    long messages;              /* kernel messages fed to its execution */
    long long bytes;            /* and their bytes, every frame */
    bool recorded;              /* a client's code: kept in the session's record of cells */
    bool replay;                /* a replay of that record (POST /sessions/{id}/replay) */
    json_t *results_extra;      /* more fields of its results object, or NULL */
    long long cpu_start_ns;     /* the kernel's CPU time when it started */
    int64_t cpu_check_ms;       /* next look at its CPU time, 0 = none */
};

#endif
