/* gw_mcp_e2b_install: the "e2b" tool set's install_package(session_id,
 * package_name), in the E2B sandbox MCP server's words and shape: pip into
 * the sandbox (a session made by create_sandbox) under the package policy,
 * as codebox's own install_package does it (gw_packages: the session's own
 * .packages folder, CODEBOX_PACKAGE_ALLOW / _DENY, the index settings),
 * answering the seed's {"package", "output": {"stdout", "stderr"},
 * "error"} with what was installed, found already there and refused
 * beside it. The seed runs "pip install NAME", so several names separated
 * by spaces are several requirements; pip's options are not passed (the
 * policy refuses them).
 *
 * The call waits in the MCP core's call list with no job, as codebox's
 * install_package (keep-alives, a client leaving and
 * notifications/cancelled reach it; a cancel stops pip).
 *
 * Threads: the loop thread only. */
#include "gw_mcp_e2b_install.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_mcp_call.h"
#include "gw_mcp_e2b_run.h"
#include "gw_mcp_reply.h"
#include "gw_packages.h"
#include "gw_session.h"
#include "gw_sessions.h"
#include "jp_log.h"

/* A call waiting for its install. */
typedef struct {
    gw_mcp_call_t *call;        /* in mcp->calls; job NULL */
    gw_packages_t *packages;
    json_t *refused;            /* by the policy, before the install */
    char *package;              /* package_name, as given */
} s_install_t;

/* The answer to install_package (new) from an install's outcome
 * (borrowed; gw_packages' result): pip's last words as output, the
 * refusals and the failure as error; isError when nothing is there to
 * import or the install failed. */
static json_t *
s_install_result (const char *package, json_t *outcome)
{
    json_t *installed = json_object_get (outcome, "installed");
    json_t *satisfied = json_object_get (outcome, "satisfied");
    json_t *refused = json_object_get (outcome, "refused");
    json_t *failure = json_object_get (outcome, "error");
    json_t *stdout_chunks = json_array ();
    char *text = NULL;
    size_t len = 0;
    size_t i;
    json_t *item;
    FILE *f = open_memstream (&text, &len);
    if (f && json_array_size (installed)) {
        fprintf (f, "Successfully installed");
        json_array_foreach (installed, i, item)
            fprintf (f, " %s-%s", json_string_value (json_object_get (item, "name")),
                     json_string_value (json_object_get (item, "version")));
        fprintf (f, "\n");
    }
    json_array_foreach (satisfied, i, item)
        if (f)
            fprintf (f, "Requirement already satisfied: %s (%s)\n",
                     json_string_value (json_object_get (item, "name")),
                     json_string_value (json_object_get (item, "version")));
    if (f)
        fclose (f);
    if (text && len)
        json_array_append_new (stdout_chunks, json_stringn (text, len));
    free (text);
    text = NULL;
    len = 0;
    f = open_memstream (&text, &len);
    json_array_foreach (refused, i, item)
        if (f)
            fprintf (f, "%sRefused '%s' (rule: %s): %s", i ? "\n" : "",
                     json_string_value (json_object_get (item, "requirement")),
                     json_string_value (json_object_get (item, "rule")),
                     json_string_value (json_object_get (item, "reason")));
    if (f && failure)
        fprintf (f, "%sError installing package: %s (%s)", json_array_size (refused) ? "\n" : "",
                 json_string_value (json_object_get (failure, "message")),
                 json_string_value (json_object_get (failure, "code")));
    if (f)
        fclose (f);
    bool nothing = json_array_size (installed) == 0 && json_array_size (satisfied) == 0;
    if (f && nothing && !len) {
        free (text);
        text = strdup ("Nothing was installed");
        len = text ? strlen (text) : 0;
    }
    json_t *dict = json_pack ("{s:s, s:{s:o, s:[]}, s:o, s:o, s:o}", "package", package,
                              "output", "stdout", stdout_chunks, "stderr", "error",
                              len ? json_stringn (text, len) : json_null (), "installed",
                              installed ? json_incref (installed) : json_array (), "refused",
                              refused ? json_incref (refused) : json_array ());
    free (text);
    if (!dict)
        return gw_mcp_e2b_error ("Error installing package: out of memory");
    if (json_array_size (satisfied))
        json_object_set (dict, "satisfied", satisfied);
    return gw_mcp_e2b_result (dict, NULL, nothing || failure);
}

static void
s_install_free (s_install_t *in)
{
    json_decref (in->refused);
    free (in->package);
    free (in);
}

/* The install ended: answer the call, unless its reply was ended. */
static void
s_installed (json_t *outcome, void *arg)
{
    s_install_t *in = arg;
    gw_mcp_call_t *call = in->call;
    json_t *refused = json_object_get (outcome, "refused");
    json_array_extend (in->refused, json_is_array (refused) ? refused : NULL);
    json_object_set (outcome, "refused", in->refused);
    if (call->reply && !call->cancelled) {
        gw_mcp_reply_t *reply = call->reply;
        call->reply = NULL;
        gw_mcp_respond (reply, call->id, s_install_result (in->package, outcome));
    } else
        jp_log_info ("packages event=unanswered tool=install_package session=%s (the caller "
                     "left)", json_string_value (json_object_get (outcome, "session_id")));
    json_decref (outcome);
    gw_mcp_call_drop (call);
    s_install_free (in);
}

