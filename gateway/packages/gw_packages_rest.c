/* gw_packages_rest: "dependencies" on POST /sessions (and POST /execute
 * without a session_id): the new session's requirements judged and
 * installed through gw_packages, and the request answered with the
 * session and what was installed (or handed to what comes next), or with
 * what was refused or failed (then the session is ended); see
 * gw_packages_rest.h.
 * Threads: the loop thread. */
#include "gw_packages_rest.h"
#include "gw_id.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_server.h"
#include "gw_session.h"
#include "gw_sessions.h"

typedef struct {
    gw_server_t *server;
    gw_request_t *req;
    char id[GW_ID_SIZE];
    char tenant[GW_ID_SIZE];
    gw_packages_rest_then_fn *then;     /* NULL: answer 201 */
    void *arg;
} s_rest_t;

/* Frees r after a failure answered its request. */
static void
s_rest_free (s_rest_t *r)
{
    if (r->then)
        r->then (r->req, NULL, NULL, r->arg);
    free (r);
}

/* Ends the session a failed POST /sessions made (after this loop turn). */
static void
s_rest_drop_session (s_rest_t *r)
{
    gw_session_t *session = gw_sessions_find (r->server, r->tenant, r->id);
    if (session)
        gw_session_end_later (session);
}

/* One line per refused requirement. */
static void
s_refusals_text (json_t *refused, char *out, size_t len)
{
    size_t o = 0;
    size_t i;
    json_t *item;
    out[0] = '\0';
    json_array_foreach (refused, i, item) {
        int n = snprintf (out + o, len - o, "%s%s", o ? "; " : "",
                          json_string_value (json_object_get (item, "reason")));
        if (n < 0 || (size_t) n >= len - o)
            break;
        o += (size_t) n;
    }
}

static void
s_rest_done (json_t *result, void *arg)
{
    s_rest_t *r = arg;
    json_t *error = json_object_get (result, "error");
    gw_session_t *session = gw_sessions_find (r->server, r->tenant, r->id);
    if (!error && session && r->then) {
        r->then (r->req, session, result, r->arg);
        free (r);
        return;
    }
    if (!error && session) {
        json_t *body = gw_session_json (session, false);
        json_object_set_new (body, "dependencies", result);
        gw_request_reply_json (r->req, 201, body);
        free (r);
        return;
    }
    const char *code = error ? json_string_value (json_object_get (error, "code"))
                             : "session_ended";
    const char *message = error ? json_string_value (json_object_get (error, "message"))
                                : "the session ended during the install";
    gw_error_t e = GW_E_BAD_REQUEST;
    if (strcmp (code, "refused") == 0)
        e = GW_E_FORBIDDEN;
    else if (strcmp (code, "shutting_down") == 0)
        e = GW_E_SHUTTING_DOWN;
    else if (strcmp (code, "kernel") == 0 || strcmp (code, "session_ended") == 0)
        e = GW_E_KERNEL_START_FAILED;
    char text[2400];
    snprintf (text, sizeof text, "the session's dependencies could not be installed, so it "
              "was not kept: %s", message ? message : code);
    json_t *body = json_pack ("{s:{s:s, s:s, s:s}, s:o}", "error", "code", gw_error_code (e),
                              "message", text, "reason", code, "dependencies", result);
    s_rest_drop_session (r);
    gw_request_reply_json (r->req, gw_error_http_status (e), body);
    s_rest_free (r);
}

bool
gw_packages_rest_start (gw_packages_t *self, gw_request_t *req, gw_session_t *session,
                        json_t *dependencies)
{
    return gw_packages_rest_then (self, req, session, dependencies, NULL, NULL);
}

bool
gw_packages_rest_then (gw_packages_t *self, gw_request_t *req, gw_session_t *session,
                       json_t *dependencies, gw_packages_rest_then_fn *then, void *arg)
{
    gw_server_t *server = gw_session_server (session);
    if (!dependencies || json_is_null (dependencies)
        || (json_is_array (dependencies) && json_array_size (dependencies) == 0))
        return false;
    s_rest_t *r = calloc (1, sizeof *r);
    if (!r) {
        gw_sessions_end (server, session);
        gw_request_reply_error (req, GW_E_INTERNAL, "out of memory");
        if (then)
            then (req, NULL, NULL, arg);
        return true;
    }
    r->server = server;
    r->req = req;
    r->then = then;
    r->arg = arg;
    snprintf (r->id, sizeof r->id, "%s", gw_session_id (session));
    snprintf (r->tenant, sizeof r->tenant, "%s", gw_session_tenant (session));
    json_t *allowed = NULL, *refused = NULL;
    gw_error_t e;
    char err[1200];
    if (!json_is_array (dependencies)) {
        e = GW_E_BAD_REQUEST;
        snprintf (err, sizeof err, "\"dependencies\" must be a list of requirement strings, "
                  "such as [\"requests>=2.31\"]");
    } else if (gw_packages_check (self, session, dependencies, &allowed, &refused, &e, err,
                                  sizeof err) == 0
               && json_array_size (refused)) {
        char text[2000];
        s_refusals_text (refused, text, sizeof text);
        json_t *body = json_pack ("{s:{s:s, s:s, s:s}, s:{s:[], s:o}}", "error", "code",
                                  gw_error_code (GW_E_FORBIDDEN), "message", text, "reason",
                                  "refused", "dependencies", "installed", "refused", refused);
        json_decref (allowed);
        gw_sessions_end (server, session);
        gw_request_reply_json (req, gw_error_http_status (GW_E_FORBIDDEN), body);
        s_rest_free (r);
        return true;
    } else if (allowed) {
        int rc = gw_packages_install (self, session, allowed,
                                      gw_session_limits (session)->exec_timeout_s, s_rest_done,
                                      r);
        json_decref (allowed);
        json_decref (refused);
        if (rc == 0)
            return true;
        e = GW_E_INTERNAL;
        snprintf (err, sizeof err, "the install could not start (see the server log)");
    }
    gw_sessions_end (server, session);
    gw_request_reply_error (req, e, "%s", err);
    s_rest_free (r);
    return true;
}
