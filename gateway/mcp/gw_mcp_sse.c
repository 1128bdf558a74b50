/* gw_mcp_sse: MCP's HTTP+SSE transport of protocol revision 2024-11-05,
 * for older clients (the TypeScript SDK's SSEClientTransport, AutoGen's
 * SseServerParams). GET /sse opens a stream and makes an MCP session; the
 * stream's first event, "endpoint", names the URL (/messages?sessionId=ID)
 * where the client POSTs its JSON-RPC messages; each POST is answered 202
 * and everything the message brings back (progress, log messages, the
 * response) goes out on the stream as "message" events. The same tools,
 * tokens and tenants as /mcp; Origin and Host were judged in gw_http for
 * every route. A comment every S_KEEPALIVE_MS keeps proxies from closing a
 * quiet stream and lets libmicrohttpd notice a client that left: then the
 * MCP session ends and its calls are cancelled.
 *
 * Threads: the loop thread only. */
#include "gw_mcp_sse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_config.h"
#include "jp_json.h"
#include "jp_time.h"

#define S_KEEPALIVE_MS 5000
#define S_ID_MAX 40

typedef struct s_conn s_conn_t;

/* One open stream: its MCP session. */
struct s_conn {
    char id[S_ID_MAX];          /* the MCP client's id, the sessionId */
    gw_stream_t *stream;
    s_conn_t *next;
};

struct gw_mcp_sse {
    gw_server_t *server;
    gw_mcp_t *mcp;
    s_conn_t *conns;
    int64_t next_keepalive_ms;
};

/* What one POSTed message brings back, written to its stream. */
typedef struct {
    gw_mcp_reply_t base;
    gw_mcp_sse_t *sse;
    char id[S_ID_MAX];          /* looked up at each send: the stream may be gone */
} s_reply_t;

gw_mcp_sse_t *
gw_mcp_sse_new (gw_server_t *server, gw_mcp_t *mcp)
{
    gw_mcp_sse_t *self = calloc (1, sizeof *self);
    if (self) {
        self->server = server;
        self->mcp = mcp;
    }
    return self;
}

static void
s_conn_free (s_conn_t *conn)
{
    gw_stream_close (conn->stream);
    gw_stream_unref (&conn->stream);
    free (conn);
}

void
gw_mcp_sse_close (gw_mcp_sse_t *self)
{
    while (self && self->conns) {
        s_conn_t *conn = self->conns;
        self->conns = conn->next;
        s_conn_free (conn);
    }
}

void
gw_mcp_sse_destroy (gw_mcp_sse_t **self_p)
{
    gw_mcp_sse_t *self = *self_p;
    if (!self)
        return;
    gw_mcp_sse_close (self);
    free (self);
    *self_p = NULL;
}

static s_conn_t *
s_find (gw_mcp_sse_t *self, const char *id)
{
    for (s_conn_t *conn = self->conns; conn && id; conn = conn->next)
        if (strcmp (conn->id, id) == 0)
            return conn;
    return NULL;
}

/* Ends a connection: its MCP session (and calls) first, then the stream. */
static void
s_end (gw_mcp_sse_t *self, s_conn_t *conn)
{
    for (s_conn_t **link = &self->conns; *link; link = &(*link)->next)
        if (*link == conn) {
            *link = conn->next;
            break;
        }
    gw_mcp_client_t *client = gw_mcp_client_find (self->mcp, conn->id);
    if (client)
        gw_mcp_client_end (self->mcp, client);
    s_conn_free (conn);
}

static void
s_send (gw_mcp_reply_t *base, json_t *message)
{
    s_reply_t *r = (s_reply_t *) base;
    s_conn_t *conn = s_find (r->sse, r->id);
    char *text = conn ? jp_json_dump (message, NULL) : NULL;
    if (text) {
        gw_stream_write (conn->stream, "event: message\n", 15);
        gw_stream_write_event (conn->stream, text);
    }
    free (text);
}

static void
s_reply_end (gw_mcp_reply_t *base)
{
    free (base);
}

