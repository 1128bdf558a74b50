/* gw_http: the HTTP front end on libmicrohttpd, run by the loop thread
 * (libmicrohttpd's epoll set is one of the loop's poll items, and the loop
 * calls gw_http_run when it is readable and after every turn, so answers
 * completed in that turn go out in it). It reads each request and its
 * body under a size limit, checks the bearer token, parses the
 * X-Codebox-* overrides, then suspends the connection and posts the
 * request to the loop's mailbox; the completion resumes the connection and
 * the next gw_http_run sends the answer. /healthz is answered at once.
 * A PUT to a route whose body goes to a file (gw_routes' body column) is
 * posted before its body is read: the loop refuses it (nothing is read)
 * or gives an upload (gw_upload), which each piece of the body is written
 * to as it arrives; the request is posted again once it is all there.
 * One log line per request. No thread of its own: a request costs no
 * hand-off between threads (a thread pool cost one each way, about 95 us
 * of a REST execution's two requests here; docs/PERFORMANCE.md).
 *
 * Threads: the loop thread runs everything here; gw_http_destroy (after
 * the loop ends) runs libmicrohttpd itself while it drains. */
#include "gw_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "gw_conns.h"
#include "gw_routes.h"
#include "gw_stream.h"
#include "jp_json.h"
#include "jp_time.h"
#include "jp_log.h"

#define MAX_JSON_BODY (16u << 20)
#define MAX_FILE_BODY (256u << 20)
#define S_DRAIN_MS 3000         /* how long shutdown waits for answers to go out */
#define S_SMALL_ANSWER (64u << 10)          /* always answered */
#define S_ANSWERS_HELD ((size_t) 1 << 30)   /* bodies in memory not yet sent, in all */
#define S_LOOK_MS 1000          /* how often a body that stalled is looked at */

typedef struct s_conn s_conn_t;

struct gw_http {
    struct MHD_Daemon *daemon;
    gw_http_post_fn *post;
    gw_http_gone_fn *gone;
    void *post_arg;
    const gw_auth_t *auth;
    const gw_origin_t *origin;  /* Host and Origin rules (gw_origin) */
    gw_metrics_t *metrics;
    int port;
    atomic_int unsent;          /* answered by the loop, not yet sent */
    atomic_bool resumed;        /* a connection was resumed since the last run */
    atomic_size_t held;         /* bytes of answer bodies in memory, not yet sent */
    gw_http_state_fn *draining; /* /healthz asks it (any thread), or NULL */
    void *draining_arg;
    gw_conns_t *conns;          /* request deadlines, the fair per-address bound */
    s_conn_t *receiving;        /* connections writing a body to a file */
    int64_t next_look_ms;       /* when those that stalled are looked at next */
};

/* A 101 answer's hand-over, shared by the connection (which may end
 * first) and libmicrohttpd's upgrade callback: whichever claims it first
 * decides; the second frees it. */
typedef struct {
    gw_request_upgrade_fn *fn;
    void *arg;
    gw_http_t *http;
    atomic_bool claimed;
    atomic_int refs;
} s_upgrade_t;

/* A switched connection's handle for its owner's close. */
typedef struct {
    struct MHD_UpgradeResponseHandle *urh;
    gw_http_t *http;
} s_upgraded_handle_t;

static void
s_upgrade_release (s_upgrade_t *up)
{
    if (atomic_fetch_sub (&up->refs, 1) == 1)
        free (up);
}

/* One connection's request: libmicrohttpd's, and (while posted) the
 * request's handler's. */
struct s_conn {
    gw_request_t req;
    gw_http_t *http;
    struct MHD_Connection *connection;
    size_t body_cap;
    size_t body_limit;
    bool too_large;
    bool posted;
    atomic_bool done;
    gw_error_t early;           /* an answer decided before the loop */
    char early_message[320];
    char cors_origin[300];      /* an allowed other origin: CORS headers */
    const char *allow;          /* the route's methods for a 405 or a preflight (static) */
    bool preflight;             /* an OPTIONS preflight, answered here */
    int64_t started_ms;
    s_upgrade_t *upgrade;       /* a 101 answer's hand-over, or NULL */
    bool to_file;               /* the body goes to req.upload as it arrives */
    bool again;                 /* resumed with an upload: libmicrohttpd calls the
                                   first call again, then reads the body */
    uint64_t body_seen;         /* bytes of a body going to a file */
    int64_t body_ms;            /* when the last of it came */
    s_conn_t *prev, *next;      /* in http->receiving while it comes */
    bool listed;
};

