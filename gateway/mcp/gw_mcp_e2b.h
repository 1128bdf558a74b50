/* gw_mcp_e2b: the tool set "e2b" of CODEBOX_MCP_TOOLS, the E2B sandbox
 * MCP server's ten tools on codebox's sessions (see gw_mcp_e2b.c).
 *
 * Threads: the loop thread only. */
#ifndef GW_MCP_E2B_H
#define GW_MCP_E2B_H

#include "gw_mcp_internal.h"

/* The set's tools in the seed's order, NULL-terminated. */
extern const gw_mcp_tool_t *const gw_mcp_e2b_tools[];

#endif
