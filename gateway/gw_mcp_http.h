/* gw_mcp_http: MCP's Streamable HTTP transport at /mcp (see the .c file's
 * header for the rules it follows). Threads: the loop thread only. */
#ifndef GW_MCP_HTTP_H
#define GW_MCP_HTTP_H

#include "gw_server.h"
#include "gw_mcp.h"
#include "gw_request.h"

typedef struct gw_mcp_http gw_mcp_http_t;

gw_mcp_http_t *gw_mcp_http_new (gw_server_t *server, gw_mcp_t *mcp);
void gw_mcp_http_destroy (gw_mcp_http_t **self_p);

/* Handles a request to /mcp, or a "GONE" notice of a stream whose client
 * left. Completes req (at once, or later for a streamed call). */
void gw_mcp_http_handle (gw_mcp_http_t *self, gw_request_t *req);

#endif
