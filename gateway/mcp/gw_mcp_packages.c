/* gw_mcp_packages: the install_package MCP tool. It creates the session on
 * first use, judges the requirements under the package policy, installs
 * the allowed ones (gw_packages) and answers once they can be imported:
 * what was installed, with versions, and what was refused, with the rule.
 * The result is an error (isError) when nothing could be installed.
 *
 * The tool takes the reply over: the call goes into the MCP core's call
 * list (with no job), so SSE keep-alives flow while pip or npm runs, and
 * the client leaving, notifications/cancelled or the end of the MCP
 * session end the reply as they do for an execution, and stop the install
 * (pip or npm is killed; a setup snippet already queued still runs).
 * gw_packages calls back before the gateway's HTTP server and MCP core
 * go away, also at shutdown.
 *
 * Threads: the loop thread only. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_mcp_call.h"
#include "gw_mcp_packages.h"
#include "gw_mcp_reply.h"
#include "gw_mcp_tools.h"
#include "gw_packages.h"
#include "gw_session.h"
#include "gw_sessions.h"
#include "jp_time.h"
#include "jp_log.h"

/* A call waiting for its install. */
typedef struct {
    gw_mcp_call_t *call;        /* in mcp->calls; job NULL */
    gw_packages_t *packages;
    json_t *refused;            /* by the policy, before the install */
} s_install_t;

/* Appends printf-style text to a growing buffer. */
static void
s_add (char **buf, size_t *len, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));

static void
s_add (char **buf, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    char *piece = NULL;
    int n = vasprintf (&piece, fmt, ap);
    va_end (ap);
    char *grown = n >= 0 ? realloc (*buf, *len + (size_t) n + 1) : NULL;
    if (grown) {
        memcpy (grown + *len, piece, (size_t) n + 1);
        *buf = grown;
        *len += (size_t) n;
    }
    free (piece);
}

/* The CallToolResult of an install (structured stolen). */
static json_t *
s_result (json_t *structured)
{
    json_t *installed = json_object_get (structured, "installed");
    json_t *refused = json_object_get (structured, "refused");
    json_t *error = json_object_get (structured, "error");
    const char *session = json_string_value (json_object_get (structured, "session_id"));
    const char *where = json_string_value (json_object_get (structured, "location"));
    char *text = NULL;
    size_t len = 0;
    size_t i;
    json_t *item;
    if (json_array_size (installed)) {
        s_add (&text, &len, "Installed into session '%s' (%s):", session ? session : "?",
               where ? where : "?");
        json_array_foreach (installed, i, item)
            s_add (&text, &len, "%s %s %s%s", i ? "," : "",
                   json_string_value (json_object_get (item, "name")),
                   json_string_value (json_object_get (item, "version")),
                   json_is_true (json_object_get (item, "requested")) ? "" : " (dependency)");
        s_add (&text, &len, "\nImport them in exec_code calls of this session; other sessions "
               "do not see them.\n");
    } else
        s_add (&text, &len, "Nothing was installed into session '%s'.\n",
               session ? session : "?");
    json_t *satisfied = json_object_get (structured, "satisfied");
    if (json_array_size (satisfied)) {
        s_add (&text, &len, "Already importable, so not installed:");
        json_array_foreach (satisfied, i, item)
            s_add (&text, &len, "%s %s %s", i ? "," : "",
                   json_string_value (json_object_get (item, "name")),
                   json_string_value (json_object_get (item, "version")));
        s_add (&text, &len, "\n");
    }
    json_array_foreach (refused, i, item)
        s_add (&text, &len, "Refused '%s' (rule: %s): %s\n",
               json_string_value (json_object_get (item, "requirement")),
               json_string_value (json_object_get (item, "rule")),
               json_string_value (json_object_get (item, "reason")));
    json_array_foreach (json_object_get (structured, "dropped"), i, item)
        s_add (&text, &len, "Dropped the recorded dependency '%s' (rule: %s): %s\n",
               json_string_value (json_object_get (item, "requirement")),
               json_string_value (json_object_get (item, "rule")),
               json_string_value (json_object_get (item, "reason")));
    if (error)
        s_add (&text, &len, "Error (%s): %s\n",
               json_string_value (json_object_get (error, "code")),
               json_string_value (json_object_get (error, "message")));
    bool failed = (json_array_size (installed) == 0 && json_array_size (satisfied) == 0) || error;
    json_t *result = json_pack ("{s:[{s:s, s:s}], s:o, s:b}", "content", "type", "text", "text",
                                text ? text : "", "structuredContent", structured, "isError",
                                failed);
    free (text);
    return result;
}


/* The install ended: answer the call, unless its reply was ended. */
static void
s_done (json_t *result, void *arg)
{
    s_install_t *in = arg;
    gw_mcp_call_t *call = in->call;
    json_t *refused = json_object_get (result, "refused");
    json_array_extend (in->refused, json_is_array (refused) ? refused : NULL);
    json_object_set (result, "refused", in->refused);
    if (call->reply && !call->cancelled) {
        gw_mcp_reply_t *reply = call->reply;
        call->reply = NULL;
        gw_mcp_respond (reply, call->id, s_result (result));
    } else {
        jp_log_info ("packages event=unanswered session=%s (the caller left)",
                 json_string_value (json_object_get (result, "session_id")));
        json_decref (result);
    }
    gw_mcp_call_drop (call);
    json_decref (in->refused);
    free (in);
}