/* GET /sse: a stream and an MCP session. */
static void
s_open (gw_mcp_sse_t *self, gw_request_t *req)
{
    char why[300];
    if (gw_mcp_clients_admit (self->mcp, req->tenant, jp_time_now_ms (), why, sizeof why) < 0) {
        gw_request_reply_error (req, GW_E_TOO_MANY_SESSIONS, "%s: close another stream first",
                                why);
        return;
    }
    s_conn_t *conn = calloc (1, sizeof *conn);
    gw_mcp_client_t *client = conn ? gw_mcp_client_new (self->mcp, req->tenant) : NULL;
    conn = client ? conn : (free (conn), NULL);
    if (conn && !(conn->stream = gw_stream_new ())) {
        gw_mcp_client_end (self->mcp, client);
        free (conn);
        conn = NULL;
    }
    if (!conn) {
        gw_request_reply_error (req, GW_E_INTERNAL, "out of memory");
        return;
    }
    snprintf (conn->id, sizeof conn->id, "%s", gw_mcp_client_id (client));
    conn->next = self->conns;
    self->conns = conn;
    char endpoint[128];
    int n = snprintf (endpoint, sizeof endpoint, "event: endpoint\ndata: /messages?sessionId=%s"
                      "\n\n", conn->id);
    gw_stream_write (conn->stream, endpoint, (size_t) n);
    snprintf (req->log_extra, sizeof req->log_extra, " mcp_session=%.8s", conn->id);
    req->stream = gw_stream_ref (conn->stream);
    req->status = 200;
    req->complete (req);
}

/* POST /messages?sessionId=ID: one message; what it brings back goes out
 * on the stream. */
static void
s_message (gw_mcp_sse_t *self, gw_request_t *req)
{
    const char *id = gw_request_query (req, "sessionId");
    s_conn_t *conn = s_find (self, id);
    gw_mcp_client_t *client = conn ? gw_mcp_client_find (self->mcp, conn->id) : NULL;
    if (!id) {
        gw_request_reply_error (req, GW_E_BAD_REQUEST, "missing sessionId: POST to the "
                                "endpoint the /sse stream announced");
        return;
    }
    if (!client || strcmp (gw_mcp_client_tenant (client), req->tenant) != 0) {
        gw_request_reply_error (req, GW_E_NOT_FOUND, "unknown or closed MCP session: open "
                                "GET /sse again");
        return;
    }
    s_reply_t *r = calloc (1, sizeof *r);
    if (!r) {
        gw_request_reply_error (req, GW_E_INTERNAL, "out of memory");
        return;
    }
    r->base = (gw_mcp_reply_t) {.send = s_send, .end = s_reply_end, .can_stream = true};
    r->sse = self;
    snprintf (r->id, sizeof r->id, "%s", conn->id);
    gw_mcp_client_touch (client);
    gw_mcp_in_t in = {.overrides = &req->overrides};
    gw_mcp_handle_text (self->mcp, client, req->body ? req->body : "", req->body_len, &in,
                        &r->base);
    snprintf (req->log_extra, sizeof req->log_extra, " mcp_session=%.8s", conn->id);
    gw_request_reply_raw (req, 202, strdup ("Accepted"), 8, "text/plain");
}

void
gw_mcp_sse_handle (gw_mcp_sse_t *self, gw_request_t *req, bool messages)
{
    req->route = messages ? "/messages" : "/sse";
    if (messages)
        s_message (self, req);
    else
        s_open (self, req);
}

void
gw_mcp_sse_stream_gone (gw_mcp_sse_t *self, gw_stream_t *stream)
{
    for (s_conn_t *conn = self->conns; conn; conn = conn->next)
        if (conn->stream == stream) {
            s_end (self, conn);
            return;
        }
}

int64_t
gw_mcp_sse_deadline (gw_mcp_sse_t *self)
{
    return self->conns ? self->next_keepalive_ms : -1;
}

void
gw_mcp_sse_tick (gw_mcp_sse_t *self, int64_t now)
{
    if (now < self->next_keepalive_ms)
        return;
    self->next_keepalive_ms = now + S_KEEPALIVE_MS;
    for (s_conn_t *conn = self->conns, *next; conn; conn = next) {
        next = conn->next;
        gw_mcp_client_t *client = gw_mcp_client_find (self->mcp, conn->id);
        if (!client || gw_stream_gone (conn->stream)) {
            s_end (self, conn);         /* expired, or the client left */
            continue;
        }
        gw_mcp_client_touch (client);   /* an open stream is a live session */
        gw_stream_write (conn->stream, ":\n\n", 3);
    }
}
