/* gw_mcp_codebox_ai: the tool set "codebox-ai" of CODEBOX_MCP_TOOLS:
 * codebox-ai's MCP tool execute_code(code, dependencies?), so clients and
 * prompts written for codebox-ai's MCP server work unchanged. One-shot, as
 * there: a fresh Python kernel runs the code and ends with it; the result
 * is run_python_code's (text, then one image item per PNG or JPEG shown;
 * isError when the code raised). codebox-ai's two resources, sessions://
 * and session://{session_id}, are codebox's own (gw_mcp_resources.c).
 *
 * With dependencies, they are judged under the package policy and
 * installed into the one-shot session first (gw_packages, as
 * install_package does), the call waiting in the MCP core's call list
 * with no job (keep-alives, a client leaving and notifications/cancelled
 * reach it); then the code runs and the same call follows the execution
 * (gw_mcp_call_watch). A refused requirement or a failed install answers
 * with isError and the reason, and the code is not run.
 *
 * Threads: the loop thread only. */
#include "gw_mcp_codebox_ai.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_mcp_call.h"
#include "gw_mcp_reply.h"
#include "gw_mcp_tasks.h"
#include "gw_mcp_tools.h"
#include "gw_packages.h"
#include "gw_session.h"
#include "gw_sessions.h"
#include "jp_log.h"

/* A call waiting for its dependencies, then for its run. */
typedef struct {
    gw_mcp_call_t *call;        /* in mcp->calls; job NULL until the run */
    gw_packages_t *packages;
    char session_id[GW_ID_SIZE];
    char tenant[GW_ID_SIZE];
    gw_overrides_t overrides;
    bool allow_input;
    char *code;
} s_pending_t;

static void
s_pending_free (s_pending_t *p)
{
    free (p->code);
    free (p);
}

/* The one-shot session of p, or NULL when it ended already. */
static gw_session_t *
s_session (s_pending_t *p)
{
    return gw_sessions_find (p->call->mcp->server, p->tenant, p->session_id);
}

/* Answers p's call with result (new; NULL: ends the reply without one)
 * when it still has a reply, drops the call and ends the session. */
static void
s_finish (s_pending_t *p, json_t *result)
{
    gw_mcp_call_t *call = p->call;
    if (call->reply && !call->cancelled) {
        gw_mcp_reply_t *reply = call->reply;
        call->reply = NULL;
        if (result)
            gw_mcp_respond (reply, call->id, result);
        else
            reply->end (reply);
    } else
        json_decref (result);
    gw_session_t *session = s_session (p);
    if (session)
        gw_session_end_later (session);
    gw_mcp_call_drop (call);
    s_pending_free (p);
}

/* An isError result with the install's outcome: what was refused, and the
 * error. */
static json_t *
s_install_error (json_t *install)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream (&text, &len);
    if (!out)
        return gw_mcp_tool_error ("the dependencies could not be installed (out of memory)");
    fprintf (out, "The dependencies could not be installed, so the code was not run.\n");
    size_t i;
    json_t *item;
    json_array_foreach (json_object_get (install, "refused"), i, item)
        fprintf (out, "Refused '%s' (rule: %s): %s\n",
                 json_string_value (json_object_get (item, "requirement")),
                 json_string_value (json_object_get (item, "rule")),
                 json_string_value (json_object_get (item, "reason")));
    json_t *error = json_object_get (install, "error");
    if (error)
        fprintf (out, "Error (%s): %s\n", json_string_value (json_object_get (error, "code")),
                 json_string_value (json_object_get (error, "message")));
    fclose (out);
    json_t *result = json_pack ("{s:[{s:s, s:s}], s:{s:s, s:O}, s:b}", "content", "type",
                                "text", "text", text ? text : "", "structuredContent",
                                "status", "error", "dependencies", install, "isError", 1);
    free (text);
    return result;
}

/* The run's job is made: the call follows it from now on. */
static bool
s_on_job (gw_job_t *job, void *arg)
{
    s_pending_t *p = arg;
    gw_mcp_call_watch (p->call, job, true);
    return true;
}

/* The install ended: run the code, or answer why not. */
static void
s_installed (json_t *install, void *arg)
{
    s_pending_t *p = arg;
    gw_mcp_call_t *call = p->call;
    gw_session_t *session = s_session (p);
    if (!call->reply || call->cancelled) {
        jp_log_info ("mcp event=unanswered tool=execute_code session=%s (the caller left)",
                     p->session_id);
        json_decref (install);
        s_finish (p, NULL);
        return;
    }
    if (json_object_get (install, "error") || json_array_size (json_object_get (install,
                                                                                "refused"))) {
        json_t *result = s_install_error (install);
        json_decref (install);
        s_finish (p, result);
        return;
    }
    json_decref (install);
    if (!session) {
        s_finish (p, gw_mcp_tool_error ("the run's kernel ended while its dependencies were "
                                        "installed; call execute_code again"));
        return;
    }
    call->on_cancel = NULL;     /* from now on the job's end answers */
    call->cancel_arg = NULL;
    gw_caller_t caller = {.tenant = p->tenant, .overrides = p->overrides};
    gw_sessions_submit_t submit = {.allow_input = p->allow_input, .on_job = s_on_job,
                                   .arg = p};
    gw_error_t e;
    char why[256];
    if (!gw_sessions_submit (call->mcp->server, &caller, session, p->code, &submit, &e, why,
                             sizeof why)) {
        s_finish (p, gw_mcp_tool_error ("%s", why));
        return;
    }
    s_pending_free (p);     /* the call is the job's now */
}

