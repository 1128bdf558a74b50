/* gw_mcp_conformance: the fixture tools, resources and prompts that the
 * official MCP conformance suite (@modelcontextprotocol/conformance)
 * calls, offered only with CODEBOX_MCP_CONFORMANCE=1 (tests).
 *
 * Threads: the loop thread only. */
#include "gw_mcp_internal.h"

void
gw_mcp_conformance_tools (json_t *tools)
{
    (void) tools;
}

json_t *
gw_mcp_conformance_call (gw_mcp_ctx_t *ctx, const char *name, json_t *args)
{
    (void) ctx;
    (void) name;
    (void) args;
    return NULL;
}

void
gw_mcp_conformance_resources (json_t *resources, json_t *templates)
{
    (void) resources;
    (void) templates;
}

json_t *
gw_mcp_conformance_read (const char *uri)
{
    (void) uri;
    return NULL;
}

void
gw_mcp_conformance_prompts (json_t *prompts)
{
    (void) prompts;
}

json_t *
gw_mcp_conformance_prompt (const char *name, json_t *args)
{
    (void) name;
    (void) args;
    return NULL;
}
