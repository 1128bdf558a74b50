/* gw_mcp_e2b_install: the "e2b" tool set's install_package(session_id,
 * package_name) (see gw_mcp_e2b_install.c).
 *
 * Threads: the loop thread only. */
#ifndef GW_MCP_E2B_INSTALL_H
#define GW_MCP_E2B_INSTALL_H

#include "gw_mcp_internal.h"

extern const gw_mcp_tool_t gw_mcp_e2b_install_package;

#endif
