/* gw_router: the HTTP application: runs the handler of the route a
 * request matched in gw_routes' table (REST, /mcp, /sse and /messages,
 * Jupyter's /api, signed links), and hands a stream whose client left to MCP's HTTP
 * transports and REST's event streams. It is
 * what `codebox serve` gives gw_http (post, gone) and gw_server (the
 * request handler).
 *
 * Threads: gw_router_post and gw_router_gone run in libmicrohttpd's
 * threads; gw_router_handle in the loop thread. */
#ifndef GW_ROUTER_H
#define GW_ROUTER_H

#include "gw_jupyter.h"
#include "gw_mcp_http.h"
#include "gw_mcp_sse.h"
#include "gw_request.h"
#include "gw_rest_events.h"
#include "gw_server.h"
#include "gw_stream.h"

typedef struct gw_router gw_router_t;

/* mcp_http and mcp_sse may be NULL (no MCP over HTTP), rest_events too
 * (no /execute/{rid}/events). NULL on OOM. */
gw_router_t *gw_router_new (gw_server_t *server, gw_mcp_http_t *mcp_http,
                            gw_mcp_sse_t *mcp_sse, gw_jupyter_t *jupyter,
                            gw_rest_events_t *rest_events);
void gw_router_destroy (gw_router_t **self_p);

/* A gw_server_handler_fn: routes and answers req (now or later). */
void gw_router_handle (gw_server_t *server, gw_request_t *req, void *router);

/* A gw_http_post_fn: hands req to the loop. */
void gw_router_post (gw_request_t *req, void *router);

/* A gw_http_gone_fn: the client of stream left; its call is cancelled (or
 * its event stream freed) in the loop. */
void gw_router_gone (gw_stream_t *stream, void *router);

#endif
