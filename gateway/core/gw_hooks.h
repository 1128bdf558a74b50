/* gw_hooks: what features add to every session without the core naming
 * them (a kernel's extra environment, annotations of artifact listings,
 * holding a job's end, per-session timers, a session's end, kernel
 * messages and states, a client holding a session open), and the table
 * of those the server holds. The server owns one table; sessions and the
 * launcher call through it. Below the server, sessions and the launcher:
 * it knows a session by name only, and a job only to hold its end.
 *
 * Threads: the loop thread only. */
#ifndef GW_HOOKS_H
#define GW_HOOKS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "gw_job.h"
#include "jp_connection.h"
#include "jp_message.h"

/* What a feature adds to every session without the core knowing it
 * (artifact uploads, SQL connections, signed links, package paths). Every
 * function is optional; all run in the loop thread. */
#define GW_KERNEL_ENV_MAX 8
typedef struct {
    char vars[GW_KERNEL_ENV_MAX][1100];     /* "NAME=value" */
    int n;
} gw_kernel_env_t;

typedef struct {
    /* adds "NAME=value" for a kernel whose session folder it sees at
       visible_workdir */
    void (*kernel_env) (void *arg, const char *visible_workdir, gw_kernel_env_t *env);
    /* adds links or states to a listing of the session's artifacts */
    void (*annotate) (void *arg, const gw_session_t *session, json_t *artifacts);
    /* the kernel is done with job, which ends with status: true holds its
       end, and the feature calls gw_job_finish itself (soon; at the latest
       when the session ends) */
    bool (*job_ending) (void *arg, gw_session_t *session, gw_job_t *job,
                        gw_exec_status_t status);
    /* the session's next deadline for tick, or -1 */
    int64_t (*deadline) (void *arg, const gw_session_t *session);
    void (*tick) (void *arg, gw_session_t *session, int64_t now);
    /* the session ends: the feature lets go of it */
    void (*session_end) (void *arg, gw_session_t *session);
    /* a message from the session's kernel, on any channel (borrowed; every
       message, whoever asked for it) */
    void (*kernel_msg) (void *arg, gw_session_t *session, jp_channel_t channel,
                        const jp_msg_t *msg);
    /* the session's kernel is being replaced ("restarting") or could not
       be started ("dead") */
    void (*kernel_state) (void *arg, gw_session_t *session, const char *state);
    /* true while a client holds the session open (a Jupyter websocket):
       it is not idle, whatever its last use */
    bool (*in_use) (void *arg, const gw_session_t *session);
} gw_session_hooks_t;

#define GW_HOOKS_MAX 8

/* The features' hooks a server holds (each with its argument). */
typedef struct gw_hooks {
    struct {
        const gw_session_hooks_t *hooks;    /* borrowed */
        void *arg;
    } at[GW_HOOKS_MAX];
    int n;
} gw_hooks_t;

/* Adds or removes hooks (hooks borrowed). Returns 0 or -ENOSPC. */
int gw_hooks_add (gw_hooks_t *self, const gw_session_hooks_t *hooks, void *arg);
void gw_hooks_remove (gw_hooks_t *self, const gw_session_hooks_t *hooks, void *arg);
/* True while those hooks are on. */
bool gw_hooks_has (gw_hooks_t *self, const gw_session_hooks_t *hooks, void *arg);

/* Each hook in turn, as the core calls them. */
void gw_hooks_kernel_env (gw_hooks_t *self, const char *visible_workdir, gw_kernel_env_t *env);
void gw_hooks_annotate (gw_hooks_t *self, const gw_session_t *session, json_t *artifacts);
/* Ends job with status, unless a feature holds its end. */
void gw_hooks_end_job (gw_hooks_t *self, gw_session_t *session, gw_job_t *job,
                       gw_exec_status_t status);
/* The earliest of the features' deadlines for session, or -1. */
int64_t gw_hooks_session_deadline (gw_hooks_t *self, const gw_session_t *session);
void gw_hooks_session_tick (gw_hooks_t *self, gw_session_t *session, int64_t now);
void gw_hooks_session_end (gw_hooks_t *self, gw_session_t *session);
void gw_hooks_kernel_msg (gw_hooks_t *self, gw_session_t *session, jp_channel_t channel,
                          const jp_msg_t *msg);
void gw_hooks_kernel_state (gw_hooks_t *self, gw_session_t *session, const char *state);
bool gw_hooks_in_use (gw_hooks_t *self, const gw_session_t *session);

#endif