/* Lists a connection whose body is being written to a file. */
static void
s_receiving_add (s_conn_t *c)
{
    gw_http_t *http = c->http;
    c->prev = NULL;
    c->next = http->receiving;
    if (http->receiving)
        http->receiving->prev = c;
    http->receiving = c;
    c->listed = true;
    c->body_ms = jp_time_now_ms ();
    if (!c->next)
        http->next_look_ms = c->body_ms + S_LOOK_MS;
}

static void
s_receiving_remove (s_conn_t *c)
{
    if (!c->listed)
        return;
    if (c->prev)
        c->prev->next = c->next;
    else
        c->http->receiving = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
    c->listed = false;
}

/* Looks at the connections whose body stalled for S_LOOK_MS: a client that
 * left is made known to libmicrohttpd. Its epoll set is edge-triggered and
 * it takes a short read as "nothing more for now", so an end that came
 * with the last bytes it read is seen only at the idle timeout; shutting
 * the read side wakes it, and its next read sees the end and closes the
 * connection (its upload's file goes with it, in s_completed). */
static void
s_look_at_receiving (gw_http_t *http, int64_t now)
{
    for (s_conn_t *c = http->receiving; c; c = c->next)
        if (now - c->body_ms >= S_LOOK_MS && gw_request_client_gone (&c->req)) {
            jp_log_debug ("http event=client-gone path=%s why=\"left mid-body\"", c->req.path);
            shutdown (c->req.client_fd, SHUT_RD);
        }
    http->next_look_ms = now + S_LOOK_MS;
}

/* A connection was resumed: the turn's end runs libmicrohttpd (a resume
 * does not wake its epoll set). */
static void
s_note_resume (void *arg)
{
    gw_http_t *http = arg;
    atomic_store (&http->resumed, true);
}

/* Called by the loop thread when the answer is set: wakes the connection
 * (sent by the next gw_http_run). */
static void
s_complete (gw_request_t *req)
{
    s_conn_t *c = req->transport;
    if (req->body_at == GW_BODY_AHEAD && req->upload && !req->status) {
        /* not an answer: the body may come now (gw_request_read_body_into) */
        c->posted = false;
        c->again = true;
        s_receiving_add (c);
        MHD_resume_connection (c->connection);
        s_note_resume (c->http);
        return;
    }
    atomic_fetch_add (&c->http->unsent, 1);
    atomic_store (&c->done, true);
    MHD_resume_connection (c->connection);
    s_note_resume (c->http);
}

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

/* Feeds a streamed body from its gw_stream (in gw_http_run). */
static ssize_t
s_stream_reader (void *cls, uint64_t pos, char *buf, size_t max)
{
    (void) pos;
    ssize_t n = gw_stream_read (cls, buf, max);
    return n == -2 ? MHD_CONTENT_READER_END_WITH_ERROR
         : n < 0   ? MHD_CONTENT_READER_END_OF_STREAM : n;
}

static void
s_stream_free (void *cls)
{
    gw_stream_t *stream = cls;
    gw_stream_unref (&stream);
}

/* Closes a switched connection: libmicrohttpd closes its socket in its
 * next run, which the turn's end does (the close resumes the connection). */
static void
s_upgrade_close (void *handle)
{
    s_upgraded_handle_t *h = handle;
    MHD_upgrade_action (h->urh, MHD_UPGRADE_ACTION_CLOSE);
    s_note_resume (h->http);
    free (h);
}

/* libmicrohttpd switched the connection (its thread): hands it over. */
static void
s_upgraded (void *cls, struct MHD_Connection *connection, void *con_cls, const char *extra_in,
            size_t extra_in_size, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh)
{
    (void) connection;
    (void) con_cls;
    s_upgrade_t *up = cls;
    gw_upgraded_t *conn = NULL;
    if (!atomic_exchange (&up->claimed, true)) {
        conn = calloc (1, sizeof *conn);
        s_upgraded_handle_t *handle = conn ? malloc (sizeof *handle) : NULL;
        if (conn && (!handle || (extra_in_size && !(conn->extra = malloc (extra_in_size))))) {
            free (handle);
            free (conn);
            conn = NULL;
        }
        if (conn) {
            *handle = (s_upgraded_handle_t) {urh, up->http};
            conn->fd = sock;
            if (extra_in_size)
                memcpy (conn->extra, extra_in, extra_in_size);
            conn->extra_len = extra_in_size;
            conn->handle = handle;
            conn->close = s_upgrade_close;
        }
        up->fn (conn, up->arg);
    }
    if (!conn) {
        MHD_upgrade_action (urh, MHD_UPGRADE_ACTION_CLOSE);
        s_note_resume (up->http);
    }
    s_upgrade_release (up);
}

