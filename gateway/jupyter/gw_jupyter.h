/* gw_jupyter: Jupyter's own API on the core, as Jupyter Kernel Gateway
 * and Jupyter Server serve it: kernels (/api/kernels), their websocket
 * channels (/api/kernels/{id}/channels) and notebook sessions
 * (/api/sessions). A Jupyter kernel is a codebox session (same sandbox,
 * limits, tenants, culling, metrics; its id works as a session_id for MCP
 * and REST). Each websocket client gets every iopub message of its kernel,
 * the shell, control and stdin messages that answer its own requests, and
 * sends shell, control and stdin messages, signed with the kernel's key by
 * the core. A client that leaves cancels nothing.
 *
 * The object and the websocket handshake are gw_jupyter.c, the clients
 * gw_jupyter_clients, the kernels' and notebook sessions' routes
 * gw_jupyter_kernels (declared there, included here for the router).
 *
 * Threads: everything in the loop thread; the hand-over of a switched
 * connection (inside gw_http_run) posts to the loop's mailbox. */
#ifndef GW_JUPYTER_H
#define GW_JUPYTER_H

#include "gw_jupyter_kernels.h"
#include "gw_request.h"
#include "gw_server.h"

typedef struct gw_jupyter gw_jupyter_t;

/* Registers the websocket source with the server's loop and the session
 * hooks. NULL on OOM or when the loop has no room. */
gw_jupyter_t *gw_jupyter_new (gw_server_t *server);

/* Closes every websocket (1001, going away) and makes later hand-overs
 * close at once; then the loop is drained (hand-overs already posted close
 * there) and only then does the HTTP server stop. */
void gw_jupyter_close (gw_jupyter_t *self);
void gw_jupyter_destroy (gw_jupyter_t **self_p);

/* GET /api/kernels/{id}/channels: the websocket handshake. */
void gw_jupyter_channels (gw_jupyter_t *self, gw_request_t *req, const char *id);

#endif