/* The call was cancelled: pip stops (s_installed still comes). */
static void
s_install_cancel (void *arg)
{
    s_install_t *in = arg;
    gw_packages_cancel (in->packages, in);
}

/* package_name's requirements: the seed runs "pip install NAME", so
 * several may be given, separated by spaces (new array). */
static json_t *
s_requirements (const char *package)
{
    json_t *list = json_array ();
    const char *p = package;
    while (*(p += strspn (p, " \t\r\n"))) {
        size_t n = strcspn (p, " \t\r\n");
        json_array_append_new (list, json_stringn (p, n));
        p += n;
    }
    return list;
}

static json_t *
s_install_package (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *error = NULL;
    const char *package = gw_mcp_e2b_arg (args, "package_name", &error);
    gw_session_t *session = error ? NULL : gw_mcp_e2b_sandbox (ctx, args, &error);
    json_t *wanted = error || !package ? NULL : s_requirements (package);
    if (!error && json_array_size (wanted) == 0)
        error = gw_mcp_e2b_error ("package_name is required: the Python package to install, "
                                  "such as 'requests' or 'numpy>=1.26'");
    gw_packages_t *installs = gw_server_packages (ctx->mcp->server);
    if (!error && !installs)
        error = gw_mcp_e2b_error ("Error installing package: installing packages is not "
                                  "available on this server");
    json_t *allowed = NULL, *refused = NULL;
    gw_error_t e;
    char err[1200];
    if (!error && gw_packages_check (installs, session, wanted, &allowed, &refused, &e, err,
                                     sizeof err))
        error = gw_mcp_e2b_error ("Error installing package: %s", err);
    json_decref (wanted);
    if (error)
        return error;
    if (json_array_size (allowed) == 0) {
        json_decref (allowed);
        json_t *outcome = json_pack ("{s:[], s:o}", "installed", "refused", refused);
        json_t *result = s_install_result (package, outcome);
        json_decref (outcome);
        return result;
    }
    s_install_t *in = calloc (1, sizeof *in);
    gw_mcp_call_t *call = in ? calloc (1, sizeof *call) : NULL;
    if (call)
        *in = (s_install_t) {.call = call, .packages = installs, .refused = refused,
                             .package = strdup (package)};
    long timeout = gw_sessions_exec_timeout (session, ctx->overrides, 0);
    int rc = call && in->package ? gw_packages_install (installs, session, allowed, timeout,
                                                        s_installed, in)
                                 : -1;
    json_decref (allowed);
    if (rc) {
        free (call);
        json_decref (refused);
        if (in)
            free (in->package);
        free (in);
        return gw_mcp_e2b_error ("Error installing package: the install could not start (out "
                                 "of memory)");
    }
    /* the reply is ours now: answered in s_installed */
    gw_mcp_call_attach (call, ctx);
    call->on_cancel = s_install_cancel;
    call->cancel_arg = in;
    char note[200];
    snprintf (note, sizeof note, "installing into sandbox '%s'", gw_session_id (session));
    gw_mcp_log (ctx, "info", note);
    return NULL;
}

const gw_mcp_tool_t gw_mcp_e2b_install_package = {
    "install_package",
    "Install a Python package in a sandbox",
    "Install a Python package with pip into a sandbox made with create_sandbox; later "
    "execute_code calls in it can import it. The server's package policy decides what may "
    "be installed (URLs, local paths and pip options are refused). Returns a dict with the "
    "package, pip's output and the error, if any.\n\n"
    "Args:\n    session_id: The sandbox's ID\n    package_name: The package to install, "
    "with an optional version (several may be separated by spaces)",
    "{\"type\": \"object\", \"properties\": {" GW_MCP_E2B_ID_PROP ", "
    "\"package_name\": {\"type\": \"string\", \"title\": \"Package Name\", \"description\": "
    "\"The Python package to install, such as 'requests' or 'numpy>=1.26'.\"}}, "
    "\"required\": [\"session_id\", \"package_name\"]}",
    "{\"type\": \"object\", \"properties\": {\"package\": {\"type\": \"string\"}, "
    "\"output\": {\"type\": \"object\", \"properties\": {"
    "\"stdout\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}}, "
    "\"stderr\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}}}}, "
    "\"error\": {\"type\": [\"string\", \"null\"]}, "
    "\"installed\": {\"type\": \"array\"}, \"satisfied\": {\"type\": \"array\"}, "
    "\"refused\": {\"type\": \"array\"}}}",
    /* as codebox's install_package: an index is reached, the policy bounds it */
    {.read_only = false, .destructive = false, .idempotent = true, .world = GW_MCP_WORLD_OPEN},
    s_install_package,
};

