/* gw_jupyter_internal: what the Jupyter API's files share (the object,
 * its websocket clients and notebook sessions). Threads: the loop thread. */
#ifndef GW_JUPYTER_INTERNAL_H
#define GW_JUPYTER_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "gw_jupyter.h"

#define GW_JUPYTER_MAX_NB_SESSIONS 4096
#define GW_JUPYTER_MAX_NB_PER_TENANT 512     /* one tenant cannot fill the table: at
                                                most this, or its share if less */

/* One /api/sessions entry: a notebook (path) and the kernel it uses. */
typedef struct {
    char id[40];
    char tenant[65];
    char kernel_id[65];
    char path[1024];
    char name[256];
    char type[32];
} gw_nb_session_t;

typedef struct gw_ws_client gw_ws_client_t;

struct gw_jupyter {
    gw_server_t *server;
    gw_ws_client_t *clients;        /* every websocket, newest first */
    int n_clients;
    gw_ws_client_t **polled;        /* the clients of the last poll_items, in order */
    int polled_cap;
    size_t queued_total;            /* every client's unsent output (gw_jupyter.c) */
    unsigned long long clients_made;    /* websockets so far (their marks) */
    bool answered;                  /* a kernel answered or restarted since the last tick */
    int64_t ping_ms;                /* a silent client is pinged after this, closed after twice */
    bool closed;
    atomic_bool closing;            /* set by gw_jupyter_close: hand-overs close at once */
    atomic_int handing_over;        /* hand-overs between their check and their post */
    gw_nb_session_t *nb;            /* notebook sessions */
    int n_nb;
};

/* The kernel model of a session: id, name, last_activity,
 * execution_state, connections. */
json_t *gw_jupyter_kernel_model (gw_jupyter_t *self, const gw_session_t *session);

/* The caller's kernel id names (one-shot MCP runs are no kernels), or
 * NULL after answering 404. */
gw_session_t *gw_jupyter_kernel_or_reply (gw_jupyter_t *self, gw_request_t *req,
                                          const char *id);

/* Ends the notebook sessions that use the kernel session (it ends). */
void gw_jupyter_forget_kernel (gw_jupyter_t *self, const gw_session_t *session);

#endif
