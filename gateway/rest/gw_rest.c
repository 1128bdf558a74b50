/* gw_rest: the REST API's session, execution and metrics handlers (files
 * are in gw_rest_files.c, kernelspecs in gw_rest_kernelspecs.c). Every
 * route of the contract; errors as {"error":{"code","message"}}.
 *
 * Threads: the loop thread only. */
#include "gw_rest.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gw_server.h"
#include "gw_packages_rest.h"
#include "gw_path.h"
#include "gw_sessions.h"
#include "gw_signed_url.h"
#include "jp_random.h"
#include "jp_time.h"
#include "ks_search.h"
#include "jp_log.h"

#define MAX_WAIT_SECONDS 300

/* Parses the body as a JSON object (an empty body is {}). Answers 400 and
 * returns NULL when it is not one. */
static json_t *
s_body_object (gw_request_t *req)
{
    if (req->body_len == 0)
        return json_object ();
    json_error_t jerr;
    json_t *body = json_loadb (req->body, req->body_len, 0, &jerr);
    if (!body) {
        gw_request_reply_error (req, GW_E_INVALID_JSON,
                                "the body is not valid JSON (line %d, column %d: %s)",
                                jerr.line, jerr.column, jerr.text);
        return NULL;
    }
    if (!json_is_object (body)) {
        json_decref (body);
        gw_request_reply_error (req, GW_E_BAD_REQUEST, "the body must be a JSON object");
        return NULL;
    }
    return body;
}

/* Reads an optional string member; answers 400 and returns false when it
 * is present but not a string. */
static bool
s_opt_string (gw_request_t *req, json_t *body, const char *key, const char **out)
{
    json_t *v = json_object_get (body, key);
    *out = NULL;
    if (!v || json_is_null (v))
        return true;
    if (!json_is_string (v)) {
        gw_request_reply_error (req, GW_E_BAD_REQUEST, "\"%s\" must be a string", key);
        return false;
    }
    *out = json_string_value (v);
    return true;
}

/* Answers a POST /sessions once the kernel is ready or has failed. */
static void
s_on_started (gw_session_t *session, bool ok, gw_session_started_t *waiter)
{
    gw_request_t *req = waiter->arg;
    free (waiter);
    if (ok) {
        gw_request_reply_json (req, 201, gw_session_json (session, false));
        return;
    }
    gw_request_reply_error (req, GW_E_KERNEL_START_FAILED, "the kernel failed to start: %s",
                            gw_session_error (session));
    gw_session_end_later (session);
}

/* Answers req once the session's first start is over. */
void
gw_rest_answer_when_started (gw_session_t *session, gw_request_t *req)
{
    gw_session_started_t *waiter = calloc (1, sizeof *waiter);
    if (!waiter) {
        gw_request_reply_error (req, GW_E_INTERNAL, "out of memory");
        return;
    }
    *waiter = (gw_session_started_t) {.fn = s_on_started, .arg = req};
    gw_session_when_started (session, waiter);
}

/* A new session as body asks (POST /sessions' fields but dependencies:
 * session_id, kernel or language, volumes, codebox-ai's execution_options, checked
 * and clamped here and applied to every start of its kernel; id NULL: a
 * uuid), named on req; NULL after answering why not. */
static gw_session_t *
s_create_or_reply (gw_server_t *server, gw_request_t *req, json_t *body, const char *id)
{
    const char *kernel, *language;
    if (!s_opt_string (req, body, "kernel", &kernel)
        || !s_opt_string (req, body, "language", &language))
        return NULL;
    gw_error_t e;
    char err[1200];
    gw_exec_options_t exec;
    gw_exec_rules_t rules = gw_server_exec_rules (server);
    if (gw_exec_options_parse (json_object_get (body, "execution_options"), &rules, &exec, &e,
                               err, sizeof err) < 0) {
        gw_exec_options_clear (&exec);
        gw_request_reply_error (req, e, "%s", err);
        return NULL;
    }
    if (gw_rest_volumes_attach (server, req, json_object_get (body, "volumes"), &exec) < 0) {
        gw_exec_options_clear (&exec);
        return NULL;
    }
    gw_caller_t caller = gw_request_caller (req);
    gw_sessions_new_t opts = {.id = id, .kernel = kernel, .language = language, .exec = &exec};
    gw_session_t *session = gw_sessions_create (server, &caller, &opts, &e, err, sizeof err);
    if (session)
        gw_rest_volumes_hold (server, session, &exec);
    gw_exec_options_clear (&exec);
    if (!session)
        gw_request_reply_error (req, e, "%s", err);
    else
        gw_request_name_session (req, gw_session_id (session));
    return session;
}

