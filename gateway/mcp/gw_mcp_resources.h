/* gw_mcp_resources: the MCP resources and prompts (see
 * gw_mcp_resources.c).
 *
 * Threads: the loop thread only. */
#ifndef GW_MCP_RESOURCES_H
#define GW_MCP_RESOURCES_H

#include "gw_error.h"
#include "gw_mcp_internal.h"

/* resources/list (new), or NULL for a cursor that is not one of ours. */
json_t *gw_mcp_resources_list (gw_mcp_ctx_t *ctx, const char *cursor);
/* resources/templates/list (new). */
json_t *gw_mcp_resource_templates (bool conformance);
/* resources/read (new), or NULL with *e (GW_E_RESOURCE_NOT_FOUND, or
 * GW_E_BAD_REQUEST for a path that is not one) and err set. */
json_t *gw_mcp_resources_read (gw_mcp_ctx_t *ctx, const char *uri, gw_error_t *e, char *err,
                               size_t err_len);

/* prompts/list (new); prompts/get (new), or NULL with err set. */
json_t *gw_mcp_prompts_list (bool conformance);
json_t *gw_mcp_prompts_get (const char *name, json_t *params, bool conformance, char *err,
                            size_t err_len);

/* The usage guide for agents (static text; codebox://guide). */
extern const char gw_mcp_guide[];

#endif
