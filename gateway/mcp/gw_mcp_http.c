/* gw_mcp_http: MCP's Streamable HTTP transport at /mcp: one JSON-RPC
 * message per POST; Mcp-Session-Id issued at initialize and required
 * after (400 missing, 404 unknown or another tenant's); 202 for
 * notifications and responses; a JSON answer, or Server-Sent Events when
 * the client accepts them and the call streams (tools/call: progress,
 * log messages, then the result); GET is 405; DELETE ends the MCP session;
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
#include "gw_stream.h"
#include "jp_time.h"

typedef struct s_reply s_reply_t;

struct gw_mcp_http {
    gw_server_t *server;
    gw_mcp_t *mcp;
    s_reply_t *streams;         /* replies with an open SSE stream */
};

/* One POST's reply: JSON (the response is kept until end) or SSE. */
struct s_reply {
    gw_mcp_reply_t base;
    gw_mcp_http_t *http;
    gw_request_t *req;          /* JSON mode, until answered */
    gw_stream_t *stream;        /* SSE mode */
    json_t *response;
    char session_out[40];
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

static void
s_json_send (gw_mcp_reply_t *base, json_t *message)
{
    s_reply_t *r = (s_reply_t *) base;
    if (json_object_get (message, "id") && !json_object_get (message, "method")) {
        json_decref (r->response);
        r->response = json_incref (message);
    }
}

static void
s_json_end (gw_mcp_reply_t *base)
{
    s_reply_t *r = (s_reply_t *) base;
    gw_request_t *req = r->req;
    if (r->session_out[0])
        gw_request_set_header (req, "Mcp-Session-Id", r->session_out);
    snprintf (req->log_extra, sizeof req->log_extra, "%s", base->log);
    if (r->response)
        gw_request_reply_json (req, 200, r->response);
    else
        gw_request_reply_json (req, 202, NULL);
    free (r);
}

/* Called every GW_MCP_PROBE_MS while a call waits: a JSON reply cannot
 * write anything before its answer, and libmicrohttpd does not watch a
 * suspended connection, so look at the socket for a client that left. */
static void
s_json_probe (gw_mcp_reply_t *base)
{
    s_reply_t *r = (s_reply_t *) base;
    if (gw_request_client_gone (r->req))
        gw_mcp_reply_gone (r->http->mcp, base);     /* ends (and frees) r */
}

static void
s_sse_send (gw_mcp_reply_t *base, json_t *message)
{
    s_reply_t *r = (s_reply_t *) base;
    char *text = json_dumps (message, JSON_COMPACT);
    if (text)
        gw_stream_write_event (r->stream, text);
    free (text);
}

static void
s_sse_end (gw_mcp_reply_t *base)
{
    s_reply_t *r = (s_reply_t *) base;
    /* the HTTP thread logs the request once the stream has ended */
    gw_stream_close_noted (r->stream, base->log);
    s_unlink_stream (r->http, r);
    gw_stream_unref (&r->stream);
    free (r);
}

/* Called every GW_MCP_PROBE_MS while a call streams: a short comment,
 * which lets libmicrohttpd find out if the client has gone, and keeps
 * proxies from closing a quiet stream. */
static void
s_sse_keepalive (gw_mcp_reply_t *base)
{
    s_reply_t *r = (s_reply_t *) base;
    gw_stream_write (r->stream, ":\n\n", 3);
}

static bool
s_version_supported (const char *v)
{
    for (int i = 0; gw_mcp_versions[i]; i++)
        if (strcmp (v, gw_mcp_versions[i]) == 0)
            return true;
    return false;
}

/* POST /mcp: one message. */
static void
s_post (gw_mcp_http_t *self, gw_request_t *req)
{
    const char *mcp_session = gw_request_header (req, "Mcp-Session-Id");
    const char *mcp_version = gw_request_header (req, "MCP-Protocol-Version");
    const char *accept = gw_request_header (req, "Accept");
    bool is_initialize = false;
    bool is_request = gw_mcp_is_request (req->body, req->body_len, &is_initialize);
    gw_mcp_client_t *client = NULL;
    /* MCP sessions are bounded: idle ones expire (their id is then
       unknown, so the client initializes again), and past the count a new
       one is refused */
    const gw_config_t *config = gw_server_config (self->server);
    int64_t now = jp_time_now_ms ();
    size_t live = gw_mcp_clients_expire (
        self->mcp, now, gw_config_int (config, GW_SET_MCP_SESSION_IDLE_TIMEOUT) * 1000, NULL);
    if (is_initialize) {
        if (live >= (size_t) gw_config_int (config, GW_SET_MAX_MCP_SESSIONS)) {
            gw_request_reply_error (req, GW_E_TOO_MANY_SESSIONS, "too many MCP sessions (%zu, "
                                    "CODEBOX_MAX_MCP_SESSIONS): end one with DELETE /mcp, "
                                    "or wait for idle ones to expire", live);
            return;
        }
        client = gw_mcp_client_new (self->mcp, req->tenant);
        if (!client) {
            gw_request_reply_error (req, GW_E_INTERNAL, "out of memory");
            return;
        }
    } else if (!mcp_session) {
        gw_request_reply_error (req, GW_E_BAD_REQUEST,
                                "missing Mcp-Session-Id header: initialize first");
        return;
    } else {
        client = gw_mcp_client_find (self->mcp, mcp_session);
        if (client)
            gw_mcp_client_touch (client);
        if (!client || strcmp (gw_mcp_client_tenant (client), req->tenant) != 0) {
            gw_request_reply_error (req, GW_E_NOT_FOUND,
                                    "unknown or ended MCP session: initialize again");
            return;
        }
        if (mcp_version && !s_version_supported (mcp_version)) {
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
    snprintf (r->session_out, sizeof r->session_out, "%s",
              is_initialize ? gw_mcp_client_id (client) : "");
    bool sse = is_request && !is_initialize && accept
               && strstr (accept, "text/event-stream")
               && strstr (req->body, "\"tools/call\"");
    if (sse && (r->stream = gw_stream_new ())) {
        r->base = (gw_mcp_reply_t) {.send = s_sse_send, .end = s_sse_end,
            .keepalive = s_sse_keepalive, .can_stream = true};
        r->next = self->streams;
        self->streams = r;
        /* 2025-11-25 (SEP-1699): prime the stream with an event id and
           empty data, and say how soon to reconnect; older clients would
           choke on an empty event */
        if (strcmp (gw_mcp_client_version (client), "2025-11-25") == 0) {
            char prime[96];
            int n = snprintf (prime, sizeof prime, "id: %s-0\nretry: 1000\ndata: \n\n",
                              gw_mcp_client_id (client));
            gw_stream_write (r->stream, prime, (size_t) n);
        }
        /* answer the HTTP request now: the events follow on the stream */
        req->stream = gw_stream_ref (r->stream);
        req->status = 200;
        req->complete (req);
    } else {
        r->base = (gw_mcp_reply_t) {.send = s_json_send, .end = s_json_end,
            .keepalive = s_json_probe, .can_stream = false};
        r->req = req;
    }
    gw_mcp_handle_text (self->mcp, client, req->body, req->body_len, &req->overrides, &r->base);
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
