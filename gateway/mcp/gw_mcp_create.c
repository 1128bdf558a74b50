/* gw_mcp_create: the create_session MCP tool: a session made with options
 * other tools cannot give on first use: the tenant's named volumes
 * (gw_volumes, mounted at /volumes/NAME, read-write or read-only), a
 * kernel or language, and dependencies (installed as install_package
 * does, whose answer it then gives).
 *
 * Threads: the loop thread only. */
#include <stdio.h>
#include <string.h>

#include "gw_mcp_create.h"
#include "gw_mcp_packages.h"
#include "gw_mcp_tools.h"
#include "gw_session.h"
#include "gw_sessions.h"
#include "gw_volumes.h"

/* A sentence naming where the session's volumes are. */
static void
s_volumes_text (const gw_exec_options_t *exec, char *text, size_t len)
{
    size_t used = 0;
    text[0] = '\0';
    for (int i = 0; i < exec->n_volumes && used < len; i++) {
        int n = snprintf (text + used, len - used, "%s%s/%s (%s)", i ? ", " : " Volumes: ",
                          GW_VOLUMES_AT, exec->volumes[i].name,
                          exec->volumes[i].read_write ? "read-write" : "read-only");
        used += n > 0 ? (size_t) n : 0;
    }
    if (exec->n_volumes && used + 2 < len)
        snprintf (text + used, len - used, ".");
}

/* The answer of a made session (without dependencies). */
static json_t *
s_made (gw_session_t *session, const gw_exec_options_t *exec)
{
    json_t *info = gw_session_json (session, false);
    json_t *volumes = json_array ();
    for (int i = 0; volumes && i < exec->n_volumes; i++) {
        char at[128];
        snprintf (at, sizeof at, "%s/%s", GW_VOLUMES_AT, exec->volumes[i].name);
        json_array_append_new (volumes, json_pack ("{s:s, s:s, s:b}", "name",
                                                   exec->volumes[i].name, "path", at,
                                                   "read_only", !exec->volumes[i].read_write));
    }
    json_object_set_new (info, "volumes", volumes ? volumes : json_array ());
    char vols[900], text[1200];
    s_volumes_text (exec, vols, sizeof vols);
    snprintf (text, sizeof text, "Created session '%s' (%s kernel); its folder is %s: read "
              "inputs from input/, save files for the user under output/.%s Use this "
              "session_id in the other tools.", gw_session_id (session),
              gw_session_spec (session)->name, gw_session_visible_workdir (session), vols);
    return gw_mcp_tool_ok (info, text);
}

static json_t *
s_create_session (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *error = NULL;
    const char *id = gw_mcp_arg (args, "session_id", &error);
    const char *language = gw_mcp_arg (args, "language", &error);
    const char *kernel = gw_mcp_arg (args, "kernel", &error);
    json_t *deps = json_object_get (args, "dependencies");
    if (!error && deps && !json_is_null (deps) && !json_is_array (deps))
        error = gw_mcp_tool_error ("dependencies must be a list of package names, such as "
                                   "[\"requests\", \"numpy>=1.26\"]");
    if (error)
        return error;
    gw_caller_t caller = gw_mcp_caller (ctx);
    gw_exec_options_t exec;
    memset (&exec, 0, sizeof exec);
    gw_error_t e;
    char err[1200];
    json_t *volumes = json_object_get (args, "volumes");
    gw_volumes_t *store = gw_server_volumes (ctx->mcp->server);
    if (volumes && !json_is_null (volumes) && !store)
        return gw_mcp_tool_error ("volumes are not served now");
    if (store && gw_volumes_attach (store, caller.tenant, volumes, &exec, &e, err,
                                    sizeof err) < 0)
        return gw_mcp_tool_error ("%s%s", err, e == GW_E_NOT_FOUND ? " (this tenant's volumes "
                                  "are made over REST: POST /volumes)" : "");
    gw_sessions_new_t opts = {.id = id, .kernel = kernel, .language = language,
                              .exec = exec.n_volumes ? &exec : NULL};
    gw_session_t *session = gw_sessions_create (ctx->mcp->server, &caller, &opts, &e, err,
                                                sizeof err);
    if (!session)
        return gw_mcp_tool_error ("cannot create the session: %s%s", err,
                                  e == GW_E_CONFLICT ? "; use it as it is, or destroy_session "
                                                       "first" : "");
    if (store)
        gw_volumes_hold (store, session, &exec);
    json_t *result;
    if (json_array_size (deps)) {
        /* install_package's own way and answer, on the session just made */
        json_t *install = json_pack ("{s:s, s:O}", "session_id", gw_session_id (session),
                                     "packages", deps);
        result = install ? gw_mcp_tool_install_package.fn (ctx, install)
                         : gw_mcp_tool_error ("out of memory");
        json_decref (install);
    } else
        result = s_made (session, &exec);
    gw_exec_options_clear (&exec);
    return result;
}

const gw_mcp_tool_t gw_mcp_tool_create_session = {
    "create_session",
    "Create a session with options",
    "Create a session (a persistent kernel with its own folder) with options the other tools "
    "cannot give: volumes to mount, a kernel or language, and packages to install first. "
    "Volumes are this tenant's named folders that outlive sessions; each is seen at "
    "/volumes/NAME, read-write unless read_only. Other tools create a session with the "
    "defaults on first use, so call this only when you need these options.",
    "{\"type\": \"object\", \"properties\": {"
    "\"session_id\": {\"type\": \"string\", \"x-mcp-header\": \"Session-Id\", "
    "\"description\": \"The new session's name, 1-64 characters of A-Z a-z 0-9 _ . - (for "
    "example 'main'); omitted: a new id, returned.\"}, "
    "\"language\": {\"type\": \"string\", \"description\": \"python or javascript (or any "
    "installed kernel's language).\"}, "
    "\"kernel\": {\"type\": \"string\", \"description\": \"A kernelspec name (see "
    "list_kernels).\"}, "
    "\"dependencies\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}, "
    "\"description\": \"Packages to install first, such as 'requests' or 'numpy>=1.26'.\"}, "
    "\"volumes\": {\"type\": \"array\", \"maxItems\": 4, \"items\": {\"type\": \"object\", "
    "\"properties\": {\"name\": {\"type\": \"string\", \"description\": \"A volume of yours "
    "(1-64 characters of A-Z a-z 0-9 _ -).\"}, \"read_only\": {\"type\": \"boolean\", "
    "\"description\": \"Mount it read-only (default false).\"}}, \"required\": [\"name\"]}, "
    "\"description\": \"Volumes to mount at /volumes/NAME.\"}}}",
    "{\"type\": \"object\", \"properties\": {\"session_id\": {\"type\": \"string\"}, "
    "\"kernel\": {\"type\": \"string\"}, \"workdir\": {\"type\": \"string\"}, "
    "\"volumes\": {\"type\": \"array\", \"items\": {\"type\": \"object\", \"properties\": "
    "{\"name\": {\"type\": \"string\"}, \"path\": {\"type\": \"string\"}, \"read_only\": "
    "{\"type\": \"boolean\"}}}}, \"installed\": {\"type\": \"array\"}, "
    "\"refused\": {\"type\": \"array\"}}}",
    {.read_only = false, .destructive = false, .idempotent = false,
     .world = GW_MCP_WORLD_OPEN},
    s_create_session,
};
