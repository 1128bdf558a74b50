/* gw_mcp_tool_list: every MCP tool in one list; tools/list and tools/call
 * (see gw_mcp_tool_list.c).
 *
 * Threads: the loop thread only. */
#ifndef GW_MCP_TOOL_LIST_H
#define GW_MCP_TOOL_LIST_H

#include "gw_error.h"
#include "gw_mcp_internal.h"
#include "gw_mcp_tool_sets.h"

/* The tool set CODEBOX_MCP_TOOLS names first (whose instructions the
 * server gives). */
gw_mcp_set_t gw_mcp_first_set (gw_mcp_t *self);

/* tools/list's result (borrowed, built once). */
json_t *gw_mcp_tools (gw_mcp_t *self);

/* The tools/list entry of tool name (borrowed from the cached list), or
 * NULL. */
json_t *gw_mcp_tool_find (gw_mcp_t *self, const char *name);

/* Runs a tool. Returns its CallToolResult (new); or NULL when it took the
 * reply over to answer later (through gw_mcp_call_start), with *e
 * GW_E_OK; or NULL with *e and err set for a JSON-RPC error (unknown
 * tool). */
json_t *gw_mcp_tools_call (gw_mcp_ctx_t *ctx, const char *name, json_t *args, gw_error_t *e,
                           char *err, size_t err_len);

/* tools/call, either era: checks params, answers a waiting input() (a
 * requestState), runs the tool; a task-capable call of a client that
 * declared tasks becomes a task if it still runs after
 * GW_MCP_TASK_AFTER_MS. Ends ctx's reply (maybe later). */
void gw_mcp_tools_request (gw_mcp_ctx_t *ctx, json_t *params);

#endif
