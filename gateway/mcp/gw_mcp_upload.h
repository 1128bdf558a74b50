/* gw_mcp_upload: the upload_file MCP tool (see gw_mcp_upload.c).
 *
 * Threads: the loop thread only. */
#ifndef GW_MCP_UPLOAD_H
#define GW_MCP_UPLOAD_H

#include "gw_mcp_internal.h"

extern const gw_mcp_tool_t gw_mcp_tool_upload_file;

#endif