/* The call was cancelled (notifications/cancelled): pip or npm stops. */
static void
s_cancel (void *arg)
{
    s_install_t *in = arg;
    gw_packages_cancel (in->packages, in);
}

static json_t *
s_install_package (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *packages = json_object_get (args, "packages");
    if (!packages || json_is_null (packages))
        return gw_mcp_tool_error ("packages is required: a list such as [\"requests\", "
                                  "\"numpy>=1.26\"] for Python or [\"lodash@4\"] for "
                                  "JavaScript");
    json_t *error = NULL;
    gw_session_t *session = gw_mcp_session (ctx, args, true, &error);
    if (error)
        return error;
    json_t *allowed, *refused;
    gw_error_t e;
    char err[1200];
    gw_packages_t *installs = gw_server_packages (ctx->mcp->server);
    if (!installs)
        return gw_mcp_tool_error ("installing packages is not available on this server");
    if (gw_packages_check (installs, session, packages, &allowed, &refused, &e, err,
                           sizeof err))
        return gw_mcp_tool_error ("%s", err);
    if (json_array_size (allowed) == 0) {
        json_decref (allowed);
        return s_result (json_pack ("{s:s, s:s, s:[], s:o}", "session_id", gw_session_id (session),
                                    "language", gw_session_spec (session)->language, "installed",
                                    "refused", refused));
    }
    s_install_t *in = calloc (1, sizeof *in);
    gw_mcp_call_t *call = in ? calloc (1, sizeof *call) : NULL;
    long timeout = gw_sessions_exec_timeout (session, ctx->overrides, 0);
    if (call) {
        in->call = call;
        in->packages = installs;
        in->refused = refused;
    }
    int rc = call ? gw_packages_install (installs, session, allowed, timeout, s_done, in)
                  : -1;
    json_decref (allowed);
    if (rc) {
        free (call);
        free (in);
        json_decref (refused);
        return gw_mcp_tool_error ("the install could not start (out of memory)");
    }
    /* the reply is ours now: answered in s_done */
    gw_mcp_call_attach (call, ctx);
    call->on_cancel = s_cancel;
    call->cancel_arg = in;
    char note[200];
    snprintf (note, sizeof note, "installing into session '%s'", gw_session_id (session));
    gw_mcp_log (ctx, "info", note);
    return NULL;
}

const gw_mcp_tool_t gw_mcp_tool_install_package = {
    "install_package",
    "Install packages into a session",
    "Install packages into a session's kernel environment: pip for Python kernels (into the "
    "session's own .packages folder, on its sys.path), npm for JavaScript kernels (into its "
    "node_modules). Installed packages can be imported in later exec_code calls of the same "
    "session; other sessions do not see them. Give names with optional versions, such as "
    "'requests', 'numpy>=1.26' or 'lodash@4'. The server's package policy decides what may be "
    "installed: URLs, local paths, VCS links and installer options are refused, as are "
    "packages its lists deny or do not allow; each refusal names its rule. The session is "
    "created on first use, in Python unless you give language or kernel.",
    "{\"type\": \"object\", \"properties\": {"
    "\"session_id\": {\"type\": \"string\", \"x-mcp-header\": \"Session-Id\", "
    "\"description\": \"Your session's name, 1-64 "
    "characters of A-Z a-z 0-9 _ . - (for example 'main').\"}, "
    "\"packages\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}, \"minItems\": 1, "
    "\"description\": \"Requirements: a name with an optional version, such as 'requests', "
    "'pandas==2.2.*' (Python) or 'lodash@^4' (JavaScript).\"}, "
    "\"language\": {\"type\": \"string\", \"description\": \"python or javascript; only used "
    "when the session is new.\"}, "
    "\"kernel\": {\"type\": \"string\", \"description\": \"A kernelspec name (see "
    "list_kernels); only used when the session is new.\"}}, "
    "\"required\": [\"session_id\", \"packages\"]}",
    "{\"type\": \"object\", \"properties\": {\"session_id\": {\"type\": \"string\"}, "
    "\"language\": {\"type\": \"string\"}, \"location\": {\"type\": \"string\"}, "
    "\"installed\": {\"type\": \"array\", \"items\": {\"type\": \"object\", \"properties\": "
    "{\"name\": {\"type\": \"string\"}, \"version\": {\"type\": \"string\"}, \"requested\": "
    "{\"type\": \"boolean\"}}}}, "
    "\"satisfied\": {\"type\": \"array\", \"items\": {\"type\": \"object\", \"properties\": "
    "{\"requirement\": {\"type\": \"string\"}, \"name\": {\"type\": \"string\"}, "
    "\"version\": {\"type\": \"string\"}}}}, "
    "\"refused\": {\"type\": \"array\", \"items\": {\"type\": \"object\", \"properties\": "
    "{\"requirement\": {\"type\": \"string\"}, \"rule\": {\"type\": \"string\"}, \"reason\": "
    "{\"type\": \"string\"}}}}, "
    "\"error\": {\"type\": \"object\"}}, \"required\": [\"installed\", \"refused\"]}",
    /* fetches from a package index; adds to the session's environment, and
       what is already importable is not installed again */
    {.read_only = false, .destructive = false, .idempotent = true, .world = GW_MCP_WORLD_OPEN},
    s_install_package,
};