static void
s_post_sessions (gw_server_t *server, gw_request_t *req)
{
    json_t *body = s_body_object (req);
    if (!body)
        return;
    const char *id;
    gw_session_t *session = s_opt_string (req, body, "session_id", &id)
                                ? s_create_or_reply (server, req, body, id)
                                : NULL;
    /* dependencies: answered once installed and importable (gw_packages.c) */
    gw_packages_t *packages = gw_server_packages (server);
    if (session && !(packages && gw_packages_rest_start (packages, req, session,
                                                         json_object_get (body,
                                                                          "dependencies"))))
        gw_rest_answer_when_started (session, req);
    json_decref (body);
}

static void
s_get_sessions (gw_server_t *server, gw_request_t *req)
{
    gw_caller_t caller = gw_request_caller (req);
    /* every node's, unless ?scope=node */
    const char *scope = gw_request_query (req, "scope");
    bool all = !(scope && strcmp (scope, "node") == 0);
    gw_request_reply_json (req, 200, json_pack ("{s:o}", "sessions",
                                                gw_sessions_list (server, &caller, all)));
}

gw_session_t *
gw_rest_session_or_reply (gw_server_t *server, gw_request_t *req, const char *id)
{
    gw_caller_t caller = gw_request_caller (req);
    gw_sessions_where_t where;
    gw_session_t *session = gw_sessions_resolve (server, &caller, id, &where);
    if (where.e == GW_E_SESSION_NOT_FOUND)
        gw_request_reply_error (req, where.e, "no session '%s'; create it with POST /sessions",
                                id);
    else if (!session)
        gw_request_reply_error (req, where.e, "%s", where.why);
    else
        gw_request_name_session (req, gw_session_id (session));
    return session;
}

/* Queues code in session and answers 202 naming the request and the
 * session (and the dependencies installed first, when given: stolen).
 * False when it answered why the code was not queued. */
static bool
s_submit_and_answer (gw_server_t *server, gw_request_t *req, gw_session_t *session,
                     const char *code, long timeout_s, json_t *dependencies)
{
    gw_caller_t caller = gw_request_caller (req);
    gw_sessions_submit_t submit = {.timeout_s = timeout_s};
    gw_error_t e;
    char why[256];
    gw_job_t *job = gw_sessions_submit (server, &caller, session, code, &submit, &e, why,
                                        sizeof why);
    if (!job) {
        json_decref (dependencies);
        gw_request_reply_error (req, e, "%s", why);
        return false;
    }
    gw_request_name_session (req, gw_session_id (session));
    /* accepted means queued, as the contract shows, even if it already runs */
    json_t *body = json_pack ("{s:s, s:s, s:s}", "request_id", gw_job_id (job), "status",
                              "queued", "session_id", gw_session_id (session));
    if (dependencies)
        json_object_set_new (body, "dependencies", dependencies);
    gw_request_reply_json (req, 202, body);
    return true;
}

/* An execution waiting for the dependencies of the session made for it. */
typedef struct {
    gw_server_t *server;
    char *code;
    long timeout_s;
} s_pending_t;

static void
s_pending_then (gw_request_t *req, gw_session_t *session, json_t *result, void *arg)
{
    s_pending_t *pending = arg;
    /* the session was made for this code: it goes if the code cannot */
    if (session && !s_submit_and_answer (pending->server, req, session, pending->code,
                                         pending->timeout_s, result))
        gw_sessions_end (pending->server, session);
    free (pending->code);
    free (pending);
}

