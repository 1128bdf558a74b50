/* gw_mcp_sql: the exec_sql MCP tool (see gw_mcp_sql.c).
 *
 * Threads: the loop thread only. */
#ifndef GW_MCP_SQL_H
#define GW_MCP_SQL_H

#include "gw_mcp_internal.h"

extern const gw_mcp_tool_t gw_mcp_tool_exec_sql;

#endif
