/* gw_mcp_http: MCP's Streamable HTTP transport at /mcp (see the .c file's
 * header for the rules it follows). Threads: the loop thread only. */
#ifndef GW_MCP_HTTP_H
#define GW_MCP_HTTP_H

#include "gw_server.h"
#include "gw_mcp.h"
#include "gw_request.h"
#include "gw_stream.h"

typedef struct gw_mcp_http gw_mcp_http_t;

gw_mcp_http_t *gw_mcp_http_new (gw_server_t *server, gw_mcp_t *mcp);
void gw_mcp_http_destroy (gw_mcp_http_t **self_p);

/* Handles a request to /mcp. Completes req (at once, or later for a
 * streamed call). */
void gw_mcp_http_handle (gw_mcp_http_t *self, gw_request_t *req);

/* The client of stream left before its end: its call is cancelled. */
void gw_mcp_http_stream_gone (gw_mcp_http_t *self, gw_stream_t *stream);

#endif
