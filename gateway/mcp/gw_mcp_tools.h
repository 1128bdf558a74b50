/* gw_mcp_tools: the built-in MCP tools, and what every tool uses: its
 * string arguments, the caller's session, its results (see
 * gw_mcp_tools.c).
 *
 * Threads: the loop thread only. */
#ifndef GW_MCP_TOOLS_H
#define GW_MCP_TOOLS_H

#include "gw_mcp_internal.h"

/* The built-in tools (exec_code ... list_kernels), *n of them. */
const gw_mcp_tool_t *gw_mcp_tools_builtin (size_t *n);

/* A string argument, or NULL (with *error set to a tool error when present
 * but not a string). */
const char *gw_mcp_arg (json_t *args, const char *key, json_t **error);

/* The caller's session named by args.session_id, created on first use
 * when create is set; NULL with *error (a tool result) otherwise. */
struct gw_session *gw_mcp_session (gw_mcp_ctx_t *ctx, json_t *args, bool create,
                                   json_t **error);

/* A tool result with isError and one text item (new). */
json_t *gw_mcp_tool_error (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* A tool result with structuredContent (stolen) and its text (new). */
json_t *gw_mcp_tool_ok (json_t *structured, const char *text);

#endif
