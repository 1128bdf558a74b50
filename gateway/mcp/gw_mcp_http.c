/* gw_mcp_http: MCP's Streamable HTTP transport at /mcp: one JSON-RPC
 * message per POST. Two eras: a POST with Mcp-Session-Id (issued at
 * initialize; 404 unknown or another tenant's) is of the stateful one
 * (2025-11-25 and before); any other POST but initialize is of the
 * stateless 2026-07-28, whose headers the core checks. 202 for
 * notifications and responses; a JSON answer, or Server-Sent Events once
 * a call that the client lets stream has something to say before its
 * answer (progress, log messages, a keep-alive each second, listening);
 * GET with an MCP session is 405 (a GET without one asking for an event
 * stream is the 2024-11-05 transport: gw_router sends it to gw_mcp_sse);
 * DELETE ends the MCP session;
 * Origin and Host are checked against DNS rebinding; a client that leaves
 * mid-stream has its call cancelled (an SSE comment each second finds out).
 *
 * Threads: the loop thread only. */
#include "gw_mcp_http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gw_mcp.h"
#include "gw_mcp_info.h"
#include "gw_path.h"
#include "gw_stream.h"
#include "jp_json.h"
#include "jp_time.h"

typedef struct s_reply s_reply_t;

struct gw_mcp_http {
    gw_server_t *server;
    gw_mcp_t *mcp;
    s_reply_t *streams;         /* replies with an open SSE stream */
};

/* One POST's reply: JSON (the response is kept until end) until a
 * notification or a keep-alive of a client that accepts Server-Sent
 * Events switches it to a stream. */
struct s_reply {
    gw_mcp_reply_t base;
    gw_mcp_http_t *http;
    gw_request_t *req;          /* until answered */
    gw_stream_t *stream;        /* once streaming */
    json_t *response;
    char session_out[40];
    char prime[96];             /* the first event of a 2025-11-25 stream, or "" */
    s_reply_t *next;
};

gw_mcp_http_t *
gw_mcp_http_new (gw_server_t *server, gw_mcp_t *mcp)
{
    gw_mcp_http_t *self = calloc (1, sizeof *self);
    if (self) {
        self->server = server;
        self->mcp = mcp;
    }
    return self;
}

void
gw_mcp_http_destroy (gw_mcp_http_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free (*self_p);
    *self_p = NULL;
}

static void
s_unlink_stream (gw_mcp_http_t *self, s_reply_t *reply)
{
    for (s_reply_t **link = &self->streams; *link; link = &(*link)->next)
        if (*link == reply) {
            *link = reply->next;
            return;
        }
}

/* Answers the HTTP request with an event stream; what follows goes on it.
 * Returns false when out of memory (the reply stays JSON). */
static bool
s_open_stream (s_reply_t *r)
{
    if (r->stream || !r->req || !(r->stream = gw_stream_new ()))
        return r->stream != NULL;
    r->next = r->http->streams;
    r->http->streams = r;
    if (r->prime[0])
        gw_stream_write (r->stream, r->prime, strlen (r->prime));
    gw_request_t *req = r->req;
    r->req = NULL;
    if (r->session_out[0])
        gw_request_set_header (req, "Mcp-Session-Id", r->session_out);
    req->stream = gw_stream_ref (r->stream);
    req->status = 200;
    req->complete (req);
    return true;
}

static void
s_send (gw_mcp_reply_t *base, json_t *message)
{
    s_reply_t *r = (s_reply_t *) base;
    bool response = json_object_get (message, "id") && !json_object_get (message, "method");
    if (!r->stream && response) {
        json_decref (r->response);
        r->response = json_incref (message);
        return;
    }
    if (!r->stream && !(base->can_stream && s_open_stream (r)))
        return;
    char *text = jp_json_dump (message, NULL);
    if (text)
        gw_stream_write_event (r->stream, text);
    free (text);
}

static void
s_end (gw_mcp_reply_t *base)
{
    s_reply_t *r = (s_reply_t *) base;
    if (r->stream) {
        /* the HTTP edge logs the request once the stream has ended */
        gw_stream_close_noted (r->stream, base->log);
        s_unlink_stream (r->http, r);
        gw_stream_unref (&r->stream);
        json_decref (r->response);
        free (r);
        return;
    }
    gw_request_t *req = r->req;
    if (r->session_out[0])
        gw_request_set_header (req, "Mcp-Session-Id", r->session_out);
    snprintf (req->log_extra, sizeof req->log_extra, "%s", base->log);
    int status = base->status ? base->status : 200;
    if (r->response)
        gw_request_reply_json (req, status, r->response);  /* stolen */
    else
        gw_request_reply_json (req, 202, NULL);
    free (r);
}

/* Called every GW_MCP_PROBE_MS while a call waits. A client that takes
 * events gets a stream and a comment (which lets libmicrohttpd find out
 * if the client has gone, and keeps proxies from closing a quiet
 * stream); for one that does not, libmicrohttpd does not watch a
 * suspended connection, so look at the socket for a client that left. */
static void
s_keepalive (gw_mcp_reply_t *base)
{
    s_reply_t *r = (s_reply_t *) base;
    if (r->stream || (base->can_stream && s_open_stream (r)))
        gw_stream_write (r->stream, ":\n\n", 3);
    else if (r->req && gw_request_client_gone (r->req))
        gw_mcp_reply_gone (r->http->mcp, base);     /* ends (and frees) r */
}

