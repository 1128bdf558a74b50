/* gw_mcp_apps: the MCP Apps extension (io.modelcontextprotocol/ui) for
 * clients that declare it in their capabilities
 * (extensions["io.modelcontextprotocol/ui"].mimeTypes holding
 * "text/html;profile=mcp-app"):
 *   - the view, ui://codebox/outputs.html: one self-contained HTML file
 *     (CODEBOX_MCP_APP_HTML, by default mcp-app-outputs.html beside the
 *     binary, which `make apps` writes), read once and kept; it asks for
 *     no origin (_meta.ui.csp empty), so the host's frame gives it no
 *     network;
 *   - tools/list: the tools that run code (exec_code and the one-shot
 *     tools, and the drop-in sets' own) carry _meta.ui.resourceUri
 *     pointing at it;
 *   - their results carry the execution's output items (the REST `output`
 *     shape, MIME bundles whole) in _meta["codebox/outputs"], which hosts
 *     hand to the view and keep from the model; bounded by bytes (a large
 *     image, and what passes CODEBOX_MCP_APP_OUTPUT_BYTES, become a note
 *     the view shows), so a result never carries images twice in full.
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
#include "gw_execution.h"
#include "gw_server.h"
#include "jp_json.h"
#include "jp_log.h"

/* The view, read at first use. */
struct gw_mcp_apps_view {
    char *html;                 /* NULL: none to serve */
    size_t len;
    json_t *tools;              /* tools/list with the view, made at first ask */
    json_t *item;               /* resources/read's content item, made at first read */
};

/* The largest view read (the built page is about 7 MB). */
#define S_VIEW_MAX (32 * 1024 * 1024)

/* The tools that run code, whichever tool set offers them (codebox's
 * exec_code and one-shot tools; Code Box's exec_code; e2b's execute_code
 * and create_run_close; codebox-ai's execute_code): their calls follow an
 * execution (gw_mcp_call.c), whose output items the result carries for
 * the view, whatever shape the set gives the rest. */
static const char *const s_view_tools[] = {"exec_code", "run_python_code", "run_javascript_code",
                                           "execute_code", "create_run_close", NULL};

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
gw_mcp_apps_tools (gw_mcp_t *self, json_t *tools)
{
    struct gw_mcp_apps_view *view = s_view (self);
    if (!view)
        return NULL;
    if (view->tools)
        return view->tools;
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
    view->tools = copy;
    return copy;
}

json_t *
gw_mcp_apps_read (gw_mcp_t *self)
{
    struct gw_mcp_apps_view *view = s_view (self);
    if (!view || !view->html)
        return NULL;
    if (view->item)
        return json_incref (view->item);
    /* empty CSP lists: the frame may reach no origin at all */
    view->item = json_pack ("{s:s, s:s, s:s%, s:{s:{s:{s:[], s:[], s:[]}, s:b}}}",
                            "uri", GW_MCP_APPS_URI, "mimeType", GW_MCP_APPS_MIME,
                            "text", view->html, view->len, "_meta", "ui", "csp",
                            "connectDomains", "resourceDomains", "frameDomains",
                            "prefersBorder", 1);
    return view->item ? json_incref (view->item) : NULL;
}

/* ---- the outputs the view gets ---- */

/* bytes as a person reads them: "3.2 MB", "262.1 kB", "812 bytes". */
static void
s_human (size_t bytes, char *out, size_t len)
{
    if (bytes >= 1000 * 1000)
        snprintf (out, len, "%.1f MB", (double) bytes / 1e6);
    else if (bytes >= 1000)
        snprintf (out, len, "%.1f kB", (double) bytes / 1e3);
    else
        snprintf (out, len, "%zu bytes", bytes);
}

/* The bytes a base64 text of len characters decodes to. */
static size_t
s_b64_bytes (const char *b64, size_t len)
{
    size_t pad = len >= 2 && b64[len - 1] == '=' ? (b64[len - 2] == '=' ? 2 : 1) : 0;
    return len / 4 * 3 >= pad ? len / 4 * 3 - pad : 0;
}

/* Adds mime to list (an array of strings) unless it is there. */
static void
s_add_mime (json_t *list, const char *mime)
{
    size_t i;
    json_t *m;
    json_array_foreach (list, i, m)
        if (strcmp (json_string_value (m), mime) == 0)
            return;
    if (json_array_size (list) < 16)
        json_array_append_new (list, json_string (mime));
}

/* "image/png, text/html" (at most a few) of list. */
static void
s_mime_names (json_t *list, char *out, size_t len)
{
    size_t i, used = 0;
    json_t *m;
    out[0] = '\0';
    json_array_foreach (list, i, m) {
        int w = snprintf (out + used, len - used, "%s%.60s", used ? ", " : "",
                          i < 4 ? json_string_value (m) : "...");
        if (w < 0 || (size_t) w >= len - used || i == 4)
            return;
        used += (size_t) w;
    }
}

/* What was left out, as its note says it and as the view tells it apart:
 * {"mimeTypes": a copy of mimes, "bytes": N, "items": K, "text": note}
 * (new). */
static json_t *
s_omitted (json_t *mimes, size_t bytes, size_t items, const char *note)
{
    /* a copy: the caller goes on with its list */
    return json_pack ("{s:o, s:I, s:I, s:s}", "mimeTypes", json_copy (mimes), "bytes",
                      (json_int_t) bytes, "items", (json_int_t) items, "text", note);
}

/* item (borrowed) with its raster images over max_image left out: a new
 * reference to item itself when it has none; else a copy whose data lacks
 * them (only a note in text/plain when nothing richer than text is left)
 * and that says what went under GW_MCP_APPS_OMITTED_KEY. SVG is text: only
 * the budget bounds it, as the model's content gives it whole. */
