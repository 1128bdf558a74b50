/* gw_mcp_e2b_run: the tools of the "e2b" tool set that run code
 * (execute_code, create_run_close), and what every tool of the set
 * shares: the sandbox a call names, its arguments, its answers in the E2B
 * sandbox MCP server's shapes (see gw_mcp_e2b_run.c). The set's list is
 * gw_mcp_e2b.c's.
 *
 * Threads: the loop thread only. */
#ifndef GW_MCP_E2B_RUN_H
#define GW_MCP_E2B_RUN_H

#include "gw_mcp_internal.h"

extern const gw_mcp_tool_t gw_mcp_e2b_execute_code;
extern const gw_mcp_tool_t gw_mcp_e2b_create_run_close;

/* The session_id property of the set's input schemas (declared to travel
 * as the Mcp-Param-Session-Id header too, as codebox's own). */
#define GW_MCP_E2B_ID_PROP \
    "\"session_id\": {\"type\": \"string\", \"title\": \"Session Id\", \"x-mcp-header\": " \
    "\"Session-Id\", \"description\": \"The sandbox's ID, as given to create_sandbox.\"}"

/* A result as the seed gives its dicts: dict (stolen) as indented JSON
 * text and as structuredContent, then the items of extra (stolen; NULL:
 * none); isError as is_error. NULL only when out of memory. */
json_t *gw_mcp_e2b_result (json_t *dict, json_t *extra, bool is_error);

/* A tool error as the seed gives it: {"error": message} (as
 * gw_mcp_e2b_result, with isError). */
json_t *gw_mcp_e2b_error (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* A string argument, or NULL when absent or null (with *error set, unless
 * set already, when it is something else). */
const char *gw_mcp_e2b_arg (json_t *args, const char *key, json_t **error);

/* The caller's sandbox named by args.session_id: a codebox session of the
 * caller's tenant that exists (it is not made on first use, as the seed
 * makes none), touched. NULL with *error (a tool error) otherwise: no
 * session_id, an id codebox cannot take, another node's or a lost one,
 * or none of that name. */
struct gw_session *gw_mcp_e2b_sandbox (gw_mcp_ctx_t *ctx, json_t *args, json_t **error);

#endif
