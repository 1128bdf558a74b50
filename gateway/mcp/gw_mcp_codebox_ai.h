/* gw_mcp_codebox_ai: codebox-ai's MCP tool, execute_code (see
 * gw_mcp_codebox_ai.c).
 *
 * Threads: the loop thread only. */
#ifndef GW_MCP_CODEBOX_AI_H
#define GW_MCP_CODEBOX_AI_H

#include "gw_mcp_internal.h"

extern const gw_mcp_tool_t gw_mcp_tool_execute_code;

#endif
