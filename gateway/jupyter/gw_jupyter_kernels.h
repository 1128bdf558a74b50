/* gw_jupyter_kernels: /api/kernels and /api/sessions as Jupyter Kernel
 * Gateway and Jupyter Server answer them, over the core's sessions, and
 * the notebook sessions' table of a gw_jupyter_t.
 *
 * Threads: the loop thread only. */
#ifndef GW_JUPYTER_KERNELS_H
#define GW_JUPYTER_KERNELS_H

#include <jansson.h>

#include "gw_request.h"
#include "gw_session.h"

typedef struct gw_jupyter gw_jupyter_t;

/* GET /api/kernels (list) or POST /api/kernels ({"name", "env"}: starts a
 * kernel and answers 201 with its model once it is ready). */
void gw_jupyter_kernels (gw_jupyter_t *self, gw_request_t *req);
/* /api/kernels/{id}: GET (its model), DELETE. */
void gw_jupyter_kernel (gw_jupyter_t *self, gw_request_t *req, const char *id);
/* POST /api/kernels/{id}/interrupt: 204. */
void gw_jupyter_kernel_interrupt (gw_jupyter_t *self, gw_request_t *req, const char *id);
/* POST /api/kernels/{id}/restart: 200 with the kernel's model. */
void gw_jupyter_kernel_restart (gw_jupyter_t *self, gw_request_t *req, const char *id);
/* /api/sessions (GET, POST) and /api/sessions/{id} (GET, PATCH, DELETE). */
void gw_jupyter_sessions (gw_jupyter_t *self, gw_request_t *req, const char *id);

/* The kernel model of a session: id, name, last_activity,
 * execution_state, connections. */
json_t *gw_jupyter_kernel_model (gw_jupyter_t *self, const gw_session_t *session);

/* The caller's kernel id names (one-shot MCP runs are no kernels), or
 * NULL after answering 404. */
gw_session_t *gw_jupyter_kernel_or_reply (gw_jupyter_t *self, gw_request_t *req,
                                          const char *id);

/* Starts a kernel again for a paused session (gw_sessions_wake): true,
 * or false after answering why not (429, 500). */
bool gw_jupyter_wake_or_reply (gw_jupyter_t *self, gw_request_t *req, gw_session_t *session);

/* Ends the notebook sessions that use the kernel session (it ends). */
void gw_jupyter_forget_kernel (gw_jupyter_t *self, const gw_session_t *session);

#endif