static json_t *
s_without_large_images (json_t *item, size_t max_image)
{
    json_t *data = json_object_get (item, "data");
    json_t *gone = NULL;
    size_t bytes = 0;
    const char *mime;
    json_t *value;
    json_object_foreach (data, mime, value) {
        if (strncmp (mime, "image/", 6) != 0 || strcmp (mime, "image/svg+xml") == 0
            || !json_is_string (value))
            continue;
        size_t n = s_b64_bytes (json_string_value (value), json_string_length (value));
        if (n <= max_image)
            continue;
        if (!gone)
            gone = json_array ();
        s_add_mime (gone, mime);
        bytes += n;
    }
    json_t *copy = gone ? json_copy (item) : NULL;
    json_t *kept = copy ? json_copy (data) : NULL;
    if (!kept) {
        json_decref (gone);
        json_decref (copy);
        return json_incref (item);
    }
    size_t i;
    json_t *m;
    json_array_foreach (gone, i, m)
        json_object_del (kept, json_string_value (m));
    bool richer = false;
    json_object_foreach (kept, mime, value)
        richer = richer || strcmp (mime, "text/plain") != 0;
    char names[300], size[32], limit[32], note[500];
    s_mime_names (gone, names, sizeof names);
    s_human (bytes, size, sizeof size);
    s_human (max_image, limit, sizeof limit);
    snprintf (note, sizeof note, "[%s of %s not shown here: over the %s image limit "
              "(CODEBOX_MAX_IMAGE_BYTES)]", names, size, limit);
    if (!richer) {
        json_object_clear (kept);
        json_object_set_new (kept, "text/plain", json_string (note));
    }
    json_object_set_new (copy, "data", kept);
    json_object_set_new (copy, GW_MCP_APPS_OMITTED_KEY, s_omitted (gone, bytes, 1, note));
    json_decref (gone);
    return copy;
}

/* The outputs past the budget, gathered until the next one that fits. */
typedef struct {
    json_t *mimes;
    size_t bytes, items, budget;
} s_left_t;

/* Appends the note of what *left gathered to out, and starts again. */
static void
s_flush_left (json_t *out, s_left_t *left)
{
    if (!left->items)
        return;
    char names[300], size[32], budget[32], note[600];
    s_mime_names (left->mimes, names, sizeof names);
    s_human (left->bytes, size, sizeof size);
    s_human (left->budget, budget, sizeof budget);
    if (left->items == 1)
        snprintf (note, sizeof note, "[an output (%s) of %s not shown here: past the %s "
                  "one call may send this view (CODEBOX_MCP_APP_OUTPUT_BYTES)]", names, size,
                  budget);
    else
        snprintf (note, sizeof note, "[%zu outputs (%s) of %s not shown here: past the %s "
                  "one call may send this view (CODEBOX_MCP_APP_OUTPUT_BYTES)]", left->items,
                  names, size, budget);
    json_array_append_new (out, json_pack ("{s:s, s:{s:s}, s:o}", "type", "display", "data",
                                           "text/plain", note, GW_MCP_APPS_OMITTED_KEY,
                                           s_omitted (left->mimes, left->bytes, left->items,
                                                      note)));
    json_array_clear (left->mimes);
    left->bytes = left->items = 0;
}

/* outputs (borrowed) as the view gets them (new): the items in order,
 * each raster image over max_image left out, and while the items kept
 * pass budget bytes of JSON, each one that does not fit replaced by a note
 * (those in a row share one); later ones that fit still come. Items are
 * shared with outputs, never changed. */
static json_t *
s_bounded (json_t *outputs, size_t max_image, size_t budget)
{
    json_t *out = json_array ();
    s_left_t left = {.mimes = json_array (), .budget = budget};
    size_t used = 0, i;
    json_t *item;
    json_array_foreach (outputs, i, item) {
        json_t *kept = s_without_large_images (item, max_image);
        size_t size = jp_json_size (kept);
        if (size != (size_t) -1 && used + size <= budget) {
            s_flush_left (out, &left);
            json_array_append_new (out, kept);
            used += size;
            continue;
        }
        json_t *data = json_object_get (kept, "data");
        const char *mime;
        json_t *value;
        json_object_foreach (data, mime, value)
            s_add_mime (left.mimes, mime);
        if (!json_is_object (data))
            s_add_mime (left.mimes, "text/plain");   /* a stream's or an error's text */
        left.bytes += size == (size_t) -1 ? 0 : size;
        left.items++;
        json_decref (kept);
    }
    s_flush_left (out, &left);
    json_decref (left.mimes);
    return out;
}

void
gw_mcp_apps_add_outputs (gw_mcp_t *self, json_t *result, gw_job_t *job)
{
    gw_execution_t *exec = gw_job_execution (job);
    json_t *outputs = exec ? gw_execution_outputs (exec) : NULL;
    if (!result || !outputs)
        return;
    const gw_config_t *config = gw_server_config (self->server);
    json_t *bounded = s_bounded (outputs,
                                 (size_t) gw_config_int (config, GW_SET_MAX_IMAGE_BYTES),
                                 (size_t) gw_config_int (config, GW_SET_MCP_APP_OUTPUT_BYTES));
    json_t *meta = json_object_get (result, "_meta");
    if (!json_is_object (meta)) {
        meta = json_object ();
        json_object_set_new (result, "_meta", meta);
    }
    json_object_set_new (meta, GW_MCP_APPS_OUTPUTS_KEY, bounded);
}

void
gw_mcp_apps_destroy (gw_mcp_t *self)
{
    if (!self->apps_view)
        return;
    free (self->apps_view->html);
    json_decref (self->apps_view->tools);
    json_decref (self->apps_view->item);
    free (self->apps_view);
    self->apps_view = NULL;
}
