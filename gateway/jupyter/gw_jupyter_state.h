/* gw_jupyter_state: the Jupyter API's object (struct gw_jupyter) as its
 * files share it: its websocket clients (gw_jupyter_clients), its
 * notebook sessions (gw_jupyter_kernels), and what the object itself
 * keeps for shutdown (gw_jupyter). Private to gateway/jupyter; it names
 * none of those files, so none of them includes another through it.
 *
 * Threads: the loop thread; closing and handing_over also from
 * libmicrohttpd's upgrade callback (inside gw_http_run). */
#ifndef GW_JUPYTER_STATE_H
#define GW_JUPYTER_STATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "gw_server.h"
#include "gw_id.h"

typedef struct gw_jupyter gw_jupyter_t;

#define GW_JUPYTER_MAX_NB_SESSIONS 4096
#define GW_JUPYTER_MAX_NB_PER_TENANT 512     /* one tenant cannot fill the table: at
                                                most this, or its share if less */

/* One /api/sessions entry: a notebook (path) and the kernel it uses. */
typedef struct {
    char id[40];
    char tenant[GW_ID_SIZE];
    char kernel_id[GW_ID_SIZE];
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
    size_t queued_total;            /* every client's unsent output (gw_jupyter_clients) */
    unsigned long long clients_made;    /* websockets so far (their marks) */
    bool answered;                  /* a kernel answered or restarted since the last tick */
    int64_t ping_ms;                /* a silent client is pinged after this, closed after twice */
    bool closed;
    atomic_bool closing;            /* set by gw_jupyter_close: hand-overs close at once */
    atomic_int handing_over;        /* hand-overs between their check and their post */
    gw_nb_session_t *nb;            /* notebook sessions */
    int n_nb;
};

#endif
