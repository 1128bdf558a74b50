/* gw_mcp_stateless: the rules of MCP's stateless era (2026-07-28) that
 * come before a request runs, and what the era adds to results (see
 * gw_mcp_stateless.c).
 *
 * Threads: the loop thread only. */
#ifndef GW_MCP_STATELESS_H
#define GW_MCP_STATELESS_H

#include "gw_error.h"
#include "gw_mcp_internal.h"

/* An error found before a request runs. */
typedef struct {
    gw_error_t e;               /* GW_E_OK: none */
    char message[512];
    json_t *data;               /* new, or NULL */
} gw_mcp_error_t;

/* True when a message not known to be of either era (stdio) is of the
 * stateless one: server/discover, or _meta carries a protocol version. */
bool gw_mcp_stateless_wanted (const char *method, json_t *params);

/* Checks a stateless request before it runs, in the specification's order:
 * MCP-Protocol-Version present (HTTP), _meta complete (GW_E_BAD_REQUEST),
 * header and _meta agree (GW_E_HEADER_MISMATCH), version supported
 * (GW_E_UNSUPPORTED_VERSION), Mcp-Method agrees, the method exists in the
 * era (GW_E_NOT_FOUND), Mcp-Name and Mcp-Param-* agree. http NULL: no
 * header checks. Returns GW_E_OK, or err->e. */
gw_error_t gw_mcp_stateless_check (gw_mcp_t *self, const char *method, json_t *params,
                                   const gw_request_t *http, gw_mcp_error_t *err);

/* server/discover's result (new). */
json_t *gw_mcp_discover (const char *instructions);

/* Marks a list or read result cacheable: ttlMs, and cacheScope public
 * (the same for every caller) or private. */
void gw_mcp_cacheable (json_t *result, long ttl_ms, bool shared);

#endif
