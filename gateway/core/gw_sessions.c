/* gw_sessions: resolving, creating, submitting to, listing and ending
 * sessions for any transport or feature. Threads: the loop thread only. */
#include "gw_sessions.h"
#include "gw_session_internal.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gw_disk.h"
#include "gw_hooks.h"
#include "gw_job_internal.h"
#include "gw_registry.h"
#include "gw_server_internal.h"
#include "gw_path.h"
#include "jp_log.h"
#include "jp_random.h"
#include "ks_search.h"

const char gw_sessions_id_rule[] =
    "session ids are 1-64 characters of A-Z a-z 0-9 _ . - and do not start with '.'";

/* The limits a new session of caller gets; exec_timeout_s (execution_options'
 * timeout, 0: none) lowers the execution timeout further. */
static gw_limits_t
s_limits (gw_server_t *server, const gw_caller_t *caller, long exec_timeout_s)
{
    const gw_config_t *c = gw_server_config (server);
    const gw_overrides_t *o = &caller->overrides;
    long exec = gw_caller_clamp (o->exec_timeout, gw_config_int (c, GW_SET_EXEC_TIMEOUT));
    return (gw_limits_t) {
        .ttl_s = gw_caller_clamp (o->session_ttl, gw_config_int (c, GW_SET_SESSION_TTL)),
        .idle_s = gw_caller_clamp (o->idle_timeout, gw_config_int (c, GW_SET_IDLE_TIMEOUT)),
        .exec_timeout_s = gw_caller_clamp (exec_timeout_s, exec),
        .max_output_bytes = gw_config_int (c, GW_SET_MAX_OUTPUT_BYTES),
    };
}

/* The kernelspec by name, else the default kernel if it speaks language,
 * else the first that does, else the default kernel. NULL with err set. */
