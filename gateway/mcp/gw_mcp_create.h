/* gw_mcp_create: the create_session MCP tool (see gw_mcp_create.c).
 *
 * Threads: the loop thread only. */
#ifndef GW_MCP_CREATE_H
#define GW_MCP_CREATE_H

#include "gw_mcp_internal.h"

extern const gw_mcp_tool_t gw_mcp_tool_create_session;

#endif
