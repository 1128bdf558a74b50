/* gw_router: the route table's handlers, and the way in from gw_http.
 * Threads: the loop thread (post and gone inside gw_http_run). */
#include "gw_router.h"

#include <stdlib.h>
#include <string.h>

#include "gw_rest.h"
#include "gw_rest_events.h"
#include "gw_routes.h"
#include "gw_signed_url.h"

struct gw_router {
    gw_server_t *server;
    gw_mcp_http_t *mcp_http;
    gw_mcp_sse_t *mcp_sse;
    gw_jupyter_t *jupyter;
    gw_rest_events_t *rest_events;
};

typedef void (s_route_fn) (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m);

/* /healthz: the HTTP edge answers it at once, so this serves the other
 * callers of gw_router_handle (fuzz_mcp routes REST inputs through it) */
static void
s_healthz (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    (void) self;
    (void) m;
    gw_request_reply_json (req, 200, json_pack ("{s:s}", "status", "ok"));
}

/* The protected-resource metadata: the HTTP edge answers it (it holds the
 * issuer's settings); another caller of gw_router_handle gets a 404. */
static void
s_oauth_resource (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    (void) self;
    (void) m;
    gw_request_reply_error (req, GW_E_NOT_FOUND, "no OAuth issuer is set here");
}

static void
s_oauth_resource_mcp (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    s_oauth_resource (self, req, m);
}

static void
s_metrics (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    (void) m;
    gw_rest_metrics (self->server, req);
}

static void
s_kernelspecs (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    (void) m;
    gw_rest_kernelspecs (self->server, req, NULL);
}

static void
s_kernelspec_file (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    gw_rest_kernelspec_file (self->server, req, m->params[0], m->params[1]);
}

static void
s_api (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    (void) m;
    gw_rest_api_version (self->server, req);
}

static void
s_api_kernelspecs (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    (void) m;
    gw_rest_kernelspecs (self->server, req, NULL);
}

static void
s_api_kernelspec (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    gw_rest_kernelspecs (self->server, req, m->params[0]);
}

static void
s_sessions (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    (void) m;
    gw_rest_sessions (self->server, req);
}

static void
s_session (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    gw_rest_session (self->server, req, m->params[0]);
}

static void
s_artifacts (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    gw_rest_artifacts (self->server, req, m->params[0]);
}

static void
s_files (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    gw_rest_files (self->server, req, m->params[0], m->params[1]);
}

static void
s_notebook (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    gw_rest_notebook (self->server, req, m->params[0]);
}

static void
s_archive (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    gw_rest_archive (self->server, req, m->params[0]);
}

static void
s_replay (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    gw_rest_replay (self->server, req, m->params[0]);
}

static void
s_volumes (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    (void) m;
    gw_rest_volumes (self->server, req);
}

static void
s_volume (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    gw_rest_volume (self->server, req, m->params[0]);
}

static void
s_volume_files (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    gw_rest_volume_files (self->server, req, m->params[0], m->params[1]);
}

static void
s_execute (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    (void) m;
    gw_rest_execute (self->server, req);
}

static void
s_events (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    if (self->rest_events)
        gw_rest_events_handle (self->rest_events, req, m->params[0]);
    else
        gw_request_reply_error (req, GW_E_NOT_FOUND, "event streams are not served here");
}

static void
s_status (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    gw_rest_execution_status (self->server, req, m->params[0]);
}

static void
s_results (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    gw_rest_execution_results (self->server, req, m->params[0]);
}

static void
s_cancel (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    gw_rest_execution_cancel (self->server, req, m->params[0]);
}

static void
s_sql (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    (void) m;
    gw_sql_rest_handle (self->server, req);
}

static void
s_signed (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    (void) m;
    gw_signed_url_handle (self->server, req);
}

/* True for a GET /mcp of the 2024-11-05 HTTP+SSE transport: an event
 * stream asked for without an MCP session (Streamable HTTP's own GET names
 * its session). The MCP specification's backwards-compatibility section
 * lets a server serve both at one URL; clients such as AutoGen's
 * SseServerParams point the old transport at /mcp. */
static bool
s_old_sse (const gw_request_t *req)
{
    const char *accept = gw_request_header (req, "Accept");
    return strcmp (req->method, "GET") == 0 && !gw_request_header (req, "Mcp-Session-Id")
           && accept && strstr (accept, "text/event-stream");
}