static ks_spec_t *
s_find_spec (gw_server_t *server, const char *kernel, const char *language, char *err,
             size_t err_len)
{
    const gw_config_t *c = gw_server_config (server);
    const char *path = gw_config_str (c, GW_SET_KERNEL_PATH);
    const char *def = gw_config_str (c, GW_SET_DEFAULT_KERNEL);
    if (kernel || !language)
        return ks_search_find (path, kernel ? kernel : def, err, err_len);
    /* by language: the default kernel if it speaks it, else the first */
    ks_spec_t *spec = ks_search_find (path, def, err, err_len);
    if (spec && strcasecmp (spec->language, language) == 0)
        return spec;
    ks_spec_destroy (&spec);
    ks_spec_t **specs;
    size_t n;
    if (ks_search_all (path, &specs, &n, NULL, NULL)) {
        snprintf (err, err_len, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n && !spec; i++)
        if (strcasecmp (specs[i]->language, language) == 0) {
            spec = specs[i];
            specs[i] = NULL;
        }
    ks_search_free (specs, n);
    if (!spec)
        snprintf (err, err_len, "no kernelspec speaks '%s'; see GET /kernelspecs", language);
    return spec;
}

/* The live sessions (a kernel each, one-shot ones too; paused ones do
 * not count) tenant holds, or all of them (tenant NULL). */
static long
s_count_live (gw_server_t *server, const char *tenant)
{
    long n = 0;
    for (size_t i = 0; i < gw_server_session_count (server); i++) {
        gw_session_t *s = gw_server_session_at (server, i);
        n += !s->paused && (!tenant || strcmp (s->tenant, tenant) == 0);
    }
    return n;
}

/* Pauses the least recently used session of tenant (NULL: any) that can
 * be paused. Returns false when none can. */
static bool
s_pause_lru (gw_server_t *server, const char *tenant)
{
    gw_session_t *lru = NULL;
    for (size_t i = 0; i < gw_server_session_count (server); i++) {
        gw_session_t *s = gw_server_session_at (server, i);
        if ((!tenant || strcmp (s->tenant, tenant) == 0) && gw_session_can_pause (s)
            && !gw_hooks_in_use (s->host->launch.hooks, s)
            && (!lru || s->last_used_ms < lru->last_used_ms))
            lru = s;
    }
    if (lru) {
        gw_session_pause (lru);
        gw_server_session_status (server, lru);
    }
    return lru != NULL;
}

int
gw_sessions_wake (gw_server_t *server, gw_session_t *session, gw_error_t *e, char *err,
                  size_t err_len)
{
    *e = GW_E_OK;
    if (!session->paused)
        return 0;
    const gw_config_t *config = gw_server_config (server);
    long max = gw_config_int (config, GW_SET_MAX_SESSIONS);
    long share = gw_config_share (config, max);
    if ((share < max && s_count_live (server, session->tenant) >= share
         && !s_pause_lru (server, session->tenant))
        || (s_count_live (server, NULL) >= max && !s_pause_lru (server, NULL))) {
        *e = GW_E_TOO_MANY_SESSIONS;
        snprintf (err, err_len, "session '%.64s' is paused and its kernel cannot start again "
                  "now: %ld sessions are live and none is idle (CODEBOX_MAX_SESSIONS, "
                  "CODEBOX_TENANT_MAX_SESSIONS); try again when one is idle, or DELETE one",
                  session->id, s_count_live (server, NULL));
        return -1;
    }
    int rc = gw_session_resume (session);
    gw_server_session_status (server, session);
    if (rc) {
        *e = GW_E_KERNEL_START_FAILED;
        snprintf (err, err_len, "session '%.64s' is paused and its kernel could not start "
                  "again: %.200s", session->id, session->error);
        return -1;
    }
    return 0;
}

/* Fills where for the caller's id, which is not on this node: the
 * directory says whether another node holds it or held it. */
static void
s_where (gw_server_t *server, const gw_caller_t *caller, const char *id,
         gw_sessions_where_t *where)
{
    gw_registry_t *dir = gw_server_registry (server);
    gw_dir_where_t at = dir ? gw_registry_where (dir, caller->tenant, id, where->node,
                                                  sizeof where->node)
                            : GW_DIR_UNKNOWN;
    if (at == GW_DIR_ELSEWHERE) {
        where->e = GW_E_WRONG_NODE;
        snprintf (where->why, sizeof where->why, "session '%s' lives on node %s: send its "
                  "requests there (this is node %s)", id, where->node, gw_registry_node (dir));
    } else if (at == GW_DIR_LOST) {
        where->e = GW_E_SESSION_LOST;
        snprintf (where->why, sizeof where->why, "session '%s' was lost: its node %s is gone, "
                  "and its variables and files with it", id, where->node);
    } else {
        where->e = GW_E_SESSION_NOT_FOUND;
        snprintf (where->why, sizeof where->why, "no session '%s'", id);
    }
}

gw_session_t *
gw_sessions_resolve (gw_server_t *server, const gw_caller_t *caller, const char *id,
                     gw_sessions_where_t *where)
{
    *where = (gw_sessions_where_t) {.e = GW_E_OK};
    if (!id || !gw_path_valid_session_id (id)) {
        where->e = GW_E_INVALID_SESSION_ID;
        snprintf (where->why, sizeof where->why, "%s", gw_sessions_id_rule);
        return NULL;
    }
    gw_session_t *session = gw_server_find_session (server, id, caller->tenant);
    if (!session)
        s_where (server, caller, id, where);
    return session;
}

gw_session_t *
gw_sessions_find (gw_server_t *server, const char *tenant, const char *id)
{
    return id && tenant ? gw_server_find_session (server, id, tenant) : NULL;
}

gw_session_t *
gw_sessions_next (gw_server_t *server, const char *tenant, size_t *i)
{
    while (*i < gw_server_session_count (server)) {
        gw_session_t *s = gw_server_session_at (server, (*i)++);
        if (strcmp (s->tenant, tenant) == 0 && !s->ephemeral)
            return s;
    }
    return NULL;
}

gw_session_t *
gw_sessions_create (gw_server_t *server, const gw_caller_t *caller,
                    const gw_sessions_new_t *opts, gw_error_t *e, char *err, size_t err_len)
{
    char generated[JP_UUID_LEN + 1];
    const char *id = opts->id;
    if (!id) {
        jp_random_uuid (generated);
        id = generated;
    }
    *e = GW_E_OK;
    if (!gw_path_valid_session_id (id)) {
        *e = GW_E_INVALID_SESSION_ID;
        snprintf (err, err_len, "%s", gw_sessions_id_rule);
        return NULL;
    }
    if (gw_server_find_session (server, id, caller->tenant)) {
        *e = GW_E_CONFLICT;
        snprintf (err, err_len, "a session with this id already exists; use it, or DELETE "
                  "it first");
        return NULL;
    }
    if (gw_server_draining (server)) {
        *e = GW_E_DRAINING;
        snprintf (err, err_len, "this node is draining: it takes no new session (try another "
                  "node)");
        return NULL;
    }
    /* never a second kernel for a session another node holds (a new
       uuid is nowhere yet; a resolved id was asked about already) */
    gw_sessions_where_t where;
    if (opts->where)
        where = *opts->where;
    else if (opts->id)
        s_where (server, caller, id, &where);
    else
        where.e = GW_E_SESSION_NOT_FOUND;
    if (where.e == GW_E_WRONG_NODE) {
        *e = GW_E_WRONG_NODE;
        snprintf (err, err_len, "session '%s' lives on node %s: send its requests there",
                  id, where.node);
        return NULL;
    }
    /* the tenant's share first: a tenant at it is told so, whatever the
       others hold; then the server's bound */
    const gw_config_t *config = gw_server_config (server);
    long max = gw_config_int (config, GW_SET_MAX_SESSIONS);
    long share = gw_config_share (config, max);
    long mine = s_count_live (server, caller->tenant);
    if (share < max && mine >= share) {
        *e = GW_E_TOO_MANY_SESSIONS;
        snprintf (err, err_len, "tenant '%s' holds %ld live sessions, its share of this "
                  "server's %ld (CODEBOX_TENANT_MAX_SESSIONS=%ld); DELETE one you no longer "
                  "need", caller->tenant, mine, max, share);
        return NULL;
    }
    if (s_count_live (server, NULL) >= max) {
        *e = GW_E_TOO_MANY_SESSIONS;
        snprintf (err, err_len, "%ld sessions are live, the most this server allows "
                  "(CODEBOX_MAX_SESSIONS); DELETE one you no longer need", max);
        return NULL;
    }
    long stored = gw_config_int (config, GW_SET_MAX_STORED_SESSIONS);
    if ((long) gw_server_session_count (server) >= stored) {
        *e = GW_E_TOO_MANY_SESSIONS;
        snprintf (err, err_len, "%ld sessions are kept, live and paused, the most this server "
                  "allows (CODEBOX_MAX_STORED_SESSIONS); DELETE one you no longer need",
                  stored);
        return NULL;
    }
    ks_spec_t *spec = s_find_spec (server, opts->kernel, opts->language, err, err_len);
    if (!spec) {
        *e = GW_E_KERNEL_NOT_FOUND;
        return NULL;
    }
    gw_limits_t limits = s_limits (server, caller, opts->exec ? opts->exec->timeout_s : 0);
    gw_session_t *session = gw_session_new (gw_server_session_host (server), id,
                                            caller->tenant, &spec, &limits, opts->exec, err,
                                            err_len);
    ks_spec_destroy (&spec);
    if (!session) {
        *e = GW_E_KERNEL_START_FAILED;
        return NULL;
    }
    session->ephemeral = opts->ephemeral;
    if (gw_server_add_session (server, session)) {
        gw_session_destroy (&session, true);
        *e = GW_E_TOO_MANY_SESSIONS;
        snprintf (err, err_len, "no room for another session");
        return NULL;
    }
    if (!session->ephemeral) {  /* a one-shot run is nobody's to read again */
        json_t *info = gw_session_settings_json (session);
        char image[4400];   /* a later server mounts its file system again */
        if (info && gw_disk_image_of (session->workdir, image, sizeof image) == 0)
            json_object_set_new (info, "disk_image", json_string (strrchr (image, '/') + 1));
        session->record = gw_session_record_new (gw_server_state_dir (server), session->tenant,
                                                 session->id, info,
                                                 (size_t) limits.max_output_bytes);
    }
    jp_log_info ("session event=created session=%s tenant=%s kernel=%s",
                 session->id, session->tenant, session->spec->name);
    return session;
}

long
gw_sessions_exec_timeout (const gw_session_t *session, const gw_overrides_t *overrides,
                          long wished_s)
{
    long seconds = gw_caller_clamp (overrides ? overrides->exec_timeout : 0,
                                    session->limits.exec_timeout_s);
    return gw_caller_clamp (wished_s, seconds);
}

gw_job_t *
gw_sessions_submit (gw_server_t *server, const gw_caller_t *caller, gw_session_t *session,
                    const char *code, const gw_sessions_submit_t *opts, gw_error_t *e,
                    char *err, size_t err_len)
{
    if (gw_sessions_wake (server, session, e, err, err_len))
        return NULL;
    if (gw_session_queue_full (session, strlen (code), err, err_len)) {
        *e = GW_E_TOO_MANY_QUEUED;
        return NULL;
    }
    long seconds = gw_sessions_exec_timeout (session, &caller->overrides, opts->timeout_s);
    gw_job_t *job = gw_jobs_add (gw_server_jobs (server), session, session->id,
                                 session->tenant, code, seconds * 1000);
    if (job && opts->allow_input)
        gw_job_allow_input (job);
    if (job) {
        job->recorded = true;
        job->replay = opts->replay;
        job->results_extra = json_incref (opts->results_extra);
    }
    if (!job || (opts->on_job && !opts->on_job (job, opts->arg))) {
        *e = GW_E_INTERNAL;
        snprintf (err, err_len, "out of memory");
        return NULL;
    }
    gw_session_enqueue (session, job);
    return job;
}

json_t *
gw_sessions_list (gw_server_t *server, const gw_caller_t *caller, bool all_nodes)
{
    gw_registry_t *dir = gw_server_registry (server);
    json_t *list = json_array ();
    size_t i = 0;
    for (gw_session_t *s; list && (s = gw_sessions_next (server, caller->tenant, &i));) {
        json_t *entry = gw_session_json (s, false);
        if (entry && dir)
            json_object_set_new (entry, "node", json_string (gw_registry_node (dir)));
        json_array_append_new (list, entry);
    }
    if (list && dir && all_nodes) {
        json_t *others = gw_registry_sessions (dir, caller->tenant);
        json_array_extend (list, others);
        json_decref (others);
    }
    return list;
}

void
gw_sessions_end (gw_server_t *server, gw_session_t *session)
{
    jp_log_info ("session event=deleted session=%s", session->id);
    gw_server_remove_session (server, session);
}
