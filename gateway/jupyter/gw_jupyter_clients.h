/* gw_jupyter_clients: the kernels' websocket clients of a gw_jupyter_t.
 * Each client gets every iopub message of its kernel and the shell,
 * control and stdin messages that answer its own requests, and sends
 * shell, control and stdin messages (signed by the core); its output and
 * what waits for its kernel are bounded (see gw_jupyter_clients.c). One
 * loop source polls every client's socket.
 *
 * Threads: the loop thread only. */
#ifndef GW_JUPYTER_CLIENTS_H
#define GW_JUPYTER_CLIENTS_H

#include <stdbool.h>

#include "gw_jupyter_state.h"
#include "gw_loop.h"
#include "gw_request.h"
#include "gw_session.h"

/* The loop source of the clients' sockets (arg: the gw_jupyter_t). */
extern const gw_loop_source_t gw_jupyter_clients_source;

/* Session hooks (arg: the gw_jupyter_t): a kernel message for the
 * clients that should see it, and a kernel's "restarting" or "dead" as an
 * iopub status. */
void gw_jupyter_clients_kernel_msg (void *arg, gw_session_t *session, jp_channel_t channel,
                                    const jp_msg_t *msg);
void gw_jupyter_clients_kernel_state (void *arg, gw_session_t *session, const char *state);

/* Makes a client of the switched connection conn (taken; closed when no
 * client can be made) for the kernel session_id of tenant, speaking
 * v1.kernel.websocket.jupyter.org when v1; woke: its connect woke the
 * session (paused), so its kernel is not the one the client knew. */
void gw_jupyter_clients_attach (gw_jupyter_t *self, gw_upgraded_t *conn,
                                const char *session_id, const char *tenant, bool v1,
                                bool woke);

/* How many websocket clients the session has now (closing ones left
 * out). */
int gw_jupyter_connections (gw_jupyter_t *self, const gw_session_t *session);

/* How many websocket clients the tenant has now. */
int gw_jupyter_clients_of_tenant (gw_jupyter_t *self, const char *tenant);

/* Closes the session's clients (1001: its kernel was shut down). */
void gw_jupyter_clients_end (gw_jupyter_t *self, const gw_session_t *session);

/* Closes every client (1001, going away), sends what it can, and frees
 * them; the source then polls nothing. */
void gw_jupyter_clients_close_all (gw_jupyter_t *self);

/* Frees every client. */
void gw_jupyter_clients_free_all (gw_jupyter_t *self);

#endif
