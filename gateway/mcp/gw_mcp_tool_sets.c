/* gw_mcp_tool_sets: CODEBOX_MCP_TOOLS, the tool sets MCP clients see:
 * "codebox" (codebox's own, the default), or a seed's own for drop-in use
 * ("codebox-ai", "e2b", "code-box"), several combined with commas. The
 * value is checked at start (gw_cli_check_names): an unknown name stops
 * the server naming it. The
 * order of the names matters where two sets have a tool of the same name:
 * the set named first offers it. Which tools each set holds is
 * gw_mcp_tool_list.c's.
 *
 * Threads: any (pure). */
#include "gw_mcp_tool_sets.h"

#include <stdio.h>
#include <string.h>

/* Every set by name. */
static const struct {
    const char *name;
    gw_mcp_set_t set;
} s_sets[] = {
    {"codebox", GW_MCP_SET_CODEBOX},
    {"codebox-ai", GW_MCP_SET_CODEBOX_AI},
    {"e2b", GW_MCP_SET_E2B},
    {"code-box", GW_MCP_SET_CODE_BOX},
};

#define N_SETS (sizeof s_sets / sizeof s_sets[0])
_Static_assert (N_SETS == GW_MCP_N_SETS, "GW_MCP_N_SETS counts the sets");

int
gw_mcp_tool_sets_parse (const char *value, gw_mcp_set_order_t *order, char *err,
                        size_t err_len)
{
    unsigned sets = 0;
    order->n = 0;
    const char *p = value ? value : "";
    while (*p) {
        p += strspn (p, " \t,");
        size_t len = strcspn (p, ",");
        while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            len--;
        if (!len)
            break;
        size_t i = 0;
        while (i < N_SETS && !(strlen (s_sets[i].name) == len
                               && strncmp (s_sets[i].name, p, len) == 0))
            i++;
        if (i == N_SETS) {
            snprintf (err, err_len, "CODEBOX_MCP_TOOLS: unknown tool set '%.*s'; the sets are "
                      "codebox, codebox-ai, e2b and code-box, separated by commas",
                      (int) (len > 100 ? 100 : len), p);
            return -1;
        }
        if (!(sets & s_sets[i].set))
            order->set[order->n++] = s_sets[i].set;
        sets |= s_sets[i].set;
        p += strcspn (p, ",");
    }
    if (!sets) {
        snprintf (err, err_len, "CODEBOX_MCP_TOOLS: no tool set named; give codebox, "
                  "codebox-ai, e2b or code-box (separated by commas)");
        return -1;
    }
    return 0;
}

const char *
gw_mcp_tool_set_name (gw_mcp_set_t set)
{
    for (size_t i = 0; i < N_SETS; i++)
        if (s_sets[i].set == set)
            return s_sets[i].name;
    return "?";
}
