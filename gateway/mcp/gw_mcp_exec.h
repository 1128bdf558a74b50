/* gw_mcp_exec: the CallToolResult of a finished execution, and the pieces
 * of long text a model reads (see gw_mcp_exec.c).
 *
 * Threads: the loop thread only. */
#ifndef GW_MCP_EXEC_H
#define GW_MCP_EXEC_H

#include "gw_mcp_internal.h"

/* The CallToolResult of a finished execution (new). */
json_t *gw_mcp_exec_result (gw_mcp_t *mcp, gw_job_t *job);

/* The text item of a text file of len bytes for read_file (new), as the
 * model's budget allows: the whole when it fits in limit bytes and args
 * name no piece; else the piece args.offset/args.length (bytes; length at
 * most limit, cut on a line or character) with a marker saying where to
 * read on. Adds offset, length and next_offset (when more follows) to
 * structured. NULL when offset or length is not a fitting integer. */
json_t *gw_mcp_text_piece (const char *data, size_t len, json_t *args, size_t limit,
                           const char *path, json_t *structured);

#endif
