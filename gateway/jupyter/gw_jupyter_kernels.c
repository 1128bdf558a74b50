/* gw_jupyter_kernels: /api/kernels and /api/sessions as Jupyter Kernel
 * Gateway and Jupyter Server answer them, over the core's sessions: a
 * kernel is a codebox session of the caller's tenant (one-shot MCP runs
 * left out); only KERNEL_* variables of a start's "env" reach the kernel,
 * as kernel_gateway passes them. Notebook sessions (path, name, type, the
 * kernel) are a bounded table of the gw_jupyter object.
 *
 * Threads: the loop thread only. */
#include "gw_jupyter_kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gw_registry.h"
#include "gw_exec_options.h"
#include "gw_jupyter_clients.h"
#include "gw_jupyter_state.h"
#include "gw_sessions.h"
#include "jp_random.h"
#include "jp_time.h"

/* "2026-11-25T10:00:00.123000Z" for a jp_time_now_ms() instant. */
static void
s_iso8601 (int64_t mono_ms, char *out, size_t out_len)
{
    struct timespec now;
    clock_gettime (CLOCK_REALTIME, &now);
    int64_t wall_ms = (int64_t) now.tv_sec * 1000 + now.tv_nsec / 1000000
                      - (jp_time_now_ms () - mono_ms);
    time_t secs = (time_t) (wall_ms / 1000);
    struct tm tm;
    gmtime_r (&secs, &tm);
    char date[32];
    strftime (date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf (out, out_len, "%s.%03dZ", date, (int) (wall_ms % 1000));
}

json_t *
gw_jupyter_kernel_model (gw_jupyter_t *self, const gw_session_t *session)
{
    char last[48];
    s_iso8601 (gw_session_last_used_ms (session), last, sizeof last);
    return json_pack ("{s:s, s:s, s:s, s:s, s:i}", "id", gw_session_id (session), "name",
                      gw_session_spec (session)->name, "last_activity", last,
                      "execution_state", gw_session_execution_state (session), "connections",
                      gw_jupyter_connections (self, session));
}

/* The request's JSON object body ({} when empty), or NULL after a 400. */
static json_t *
s_body (gw_request_t *req)
{
    if (!req->body_len)
        return json_object ();
    json_error_t jerr;
    json_t *body = json_loadb (req->body, req->body_len, 0, &jerr);
    if (!json_is_object (body)) {
        json_decref (body);
        gw_request_reply_error (req, GW_E_INVALID_JSON, "the body must be a JSON object");
        return NULL;
    }
    return body;
}

gw_session_t *
gw_jupyter_kernel_or_reply (gw_jupyter_t *self, gw_request_t *req, const char *id)
{
    gw_caller_t caller = gw_request_caller (req);
    gw_sessions_where_t where;
    gw_session_t *session = gw_sessions_resolve (self->server, &caller, id, &where);
    if (!session && (where.e == GW_E_WRONG_NODE || where.e == GW_E_SESSION_LOST)) {
        gw_request_reply_error (req, where.e, "%s", where.why);
        return NULL;
    }
    if (!session || gw_session_ephemeral (session)) {
        gw_request_reply_error (req, GW_E_NOT_FOUND, "no kernel %.80s", id);
        return NULL;
    }
    gw_request_name_session (req, gw_session_id (session));
    return session;
}

/* The notebook sessions one tenant may hold: its share of the table
 * (gw_config_share), never above GW_JUPYTER_MAX_NB_PER_TENANT. */
static int
s_nb_tenant_max (gw_jupyter_t *self)
{
    long share = gw_config_share (gw_server_config (self->server), GW_JUPYTER_MAX_NB_SESSIONS);
    return share < GW_JUPYTER_MAX_NB_PER_TENANT ? (int) share : GW_JUPYTER_MAX_NB_PER_TENANT;
}

static void
s_reply_nb_full (gw_jupyter_t *self, gw_request_t *req)
{
    gw_request_reply_error (req, GW_E_TOO_MANY_SESSIONS, "too many notebook sessions (at most "
                            "%d per tenant, its share, and %d in all)", s_nb_tenant_max (self),
                            GW_JUPYTER_MAX_NB_SESSIONS);
}

/* ---- starting a kernel ---- */

typedef struct {
    gw_session_started_t waiter;
    gw_jupyter_t *self;
    gw_request_t *req;
    gw_nb_session_t nb;         /* for POST /api/sessions: the entry to add */
    bool with_nb;
} s_start_t;

static json_t *s_nb_model (gw_jupyter_t *self, const gw_nb_session_t *nb,
                           const gw_session_t *session);
static int s_nb_add (gw_jupyter_t *self, const gw_nb_session_t *nb);

static void
s_on_started (gw_session_t *session, bool ok, gw_session_started_t *waiter)
{
    s_start_t *start = waiter->arg;
    gw_request_t *req = start->req;
    if (!ok) {
        gw_request_reply_error (req, GW_E_KERNEL_START_FAILED, "the kernel failed to start: %s",
                                gw_session_error (session));
        gw_session_end_later (session);
    } else if (start->with_nb) {
        if (s_nb_add (start->self, &start->nb))
            s_reply_nb_full (start->self, req);
        else
            gw_request_reply_json (req, 201, s_nb_model (start->self, &start->nb, session));
    } else
        gw_request_reply_json (req, 201, gw_jupyter_kernel_model (start->self, session));
    free (start);
}

/* Starts a kernel of name (NULL: the default) with the KERNEL_* entries of
 * env, and answers when it is ready: with the kernel's model, or with nb's
 * (a notebook session added for it) when nb is given. */
static void
s_start_kernel (gw_jupyter_t *self, gw_request_t *req, const char *name, json_t *env,
                const gw_nb_session_t *nb)
{
    s_start_t *start = calloc (1, sizeof *start);
    if (!start) {
        gw_request_reply_error (req, GW_E_INTERNAL, "out of memory");
        return;
    }
    if (nb) {
        start->nb = *nb;
        start->with_nb = true;
    }
    json_t *vars = json_object ();
    const char *key;
    json_t *value;
    json_object_foreach (env, key, value) {
        if (strncmp (key, "KERNEL_", 7) == 0 && json_is_string (value))
            json_object_set (vars, key, value);
    }
    gw_exec_options_t exec;
    gw_error_t e;
    char err[1200];
    gw_exec_rules_t rules = gw_server_exec_rules (self->server);
    json_t *options = json_pack ("{s:o}", "environment_variables", vars);
    int rc = gw_exec_options_parse (options, &rules, &exec, &e, err, sizeof err);
    json_decref (options);
    if (rc < 0) {
        gw_exec_options_clear (&exec);
        free (start);
        gw_request_reply_error (req, e, "env: %s", err);
        return;
    }
    gw_caller_t caller = gw_request_caller (req);
    gw_sessions_new_t opts = {.kernel = name, .exec = &exec};
    gw_session_t *session = gw_sessions_create (self->server, &caller, &opts, &e, err,
                                                sizeof err);
    gw_exec_options_clear (&exec);
    if (!session) {
        free (start);
        gw_request_reply_error (req, e == GW_E_KERNEL_NOT_FOUND ? GW_E_NOT_FOUND : e, "%s", err);
        return;
    }
    gw_request_name_session (req, gw_session_id (session));
    start->self = self;
    start->req = req;
    start->waiter = (gw_session_started_t) {.fn = s_on_started, .arg = start};
    if (start->with_nb)
        snprintf (start->nb.kernel_id, sizeof start->nb.kernel_id, "%s",
                  gw_session_id (session));
    gw_session_when_started (session, &start->waiter);
}

/* ---- /api/kernels ---- */

void
gw_jupyter_kernels (gw_jupyter_t *self, gw_request_t *req)
{
    if (strcmp (req->method, "GET") == 0) {
        json_t *list = json_array ();
        size_t at = 0;
        for (gw_session_t *s; (s = gw_sessions_next (self->server, req->tenant, &at));)
            json_array_append_new (list, gw_jupyter_kernel_model (self, s));
        /* the other nodes' kernels too (a shared directory), unless
           ?scope=node; a router takes a client to them by their path */
        gw_registry_t *dir = gw_server_registry (self->server);
        const char *scope = gw_request_query (req, "scope");
        json_t *others = dir && !(scope && strcmp (scope, "node") == 0)
                             ? gw_registry_sessions (dir, req->tenant) : NULL;
        size_t i;
        json_t *o;
        json_array_foreach (others, i, o) {
            char last[48];
            json_int_t created = json_integer_value (json_object_get (o, "created"));
            time_t t = (time_t) created;
            struct tm tm;
            gmtime_r (&t, &tm);
            strftime (last, sizeof last, "%Y-%m-%dT%H:%M:%SZ", &tm);
            bool lost = json_is_true (json_object_get (o, "lost"));
            json_array_append_new (list, json_pack (
                "{s:O, s:O, s:s, s:s, s:i, s:O}", "id", json_object_get (o, "session_id"),
                "name", json_object_get (o, "kernel"), "last_activity", last,
                "execution_state", lost ? "dead" : "unknown", "connections", 0, "node",
                json_object_get (o, "node")));
        }
        json_decref (others);
        gw_request_reply_json (req, 200, list);
        return;
    }
    json_t *body = s_body (req);
    if (!body)
        return;
    json_t *name = json_object_get (body, "name"), *env = json_object_get (body, "env");
    if ((name && !json_is_string (name) && !json_is_null (name))
        || (env && !json_is_object (env) && !json_is_null (env))) {
        json_decref (body);
        gw_request_reply_error (req, GW_E_BAD_REQUEST, "name must be a string and env an "
                                "object");
        return;
    }
    s_start_kernel (self, req, json_string_value (name), env, NULL);
    json_decref (body);
}

bool
gw_jupyter_wake_or_reply (gw_jupyter_t *self, gw_request_t *req, gw_session_t *session)
{
    gw_error_t e;
    char err[400];
    if (gw_sessions_wake (self->server, session, &e, err, sizeof err) == 0)
        return true;
    gw_request_reply_error (req, e, "%s", err);
    return false;
}

void
gw_jupyter_kernel (gw_jupyter_t *self, gw_request_t *req, const char *id)
{
    gw_session_t *session = gw_jupyter_kernel_or_reply (self, req, id);
    if (!session)
        return;
    if (strcmp (req->method, "DELETE") == 0) {
        gw_sessions_end (self->server, session);
        gw_request_reply_json (req, 204, NULL);
    } else
        gw_request_reply_json (req, 200, gw_jupyter_kernel_model (self, session));
}

void
gw_jupyter_kernel_interrupt (gw_jupyter_t *self, gw_request_t *req, const char *id)
{
    gw_session_t *session = gw_jupyter_kernel_or_reply (self, req, id);
    if (!session)
        return;
    gw_session_interrupt (session);
    gw_request_reply_json (req, 204, NULL);
}

void
gw_jupyter_kernel_restart (gw_jupyter_t *self, gw_request_t *req, const char *id)
{
    gw_session_t *session = gw_jupyter_kernel_or_reply (self, req, id);
    if (!session)
        return;
    if (gw_session_paused (session)) {     /* its restart is the start of a kernel */
        if (!gw_jupyter_wake_or_reply (self, req, session))
            return;
    } else
        gw_session_restart (session);
    gw_request_reply_json (req, 200, gw_jupyter_kernel_model (self, session));
}

/* ---- /api/sessions ---- */

static json_t *
s_nb_model (gw_jupyter_t *self, const gw_nb_session_t *nb, const gw_session_t *session)
{
    return json_pack ("{s:s, s:s, s:s, s:s, s:o, s:{s:s, s:s}}", "id", nb->id, "path", nb->path,
                      "name", nb->name, "type", nb->type, "kernel",
                      session ? gw_jupyter_kernel_model (self, session) : json_null (),
                      "notebook", "path", nb->path, "name", nb->name);
}

static int
s_nb_add (gw_jupyter_t *self, const gw_nb_session_t *nb)
{
    int of_tenant = 0;
    for (int i = 0; i < self->n_nb; i++)
        of_tenant += strcmp (self->nb[i].tenant, nb->tenant) == 0;
    if (self->n_nb >= GW_JUPYTER_MAX_NB_SESSIONS || of_tenant >= s_nb_tenant_max (self))
        return -1;
    if (!self->nb && !(self->nb = calloc (GW_JUPYTER_MAX_NB_SESSIONS, sizeof *self->nb)))
        return -1;
    self->nb[self->n_nb++] = *nb;
    return 0;
}

static gw_nb_session_t *
s_nb_find (gw_jupyter_t *self, const char *tenant, const char *id, const char *path)
{
    for (int i = 0; i < self->n_nb; i++) {
        gw_nb_session_t *nb = &self->nb[i];
        if (strcmp (nb->tenant, tenant) == 0
            && ((id && strcmp (nb->id, id) == 0) || (path && strcmp (nb->path, path) == 0)))
            return nb;
    }
    return NULL;
}

static void
s_nb_remove (gw_jupyter_t *self, gw_nb_session_t *nb)
{
    *nb = self->nb[--self->n_nb];
}

void
gw_jupyter_forget_kernel (gw_jupyter_t *self, const gw_session_t *session)
{
    for (int i = 0; i < self->n_nb;) {
        gw_nb_session_t *nb = &self->nb[i];
        if (strcmp (nb->kernel_id, gw_session_id (session)) == 0
            && strcmp (nb->tenant, gw_session_tenant (session)) == 0)
            s_nb_remove (self, nb);
        else
            i++;
    }
}

static gw_session_t *
s_nb_kernel (gw_jupyter_t *self, const gw_nb_session_t *nb)
{
    return gw_sessions_find (self->server, nb->tenant, nb->kernel_id);
}

/* Copies the optional string key of body into out; false after a 400. */
static bool
s_field (gw_request_t *req, json_t *body, const char *key, char *out, size_t out_len)
{
    json_t *v = json_object_get (body, key);
    if (!v || json_is_null (v))
        return true;
    if (!json_is_string (v) || json_string_length (v) >= out_len) {
        gw_request_reply_error (req, GW_E_BAD_REQUEST, "%s must be a string of at most %zu bytes",
                                key, out_len - 1);
        return false;
    }
    snprintf (out, out_len, "%s", json_string_value (v));
    return true;
}

static void
s_post_session (gw_jupyter_t *self, gw_request_t *req, json_t *body)
{
    gw_nb_session_t nb = {0};
    if (!s_field (req, body, "path", nb.path, sizeof nb.path)
        || !s_field (req, body, "name", nb.name, sizeof nb.name)
        || !s_field (req, body, "type", nb.type, sizeof nb.type))
        return;
    if (!nb.type[0])
        snprintf (nb.type, sizeof nb.type, "notebook");
    gw_nb_session_t *same = nb.path[0] ? s_nb_find (self, req->tenant, NULL, nb.path) : NULL;
    gw_session_t *kernel = same ? s_nb_kernel (self, same) : NULL;
    if (same && kernel) {
        gw_request_reply_json (req, 201, s_nb_model (self, same, kernel));
        return;
    }
    if (same)
        s_nb_remove (self, same);
    snprintf (nb.tenant, sizeof nb.tenant, "%s", req->tenant);
    jp_random_uuid (nb.id);
    json_t *k = json_object_get (body, "kernel");
    const char *kid = json_string_value (json_object_get (k, "id"));
    if (kid) {
        gw_session_t *session = gw_jupyter_kernel_or_reply (self, req, kid);
        if (!session)
            return;
        snprintf (nb.kernel_id, sizeof nb.kernel_id, "%s", gw_session_id (session));
        if (s_nb_add (self, &nb))
            s_reply_nb_full (self, req);
        else
            gw_request_reply_json (req, 201, s_nb_model (self, &nb, session));
        return;
    }
    s_start_kernel (self, req, json_string_value (json_object_get (k, "name")),
                    json_object_get (k, "env"), &nb);
}

static void
s_patch_session (gw_jupyter_t *self, gw_request_t *req, gw_nb_session_t *nb, json_t *body)
{
    gw_nb_session_t next = *nb;
    if (!s_field (req, body, "path", next.path, sizeof next.path)
        || !s_field (req, body, "name", next.name, sizeof next.name)
        || !s_field (req, body, "type", next.type, sizeof next.type))
        return;
    json_t *k = json_object_get (body, "kernel");
    const char *kid = json_string_value (json_object_get (k, "id"));
    const char *kname = json_string_value (json_object_get (k, "name"));
    if (kid) {
        gw_session_t *session = gw_jupyter_kernel_or_reply (self, req, kid);
        if (!session)
            return;
        snprintf (next.kernel_id, sizeof next.kernel_id, "%s", gw_session_id (session));
    }
    gw_session_t *old = s_nb_kernel (self, nb);
    if (!kid && kname && (!old || strcmp (kname, gw_session_spec (old)->name) != 0)) {
        /* another kind of kernel: a new one replaces the old */
        s_nb_remove (self, nb);
        if (old)
            gw_sessions_end (self->server, old);
        s_start_kernel (self, req, kname, json_object_get (k, "env"), &next);
        return;
    }
    *nb = next;
    gw_request_reply_json (req, 200, s_nb_model (self, nb, s_nb_kernel (self, nb)));
}

void
gw_jupyter_sessions (gw_jupyter_t *self, gw_request_t *req, const char *id)
{
    if (!id && strcmp (req->method, "GET") == 0) {
        json_t *list = json_array ();
        for (int i = 0; i < self->n_nb; i++)
            if (strcmp (self->nb[i].tenant, req->tenant) == 0)
                json_array_append_new (list, s_nb_model (self, &self->nb[i],
                                                         s_nb_kernel (self, &self->nb[i])));
        gw_request_reply_json (req, 200, list);
        return;
    }
    gw_nb_session_t *nb = id ? s_nb_find (self, req->tenant, id, NULL) : NULL;
    if (id && !nb) {
        gw_request_reply_error (req, GW_E_NOT_FOUND, "no session %.80s", id);
        return;
    }
    if (id && strcmp (req->method, "GET") == 0) {
        gw_request_reply_json (req, 200, s_nb_model (self, nb, s_nb_kernel (self, nb)));
        return;
    }
    if (id && strcmp (req->method, "DELETE") == 0) {
        gw_session_t *kernel = s_nb_kernel (self, nb);
        s_nb_remove (self, nb);
        if (kernel)
            gw_sessions_end (self->server, kernel);
        gw_request_reply_json (req, 204, NULL);
        return;
    }
    json_t *body = s_body (req);
    if (!body)
        return;
    if (id)
        s_patch_session (self, req, nb, body);
    else
        s_post_session (self, req, body);
    json_decref (body);
}
