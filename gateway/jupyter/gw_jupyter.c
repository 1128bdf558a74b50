/* gw_jupyter: the Jupyter API's object on the loop: the websocket
 * handshake's checks for /api/kernels/{id}/channels, the hand-over of the
 * switched connection to the clients (gw_jupyter_clients), and the
 * session hooks through which kernel messages, restarts and ends reach
 * the clients and the notebook sessions (gw_jupyter_kernels). See
 * gw_jupyter.h.
 *
 * Threads: the loop thread, except s_handed_over (libmicrohttpd's, inside
 * gw_http_run). */
#include "gw_jupyter.h"
#include "gw_id.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "gw_jupyter_clients.h"
#include "gw_jupyter_kernels.h"
#include "gw_jupyter_state.h"
#include "gw_jupyter_wire.h"

#define S_MAX_CLIENTS 512
#define S_MAX_PER_KERNEL 32

/* ---- the session hooks ---- */

static void
s_session_end (void *arg, gw_session_t *session)
{
    gw_jupyter_t *self = arg;
    gw_jupyter_clients_end (self, session);
    gw_jupyter_forget_kernel (self, session);
}

static bool
s_in_use (void *arg, const gw_session_t *session)
{
    return gw_jupyter_connections (arg, session) > 0;
}

static const gw_session_hooks_t s_hooks = {
    .kernel_msg = gw_jupyter_clients_kernel_msg,
    .kernel_state = gw_jupyter_clients_kernel_state,
    .session_end = s_session_end,
    .in_use = s_in_use,
};

/* ---- the handshake and the hand-over ---- */

typedef struct {
    gw_jupyter_t *self;
    char session_id[GW_ID_SIZE];
    char tenant[GW_ID_SIZE];
    bool v1;
    bool woke;          /* the session was paused: its kernel is a new one */
    gw_upgraded_t *conn;
} s_handover_t;

static void
s_attach (gw_server_t *server, void *arg)
{
    (void) server;
    s_handover_t *h = arg;
    gw_jupyter_clients_attach (h->self, h->conn, h->session_id, h->tenant, h->v1, h->woke);
    free (h);
}

/* libmicrohttpd (in gw_http_run): the connection switched (or never will). */
static void
s_handed_over (gw_upgraded_t *conn, void *arg)
{
    s_handover_t *h = arg;
    if (!conn) {
        free (h);
        return;
    }
    h->conn = conn;
    gw_jupyter_t *self = h->self;
    atomic_fetch_add (&self->handing_over, 1);
    if (atomic_load (&self->closing) || gw_server_call (self->server, s_attach, h)) {
        gw_upgraded_close (&h->conn);
        free (h);
    }
    atomic_fetch_sub (&self->handing_over, 1);
}

/* True when the comma-separated header value lists token. */
static bool
s_lists (const char *value, const char *token)
{
    size_t n = strlen (token);
    for (const char *p = value; p && *p;) {
        while (*p == ' ' || *p == ',' || *p == '\t')
            p++;
        const char *end = p + strcspn (p, ", \t");
        if ((size_t) (end - p) == n && strncasecmp (p, token, n) == 0)
            return true;
        p = end;
    }
    return false;
}

void
gw_jupyter_channels (gw_jupyter_t *self, gw_request_t *req, const char *id)
{
    const char *upgrade = gw_request_header (req, "Upgrade");
    const char *version = gw_request_header (req, "Sec-WebSocket-Version");
    char accept[64];
    if (!upgrade || strcasecmp (upgrade, "websocket") != 0
        || !s_lists (gw_request_header (req, "Connection"), "upgrade")) {
        gw_request_reply_error (req, GW_E_BAD_REQUEST, "this is a websocket: send Upgrade: "
                                "websocket and Connection: Upgrade");
        return;
    }
    if (!version || strcmp (version, "13") != 0) {
        gw_request_set_header (req, "Sec-WebSocket-Version", "13");
        gw_request_reply_error (req, GW_E_BAD_REQUEST, "Sec-WebSocket-Version must be 13");
        return;
    }
    if (!gw_jupyter_ws_accept (gw_request_header (req, "Sec-WebSocket-Key"), accept,
                               sizeof accept)) {
        gw_request_reply_error (req, GW_E_BAD_REQUEST, "Sec-WebSocket-Key must be 16 bytes "
                                "in base64");
        return;
    }
    gw_session_t *session = gw_jupyter_kernel_or_reply (self, req, id);
    bool woke = session && gw_session_paused (session);
    if (!session || !gw_jupyter_wake_or_reply (self, req, session))
        return;
    /* a tenant holds at most its share of the websockets */
    long share = gw_config_share (gw_server_config (self->server), S_MAX_CLIENTS);
    long mine = gw_jupyter_clients_of_tenant (self, req->tenant);
    if (self->closed || self->n_clients >= S_MAX_CLIENTS || mine >= share
        || gw_jupyter_connections (self, session) >= S_MAX_PER_KERNEL) {
        gw_request_reply_error (req, GW_E_TOO_MANY_SESSIONS, "too many websockets (at most %d "
                                "per kernel, %ld per tenant, its share, and %d in all)",
                                S_MAX_PER_KERNEL, share, S_MAX_CLIENTS);
        return;
    }
    s_handover_t *h = calloc (1, sizeof *h);
    if (!h) {
        gw_request_reply_error (req, GW_E_INTERNAL, "out of memory");
        return;
    }
    h->self = self;
    snprintf (h->session_id, sizeof h->session_id, "%s", gw_session_id (session));
    snprintf (h->tenant, sizeof h->tenant, "%s", gw_session_tenant (session));
    h->v1 = s_lists (gw_request_header (req, "Sec-WebSocket-Protocol"), GW_JUPYTER_V1_PROTOCOL);
    h->woke = woke;
    gw_request_set_header (req, "Sec-WebSocket-Accept", accept);
    if (h->v1)
        gw_request_set_header (req, "Sec-WebSocket-Protocol", GW_JUPYTER_V1_PROTOCOL);
    gw_session_touch (session);
    gw_request_reply_upgrade (req, s_handed_over, h);
}

/* ---- the object ---- */

gw_jupyter_t *
gw_jupyter_new (gw_server_t *server)
{
    gw_jupyter_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->server = server;
    self->ping_ms = gw_config_int (gw_server_config (server), GW_SET_WS_PING_INTERVAL) * 1000;
    if (gw_loop_add_source (gw_server_loop (server), &gw_jupyter_clients_source, self)) {
        free (self);
        return NULL;
    }
    if (gw_server_add_hooks (server, &s_hooks, self)) {
        gw_loop_remove_source (gw_server_loop (server), &gw_jupyter_clients_source, self);
        free (self);
        return NULL;
    }
    return self;
}

void
gw_jupyter_close (gw_jupyter_t *self)
{
    if (!self)
        return;
    self->closed = true;
    atomic_store (&self->closing, true);
    while (atomic_load (&self->handing_over))     /* a hand-over between check and post */
        usleep (1000);
    gw_jupyter_clients_close_all (self);
}

void
gw_jupyter_destroy (gw_jupyter_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gw_jupyter_t *self = *self_p;
    gw_server_remove_hooks (self->server, &s_hooks, self);
    gw_loop_remove_source (gw_server_loop (self->server), &gw_jupyter_clients_source, self);
    gw_jupyter_clients_free_all (self);
    free (self->polled);
    free (self->nb);
    free (self);
    *self_p = NULL;
}
