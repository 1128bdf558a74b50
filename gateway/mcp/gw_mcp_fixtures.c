/* gw_mcp_fixtures: no conformance fixtures. The production binary offers
 * none, whatever CODEBOX_MCP_CONFORMANCE says; the test build
 * (build/codebox-conformance) links tests/mcp/fixtures/gw_mcp_conformance.c,
 * whose definitions replace these weak ones.
 *
 * Threads: the loop thread only. */
#include "gw_mcp_fixtures.h"

__attribute__ ((weak)) void
gw_mcp_conformance_tools (json_t *tools)
{
    (void) tools;
}

__attribute__ ((weak)) json_t *
gw_mcp_conformance_call (gw_mcp_ctx_t *ctx, const char *name, json_t *args, bool *handled)
{
    (void) ctx, (void) name, (void) args;
    *handled = false;
    return NULL;
}

__attribute__ ((weak)) void
gw_mcp_conformance_resources (json_t *resources, json_t *templates)
{
    (void) resources, (void) templates;
}

__attribute__ ((weak)) json_t *
gw_mcp_conformance_read (const char *uri)
{
    (void) uri;
    return NULL;
}

__attribute__ ((weak)) void
gw_mcp_conformance_prompts (json_t *prompts)
{
    (void) prompts;
}

__attribute__ ((weak)) json_t *
gw_mcp_conformance_prompt (const char *name, json_t *args, json_t *params)
{
    (void) name, (void) args, (void) params;
    return NULL;
}
