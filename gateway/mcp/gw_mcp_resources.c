/* gw_mcp_resources: the MCP resources and prompts: sessions:// (the
 * caller's sessions), session://{id} (one), session://{id}/notebook (its
 * cells as a Jupyter notebook), artifact://{id}/{path} (each
 * file under a session's output/, as text or a base64 blob), and
 * codebox://guide (how an agent should use the tools), and with the
 * code-box tool set Code Box's code-interpreter://usage-guide
 * (gw_mcp_code_box.c). resources/list pages with an opaque cursor.
 *
 * Threads: the loop thread only. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw_artifacts.h"
#include "gw_id.h"
#include "gw_base64.h"
#include "gw_fs.h"
#include "gw_mcp_apps.h"
#include "gw_mcp_code_box.h"
#include "gw_mcp_fixtures.h"
#include "gw_mcp_resources.h"
#include "gw_notebook.h"
#include "gw_path.h"
#include "gw_session.h"
#include "gw_sessions.h"

#define PAGE_SIZE 100
#define MAX_RESOURCE_BYTES (64u << 20)

const char gw_mcp_guide[] =
    "# Using codebox\n\n"
    "codebox runs your code in Jupyter kernels that keep their state.\n\n"
    "1. Pick a session_id (for example 'main') and use it in every call: variables, imports "
    "and files persist in that session. A new id starts a new, empty session.\n"
    "2. Call session_info first: it tells the session's folder. The working directory of "
    "your code is that folder.\n"
    "3. Inputs: write_file (or upload_file) puts files under input/; read them with "
    "relative paths such as input/data.csv.\n"
    "4. Results for the user: save files under output/ (plots, CSV, reports). Each "
    "exec_code result lists the new artifacts; list_artifacts lists them all.\n"
    "5. Plots: matplotlib figures shown with plt.show() come back as images.\n"
    "6. Long work: exec_code interrupts after its timeout; split long jobs into steps.\n"
    "7. Errors: the traceback comes back as text; fix the code and run again in the same "
    "session, the earlier state is still there.\n"
    "8. run_python_code and run_javascript_code run once in a throw-away kernel.\n"
    "9. destroy_session when done frees the kernel and deletes the session's files.\n";

/* The tenant's session with id, or NULL. */
static gw_session_t *
s_find (gw_mcp_ctx_t *ctx, const char *id)
{
    return gw_path_valid_session_id (id)
               ? gw_sessions_find (ctx->mcp->server, ctx->client->tenant, id)
               : NULL;
}

json_t *
gw_mcp_resources_list (gw_mcp_ctx_t *ctx, const char *cursor)
{
    size_t offset = 0;
    if (cursor) {
        uint8_t *raw = NULL;
        size_t raw_len = 0;
        char digits[32] = "";
        if (gw_base64_decode (cursor, strlen (cursor), &raw, &raw_len) == 0 && raw_len < 20)
            snprintf (digits, sizeof digits, "%.*s", (int) raw_len, (const char *) raw);
        free (raw);
        char *end;
        offset = strtoul (digits, &end, 10);
        if (!*digits || *end)
            return NULL;
    }
    json_t *all = json_array ();
    json_array_append_new (all, json_pack ("{s:s, s:s, s:s, s:s}", "uri", "codebox://guide",
                                           "name", "guide", "description",
                                           "How to use the codebox tools well", "mimeType",
                                           "text/markdown"));
    json_array_append_new (all, json_pack ("{s:s, s:s, s:s, s:s}", "uri", "sessions://", "name",
                                           "sessions", "description", "Your live sessions",
                                           "mimeType", "application/json"));
    gw_mcp_code_box_resources (ctx->mcp, all);
    gw_server_t *server = ctx->mcp->server;
    size_t at = 0;
    for (gw_session_t *s; (s = gw_sessions_next (server, ctx->client->tenant, &at));) {
        json_t *files = gw_artifacts_list (gw_session_workdir (s), NULL, GW_SNAPSHOT_SESSION);
        size_t k;
        json_t *f;
        json_array_foreach (files, k, f) {
            char uri[1200];
            snprintf (uri, sizeof uri, "artifact://%s/%s", gw_session_id (s),
                      json_string_value (json_object_get (f, "path")));
            json_array_append_new (all, json_pack ("{s:s, s:O, s:O, s:O}", "uri", uri, "name",
                                                   json_object_get (f, "filename"), "mimeType",
                                                   json_object_get (f, "mime"), "size",
                                                   json_object_get (f, "size")));
        }
        json_decref (files);
    }
    json_t *templates = json_array ();
    if (gw_config_bool (gw_server_config (server), GW_SET_MCP_CONFORMANCE))
        gw_mcp_conformance_resources (all, templates);
    json_decref (templates);
    /* page: the cursor is the decimal offset, base64 so clients treat it as opaque */
    json_t *result = json_object ();
    json_t *page = json_array ();
    for (size_t i = offset; i < json_array_size (all) && i < offset + PAGE_SIZE; i++)
        json_array_append (page, json_array_get (all, i));
    json_object_set_new (result, "resources", page);
    if (json_array_size (all) > offset + PAGE_SIZE) {
        char next[32];
        snprintf (next, sizeof next, "%zu", offset + PAGE_SIZE);
        char *b64 = gw_base64_encode ((const uint8_t *) next, strlen (next));
        json_object_set_new (result, "nextCursor", json_string (b64 ? b64 : ""));
        free (b64);
    }
    json_decref (all);
    return result;
}