/* The 101 answer that hands the connection to req->upgrade. */
static struct MHD_Response *
s_upgrade_response (s_conn_t *c)
{
    s_upgrade_t *up = calloc (1, sizeof *up);
    if (!up)
        return NULL;
    up->fn = c->req.upgrade;
    up->arg = c->req.upgrade_arg;
    up->http = c->http;
    atomic_init (&up->refs, 2);     /* the connection's and the callback's */
    struct MHD_Response *response = MHD_create_response_for_upgrade (s_upgraded, up);
    if (!response) {
        free (up);
        return NULL;
    }
    c->upgrade = up;
    MHD_add_response_header (response, "Upgrade", "websocket");
    return response;
}

/* An answer body in memory, counted in the HTTP edge's held bytes until
 * libmicrohttpd lets it go (sent, or the connection ended). */
typedef struct {
    gw_http_t *http;
    void *body;
    size_t len;
} s_held_t;

static void
s_held_free (void *cls)
{
    s_held_t *h = cls;
    atomic_fetch_sub (&h->http->held, h->len);
    free (h->body);
    free (h);
}

/* A response for len bytes of body (taken), counted while held; NULL when
 * out of memory (body freed) or when the answers already held leave no
 * room for it (body freed, *busy set): clients that fetch large answers
 * without reading them cannot pile copies up without end. */
static struct MHD_Response *
s_held_response (gw_http_t *http, void *body, size_t len, bool *busy)
{
    /* only the loop thread adds; a free may only lower the count meanwhile */
    if (len > S_SMALL_ANSWER && atomic_load (&http->held) + len > S_ANSWERS_HELD) {
        *busy = true;
        free (body);
        return NULL;
    }
    s_held_t *h = malloc (sizeof *h);
    if (h)
        *h = (s_held_t) {http, body, len};
    struct MHD_Response *response =
        h ? MHD_create_response_from_buffer_with_free_callback_cls (len, body, s_held_free, h)
          : NULL;
    if (!response) {
        free (h);
        free (body);
        return NULL;
    }
    atomic_fetch_add (&http->held, len);
    return response;
}

/* Builds and queues the HTTP answer for the request. */
static enum MHD_Result
s_send (s_conn_t *c)
{
    gw_request_t *req = &c->req;
    struct MHD_Response *response;
    bool busy = false;
    if (req->status == 101 && req->upgrade) {
        response = s_upgrade_response (c);
    } else if (req->stream) {
        gw_stream_t *stream = gw_stream_ref (req->stream);
        gw_stream_attach (stream, c->connection, s_note_resume, c->http);
        response = MHD_create_response_from_callback (MHD_SIZE_UNKNOWN, 32 * 1024,
                                                      s_stream_reader, stream, s_stream_free);
        if (!response) {
            gw_stream_unref (&stream);
            return MHD_NO;
        }
        MHD_add_response_header (response, "Content-Type", "text/event-stream");
        MHD_add_response_header (response, "Cache-Control", "no-cache");
        MHD_add_response_header (response, "X-Accel-Buffering", "no");
    } else if (req->has_file) {
        /* libmicrohttpd reads (sendfile) and closes the file as it sends */
        response = MHD_create_response_from_fd64 (req->file_size, req->file_fd);
        if (response)
            req->has_file = false;
        MHD_add_response_header (response, "Content-Type",
                                 req->content_type ? req->content_type
                                                   : "application/octet-stream");
    } else if (req->raw) {
        response = s_held_response (c->http, req->raw, req->raw_len, &busy);
        req->raw = NULL;
        if (response)
            MHD_add_response_header (response, "Content-Type",
                                     req->content_type ? req->content_type
                                                       : "application/octet-stream");
    } else if (req->json && req->status != 204) {
        size_t len = 0;
        char *text = jp_json_dump (req->json, &len);
        if (text) {
            char *with_nl = realloc (text, len + 2);
            if (with_nl) {
                text = with_nl;
                text[len] = '\n';
                text[len + 1] = '\0';
                len++;
            }
        }
        response = text ? s_held_response (c->http, text, len, &busy)
                        : MHD_create_response_from_buffer (0, (void *) "",
                                                           MHD_RESPMEM_PERSISTENT);
        if (response)
            MHD_add_response_header (response, "Content-Type", "application/json");
    } else
        response = MHD_create_response_from_buffer (0, (void *) "", MHD_RESPMEM_PERSISTENT);
    if (busy) {
        static const char s_busy[] =
            "{\"error\":{\"code\":\"busy\",\"message\":\"the gateway holds as many large "
            "answers as it may until clients read them; retry shortly\"}}\n";
        jp_log_info ("http event=busy why=\"answers held in memory at their bound\"");
        response = MHD_create_response_from_buffer (sizeof s_busy - 1, (void *) s_busy,
                                                    MHD_RESPMEM_PERSISTENT);
        MHD_add_response_header (response, "Content-Type", "application/json");
        MHD_add_response_header (response, "Retry-After", "2");
        req->status = 503;
    }
    if (!response)
        return MHD_NO;
    if (req->status == 401)
        MHD_add_response_header (response, "WWW-Authenticate", "Bearer");
    for (size_t at = 0; at < req->reply_headers_len;) {
        const char *name = req->reply_headers + at;
        const char *value = name + strlen (name) + 1;
        MHD_add_response_header (response, name, value);
        at = (size_t) (value - req->reply_headers) + strlen (value) + 1;
    }
    if (c->allow && !c->preflight)
        MHD_add_response_header (response, "Allow", c->allow);
    if (c->cors_origin[0]) {
        MHD_add_response_header (response, "Access-Control-Allow-Origin", c->cors_origin);
        MHD_add_response_header (response, "Vary", "Origin");
        MHD_add_response_header (response, "Access-Control-Expose-Headers",
                                 "Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate, "
                                 "Allow, X-Codebox-Session");
    }
    if (c->preflight) {
        MHD_add_response_header (response, "Access-Control-Allow-Methods", c->allow);
        MHD_add_response_header (response, "Access-Control-Allow-Headers",
                                 "Authorization, Content-Type, Accept, Mcp-Session-Id, "
                                 "MCP-Protocol-Version, Mcp-Method, Mcp-Name, "
                                 "Mcp-Param-Session-Id, Last-Event-ID, X-Codebox-Session, "
                                 "X-Codebox-Exec-Timeout, X-Codebox-Session-Ttl, "
                                 "X-Codebox-Idle-Timeout, X-Codebox-Max-Download-Size, "
                                 "X-Codebox-Sql-Max-Inline-Rows");
        MHD_add_response_header (response, "Access-Control-Max-Age", "600");
    }
    if (!req->stream && req->status != 101)
        MHD_add_response_header (response, "Cache-Control", "no-store");
    enum MHD_Result rc = MHD_queue_response (c->connection, (unsigned) req->status, response);
    MHD_destroy_response (response);
    return rc;
}

