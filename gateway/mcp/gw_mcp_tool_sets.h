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

#define GW_MCP_N_SETS 4

/* The sets a value names, in the order it names them (each once): that
 * order decides which set's tool a name means when two sets have a tool
 * of the same name (the first named wins; gw_mcp_tool_list.c). */
typedef struct {
    gw_mcp_set_t set[GW_MCP_N_SETS];
    size_t n;
} gw_mcp_set_order_t;

/* Parses a CODEBOX_MCP_TOOLS value: a comma-separated list of set names
 * (spaces around them ignored; a name given twice counts once, where it
 * first comes). Returns 0 with *order filled; or -1 with a sentence in err
 * naming the first name that is unknown, or
 * an empty list. */
int gw_mcp_tool_sets_parse (const char *value, gw_mcp_set_order_t *order, char *err,
                            size_t err_len);

/* The name of a set, as CODEBOX_MCP_TOOLS writes it. */
const char *gw_mcp_tool_set_name (gw_mcp_set_t set);

/* Logs a warning for each tool of order's sets that a set named before
 * it shadows, so the operator sees which tool a name means (defined in
 * gw_mcp_tool_list.c, which knows each set's tools). */
void gw_mcp_tool_sets_log_shadowed (const gw_mcp_set_order_t *order);

#endif