json_t *
gw_mcp_resource_templates (bool conformance)
{
    json_t *templates = json_pack (
        "[{s:s, s:s, s:s, s:s}, {s:s, s:s, s:s, s:s}, {s:s, s:s, s:s}]", "uriTemplate",
        "session://{session_id}", "name", "session", "description",
        "One of your sessions: folders, kernel, limits", "mimeType", "application/json",
        "uriTemplate", "session://{session_id}/notebook", "name", "notebook", "description",
        "The cells a session ran, with their outputs, as a Jupyter notebook (nbformat 4)",
        "mimeType", GW_NOTEBOOK_MIME, "uriTemplate", "artifact://{session_id}/{path}", "name",
        "artifact", "description", "A file of a session, such as output/plot.png");
    json_t *ignored = json_array ();
    if (conformance)
        gw_mcp_conformance_resources (ignored, templates);
    json_decref (ignored);
    return json_pack ("{s:o}", "resourceTemplates", templates);
}

/* Reads a file of a session as resource contents (new), or NULL. */
static json_t *
s_read_artifact (gw_session_t *s, const char *uri, const char *path, gw_error_t *e,
                 char *err, size_t err_len)
{
    if (gw_path_check_relative (path, err, err_len)) {
        *e = GW_E_BAD_REQUEST;
        return NULL;
    }
    int dirfd = open (gw_session_workdir (s), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int fd = dirfd < 0 ? -errno : gw_path_open_beneath (dirfd, path, O_RDONLY | O_CLOEXEC, 0);
    if (dirfd >= 0)
        close (dirfd);
    char *data = NULL;
    size_t len = 0;
    int rc = fd < 0 ? fd : gw_fs_read_fd (fd, MAX_RESOURCE_BYTES, &data, &len);
    if (fd >= 0)
        close (fd);
    if (rc) {
        *e = GW_E_RESOURCE_NOT_FOUND;
        snprintf (err, err_len, "cannot read %s: %s", uri, strerror (-rc));
        return NULL;
    }
    const char *mime = gw_mime_for_path (path);
    json_t *text = memchr (data, '\0', len) || strncmp (mime, "image/", 6) == 0
                       ? NULL : json_stringn (data, len);
    json_t *content;
    if (text)
        content = json_pack ("{s:s, s:s, s:o}", "uri", uri, "mimeType", mime, "text", text);
    else {
        char *b64 = gw_base64_encode ((const uint8_t *) data, len);
        content = json_pack ("{s:s, s:s, s:s}", "uri", uri, "mimeType", mime, "blob",
                             b64 ? b64 : "");
        free (b64);
    }
    free (data);
    return content;
}

/* The notebook of session://{id}/notebook as resource contents (new), or
 * NULL with e and err set. */
static json_t *
s_read_notebook (gw_mcp_ctx_t *ctx, const char *uri, gw_error_t *e, char *err, size_t err_len)
{
    const char *rest = uri + strlen ("session://");
    size_t n = strlen (rest) - strlen ("/notebook");
    char id[GW_ID_SIZE];
    snprintf (id, sizeof id, "%.*s", (int) (n < sizeof id ? n : 0), rest);
    gw_session_t *s = n < sizeof id ? s_find (ctx, id) : NULL;
    if (!s)
        return NULL;
    size_t len = 0;
    int rc = 0;
    char *text = gw_notebook_of_session (s, &len, &rc);
    json_t *content = text && len <= MAX_RESOURCE_BYTES
                          ? json_pack ("{s:s, s:s, s:s%}", "uri", uri, "mimeType",
                                       GW_NOTEBOOK_MIME, "text", text, len)
                          : NULL;
    if (!content) {
        *e = GW_E_INTERNAL;
        snprintf (err, err_len, "cannot read the notebook of session '%s': %s", id,
                  text ? "it is too large; GET /sessions/{id}/notebook serves it"
                       : strerror (-rc));
    }
    free (text);
    return content;
}

json_t *
gw_mcp_resources_read (gw_mcp_ctx_t *ctx, const char *uri, gw_error_t *e, char *err,
                       size_t err_len)
{
    json_t *content = NULL;
    *e = GW_E_RESOURCE_NOT_FOUND;
    snprintf (err, err_len, "no resource %s", uri);
    if (strcmp (uri, "codebox://guide") == 0)
        content = json_pack ("{s:s, s:s, s:s}", "uri", uri, "mimeType", "text/markdown", "text",
                             gw_mcp_guide);
    else if (strcmp (uri, GW_MCP_APPS_URI) == 0)
        content = gw_mcp_apps_read (ctx->mcp);
    else if (strcmp (uri, "sessions://") == 0) {
        gw_caller_t caller = {.tenant = ctx->client->tenant};
        json_t *list = gw_sessions_list (ctx->mcp->server, &caller, true);
        char *text = json_dumps (json_pack ("{s:o}", "sessions", list), JSON_INDENT (1) | JSON_SORT_KEYS);
        content = json_pack ("{s:s, s:s, s:s}", "uri", uri, "mimeType", "application/json",
                             "text", text ? text : "{}");
        free (text);
    } else if (strncmp (uri, "session://", 10) == 0 && strlen (uri) > 19
               && strcmp (uri + strlen (uri) - 9, "/notebook") == 0)
        content = s_read_notebook (ctx, uri, e, err, err_len);
    else if (strncmp (uri, "session://", 10) == 0) {
        gw_session_t *s = s_find (ctx, uri + 10);
        json_t *info = s ? gw_session_json (s, true) : NULL;
        char *text = info ? json_dumps (info, JSON_INDENT (1)) : NULL;
        json_decref (info);
        if (text)
            content = json_pack ("{s:s, s:s, s:s}", "uri", uri, "mimeType", "application/json",
                                 "text", text);
        free (text);
    } else if (strncmp (uri, "artifact://", 11) == 0) {
        const char *rest = uri + 11;
        const char *slash = strchr (rest, '/');
        char id[GW_ID_SIZE];
        if (slash && slash - rest < (long) sizeof id) {
            snprintf (id, sizeof id, "%.*s", (int) (slash - rest), rest);
            gw_session_t *s = s_find (ctx, id);
            if (s)
                content = s_read_artifact (s, uri, slash + 1, e, err, err_len);
        }
    } else if (gw_config_bool (gw_server_config (ctx->mcp->server), GW_SET_MCP_CONFORMANCE))
        content = gw_mcp_conformance_read (uri);
    if (!content)
        content = gw_mcp_code_box_read (ctx->mcp, uri);
    return content ? json_pack ("{s:[o]}", "contents", content) : NULL;
}

json_t *
gw_mcp_prompts_list (bool conformance)
{
    json_t *prompts = json_pack ("[{s:s, s:s, s:s, s:[{s:s, s:s, s:b}]}]", "name",
                                 "analyze_data", "title", "Analyze a data file", "description",
                                 "Load a file of the session with pandas, summarise it, and "
                                 "plot what matters",
                                 "arguments", "name", "path", "description",
                                 "the file, such as input/data.csv", "required", 1);
    if (conformance)
        gw_mcp_conformance_prompts (prompts);
    return json_pack ("{s:o}", "prompts", prompts);
}

json_t *
gw_mcp_prompts_get (const char *name, json_t *params, bool conformance, char *err,
                    size_t err_len)
{
    json_t *args = json_object_get (params, "arguments");
    if (strcmp (name, "analyze_data") == 0) {
        const char *path = json_string_value (json_object_get (args, "path"));
        if (!path) {
            snprintf (err, err_len, "analyze_data needs the argument path");
            return NULL;
        }
        char text[1400];
        snprintf (text, sizeof text,
                  "Use exec_code with session_id 'main'. Load %s with pandas, show its shape, "
                  "columns and describe(), find anything unusual, and save one or two "
                  "telling plots under output/. Explain what you found.", path);
        return json_pack ("{s:s, s:[{s:s, s:{s:s, s:s}}]}", "description", "Analyze a data file",
                          "messages", "role", "user", "content", "type", "text", "text", text);
    }
    json_t *result = conformance ? gw_mcp_conformance_prompt (name, args, params) : NULL;
    if (!result)
        snprintf (err, err_len, "no prompt '%s'; prompts/list shows them", name);
    return result;
}