static void
s_mcp (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    (void) m;
    if (self->mcp_sse && s_old_sse (req))
        gw_mcp_sse_handle (self->mcp_sse, req, false);
    else if (self->mcp_http)
        gw_mcp_http_handle (self->mcp_http, req);
    else
        gw_request_reply_error (req, GW_E_NOT_FOUND, "MCP is not served here");
}

static void
s_sse (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    (void) m;
    if (self->mcp_sse)
        gw_mcp_sse_handle (self->mcp_sse, req, false);
    else
        gw_request_reply_error (req, GW_E_NOT_FOUND, "MCP is not served here");
}

static void
s_messages (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    (void) m;
    if (self->mcp_sse)
        gw_mcp_sse_handle (self->mcp_sse, req, true);
    else
        gw_request_reply_error (req, GW_E_NOT_FOUND, "MCP is not served here");
}

static void
s_api_kernels (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    (void) m;
    gw_jupyter_kernels (self->jupyter, req);
}

static void
s_api_kernel (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    gw_jupyter_kernel (self->jupyter, req, m->params[0]);
}

static void
s_api_channels (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    gw_jupyter_channels (self->jupyter, req, m->params[0]);
}

static void
s_api_interrupt (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    gw_jupyter_kernel_interrupt (self->jupyter, req, m->params[0]);
}

static void
s_api_restart (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    gw_jupyter_kernel_restart (self->jupyter, req, m->params[0]);
}

static void
s_api_sessions (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    (void) m;
    gw_jupyter_sessions (self->jupyter, req, NULL);
}

static void
s_api_session (gw_router_t *self, gw_request_t *req, const gw_route_match_t *m)
{
    gw_jupyter_sessions (self->jupyter, req, m->params[0]);
}

static s_route_fn *const s_handlers[GW_ROUTE_COUNT] = {
#define GW_ROUTE_HANDLER(name, methods, pattern, label, body) [GW_ROUTE_##name] = s_##name,
    GW_ROUTE_TABLE (GW_ROUTE_HANDLER)
#undef GW_ROUTE_HANDLER
};

gw_router_t *
gw_router_new (gw_server_t *server, gw_mcp_http_t *mcp_http, gw_mcp_sse_t *mcp_sse,
                gw_jupyter_t *jupyter, gw_rest_events_t *rest_events)
{
    gw_router_t *self = calloc (1, sizeof *self);
    if (self)
        *self = (gw_router_t) {server, mcp_http, mcp_sse, jupyter, rest_events};
    return self;
}

void
gw_router_destroy (gw_router_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free (*self_p);
    *self_p = NULL;
}

void
gw_router_handle (gw_server_t *server, gw_request_t *req, void *router)
{
    (void) server;
    gw_router_t *self = router;
    const char *path = req->path ? req->path : "/";
    size_t len = strlen (path) + 1;
    char *buf = malloc (len);
    gw_route_match_t m;
    req->route = "other";
    if (!buf)
        gw_request_reply_error (req, GW_E_INTERNAL, "out of memory");
    else if (!gw_routes_match (path, buf, len, &m) || !gw_routes_allows (m.allow, req->method))
        /* the HTTP edge refuses these first; this is for other callers */
        gw_request_reply_error (req, GW_E_NOT_FOUND, "no route %s %s", req->method, path);
    else {
        req->route = m.label;
        s_handlers[m.id](self, req, &m);
    }
    free (buf);
}

void
gw_router_post (gw_request_t *req, void *router)
{
    gw_server_post (req, ((gw_router_t *) router)->server);
}

typedef struct {
    gw_router_t *router;
    gw_stream_t *stream;
} s_gone_t;

static void
s_gone_in_loop (gw_server_t *server, void *arg)
{
    (void) server;
    s_gone_t *gone = arg;
    if (gone->router->mcp_http)
        gw_mcp_http_stream_gone (gone->router->mcp_http, gone->stream);
    if (gone->router->mcp_sse)
        gw_mcp_sse_stream_gone (gone->router->mcp_sse, gone->stream);
    if (gone->router->rest_events)
        gw_rest_events_stream_gone (gone->router->rest_events, gone->stream);
    gw_stream_unref (&gone->stream);
    free (gone);
}

void
gw_router_gone (gw_stream_t *stream, void *router)
{
    gw_router_t *self = router;
    s_gone_t *gone = malloc (sizeof *gone);
    if (!gone)
        return;
    *gone = (s_gone_t) {self, gw_stream_ref (stream)};
    if (gw_server_call (self->server, s_gone_in_loop, gone) != 0) {
        gw_stream_unref (&gone->stream);
        free (gone);
    }
}