/* POST /mcp: one message. */
static void
s_post (gw_mcp_http_t *self, gw_request_t *req)
{
    const char *mcp_session = gw_request_header (req, "Mcp-Session-Id");
    const char *mcp_version = gw_request_header (req, "MCP-Protocol-Version");
    const char *accept = gw_request_header (req, "Accept");
    bool is_initialize = false;
    gw_mcp_is_request (req->body, req->body_len, &is_initialize);
    gw_mcp_client_t *client = NULL;
    /* without an MCP session and not initialize: the stateless era
       (2026-07-28), whose rules the core checks */
    bool stateless = !mcp_session && !is_initialize;
    if (is_initialize && !mcp_session) {
        /* MCP sessions are bounded: idle ones expire (their id is then
           unknown, so the client initializes again), and past the
           tenant's share or the count a new one is refused */
        char why[300];
        if (gw_mcp_clients_admit (self->mcp, req->tenant, jp_time_now_ms (), why,
                                  sizeof why) < 0) {
            gw_request_reply_error (req, GW_E_TOO_MANY_SESSIONS, "%s: end one with DELETE "
                                    "/mcp, or wait for idle ones to expire", why);
            return;
        }
        client = gw_mcp_client_new (self->mcp, req->tenant);
        if (!client) {
            gw_request_reply_error (req, GW_E_INTERNAL, "out of memory");
            return;
        }
    } else if (mcp_session) {
        client = gw_mcp_client_find (self->mcp, mcp_session);
        if (client)
            gw_mcp_client_touch (client);
        if (!client || strcmp (gw_mcp_client_tenant (client), req->tenant) != 0) {
            gw_request_reply_error (req, GW_E_NOT_FOUND,
                                    "unknown or ended MCP session: initialize again");
            return;
        }
        bool known = false;
        for (int i = 0; mcp_version && gw_mcp_versions[i]; i++)
            known = known || strcmp (mcp_version, gw_mcp_versions[i]) == 0;
        if (mcp_version && !known) {
            gw_request_reply_error (req, GW_E_BAD_REQUEST,
                                    "unsupported MCP-Protocol-Version %.40s", mcp_version);
            return;
        }
    }
    s_reply_t *r = calloc (1, sizeof *r);
    if (!r) {
        gw_request_reply_error (req, GW_E_INTERNAL, "out of memory");
        return;
    }
    r->http = self;
    r->req = req;
    snprintf (r->session_out, sizeof r->session_out, "%s",
              is_initialize && client ? gw_mcp_client_id (client) : "");
    bool sse = !is_initialize && accept && strstr (accept, "text/event-stream");
    r->base = (gw_mcp_reply_t) {.send = s_send, .end = s_end, .keepalive = s_keepalive,
        .can_stream = sse};
    /* 2025-11-25 (SEP-1699): prime a stream with an event id and empty
       data, and say how soon to reconnect; older clients would choke on an
       empty event, and 2026-07-28 has no resuming */
    if (client && strcmp (gw_mcp_client_version (client), "2025-11-25") == 0)
        snprintf (r->prime, sizeof r->prime, "id: %s-0\nretry: 1000\ndata: \n\n",
                  gw_mcp_client_id (client));
    /* the session a 2026-07-28 call names (the core checks it against
       session_id) names the answer too, for routers in front of many nodes */
    const char *named = stateless ? gw_request_header (req, "Mcp-Param-Session-Id") : NULL;
    if (named && gw_path_valid_session_id (named))
        gw_request_name_session (req, named);
    gw_mcp_in_t in = {.overrides = &req->overrides, .http = req, .stateless = stateless,
        .tenant = req->tenant};
    gw_mcp_handle_text (self->mcp, client, req->body, req->body_len, &in, &r->base);
}

void
gw_mcp_http_stream_gone (gw_mcp_http_t *self, gw_stream_t *stream)
{
    for (s_reply_t *r = self->streams; r; r = r->next)
        if (r->stream == stream) {
            gw_mcp_reply_gone (self->mcp, &r->base);
            break;
        }
}

void
gw_mcp_http_handle (gw_mcp_http_t *self, gw_request_t *req)
{
    req->route = "/mcp";
    /* Origin and Host were judged for every route in gw_http (gw_origin) */
    if (strcmp (req->method, "POST") == 0)
        s_post (self, req);
    else if (strcmp (req->method, "DELETE") == 0) {
        const char *mcp_session = gw_request_header (req, "Mcp-Session-Id");
        gw_mcp_client_t *client = mcp_session
                                      ? gw_mcp_client_find (self->mcp, mcp_session) : NULL;
        if (!mcp_session)
            gw_request_reply_error (req, GW_E_BAD_REQUEST, "missing Mcp-Session-Id header");
        else if (!client || strcmp (gw_mcp_client_tenant (client), req->tenant) != 0)
            gw_request_reply_error (req, GW_E_NOT_FOUND, "unknown MCP session");
        else {
            gw_mcp_client_end (self->mcp, client);
            gw_request_reply_json (req, 204, NULL);
        }
    } else {
        gw_request_set_header (req, "Allow", "POST, DELETE");
        gw_request_reply_error (req, GW_E_METHOD_NOT_ALLOWED,
                                "this server sends no unsolicited messages: use POST");
    }
}