/* Answers an error decided in this thread (bad header, too large...). */
static enum MHD_Result
s_send_error (s_conn_t *c, gw_error_t e, const char *message)
{
    c->req.status = gw_error_http_status (e);
    json_decref (c->req.json);
    c->req.json = json_pack ("{s:{s:s, s:s}}", "error", "code", gw_error_code (e),
                             "message", message);
    return s_send (c);
}

/* Answers 413 for a body over the limit. */
static enum MHD_Result
s_send_too_large (s_conn_t *c)
{
    char message[128];
    snprintf (message, sizeof message, "the body is larger than %zu MiB", c->body_limit >> 20);
    return s_send_error (c, GW_E_TOO_LARGE, message);
}

/* First call for a connection: builds the request from the headers. */
static s_conn_t *
s_conn_new (gw_http_t *http, struct MHD_Connection *mc, const char *url, const char *method)
{
    s_conn_t *c = calloc (1, sizeof *c);
    if (!c)
        return NULL;
    c->http = http;
    c->connection = mc;
    c->started_ms = jp_time_now_ms ();
    c->req.transport = c;
    c->req.complete = s_complete;
    snprintf (c->req.method, sizeof c->req.method, "%s", method);
    c->req.path = strdup (url);
    MHD_get_connection_values (mc, MHD_GET_ARGUMENT_KIND, s_copy_argument, &c->req);
    MHD_get_connection_values (mc, MHD_HEADER_KIND, s_copy_header, &c->req);
    c->body_limit = strcmp (method, "PUT") == 0 ? MAX_FILE_BODY : MAX_JSON_BODY;

    /* the browser boundary first: a page's cross-origin or rebound
       request goes no further, whatever else it carries */
    if (http->origin) {
        const char *origin = gw_request_header (&c->req, "Origin");
        gw_origin_verdict_t verdict = gw_origin_check (http->origin,
                                                       gw_request_header (&c->req, "Host"),
                                                       origin, c->early_message,
                                                       sizeof c->early_message);
        if (verdict == GW_ORIGIN_REFUSED) {
            c->early = GW_E_FORBIDDEN;
            return c;
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
            return c;
        }
        c->preflight = true;
        c->req.status = 204;
        return c;
    }

    const char *authorization = MHD_lookup_connection_value (mc, MHD_HEADER_KIND,
                                                             "Authorization");
    /* a browser cannot set headers on a websocket: ?token=T there, as
       Jupyter's clients send it (only on a websocket handshake) */
    char from_query[600];
    const char *query_token = MHD_lookup_connection_value (mc, MHD_GET_ARGUMENT_KIND, "token");
    const char *upgrade = MHD_lookup_connection_value (mc, MHD_HEADER_KIND, "Upgrade");
    if (!authorization && query_token && upgrade && strcasecmp (upgrade, "websocket") == 0
        && strlen (query_token) < sizeof from_query - 8) {
        snprintf (from_query, sizeof from_query, "Bearer %s", query_token);
        authorization = from_query;
    }
    /* signed artifact links carry their own signature (gw_signed_url) */
    bool public = strcmp (url, "/healthz") == 0 || strncmp (url, "/signed/", 8) == 0;
    if (!public && !gw_auth_check (http->auth, authorization, c->req.tenant,
                                   sizeof c->req.tenant)) {
        c->early = GW_E_UNAUTHORIZED;
        snprintf (c->early_message, sizeof c->early_message,
                  "missing or wrong token: send Authorization: Bearer TOKEN");
        return c;
    }
    static const struct {
        const char *header;
        size_t offset;
    } overrides[] = {
        {"X-Codebox-Exec-Timeout", offsetof (gw_overrides_t, exec_timeout)},
        {"X-Codebox-Session-Ttl", offsetof (gw_overrides_t, session_ttl)},
        {"X-Codebox-Idle-Timeout", offsetof (gw_overrides_t, idle_timeout)},
        {"X-Codebox-Max-Download-Size", offsetof (gw_overrides_t, max_download_size)},
        {"X-Codebox-Sql-Max-Inline-Rows", offsetof (gw_overrides_t, sql_max_inline_rows)},
    };
    for (size_t i = 0; i < sizeof overrides / sizeof overrides[0]; i++) {
        long v = s_override (mc, overrides[i].header);
        if (v < 0) {
            c->early = GW_E_BAD_REQUEST;
            snprintf (c->early_message, sizeof c->early_message,
                      "%s must be a positive integer", overrides[i].header);
            return c;
        }
        *(long *) ((char *) &c->req.overrides + overrides[i].offset) = v;
    }
    /* the route and its methods, from the request line alone */
    const char *allow = gw_routes_allow (url);
    if (!allow) {
        c->early = GW_E_NOT_FOUND;
        snprintf (c->early_message, sizeof c->early_message, "no route %s %.160s", method, url);
        return c;
    }
    if (!gw_routes_allows (allow, method)) {
        c->early = GW_E_METHOD_NOT_ALLOWED;
        c->allow = allow;
        snprintf (c->early_message, sizeof c->early_message, "%s is not allowed on %.120s "
                  "(allowed: %s)", method, url, allow);
        return c;
    }
    /* HEAD is GET without the body (libmicrohttpd leaves the body out) */
    if (strcmp (method, "HEAD") == 0)
        snprintf (c->req.method, sizeof c->req.method, "GET");
    const char *length = MHD_lookup_connection_value (mc, MHD_HEADER_KIND, "Content-Length");
    if (length && strtoull (length, NULL, 10) > c->body_limit)
        c->too_large = true;
    c->to_file = strcmp (method, "PUT") == 0 && gw_routes_body_to_file (url);
    return c;
}

