/* gw_http_request: a request as libmicrohttpd delivers it, made into a
 * gw_request_t: the method, path, query arguments and headers (credentials
 * stay here), then the checks that answer it without the loop, in order:
 * Host and Origin (gw_origin; CORS for an allowed other origin), a CORS
 * preflight, the bearer token (or ?token= on a websocket handshake), the
 * X-Codebox-* limits (or Code Box's names of them), the route and its methods (gw_routes), the body's
 * declared size; and the body, kept in memory under a limit or written to
 * the request's upload as it arrives. See gw_http_request.h.
 *
 * Threads: the loop thread (inside gw_http_run). */
#include "gw_http_request.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gw_routes.h"
#include "jp_time.h"

#define MAX_JSON_BODY (16u << 20)
#define MAX_FILE_BODY (256u << 20)
#define S_TOKEN_MAX 8192        /* a ?token= on a websocket handshake (a JWT may be long) */

/* Parses one X-Codebox-* limit header: 0 if absent, -1 if malformed. */
static long
s_override (struct MHD_Connection *mc, const char *name)
{
    const char *v = MHD_lookup_connection_value (mc, MHD_HEADER_KIND, name);
    if (!v)
        return 0;
    char *end;
    errno = 0;
    long n = strtol (v, &end, 10);
    if (errno || end == v || *end || n <= 0 || v[0] == '+' || v[0] == ' ')
        return -1;
    return n;
}

/* Copies one request header into the request (libmicrohttpd's iterator);
 * credentials stay in the HTTP edge, and past GW_REQUEST_HEADERS_MAX
 * bytes the rest are dropped. */
static enum MHD_Result
s_copy_header (void *cls, enum MHD_ValueKind kind, const char *name, const char *value)
{
    (void) kind;
    gw_request_t *req = cls;
    if (!name || !value || strcasecmp (name, "Authorization") == 0
        || strcasecmp (name, "Cookie") == 0)
        return MHD_YES;
    gw_request_headers_add (&req->headers, &req->headers_len, GW_REQUEST_HEADERS_MAX, name,
                            value);
    return MHD_YES;
}

/* Copies one query argument into the request (libmicrohttpd's iterator;
 * an argument without a value counts as ""). */
static enum MHD_Result
s_copy_argument (void *cls, enum MHD_ValueKind kind, const char *name, const char *value)
{
    (void) kind;
    gw_request_t *req = cls;
    if (name && strcmp (name, "token") != 0)    /* a credential stays here */
        gw_request_headers_add (&req->query, &req->query_len, GW_REQUEST_HEADERS_MAX, name,
                                value ? value : "");
    return MHD_YES;
}

