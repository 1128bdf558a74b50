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
 * Threads: everything in the loop thread; the hand-over of a switched
 * connection (inside gw_http_run) posts to the loop's mailbox. */
#ifndef GW_JUPYTER_H
#define GW_JUPYTER_H

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

/* GET /api/kernels (list) or POST /api/kernels ({"name", "env"}: starts a
 * kernel and answers 201 with its model once it is ready). */
void gw_jupyter_kernels (gw_jupyter_t *self, gw_request_t *req);
/* /api/kernels/{id}[/action]: GET, DELETE; POST with action "interrupt" or
 * "restart". action NULL for the kernel itself. */
void gw_jupyter_kernel (gw_jupyter_t *self, gw_request_t *req, const char *id,
                        const char *action);
/* GET /api/kernels/{id}/channels: the websocket handshake. */
void gw_jupyter_channels (gw_jupyter_t *self, gw_request_t *req, const char *id);
/* /api/sessions (GET, POST) and /api/sessions/{id} (GET, PATCH, DELETE). */
void gw_jupyter_sessions (gw_jupyter_t *self, gw_request_t *req, const char *id);

/* How many websocket clients the session has now. */
int gw_jupyter_connections (gw_jupyter_t *self, const gw_session_t *session);

#endif
