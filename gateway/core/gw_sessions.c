/* gw_sessions: creating, finding, listing and ending sessions for any
 * transport. Threads: the loop thread only. */
#include "gw_sessions.h"
#include "gw_session_internal.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gw_directory.h"
#include "gw_path.h"
#include "jp_log.h"
#include "jp_random.h"
#include "ks_search.h"

const char gw_sessions_id_rule[] =
    "session ids are 1-64 characters of A-Z a-z 0-9 _ . - and do not start with '.'";

gw_limits_t
gw_sessions_limits (gw_server_t *server, const gw_caller_t *caller)
{
    const gw_config_t *c = gw_server_config (server);
    const gw_overrides_t *o = &caller->overrides;
    return (gw_limits_t) {
        .ttl_s = gw_caller_clamp (o->session_ttl, gw_config_int (c, GW_SET_SESSION_TTL)),
        .idle_s = gw_caller_clamp (o->idle_timeout, gw_config_int (c, GW_SET_IDLE_TIMEOUT)),
        .exec_timeout_s = gw_caller_clamp (o->exec_timeout,
                                           gw_config_int (c, GW_SET_EXEC_TIMEOUT)),
        .max_output_bytes = gw_config_int (c, GW_SET_MAX_OUTPUT_BYTES),
    };
}

ks_spec_t *
gw_sessions_find_spec (gw_server_t *server, const char *kernel, const char *language,
                       char *err, size_t err_len)
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

gw_session_t *
gw_sessions_create (gw_server_t *server, const gw_caller_t *caller, const char *id,
                    const char *kernel, const char *language, gw_error_t *e, char *err,
                    size_t err_len)
{
    char generated[JP_UUID_LEN + 1];
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
    /* never a second kernel for a session another node holds */
    gw_directory_t *dir = gw_server_directory (server);
    char node[65];
    if (dir && gw_directory_where (dir, caller->tenant, id, node, sizeof node)
                   == GW_DIR_ELSEWHERE) {
        *e = GW_E_WRONG_NODE;
        snprintf (err, err_len, "session '%s' lives on node %s: send its requests there",
                  id, node);
        return NULL;
    }
    /* the tenant's share first: a tenant at it is told so, whatever the
       others hold; then the server's bound */
    const gw_config_t *config = gw_server_config (server);
    long max = gw_config_int (config, GW_SET_MAX_SESSIONS);
    long share = gw_config_share (config, max);
    long mine = (long) gw_sessions_count_tenant (server, caller->tenant);
    if (share < max && mine >= share) {
        *e = GW_E_TOO_MANY_SESSIONS;
        snprintf (err, err_len, "tenant '%s' holds %ld live sessions, its share of this "
                  "server's %ld (CODEBOX_TENANT_MAX_SESSIONS=%ld); DELETE one you no longer "
                  "need", caller->tenant, mine, max, share);
        return NULL;
    }
    if ((long) gw_server_session_count (server) >= max) {
        *e = GW_E_TOO_MANY_SESSIONS;
        snprintf (err, err_len, "%ld sessions are live, the most this server allows "
                  "(CODEBOX_MAX_SESSIONS); DELETE one you no longer need", max);
        return NULL;
    }
    ks_spec_t *spec = gw_sessions_find_spec (server, kernel, language, err, err_len);
    if (!spec) {
        *e = GW_E_KERNEL_NOT_FOUND;
        return NULL;
    }
    gw_limits_t limits = gw_sessions_limits (server, caller);
    gw_session_t *session = gw_session_new (server, id, caller->tenant, &spec, &limits,
                                            caller->exec_options, err, err_len);
    ks_spec_destroy (&spec);
    if (!session) {
        *e = GW_E_KERNEL_START_FAILED;
        return NULL;
    }
    if (gw_server_add_session (server, session)) {
        gw_session_destroy (&session, true);
        *e = GW_E_TOO_MANY_SESSIONS;
        snprintf (err, err_len, "no room for another session");
        return NULL;
    }
    jp_log_info ("session event=created session=%s tenant=%s kernel=%s",
                 session->id, session->tenant, session->spec->name);
    return session;
}

size_t
gw_sessions_count_tenant (gw_server_t *server, const char *tenant)
{
    size_t n = 0;
    for (size_t i = 0; i < gw_server_session_count (server); i++)
        n += strcmp (gw_server_session_at (server, i)->tenant, tenant) == 0;
    return n;
}

gw_session_t *
gw_sessions_lookup (gw_server_t *server, const gw_caller_t *caller, const char *id,
                    gw_error_t *e)
{
    if (!id || !gw_path_valid_session_id (id)) {
        *e = GW_E_INVALID_SESSION_ID;
        return NULL;
    }
    gw_session_t *session = gw_server_find_session (server, id, caller->tenant);
    *e = session ? GW_E_OK : GW_E_SESSION_NOT_FOUND;
    gw_directory_t *dir = gw_server_directory (server);
    char node[65];
    if (!session && dir) {
        gw_dir_where_t where = gw_directory_where (dir, caller->tenant, id, node, sizeof node);
        *e = where == GW_DIR_ELSEWHERE ? GW_E_WRONG_NODE
             : where == GW_DIR_LOST ? GW_E_SESSION_LOST : GW_E_SESSION_NOT_FOUND;
    }
    return session;
}

void
gw_sessions_missing_why (gw_server_t *server, const gw_caller_t *caller, const char *id,
                         gw_error_t e, char *msg, size_t msg_len)
{
    char node[65] = "?";
    gw_directory_t *dir = gw_server_directory (server);
    if (dir)
        gw_directory_where (dir, caller->tenant, id, node, sizeof node);
    if (e == GW_E_WRONG_NODE)
        snprintf (msg, msg_len, "session '%s' lives on node %s: send its requests there "
                  "(this is node %s)", id, node, gw_directory_node (dir));
    else if (e == GW_E_SESSION_LOST)
        snprintf (msg, msg_len, "session '%s' was lost: its node %s is gone, and its "
                  "variables and files with it", id, node);
    else if (e == GW_E_INVALID_SESSION_ID)
        snprintf (msg, msg_len, "%s", gw_sessions_id_rule);
    else
        snprintf (msg, msg_len, "no session '%s'", id);
}

json_t *
gw_sessions_list (gw_server_t *server, const gw_caller_t *caller, bool all_nodes)
{
    gw_directory_t *dir = gw_server_directory (server);
    json_t *list = json_array ();
    for (size_t i = 0; list && i < gw_server_session_count (server); i++) {
        gw_session_t *s = gw_server_session_at (server, i);
        if (strcmp (s->tenant, caller->tenant) != 0 || s->ephemeral)
            continue;
        json_t *entry = gw_session_json (s, false);
        if (entry && dir)
            json_object_set_new (entry, "node", json_string (gw_directory_node (dir)));
        json_array_append_new (list, entry);
    }
    if (list && dir && all_nodes) {
        json_t *others = gw_directory_sessions (dir, caller->tenant);
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
