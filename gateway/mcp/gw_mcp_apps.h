/* gw_mcp_apps: the MCP Apps extension (io.modelcontextprotocol/ui, spec
 * 2026-01-26) for clients that declare it: the view ui://codebox/outputs.html
 * (the file `make apps` builds from gateway/mcp/apps), the code tools'
 * _meta.ui.resourceUri in tools/list, and the call's output items in the
 * result's _meta for the view to render (see gw_mcp_apps.c). A client that
 * does not declare the extension sees none of it.
 *
 * Threads: the loop thread only. */
#ifndef GW_MCP_APPS_H
#define GW_MCP_APPS_H

#include "gw_mcp_internal.h"

#define GW_MCP_APPS_EXTENSION "io.modelcontextprotocol/ui"
#define GW_MCP_APPS_URI "ui://codebox/outputs.html"
#define GW_MCP_APPS_MIME "text/html;profile=mcp-app"
/* the result's _meta key holding the output items (REST `output` shape) */
#define GW_MCP_APPS_OUTPUTS_KEY "codebox/outputs"
/* the key of an output item the view gets in part or as a note only:
 * {"mimeTypes": [...], "bytes": N, "items": K, "text": "[... not shown
 * here: ...]"} (the same text is the item's data["text/plain"] when nothing
 * richer is left) */
#define GW_MCP_APPS_OMITTED_KEY "codebox/omitted"

/* True when capabilities (a client's, borrowed; may be NULL) declare the
 * extension with the HTML profile among its mimeTypes. */
bool gw_mcp_apps_in_capabilities (json_t *capabilities);

/* True when the caller of ctx declared the extension (at initialize, or
 * in this request's capabilities in the stateless era) and the view can
 * be served. */
bool gw_mcp_apps_declared (gw_mcp_ctx_t *ctx);

/* True when ctx's request is a tools/call of a tool that points at the
 * view, by a caller that declared the extension: its result gets the
 * outputs. */
bool gw_mcp_apps_for_call (gw_mcp_ctx_t *ctx);

/* tools/list's result for such a caller (borrowed: made once from tools,
 * the server's list, and kept in self): its code tools point at the view. */
json_t *gw_mcp_apps_tools (gw_mcp_t *self, json_t *tools);

/* The view as a resources/read content item (new reference to one made at
 * the first read and never changed), or NULL when it cannot be served. */
json_t *gw_mcp_apps_read (gw_mcp_t *self);

/* Adds the output items of job's execution (none: nothing) to a tool
 * result under _meta[GW_MCP_APPS_OUTPUTS_KEY], bounded: a raster image over
 * CODEBOX_MAX_IMAGE_BYTES is left out of its item, and the items past
 * CODEBOX_MCP_APP_OUTPUT_BYTES (their JSON) are replaced by a note; both
 * marked with GW_MCP_APPS_OMITTED_KEY. The result's content (what the
 * model reads) is not touched. */
void gw_mcp_apps_add_outputs (gw_mcp_t *self, json_t *result, gw_job_t *job);

/* Frees what the view cached in self. */
void gw_mcp_apps_destroy (gw_mcp_t *self);

#endif
