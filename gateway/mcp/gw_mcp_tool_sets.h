/* gw_mcp_tool_sets: CODEBOX_MCP_TOOLS, the tool sets MCP clients see:
 * codebox's own and the seeds' (see gw_mcp_tool_sets.c).
 *
 * Threads: any (pure); called by the main thread at start and by the loop
 * thread. */
#ifndef GW_MCP_TOOL_SETS_H
#define GW_MCP_TOOL_SETS_H

#include <stddef.h>

/* One bit per tool set. */
typedef enum {
    GW_MCP_SET_CODEBOX = 1u << 0,       /* codebox's own tools */
    GW_MCP_SET_CODEBOX_AI = 1u << 1,    /* codebox-ai's execute_code */
    GW_MCP_SET_E2B = 1u << 2,           /* the E2B sandbox MCP server's */
    GW_MCP_SET_CODE_BOX = 1u << 3,      /* Code Box's */
} gw_mcp_set_t;

/* Parses a CODEBOX_MCP_TOOLS value: a comma-separated list of set names
 * (spaces around them ignored; a name given twice counts once). Returns 0
 * with *sets the union; or -1 with a sentence in err naming the first
 * name that is unknown or not offered by this build, or an empty list. */
int gw_mcp_tool_sets_parse (const char *value, unsigned *sets, char *err, size_t err_len);

#endif
