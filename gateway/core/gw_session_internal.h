/* gw_session_internal: the session's struct, for the core only (the
 * other layers use gw_session.h's accessors; `make layers` keeps it so).
 * Threads: the loop thread only. */
#ifndef GW_SESSION_INTERNAL_H
#define GW_SESSION_INTERNAL_H

#include "gw_artifacts.h"
#include "gw_id.h"
#include "gw_changes.h"
#include "gw_session.h"

struct gw_session {
    gw_exec_options_t exec;     /* execution_options, for every kernel start */
    char id[GW_ID_SIZE];
    char tenant[GW_ID_SIZE];
    char workdir[1024];
    char input_dir[1040];
    char output_dir[1040];
    /* the same three as kernel code sees them (differ under the sandbox) */
    char visible_workdir[1024];
    char visible_input[1040];
    char visible_output[1040];
    ks_spec_t *spec;
    ks_kernel_t *kernel;
    const gw_session_host_t *host;  /* the server's */
    gw_limits_t limits;
    int64_t created_ms, last_used_ms;
    gw_job_t *queue_head, *queue_tail;
    gw_job_t *running;
    gw_session_started_t *start_waiters;  /* told when the first start is over */
    bool ever_ready;
    gw_session_record_t *record;    /* its cells, kept in the state folder (NULL: a
                                       one-shot run's, kept nowhere) */
    gw_changes_t *changes;      /* what changed in the folder since its last walk */
    gw_snapshot_t *last_walk;   /* that walk, while changes can tell (else NULL) */
    int own_file_system;        /* the folder is a mount (gw_disk): 1, 0, or -1 not yet known */
    bool restart_pending;       /* the kernel must be replaced (in tick) */
    bool starting_again;        /* a replaced kernel is not ready yet */
    bool failed;                /* the kernel could not be (re)started */
    bool destroying;            /* gw_session_destroy is running */
    bool ephemeral;             /* a one-shot run's session: not listed */
    bool doomed;                /* to be removed by the loop after this turn */
    bool paused;                /* no kernel: idle past CODEBOX_IDLE_PAUSE, or kept
                                   by an earlier server (gw_session_durable.c) */
    bool resumed_notice;        /* the next job's answer says the kernel was restarted */
    char *image;                /* the file system image (gw_disk) of a kept session
                                   loaded again, mounted on the folder at its first
                                   use (gw_session_mount_back), or NULL */
    int restarts;
    char exec_state[12];        /* the kernel's last iopub status ("idle", "busy"...) */
    char error[1024];
};

/* A session with its folders' names set and no kernel, or NULL with err
 * (gw_session_new's arguments). */
gw_session_t *gw_session_alloc (const gw_session_host_t *host, const char *id,
                                const char *tenant, ks_spec_t **spec_p,
                                const gw_limits_t *limits, const gw_exec_options_t *exec,
                                char *err, size_t err_len);

/* Mounts a kept session's image on its folder when it is not yet
 * (gw_session.c): every use of the folder asks first. */
void gw_session_mount_back (const gw_session_t *self);

/* Makes and starts a new kernel for the session (never a warm one).
 * Returns 0 or -errno with self->error set. */
int gw_session_start_kernel (gw_session_t *self);

#endif
