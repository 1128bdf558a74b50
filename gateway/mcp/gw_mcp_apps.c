/* gw_mcp_apps: the MCP Apps extension (io.modelcontextprotocol/ui) for
 * clients that declare it in their capabilities
 * (extensions["io.modelcontextprotocol/ui"].mimeTypes holding
 * "text/html;profile=mcp-app"):
 *   - the view, ui://codebox/outputs.html: one self-contained HTML file
 *     (CODEBOX_MCP_APP_HTML, by default mcp-app-outputs.html beside the
 *     binary, which `make apps` writes), read once and kept; it asks for
 *     no origin (_meta.ui.csp empty), so the host's frame gives it no
 *     network;
 *   - tools/list: exec_code and the one-shot tools carry
 *     _meta.ui.resourceUri pointing at it;
 *   - their results carry the execution's output items (the REST `output`
 *     shape, MIME bundles whole) in _meta["codebox/outputs"], which hosts
 *     hand to the view and keep from the model.
 * Without the file nothing is declared: every client sees plain results.
 *
 * Threads: the loop thread only. */
#include "gw_mcp_apps.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw_config.h"
#include "gw_server.h"
#include "jp_log.h"

/* The view, read at first use. */
struct gw_mcp_apps_view {
    char *html;                 /* NULL: none to serve */
    size_t len;
};

/* The largest view read (the built page is about 7 MB). */
#define S_VIEW_MAX (32 * 1024 * 1024)

/* The tools whose result is gw_mcp_exec_result's, so the view can show it. */
static const char *const s_view_tools[] = {"exec_code", "run_python_code", "run_javascript_code",
                                           NULL};

bool
gw_mcp_apps_in_capabilities (json_t *capabilities)
{
    json_t *ext = json_object_get (json_object_get (capabilities, "extensions"),
                                   GW_MCP_APPS_EXTENSION);
    json_t *mimes = json_object_get (ext, "mimeTypes");
    size_t i;
    json_t *m;
    json_array_foreach (mimes, i, m) {
        const char *s = json_string_value (m);
        if (s && strcmp (s, GW_MCP_APPS_MIME) == 0)
            return true;
    }
    return false;
}

/* Where the view is: the setting, else beside the binary. */
static void
s_view_path (gw_mcp_t *self, char *path, size_t len)
{
    const char *set = gw_config_str (gw_server_config (self->server), GW_SET_MCP_APP_HTML);
    if (set && *set) {
        snprintf (path, len, "%s", set);
        return;
    }
    char exe[4096];
    ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    char *slash = strrchr (exe, '/');
    if (slash)
        *slash = '\0';
    snprintf (path, len, "%s/mcp-app-outputs.html", slash ? exe : ".");
}

/* Reads the view once; later calls give what the first found. */
static struct gw_mcp_apps_view *
s_view (gw_mcp_t *self)
{
    if (self->apps_view)
        return self->apps_view;
    struct gw_mcp_apps_view *view = calloc (1, sizeof *view);
    if (!view)
        return NULL;
    self->apps_view = view;
    char path[4200];
    s_view_path (self, path, sizeof path);
    FILE *f = fopen (path, "rb");
    struct stat st;
    if (!f || fstat (fileno (f), &st) < 0 || !S_ISREG (st.st_mode) || st.st_size <= 0
        || st.st_size > S_VIEW_MAX) {
        jp_log_info ("mcp apps: no view at %s (%s): the io.modelcontextprotocol/ui extension "
                     "is off", path, f ? "not a file of a fitting size" : strerror (errno));
        if (f)
            fclose (f);
        return view;
    }
    view->html = malloc ((size_t) st.st_size);
    if (view->html && fread (view->html, 1, (size_t) st.st_size, f) == (size_t) st.st_size)
        view->len = (size_t) st.st_size;
    else {
        free (view->html);
        view->html = NULL;
    }
    fclose (f);
    if (view->html)
        jp_log_info ("mcp apps: view %s (%zu bytes) served as %s", path, view->len,
                     GW_MCP_APPS_URI);
    return view;
}

bool
gw_mcp_apps_declared (gw_mcp_ctx_t *ctx)
{
    bool declared = ctx->stateless ? gw_mcp_apps_in_capabilities (ctx->capabilities)
                                   : ctx->client && ctx->client->apps;
    if (!declared)
        return false;
    struct gw_mcp_apps_view *view = s_view (ctx->mcp);
    return view && view->html;
}

static bool
s_has_view (const char *tool)
{
    for (int k = 0; tool && s_view_tools[k]; k++)
        if (strcmp (tool, s_view_tools[k]) == 0)
            return true;
    return false;
}

bool
gw_mcp_apps_for_call (gw_mcp_ctx_t *ctx)
{
    return s_has_view (json_string_value (json_object_get (ctx->params, "name")))
           && gw_mcp_apps_declared (ctx);
}

json_t *
gw_mcp_apps_tools (json_t *tools)
{
    json_t *copy = json_deep_copy (tools);
    size_t i;
    json_t *tool;
    json_array_foreach (json_object_get (copy, "tools"), i, tool) {
        if (!s_has_view (json_string_value (json_object_get (tool, "name"))))
            continue;
        json_t *meta = json_object_get (tool, "_meta");
        if (!json_is_object (meta)) {
            meta = json_object ();
            json_object_set_new (tool, "_meta", meta);
        }
        json_object_set_new (meta, "ui", json_pack ("{s:s}", "resourceUri", GW_MCP_APPS_URI));
    }
    return copy;
}

json_t *
gw_mcp_apps_read (gw_mcp_t *self)
{
    struct gw_mcp_apps_view *view = s_view (self);
    if (!view || !view->html)
        return NULL;
    /* empty CSP lists: the frame may reach no origin at all */
    return json_pack ("{s:s, s:s, s:s%, s:{s:{s:{s:[], s:[], s:[]}, s:b}}}", "uri",
                      GW_MCP_APPS_URI, "mimeType", GW_MCP_APPS_MIME, "text", view->html,
                      view->len, "_meta", "ui", "csp", "connectDomains", "resourceDomains",
                      "frameDomains", "prefersBorder", 1);
}

void
gw_mcp_apps_add_outputs (json_t *result, json_t *outputs)
{
    if (!result || !outputs)
        return;
    json_t *meta = json_object_get (result, "_meta");
    if (!json_is_object (meta)) {
        meta = json_object ();
        json_object_set_new (result, "_meta", meta);
    }
    json_object_set (meta, GW_MCP_APPS_OUTPUTS_KEY, outputs);
}

void
gw_mcp_apps_destroy (gw_mcp_t *self)
{
    if (!self->apps_view)
        return;
    free (self->apps_view->html);
    free (self->apps_view);
    self->apps_view = NULL;
}
