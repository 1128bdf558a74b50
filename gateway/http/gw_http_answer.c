/* gw_http_answer: the HTTP answer of a completed request, built for
 * libmicrohttpd: JSON and raw bodies held in memory under a bound (a
 * busy 503 past it), files sent with sendfile, event streams read from
 * their gw_stream, the 101 that hands a websocket over, and the headers
 * every answer gets (Allow, CORS, Cache-Control). See gw_http_answer.h.
 *
 * Threads: the loop thread (inside gw_http_run); the hand-over of a
 * switched connection runs in libmicrohttpd's upgrade callback, inside
 * gw_http_run too. */
#include "gw_http_answer.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_stream.h"
#include "jp_json.h"
#include "jp_log.h"

#define S_SMALL_ANSWER (64u << 10)          /* always answered */
#define S_ANSWERS_HELD ((size_t) 1 << 30)   /* bodies in memory not yet sent, in all */

/* A switched connection's handle for its owner's close. */
typedef struct {
    struct MHD_UpgradeResponseHandle *urh;
    gw_http_answers_t *answers;
} s_upgraded_handle_t;

void
gw_http_upgrade_release (gw_http_upgrade_t *up)
{
    if (atomic_fetch_sub (&up->refs, 1) == 1)
        free (up);
}

/* A connection was resumed: the turn's end runs libmicrohttpd (a resume
 * does not wake its epoll set). */
void
gw_http_note_resume (void *arg)
{
    gw_http_answers_t *answers = arg;
    atomic_store (&answers->resumed, true);
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

/* A body made as it is sent (gw_request_reply_reader), for libmicrohttpd. */
typedef struct {
    gw_request_read_fn *fn;
    gw_request_free_fn *free_fn;
    void *arg;
} s_reader_t;

static ssize_t
s_reader (void *cls, uint64_t pos, char *buf, size_t max)
{
    (void) pos;
    s_reader_t *r = cls;
    ssize_t n = r->fn (r->arg, buf, max);
    return n == -2 ? MHD_CONTENT_READER_END_WITH_ERROR
         : n <= 0  ? MHD_CONTENT_READER_END_OF_STREAM : n;
}

static void
s_reader_free (void *cls)
{
    s_reader_t *r = cls;
    r->free_fn (r->arg);
    free (r);
}

/* The response of a reader's body; it takes the reader from req. */
static struct MHD_Response *
s_reader_response (gw_request_t *req)
{
    s_reader_t *r = malloc (sizeof *r);
    struct MHD_Response *response =
        r ? MHD_create_response_from_callback (MHD_SIZE_UNKNOWN, 64 * 1024, s_reader, r,
                                               s_reader_free)
          : NULL;
    if (!response) {
        free (r);
        return NULL;    /* the request's end frees what it still holds */
    }
    *r = (s_reader_t) {req->reader, req->reader_free, req->reader_arg};
    req->reader = NULL;
    MHD_add_response_header (response, "Content-Type",
                             req->content_type ? req->content_type : "application/octet-stream");
    return response;
}

/* Closes a switched connection: libmicrohttpd closes its socket in its
 * next run, which the turn's end does (the close resumes the connection). */
static void
s_upgrade_close (void *handle)
{
    s_upgraded_handle_t *h = handle;
    MHD_upgrade_action (h->urh, MHD_UPGRADE_ACTION_CLOSE);
    gw_http_note_resume (h->answers);
    free (h);
}

/* libmicrohttpd switched the connection (its thread): hands it over. */
static void
s_upgraded (void *cls, struct MHD_Connection *connection, void *con_cls, const char *extra_in,
            size_t extra_in_size, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh)
{
    (void) connection;
    (void) con_cls;
    gw_http_upgrade_t *up = cls;
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
            *handle = (s_upgraded_handle_t) {urh, up->answers};
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
        gw_http_note_resume (up->answers);
    }
    gw_http_upgrade_release (up);
}

