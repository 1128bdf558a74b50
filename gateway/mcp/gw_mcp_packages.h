/* gw_mcp_packages: the install_package MCP tool (see gw_mcp_packages.c).
 *
 * Threads: the loop thread only. */
#ifndef GW_MCP_PACKAGES_H
#define GW_MCP_PACKAGES_H

#include "gw_mcp_internal.h"

extern const gw_mcp_tool_t gw_mcp_tool_install_package;

#endif