/* POST /execute without a session_id (codebox-ai's first client, and its
 * README's first call): a new session (a uuid for its id) with the body's
 * kernel or language, execution_options and dependencies as POST
 * /sessions takes them, then the code in it; the 202 names the session. */
static void
s_execute_in_new_session (gw_server_t *server, gw_request_t *req, json_t *body,
                          const char *code, long timeout_s)
{
    gw_session_t *session = s_create_or_reply (server, req, body, NULL);
    if (!session)
        return;
    s_pending_t *pending = calloc (1, sizeof *pending);
    char *copy = strdup (code);
    if (!pending || !copy) {
        free (pending);
        free (copy);
        gw_sessions_end (server, session);
        gw_request_reply_error (req, GW_E_INTERNAL, "out of memory");
        return;
    }
    *pending = (s_pending_t) {.server = server, .code = copy, .timeout_s = timeout_s};
    gw_packages_t *packages = gw_server_packages (server);
    if (packages && gw_packages_rest_then (packages, req, session,
                                           json_object_get (body, "dependencies"),
                                           s_pending_then, pending))
        return;     /* answered after the install */
    s_pending_then (req, session, NULL, pending);
}

static void
s_post_execute (gw_server_t *server, gw_request_t *req)
{
    json_t *body = s_body_object (req);
    if (!body)
        return;
    const char *id, *code, *kernel, *language;
    if (!s_opt_string (req, body, "session_id", &id) || !s_opt_string (req, body, "code", &code)
        || !s_opt_string (req, body, "kernel", &kernel)
        || !s_opt_string (req, body, "language", &language)) {
        json_decref (body);
        return;
    }
    json_t *timeout = json_object_get (body, "timeout");
    if (!code || (timeout && !json_is_null (timeout)
                  && (!json_is_integer (timeout) || json_integer_value (timeout) <= 0))) {
        json_decref (body);
        gw_request_reply_error (req, GW_E_BAD_REQUEST,
                                "send {\"session_id\"?: ID, \"code\": TEXT, \"timeout\"?: "
                                "positive integer seconds}");
        return;
    }
    long timeout_s = json_is_integer (timeout) ? (long) json_integer_value (timeout) : 0;
    if (!id) {
        s_execute_in_new_session (server, req, body, code, timeout_s);
        json_decref (body);
        return;
    }
    gw_session_t *session = gw_rest_session_or_reply (server, req, id);
    if (session && ((language && strcasecmp (language, gw_session_spec (session)->language) != 0)
                    || (kernel && strcasecmp (kernel, gw_session_spec (session)->name) != 0))) {
        gw_request_reply_error (req, GW_E_BAD_REQUEST, "session '%s' runs %s (%s), not %s; "
                                "create another session for %s", gw_session_id (session),
                                gw_session_spec (session)->name,
                                gw_session_spec (session)->language, language ? language : kernel,
                                language ? language : kernel);
        session = NULL;
    }
    if (session)
        (void) s_submit_and_answer (server, req, session, code, timeout_s, NULL);
    json_decref (body);
}

/* A long poll on a job: answered with the results when it finishes, 409
 * with the status when the wait runs out, 503 at shutdown. */
static void
s_long_poll (gw_job_t *job, gw_job_event_t event, json_t *item, gw_job_observer_t *poll)
{
    (void) item;
    gw_request_t *req = poll->arg;
    if (event == GW_JOB_OUTPUT || event == GW_JOB_INPUT)
        return;
    if (event == GW_JOB_FINISHED)
        gw_request_reply_json (req, 200, gw_job_results_json (job));
    else if (event == GW_JOB_WAIT_OVER)
        gw_request_reply_json (req, 409, json_pack ("{s:{s:s, s:s}, s:s, s:s}", "error", "code",
                                                    gw_error_code (GW_E_NOT_FINISHED),
                                                    "message", "the execution has not finished "
                                                    "yet; ask again", "request_id", gw_job_id (job),
                                                    "status", gw_job_client_status (job)));
    else
        gw_request_reply_error (req, GW_E_SHUTTING_DOWN, "the gateway is shutting down");
    free (poll);
}