/* Appends a body chunk, refusing more than the limit. */
static void
s_conn_append (s_conn_t *c, const char *data, size_t size)
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
static void
s_conn_write (s_conn_t *c, const char *data, size_t size)
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

/* Posts the request to the loop with its connection suspended until the
 * loop completes it. */
static enum MHD_Result
s_post (s_conn_t *c, struct MHD_Connection *mc)
{
    if (!c->req.body) {
        c->req.body = strdup ("");
        if (!c->req.body)
            return MHD_NO;
    }
    c->posted = true;
    const union MHD_ConnectionInfo *fd_info =
        MHD_get_connection_info (mc, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (fd_info) {
        c->req.client_fd = fd_info->connect_fd;
        c->req.has_client_fd = true;
    }
    MHD_suspend_connection (mc);
    c->http->post (&c->req, c->http->post_arg);
    return MHD_YES;
}

static enum MHD_Result
s_access (void *cls, struct MHD_Connection *mc, const char *url, const char *method,
          const char *version, const char *upload_data, size_t *upload_data_size,
          void **con_cls)
{
    (void) version;
    gw_http_t *http = cls;
    s_conn_t *c = *con_cls;
    if (!c) {
        c = s_conn_new (http, mc, url, method);
        if (!c)
            return MHD_NO;
        *con_cls = c;
        /* refusals go out at once, before any body is read (and without
           a 100 Continue for Expect: 100-continue) */
        if (c->early)
            return s_send_error (c, c->early, c->early_message);
        if (c->preflight)
            return s_send (c);
        if (c->too_large)
            return s_send_too_large (c);
        if (c->to_file) {
            /* the loop says where the body goes, or refuses it unread
               (its answer is queued on the first call again, so no
               100 Continue goes and libmicrohttpd reads no body) */
            c->req.body_at = GW_BODY_AHEAD;
            return s_post (c, mc);
        }
        return MHD_YES;
    }
    if (*upload_data_size) {
        if (c->to_file)
            s_conn_write (c, upload_data, *upload_data_size);
        else if (!c->early)
            s_conn_append (c, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (c->again) {
        /* the first call again, after the loop gave an upload: now
           libmicrohttpd reads the body (after a 100 Continue if asked) */
        c->again = false;
        return MHD_YES;
    }
    /* the request is whole: from here it is being answered (no deadline) */
    const union MHD_ConnectionInfo *sc =
        MHD_get_connection_info (mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (sc)
        gw_conns_request_done (sc->socket_context);
    if (c->early)
        return s_send_error (c, c->early, c->early_message);
    if (c->too_large)
        return s_send_too_large (c);
    if (atomic_load (&c->done))
        return s_send (c);
    if (c->posted) {
        /* resumed spuriously; keep waiting (a body not yet asked for must
           not be read meanwhile) */
        if (c->req.body_at == GW_BODY_AHEAD)
            MHD_suspend_connection (mc);
        return MHD_YES;
    }
    if (c->to_file) {
        /* the whole body is in the upload (or its error is): the loop
           moves it into place and answers */
        c->req.body_at = GW_BODY_WRITTEN;
        s_receiving_remove (c);
        return s_post (c, mc);
    }
    if (!c->req.body) {
        c->req.body = strdup ("");
        if (!c->req.body)
            return MHD_NO;
    }
    if (strcmp (url, "/healthz") == 0) {
        c->req.route = "/healthz";
        c->req.status = 200;
        /* draining is still healthy: a router keeps sending a node's own
           sessions there; the node refuses new ones itself */
        bool draining = http->draining && http->draining (http->draining_arg);
        c->req.json = json_pack ("{s:s}", "status", draining ? "draining" : "ok");
        return s_send (c);
    }
    return s_post (c, mc);
}

/* The route label a request is counted under: the one its handler set,
 * else (answered here: refused, 405, a preflight) the label of the route
 * whose shape its path has, else NULL ("unmatched"): never the path, which
 * is the client's text and would make a series per path. */
static const char *
s_route_label (const s_conn_t *c)
{
    if (c->req.route || !c->req.path)
        return c->req.route;
    size_t len = strlen (c->req.path) + 1;
    char *buf = malloc (len);
    gw_route_match_t m;
    const char *label = buf && gw_routes_match (c->req.path, buf, len, &m) ? m.label : NULL;
    free (buf);
    return label;
}

/* Logs the request and frees it once libmicrohttpd is done with it. */
static void
s_completed (void *cls, struct MHD_Connection *mc, void **con_cls,
             enum MHD_RequestTerminationCode toe)
{
    (void) toe;
    s_conn_t *c = *con_cls;
    const union MHD_ConnectionInfo *sc =
        MHD_get_connection_info (mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    /* ready for the next request: its deadline starts now (a switched
       connection, a websocket, never is) */
    if (sc && !(c && c->req.upgrade && c->req.status == 101))
        gw_conns_answer_done (((gw_http_t *) cls)->conns, sc->socket_context,
                              jp_time_now_ms ());
    if (!c)
        return;
    if (atomic_load (&c->done))
        atomic_fetch_sub (&c->http->unsent, 1);
    if (c->req.upgrade) {
        /* the switch never happened (or is done): let the owner know */
        bool never = c->upgrade ? !atomic_exchange (&c->upgrade->claimed, true) : true;
        if (never)
            c->req.upgrade (NULL, c->req.upgrade_arg);
        if (c->upgrade)
            s_upgrade_release (c->upgrade);
    }
    /* a posted request not yet answered is still the loop's: libmicrohttpd
       only ends a suspended connection after it was resumed */
    if (c->http->metrics)
        gw_metrics_http (c->http->metrics, c->req.tenant, c->req.method, s_route_label (c),
                         c->req.status);
    const char *logged = c->req.path ? c->req.path : "?";
    if (strncmp (logged, "/signed/", 8) == 0)
        logged = "/signed/...";    /* a signed link is a credential: never logged */
    if (c->req.stream && !c->req.log_extra[0])
        gw_stream_note (c->req.stream, c->req.log_extra, sizeof c->req.log_extra);
    /* the method, path and tenant are quoted by jp_log where they need it
       (a path "/a status=200" stays one field); log_extra holds fields
       quoted by whoever wrote them (gw_mcp) */
    jp_log_info ("http method=%s path=%s status=%d ms=%lld%s%s tenant=%s", c->req.method,
             logged, c->req.status,
             (long long) (jp_time_now_ms () - c->started_ms), c->req.log_extra,
             toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " client=gone", c->req.tenant);
    if (c->req.stream) {
        if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && !gw_stream_closed (c->req.stream)) {
            /* the client left mid-stream: the application cancels the call */
            gw_stream_set_gone (c->req.stream);
            if (c->http->gone)
                c->http->gone (c->req.stream, c->http->post_arg);
        }
        gw_stream_unref (&c->req.stream);
    }
    free (c->req.headers);
    free (c->req.path);
    free (c->req.query);
    free (c->req.body);
    s_receiving_remove (c);
    gw_upload_destroy (&c->req.upload);     /* its file too, unless moved into place */
    free (c->req.raw);
    if (c->req.has_file)
        close (c->req.file_fd);     /* never sent */
    json_decref (c->req.json);
    free (c);
    *con_cls = NULL;
}

/* Sets TCP_NODELAY on every new connection (answers go out at once) and
 * watches it for its request deadline (gw_conns), until it closes. */
static void
s_notify_connection (void *cls, struct MHD_Connection *mc, void **socket_context,
                     enum MHD_ConnectionNotificationCode toe)
{
    gw_http_t *self = cls;
    if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        gw_conns_closed (self->conns, *socket_context);
        *socket_context = NULL;
        return;
    }
    if (toe != MHD_CONNECTION_NOTIFY_STARTED)
        return;
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info (mc, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *addr =
        MHD_get_connection_info (mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    int one = 1;
    if (info) {
        setsockopt (info->connect_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        const struct sockaddr *sa = addr ? addr->client_addr : NULL;
        socklen_t len = !sa ? 0 : sa->sa_family == AF_INET6 ? sizeof (struct sockaddr_in6)
                                                            : sizeof (struct sockaddr_in);
        *socket_context = gw_conns_opened (self->conns, info->connect_fd, sa, len,
                                           jp_time_now_ms ());
    }
}

/* libmicrohttpd's accept policy: the per-address bound, fair to clients
 * that behave (a slow connection of the address makes room). */
static enum MHD_Result
s_admit (void *cls, const struct sockaddr *addr, socklen_t len)
{
    gw_http_t *self = cls;
    if (gw_conns_admit (self->conns, addr, len, jp_time_now_ms ()))
        return MHD_YES;
    jp_log_info ("http event=refused why=\"too many connections from one address\"");
    return MHD_NO;
}

/* libmicrohttpd's own messages, as log lines like every other (one line,
 * timestamped, at warn). */
static void
s_mhd_log (void *cls, const char *fmt, va_list ap)
{
    (void) cls;
    char text[512];
    vsnprintf (text, sizeof text, fmt, ap);
    text[strcspn (text, "\n")] = '\0';
    jp_log_warn ("http event=libmicrohttpd message=%s", text);
}

/* libmicrohttpd's unescaping of the path and of each query argument,
 * except that an encoded NUL ("%00") becomes DEL (0x7f) instead of ending
 * the string early: "input/a%00b" would otherwise reach the handlers as
 * "input/a", and "/sessions/s1%00x" as session s1. DEL is a control
 * character, which every path and id check refuses, so such a request
 * gets a clear 400 or 404 for what it asked, never an answer for
 * something else. */
static size_t
s_unescape (void *cls, struct MHD_Connection *mc, char *text)
{
    (void) cls;
    (void) mc;
    size_t len = MHD_http_unescape (text);
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\0')
            text[i] = 0x7f;
    return len;
}

gw_http_t *
gw_http_new (int listen_fd, const gw_http_limits_t *limits, const gw_auth_t *auth,
             const gw_origin_t *origin, gw_http_post_fn *post, gw_http_gone_fn *gone,
             void *post_arg, char *err,
             size_t err_len)
{
    gw_http_t *self = calloc (1, sizeof *self);
    if (!self) {
        close (listen_fd);
        return NULL;
    }
    self->post = post;
    self->gone = gone;
    self->post_arg = post_arg;
    self->auth = auth;
    self->origin = origin;
    struct sockaddr_storage addr;
    socklen_t len = sizeof addr;
    if (getsockname (listen_fd, (struct sockaddr *) &addr, &len) == 0)
        self->port = ntohs (addr.ss_family == AF_INET6
                                ? ((struct sockaddr_in6 *) &addr)->sin6_port
                                : ((struct sockaddr_in *) &addr)->sin_port);
    /* a connection must deliver its request within request_s, and within
       the idle timeout when that is longer (a keep-alive wait is idle) */
    unsigned request_s = limits->request_s > limits->idle_s ? limits->request_s : limits->idle_s;
    self->conns = gw_conns_new (limits->per_address, (int64_t) request_s * 1000);
    if (!self->conns) {
        snprintf (err, err_len, "out of memory");
        close (listen_fd);
        free (self);
        return NULL;
    }
    self->daemon = MHD_start_daemon (
        MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_ALLOW_UPGRADE | MHD_USE_ITC
        | MHD_USE_ERROR_LOG,
        0, s_admit, self, s_access, self,
        MHD_OPTION_EXTERNAL_LOGGER, s_mhd_log, NULL,
        MHD_OPTION_LISTEN_SOCKET, listen_fd,
        MHD_OPTION_CONNECTION_LIMIT, 4000u,
        MHD_OPTION_CONNECTION_TIMEOUT, limits->idle_s,
        MHD_OPTION_NOTIFY_COMPLETED, s_completed, self,
        MHD_OPTION_NOTIFY_CONNECTION, s_notify_connection, self,
        MHD_OPTION_UNESCAPE_CALLBACK, s_unescape, NULL,
        MHD_OPTION_END);
    if (!self->daemon) {
        snprintf (err, err_len, "cannot start the HTTP server: %s", strerror (errno));
        close (listen_fd);
        gw_conns_destroy (&self->conns);
        free (self);
        return NULL;
    }
    return self;
}

void
gw_http_set_metrics (gw_http_t *self, gw_metrics_t *metrics)
{
    self->metrics = metrics;
}

void
gw_http_set_draining (gw_http_t *self, gw_http_state_fn *fn, void *arg)
{
    self->draining = fn;
    self->draining_arg = arg;
}

int
gw_http_poll_fd (const gw_http_t *self)
{
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info (self->daemon, MHD_DAEMON_INFO_EPOLL_FD);
    return info ? info->epoll_fd : -1;
}

void
gw_http_run (gw_http_t *self)
{
    atomic_store (&self->resumed, false);
    MHD_run (self->daemon);
}

/* libmicrohttpd's own timer: ms until it is due, or -1. */
static int64_t
s_mhd_timeout_ms (gw_http_t *self)
{
    MHD_UNSIGNED_LONG_LONG ms = 0;
    if (MHD_get_timeout (self->daemon, &ms) != MHD_YES)
        return -1;
    return ms > INT64_MAX ? INT64_MAX : (int64_t) ms;
}

void
gw_http_tick (gw_http_t *self)
{
    int64_t now = jp_time_now_ms ();
    if (gw_conns_sweep (self->conns, now)) {
        jp_log_info ("http event=cut why=\"no whole request in time\"");
        gw_http_run (self);     /* libmicrohttpd closes them now */
    }
    if (self->receiving && now >= self->next_look_ms)
        s_look_at_receiving (self, now);
    if (atomic_load (&self->resumed) || s_mhd_timeout_ms (self) == 0)
        gw_http_run (self);
}

int64_t
gw_http_timeout_ms (gw_http_t *self)
{
    if (atomic_load (&self->resumed))
        return 0;       /* resumed after this turn's tick: the next turn sends */
    int64_t ms = s_mhd_timeout_ms (self);
    int64_t now = jp_time_now_ms ();
    if (self->receiving) {
        int64_t look = self->next_look_ms > now ? self->next_look_ms - now : 0;
        if (ms < 0 || look < ms)
            ms = look;
    }
    int64_t due = gw_conns_deadline (self->conns);
    if (due >= 0) {
        int64_t sweep = due > now ? due - now : 0;
        if (ms < 0 || sweep < ms)
            ms = sweep;
    }
    return ms;
}

int
gw_http_port (const gw_http_t *self)
{
    return self->port;
}

void
gw_http_destroy (gw_http_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gw_http_t *self = *self_p;
    if (self->daemon) {
        /* answers given at shutdown are sent before the connections close:
           no new connections, then a bounded wait for the unsent ones (an
           endless SSE stream would otherwise hold the exit) */
        MHD_socket listener = MHD_quiesce_daemon (self->daemon);
        int64_t deadline = jp_time_now_ms () + S_DRAIN_MS;
        while (atomic_load (&self->unsent) > 0 && jp_time_now_ms () < deadline)
            MHD_run_wait (self->daemon, 5);
        MHD_stop_daemon (self->daemon);
        if (listener != MHD_INVALID_SOCKET)
            close (listener);
    }
    gw_conns_destroy (&self->conns);
    free (*self_p);
    *self_p = NULL;
}