/* The call was cancelled while pip ran: it stops (s_installed still
 * comes, and cleans up). */
static void
s_cancel (void *arg)
{
    s_pending_t *p = arg;
    gw_packages_cancel (p->packages, p);
}

static json_t *
s_execute_code (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *error = NULL;
    const char *code = gw_mcp_arg (args, "code", &error);
    json_t *deps = json_object_get (args, "dependencies");
    if (!error && !code)
        error = gw_mcp_tool_error ("code is required: the Python source to run");
    if (!error && deps && !json_is_null (deps) && !json_is_array (deps))
        error = gw_mcp_tool_error ("dependencies must be a list of package names, such as "
                                   "[\"numpy\", \"pandas>=2\"]");
    gw_packages_t *installs = gw_server_packages (ctx->mcp->server);
    bool install = !error && json_array_size (deps) > 0;
    if (install && !installs)
        error = gw_mcp_tool_error ("installing dependencies is not available on this server");
    gw_session_t *session = error ? NULL : gw_mcp_oneshot_session (ctx, "python", &error);
    if (error)
        return error;
    if (!install)
        return gw_mcp_run (ctx, session, code, 0, true);
    json_t *allowed, *refused;
    gw_error_t e;
    char err[1200];
    if (gw_packages_check (installs, session, deps, &allowed, &refused, &e, err, sizeof err)) {
        gw_session_end_later (session);
        return gw_mcp_tool_error ("%s", err);
    }
    if (json_array_size (refused) || json_array_size (allowed) == 0) {
        json_t *outcome = json_pack ("{s:o}", "refused", refused);
        json_t *result = s_install_error (outcome);
        json_decref (outcome);
        json_decref (allowed);
        gw_session_end_later (session);
        return result;
    }
    json_decref (refused);
    s_pending_t *p = calloc (1, sizeof *p);
    gw_mcp_call_t *call = p ? calloc (1, sizeof *call) : NULL;
    if (call) {
        *p = (s_pending_t) {.call = call, .packages = installs,
                            .overrides = gw_mcp_caller (ctx).overrides,
                            .allow_input = gw_mcp_input_wanted (ctx), .code = strdup (code)};
        snprintf (p->session_id, sizeof p->session_id, "%s", gw_session_id (session));
        snprintf (p->tenant, sizeof p->tenant, "%s", ctx->client->tenant);
    }
    long timeout = gw_sessions_exec_timeout (session, ctx->overrides, 0);
    int rc = call && p->code ? gw_packages_install (installs, session, allowed, timeout,
                                                    s_installed, p)
                             : -1;
    json_decref (allowed);
    if (rc) {
        free (call);
        if (p)
            s_pending_free (p);
        gw_session_end_later (session);
        return gw_mcp_tool_error ("the dependencies could not be installed (out of memory)");
    }
    /* the reply is ours now: answered when the run (or the install) ends */
    gw_mcp_call_attach (call, ctx);
    call->on_cancel = s_cancel;
    call->cancel_arg = p;
    char note[200];
    snprintf (note, sizeof note, "installing dependencies for execute_code (session '%s')",
              p->session_id);
    gw_mcp_log (ctx, "info", note);
    return NULL;
}

const gw_mcp_tool_t gw_mcp_tool_execute_code = {
    "execute_code",
    "Execute Python code",
    "Execute Python code and return a list of TextContent or ImageContent objects. The code "
    "runs once in a fresh Python kernel that is discarded afterwards; nothing persists "
    "between calls. Plots and images the code displays come back as images.\n\n"
    "Args:\n    code: Python code to execute\n    dependencies: Optional list of Python "
    "packages to install (under the server's package policy) before the code runs",
    "{\"type\": \"object\", \"properties\": {"
    "\"code\": {\"type\": \"string\", \"title\": \"Code\", \"description\": \"Python code to "
    "execute.\"}, "
    "\"dependencies\": {\"anyOf\": [{\"type\": \"array\", \"items\": {\"type\": \"string\"}}, "
    "{\"type\": \"null\"}], \"default\": null, \"title\": \"Dependencies\", \"description\": "
    "\"Optional list of Python packages to install first, such as [\\\"numpy\\\", "
    "\\\"pandas>=2\\\"].\"}}, "
    "\"required\": [\"code\"]}",
    NULL,
    /* as run_python_code's (an install reaches a package index, which the
       package policy bounds) */
    {.read_only = false, .destructive = true, .idempotent = false, .world = GW_MCP_WORLD_KERNEL},
    s_execute_code,
};
