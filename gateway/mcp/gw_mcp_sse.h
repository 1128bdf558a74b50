/* gw_mcp_sse: MCP's HTTP+SSE transport of 2024-11-05 at /sse and
 * /messages (see the .c file's header). Threads: the loop thread only. */
#ifndef GW_MCP_SSE_H
#define GW_MCP_SSE_H

#include <stdbool.h>
#include <stdint.h>

#include "gw_mcp.h"
#include "gw_request.h"
#include "gw_server.h"
#include "gw_stream.h"

typedef struct gw_mcp_sse gw_mcp_sse_t;

gw_mcp_sse_t *gw_mcp_sse_new (gw_server_t *server, gw_mcp_t *mcp);
/* Ends every stream (after gw_server_run, before the HTTP server stops,
 * which waits for open connections). */
void gw_mcp_sse_close (gw_mcp_sse_t *self);
/* Closes what is left and frees (before the MCP core goes). */
void gw_mcp_sse_destroy (gw_mcp_sse_t **self_p);

/* GET /sse (messages false) or POST /messages (true). Completes req. */
void gw_mcp_sse_handle (gw_mcp_sse_t *self, gw_request_t *req, bool messages);

/* The client of stream left: its MCP session ends, its calls are
 * cancelled. Nothing happens for another transport's stream. */
void gw_mcp_sse_stream_gone (gw_mcp_sse_t *self, gw_stream_t *stream);

/* The keep-alive timer, for a loop source: next deadline (-1: none) and
 * the tick. */
int64_t gw_mcp_sse_deadline (gw_mcp_sse_t *self);
void gw_mcp_sse_tick (gw_mcp_sse_t *self, int64_t now);

#endif
