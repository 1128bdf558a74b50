/* gw_mcp_info: what the MCP server says of itself: the protocol versions
 * of both eras, its capabilities, its instructions, and initialize's
 * answer (see gw_mcp_info.c).
 *
 * Threads: the loop thread only. */
#ifndef GW_MCP_INFO_H
#define GW_MCP_INFO_H

#include "gw_mcp_sink.h"
#include "gw_mcp_tool_sets.h"

/* Protocol revisions of the stateful era (initialize), newest first. */
extern const char *const gw_mcp_versions[];
/* Protocol revisions of the stateless era (_meta on every request). */
extern const char *const gw_mcp_stateless_versions[];

/* What the server tells clients at initialize and discover, for the
 * tool set CODEBOX_MCP_TOOLS names first. */
const char *gw_mcp_instructions (gw_mcp_set_t first);

/* The server's capabilities (new); stateless: the 2026-07-28 set. */
json_t *gw_mcp_capabilities (bool stateless);

/* initialize (stateful era): agrees on a version with client (the newest
 * when params ask for none we speak) and marks it initialized; the result
 * (new): version, capabilities, server info, instructions (the caller's). */
json_t *gw_mcp_initialize (gw_mcp_client_t *client, json_t *params, const char *instructions);

#endif
