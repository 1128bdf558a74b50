/* gw_sessions: the one way through the core for every transport (REST,
 * MCP over HTTP and over stdio, the Jupyter API) and feature (package
 * installs, artifact uploads, signed links): resolve a session the caller
 * names, with the reason when it is not here (on another node, lost with
 * its node, missing); create one with options (id rules, conflicts, the
 * tenant's share and the server's bound, the kernel by name or language,
 * limits clamped for the caller); submit code to one, with the execution
 * timeout clamped here and nowhere else; list; end. Nothing above the
 * core reaches the server's session table but through these; each
 * transport words its own errors from the gw_error_t they return.
 *
 * Threads: the loop thread only. */
#ifndef GW_SESSIONS_H
#define GW_SESSIONS_H

#include <jansson.h>

#include "gw_caller.h"
#include "gw_id.h"
#include "gw_error.h"
#include "gw_server.h"
#include "gw_session.h"

/* Where the session a caller names is (gw_sessions_resolve). */
typedef struct {
    /* GW_E_OK (here), GW_E_INVALID_SESSION_ID, GW_E_SESSION_NOT_FOUND, or,
       with a directory shared by many nodes, GW_E_WRONG_NODE (another node
       holds it) or GW_E_SESSION_LOST (its node is gone) */
    gw_error_t e;
    char node[GW_ID_SIZE];      /* the node that holds it, or that it was lost with */
    char why[300];      /* the failure as a sentence ("" when here) */
} gw_sessions_where_t;

/* The caller's session id on this node, or NULL with where saying why
 * (the directory is asked once, and only when it is not here). */
gw_session_t *gw_sessions_resolve (gw_server_t *server, const gw_caller_t *caller,
                                   const char *id, gw_sessions_where_t *where);

/* The tenant's session id on this node, or NULL (id NULL too): the
 * directory is not asked (a late answer finding its session again). */
gw_session_t *gw_sessions_find (gw_server_t *server, const char *tenant, const char *id);

/* After *i (0 to begin), the next of tenant's sessions on this node that
 * a listing shows (one-shot runs left out), or NULL at the end. */
gw_session_t *gw_sessions_next (gw_server_t *server, const char *tenant, size_t *i);

/* What a new session is. */
typedef struct {
    const char *id;             /* NULL: a new uuid */
    const char *kernel;         /* a kernelspec's name, or NULL */
    const char *language;       /* else one that speaks it, or NULL: the default */
    /* what its kernel runs with (execution_options, checked; copied), or
       NULL; its timeout lowers the session's execution timeout */
    const gw_exec_options_t *exec;
    bool ephemeral;             /* a one-shot run's: listed by no one */
    /* the caller's gw_sessions_resolve of id, so the directory is not
       asked again, or NULL */
    const gw_sessions_where_t *where;
} gw_sessions_new_t;

/* Makes and starts a session. NULL with *e and err set:
 * GW_E_INVALID_SESSION_ID, GW_E_CONFLICT, GW_E_DRAINING, GW_E_WRONG_NODE,
 * GW_E_TOO_MANY_SESSIONS (the tenant holds its share,
 * CODEBOX_TENANT_MAX_SESSIONS, or the server its CODEBOX_MAX_SESSIONS; err
 * says which), GW_E_KERNEL_NOT_FOUND, GW_E_KERNEL_START_FAILED. */
gw_session_t *gw_sessions_create (gw_server_t *server, const gw_caller_t *caller,
                                  const gw_sessions_new_t *opts, gw_error_t *e, char *err,
                                  size_t err_len);

/* The seconds one execution of session may run: wished_s (a request
 * body's timeout, 0: none) under the request's X-Codebox-Exec-Timeout
 * (overrides, NULL: none) under the session's limit. The one place the
 * execution timeout is clamped. */
long gw_sessions_exec_timeout (const gw_session_t *session, const gw_overrides_t *overrides,
                               long wished_s);

/* Starts a kernel again for a paused session (nothing when it is live):
 * at the tenant's share or CODEBOX_MAX_SESSIONS, the least recently used
 * idle live session is paused first. Returns 0, or -1 with *e and err set:
 * GW_E_TOO_MANY_SESSIONS (no live session could be paused: all are busy),
 * GW_E_KERNEL_START_FAILED. gw_sessions_submit wakes its session itself;
 * a transport wakes one for whatever else needs its kernel (a Jupyter
 * client's connection, interrupt, restart). */
int gw_sessions_wake (gw_server_t *server, gw_session_t *session, gw_error_t *e, char *err,
                      size_t err_len);

/* Told of a submitted job before it joins the queue (to observe it from
 * its start); false stops the submission. */
typedef bool (gw_sessions_job_fn) (gw_job_t *job, void *arg);

/* What a submission asks for beyond its code. */
typedef struct {
    long timeout_s;             /* the execution timeout wished (0: none) */
    bool allow_input;           /* input() asks the client */
    gw_sessions_job_fn *on_job; /* or NULL */
    void *arg;
    bool replay;                /* it replays the session's record (kept so in it) */
    json_t *results_extra;      /* more fields of its results (borrowed), or NULL */
} gw_sessions_submit_t;

/* Queues code (borrowed) in session for caller: the queue's bounds, the
 * timeout clamped (gw_sessions_exec_timeout), the job kept by the job
 * store, and by the session's record of cells once it ran; a paused
 * session is woken first (gw_sessions_wake). Returns the job (queued,
 * maybe running or, when the kernel could not start, finished already),
 * or NULL with *e and err set: gw_sessions_wake's, GW_E_TOO_MANY_QUEUED,
 * GW_E_INTERNAL (out of memory, or on_job said no). */
gw_job_t *gw_sessions_submit (gw_server_t *server, const gw_caller_t *caller,
                              gw_session_t *session, const char *code,
                              const gw_sessions_submit_t *opts, gw_error_t *e, char *err,
                              size_t err_len);

/* The caller's sessions as a new JSON array of gw_session_json (one-shot
 * sessions left out); with a shared directory and all_nodes, also those
 * of the other nodes ({"session_id","kernel","node","created","status","lost"}),
 * and every entry says its "node". */
json_t *gw_sessions_list (gw_server_t *server, const gw_caller_t *caller, bool all_nodes);

/* Ends a session now: its kernel, jobs and folder. */
void gw_sessions_end (gw_server_t *server, gw_session_t *session);

/* What the layers above the core do for a kept session loaded again: its
 * volumes attached again into exec (as gw_volumes_attach: 0, or -1 with
 * err; then it comes back without them), and held by the session. */
typedef struct {
    int (*attach) (void *arg, const char *tenant, json_t *volumes, gw_exec_options_t *exec,
                   char *err, size_t err_len);
    void (*hold) (void *arg, gw_session_t *session, const gw_exec_options_t *exec);
    void *arg;
} gw_sessions_kept_hooks_t;

/* At start (gw_sessions_kept.c): loads the sessions an earlier server on
 * the state folder kept, as paused (hooks: NULL, or for their volumes).
 * Returns how many. */
int gw_sessions_load_kept (gw_server_t *server, const gw_sessions_kept_hooks_t *hooks);

/* The rule session ids follow, as a sentence for error messages. */
extern const char gw_sessions_id_rule[];

#endif