/* GET /execute/{rid}/results: the results, a long poll, or 409. */
static void
s_get_results (gw_server_t *server, gw_request_t *req, gw_job_t *job)
{
    (void) server;
    if (gw_job_finished (job)) {
        gw_request_reply_json (req, 200, gw_job_results_json (job));
        return;
    }
    const char *wait = gw_request_query (req, "wait");
    if (wait) {
        char *end;
        double seconds = strtod (wait, &end);
        if (end == wait || *end || !(seconds > 0)) {
            gw_request_reply_error (req, GW_E_BAD_REQUEST, "wait must be a positive number "
                                    "of seconds (longer than %d is cut to %d)",
                                    MAX_WAIT_SECONDS, MAX_WAIT_SECONDS);
            return;
        }
        if (seconds > MAX_WAIT_SECONDS)
            seconds = MAX_WAIT_SECONDS;
        gw_job_observer_t *poll = calloc (1, sizeof *poll);
        if (!poll) {
            gw_request_reply_error (req, GW_E_INTERNAL, "out of memory");
            return;
        }
        *poll = (gw_job_observer_t) {.fn = s_long_poll, .arg = req,
                                     .until_ms = jp_time_now_ms () + (int64_t) (seconds * 1000)};
        gw_job_observe (job, poll);
        return;
    }
    gw_request_reply_json (req, 409,
                           json_pack ("{s:{s:s, s:s}, s:s, s:s}", "error", "code",
                                      gw_error_code (GW_E_NOT_FINISHED), "message",
                                      "the execution has not finished; poll its status or "
                                      "add ?wait=SECONDS",
                                      "request_id", gw_job_id (job), "status",
                                      gw_job_client_status (job)));
}

/* The caller's execution rid (its session named on req), or NULL after
 * answering 404. */
static gw_job_t *
s_job_or_reply (gw_server_t *server, gw_request_t *req, const char *rid)
{
    gw_job_t *job = gw_jobs_find (gw_server_jobs (server), rid, req->tenant);
    if (!job) {
        gw_request_reply_error (req, GW_E_REQUEST_NOT_FOUND,
                                "no execution '%s' (results are kept for an hour)", rid);
        return NULL;
    }
    gw_request_name_session (req, gw_job_session_id (job));
    return job;
}

void
gw_rest_metrics (gw_server_t *server, gw_request_t *req)
{
    /* the server's totals and this tenant's own series, never another's */
    char *text = gw_metrics_render (gw_server_metrics (server), req->tenant);
    gw_request_reply_raw (req, 200, text, text ? strlen (text) : 0, "text/plain; version=0.0.4");
}

void
gw_rest_sessions (gw_server_t *server, gw_request_t *req)
{
    if (strcmp (req->method, "POST") == 0)
        s_post_sessions (server, req);
    else
        s_get_sessions (server, req);
}

void
gw_rest_session (gw_server_t *server, gw_request_t *req, const char *id)
{
    gw_session_t *session = gw_rest_session_or_reply (server, req, id);
    if (session && strcmp (req->method, "GET") == 0)
        gw_request_reply_json (req, 200, gw_session_json (session, true));
    else if (session) {
        gw_sessions_end (server, session);
        gw_request_reply_json (req, 204, NULL);
    }
}

void
gw_rest_execute (gw_server_t *server, gw_request_t *req)
{
    s_post_execute (server, req);
}

void
gw_rest_execution_status (gw_server_t *server, gw_request_t *req, const char *rid)
{
    gw_job_t *job = s_job_or_reply (server, req, rid);
    if (job)
        gw_request_reply_json (req, 200, gw_job_status_json (job));
}

void
gw_rest_execution_results (gw_server_t *server, gw_request_t *req, const char *rid)
{
    gw_job_t *job = s_job_or_reply (server, req, rid);
    if (job)
        s_get_results (server, req, job);
}

void
gw_rest_execution_cancel (gw_server_t *server, gw_request_t *req, const char *rid)
{
    gw_job_t *job = s_job_or_reply (server, req, rid);
    if (!job)
        return;
    if (gw_job_session (job))
        gw_session_cancel (gw_job_session (job), job);
    gw_request_reply_json (req, 200, gw_job_status_json (job));
}