/* The 101 answer that hands the connection to req->upgrade. */
static struct MHD_Response *
s_upgrade_response (gw_http_conn_t *c)
{
    gw_http_upgrade_t *up = calloc (1, sizeof *up);
    if (!up)
        return NULL;
    up->fn = c->req.upgrade;
    up->arg = c->req.upgrade_arg;
    up->answers = c->answers;
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
    gw_http_answers_t *answers;
    void *body;
    size_t len;
} s_held_t;

static void
s_held_free (void *cls)
{
    s_held_t *h = cls;
    atomic_fetch_sub (&h->answers->held, h->len);
    free (h->body);
    free (h);
}

/* A response for len bytes of body (taken), counted while held; NULL when
 * out of memory (body freed) or when the answers already held leave no
 * room for it (body freed, *busy set): clients that fetch large answers
 * without reading them cannot pile copies up without end. */
static struct MHD_Response *
s_held_response (gw_http_answers_t *answers, void *body, size_t len, bool *busy)
{
    /* only the loop thread adds; a free may only lower the count meanwhile */
    if (len > S_SMALL_ANSWER && atomic_load (&answers->held) + len > S_ANSWERS_HELD) {
        *busy = true;
        free (body);
        return NULL;
    }
    s_held_t *h = malloc (sizeof *h);
    if (h)
        *h = (s_held_t) {answers, body, len};
    struct MHD_Response *response =
        h ? MHD_create_response_from_buffer_with_free_callback_cls (len, body, s_held_free, h)
          : NULL;
    if (!response) {
        free (h);
        free (body);
        return NULL;
    }
    atomic_fetch_add (&answers->held, len);
    return response;
}

/* Builds and queues the HTTP answer for the request. */
enum MHD_Result
gw_http_send (gw_http_conn_t *c)
{
    gw_request_t *req = &c->req;
    struct MHD_Response *response;
    bool busy = false;
    if (req->status == 101 && req->upgrade) {
        response = s_upgrade_response (c);
    } else if (req->stream) {
        gw_stream_t *stream = gw_stream_ref (req->stream);
        gw_stream_attach (stream, c->connection, gw_http_note_resume, c->answers);
        response = MHD_create_response_from_callback (MHD_SIZE_UNKNOWN, 32 * 1024,
                                                      s_stream_reader, stream, s_stream_free);
        if (!response) {
            gw_stream_unref (&stream);
            return MHD_NO;
        }
        MHD_add_response_header (response, "Content-Type", "text/event-stream");
        MHD_add_response_header (response, "Cache-Control", "no-cache");
        MHD_add_response_header (response, "X-Accel-Buffering", "no");
    } else if (req->reader) {
        response = s_reader_response (req);
    } else if (req->has_file) {
        /* libmicrohttpd reads (sendfile) and closes the file as it sends */
        response = MHD_create_response_from_fd64 (req->file_size, req->file_fd);
        if (response)
            req->has_file = false;
        MHD_add_response_header (response, "Content-Type",
                                 req->content_type ? req->content_type
                                                   : "application/octet-stream");
    } else if (req->raw) {
        response = s_held_response (c->answers, req->raw, req->raw_len, &busy);
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
        response = text ? s_held_response (c->answers, text, len, &busy)
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
        MHD_add_response_header (response, "WWW-Authenticate",
                                 c->challenge[0] ? c->challenge : "Bearer");
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
enum MHD_Result
gw_http_send_error (gw_http_conn_t *c, gw_error_t e, const char *message)
{
    c->req.status = gw_error_http_status (e);
    json_decref (c->req.json);
    c->req.json = json_pack ("{s:{s:s, s:s}}", "error", "code", gw_error_code (e),
                             "message", message);
    return gw_http_send (c);
}

/* Answers 413 for a body over the limit. */
enum MHD_Result
gw_http_send_too_large (gw_http_conn_t *c)
{
    char message[128];
    snprintf (message, sizeof message, "the body is larger than %zu MiB", c->body_limit >> 20);
    return gw_http_send_error (c, GW_E_TOO_LARGE, message);
}