void
gw_http_request_read (gw_http_conn_t *c, const char *url, const char *method,
                      const gw_auth_t *auth, const gw_origin_t *origins)
{
    struct MHD_Connection *mc = c->connection;
    snprintf (c->req.method, sizeof c->req.method, "%s", method);
    c->req.path = strdup (url);
    MHD_get_connection_values (mc, MHD_GET_ARGUMENT_KIND, s_copy_argument, &c->req);
    MHD_get_connection_values (mc, MHD_HEADER_KIND, s_copy_header, &c->req);
    c->body_limit = strcmp (method, "PUT") == 0 ? MAX_FILE_BODY : MAX_JSON_BODY;

    /* the browser boundary first: a page's cross-origin or rebound
       request goes no further, whatever else it carries */
    if (origins) {
        const char *origin = gw_request_header (&c->req, "Origin");
        gw_origin_verdict_t verdict = gw_origin_check (origins,
                                                       gw_request_header (&c->req, "Host"),
                                                       origin, c->early_message,
                                                       sizeof c->early_message);
        if (verdict == GW_ORIGIN_REFUSED) {
            c->early = GW_E_FORBIDDEN;
            return;
        }
        if (verdict == GW_ORIGIN_CORS)
            snprintf (c->cors_origin, sizeof c->cors_origin, "%s", origin);
    }
    /* a CORS preflight carries no credentials: answered here */
    if (strcmp (method, "OPTIONS") == 0) {
        c->allow = gw_routes_allow (url);
        if (!c->allow) {
            c->early = GW_E_NOT_FOUND;
            snprintf (c->early_message, sizeof c->early_message, "no route %s %.160s", method,
                      url);
            return;
        }
        c->preflight = true;
        c->req.status = 204;
        return;
    }

    const char *authorization = MHD_lookup_connection_value (mc, MHD_HEADER_KIND,
                                                             "Authorization");
    /* a browser cannot set headers on a websocket: ?token=T there, as
       Jupyter's clients send it (only on a websocket handshake) */
    char from_query[S_TOKEN_MAX + 8];
    const char *query_token = MHD_lookup_connection_value (mc, MHD_GET_ARGUMENT_KIND, "token");
    const char *upgrade = MHD_lookup_connection_value (mc, MHD_HEADER_KIND, "Upgrade");
    if (!authorization && query_token && upgrade && strcasecmp (upgrade, "websocket") == 0
        && strlen (query_token) < S_TOKEN_MAX) {
        snprintf (from_query, sizeof from_query, "Bearer %s", query_token);
        authorization = from_query;
    }
    /* signed artifact links carry their own signature (gw_signed_url) */
    bool public = strcmp (url, "/healthz") == 0 || strncmp (url, "/signed/", 8) == 0
                  || gw_oauth_metadata_path (url);
    if (!public && !gw_auth_check (auth, authorization, c->req.tenant, sizeof c->req.tenant,
                                   c->challenge, sizeof c->challenge)) {
        c->early = GW_E_UNAUTHORIZED;
        snprintf (c->early_message, sizeof c->early_message,
                  gw_auth_oauth (auth) ? "missing or refused token: send Authorization: Bearer "
                                         "TOKEN (an access token of the issuer the "
                                         "WWW-Authenticate header's resource_metadata names)"
                                       : "missing or wrong token: send Authorization: Bearer "
                                         "TOKEN");
        return;
    }
    /* ours, and Code Box's name of each when ours is absent (its
       clients send them, with the same meaning and clamping) */
    static const struct {
        const char *header, *code_box;
        size_t offset;
    } overrides[] = {
        {"X-Codebox-Exec-Timeout", "X-Exec-Timeout", offsetof (gw_overrides_t, exec_timeout)},
        {"X-Codebox-Session-Ttl", "X-Session-Ttl", offsetof (gw_overrides_t, session_ttl)},
        {"X-Codebox-Idle-Timeout", "X-Idle-Timeout", offsetof (gw_overrides_t, idle_timeout)},
        {"X-Codebox-Max-Download-Size", "X-Max-Download-Size",
         offsetof (gw_overrides_t, max_download_size)},
        {"X-Codebox-Sql-Max-Inline-Rows", "X-Sql-Max-Inline-Rows",
         offsetof (gw_overrides_t, sql_max_inline_rows)},
    };
    for (size_t i = 0; i < sizeof overrides / sizeof overrides[0]; i++) {
        const char *header = overrides[i].header;
        if (!MHD_lookup_connection_value (mc, MHD_HEADER_KIND, header))
            header = overrides[i].code_box;
        long v = s_override (mc, header);
        if (v < 0) {
            c->early = GW_E_BAD_REQUEST;
            snprintf (c->early_message, sizeof c->early_message,
                      "%s must be a positive integer", header);
            return;
        }
        *(long *) ((char *) &c->req.overrides + overrides[i].offset) = v;
    }
    /* the route and its methods, from the request line alone */
    const char *allow = gw_routes_allow (url);
    if (!allow) {
        c->early = GW_E_NOT_FOUND;
        snprintf (c->early_message, sizeof c->early_message, "no route %s %.160s", method, url);
        return;
    }
    if (!gw_routes_allows (allow, method)) {
        c->early = GW_E_METHOD_NOT_ALLOWED;
        c->allow = allow;
        snprintf (c->early_message, sizeof c->early_message, "%s is not allowed on %.120s "
                  "(allowed: %s)", method, url, allow);
        return;
    }
    /* HEAD is GET without the body (libmicrohttpd leaves the body out) */
    if (strcmp (method, "HEAD") == 0)
        snprintf (c->req.method, sizeof c->req.method, "GET");
    const char *length = MHD_lookup_connection_value (mc, MHD_HEADER_KIND, "Content-Length");
    if (length && strtoull (length, NULL, 10) > c->body_limit)
        c->too_large = true;
    c->to_file = strcmp (method, "PUT") == 0 && gw_routes_body_to_file (url);
}

/* Appends a body chunk, refusing more than the limit. */
void
gw_http_conn_append (gw_http_conn_t *c, const char *data, size_t size)
{
    if (c->too_large || c->req.body_len + size > c->body_limit) {
        c->too_large = true;
        return;
    }
    if (c->req.body_len + size + 1 > c->body_cap) {
        size_t cap = (c->req.body_len + size + 1) * 2;
        if (cap > c->body_limit + 1)
            cap = c->body_limit + 1;
        char *grown = realloc (c->req.body, cap);
        if (!grown) {
            c->too_large = true;
            return;
        }
        c->req.body = grown;
        c->body_cap = cap;
    }
    memcpy (c->req.body + c->req.body_len, data, size);
    c->req.body_len += size;
    c->req.body[c->req.body_len] = '\0';
}

/* Writes a body chunk to the request's upload (a body that goes to a
 * file). A write that fails, or passes the room the loop gave, fails the
 * upload and removes its file; the rest of the body is read and dropped
 * (libmicrohttpd 0.9.75 queues no answer while a body is being received)
 * and the loop answers the upload's error. Past the HTTP edge's own bound
 * the upload goes and the answer is a 413 from here. */
void
gw_http_conn_write (gw_http_conn_t *c, const char *data, size_t size)
{
    c->body_seen += size;
    c->body_ms = jp_time_now_ms ();
    if (c->too_large)
        return;
    if (c->body_seen > c->body_limit) {
        c->too_large = true;
        gw_upload_destroy (&c->req.upload);
        return;
    }
    if (c->req.upload)
        gw_upload_write (c->req.upload, data, size);
}
