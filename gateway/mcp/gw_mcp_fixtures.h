/* gw_mcp_fixtures: the hooks of the MCP conformance fixtures
 * (CODEBOX_MCP_CONFORMANCE=1 only). The fixtures exist only in the test
 * build build/codebox-conformance (tests/mcp/fixtures/); the production
 * binary has the empty, weak ones of gw_mcp_fixtures.c.
 *
 * Threads: the loop thread only. */
#ifndef GW_MCP_FIXTURES_H
#define GW_MCP_FIXTURES_H

#include "gw_mcp_internal.h"

/* Adds the fixture tools to tools. */
void gw_mcp_conformance_tools (json_t *tools);
/* Runs fixture tool name: its CallToolResult; or NULL with *handled set
 * when the fixture took the reply over, as a tool function may; NULL with
 * *handled false when name is not a fixture. */
json_t *gw_mcp_conformance_call (gw_mcp_ctx_t *ctx, const char *name, json_t *args,
                                 bool *handled);
/* Adds the fixture resources and templates; reads one (new, or NULL). */
void gw_mcp_conformance_resources (json_t *resources, json_t *templates);
json_t *gw_mcp_conformance_read (const char *uri);
/* Adds the fixture prompts; gets one (new, or NULL). */
void gw_mcp_conformance_prompts (json_t *prompts);
json_t *gw_mcp_conformance_prompt (const char *name, json_t *args, json_t *params);

#endif
