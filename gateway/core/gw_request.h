/* gw_request: one client request on its way to the loop thread and its
 * answer on the way back, whatever carried it. A transport (the HTTP
 * server) fills the request part, posts it to the loop, and gets its
 * complete callback, from the loop thread, once the answer is set. A
 * handler may keep a request waiting (a long poll, a kernel start) and
 * complete it later; it must complete every request exactly once.
 *
 * Threads: built by a transport thread, then owned by the loop thread from
 * gw_server_post until complete is called, then by the transport again. */
#ifndef GW_REQUEST_H
#define GW_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "gw_caller.h"
#include "gw_id.h"
#include "gw_error.h"
#include "gw_loop.h"
#include "gw_upload.h"

#define GW_REQUEST_HEADERS_MAX (64 * 1024)    /* bytes of request headers kept */
#define GW_REQUEST_REPLY_HEADERS 256

typedef struct gw_request gw_request_t;
typedef void (gw_request_complete_fn) (gw_request_t *req);

/* An answer body made as it is sent: fn writes the next bytes into buf
 * (max > 0) and returns how many (> 0), -1 at the end or -2 on an error
 * (the connection is then cut); the free function lets arg go, sent or
 * not. Both run in the transport's thread, one call at a time (HTTP:
 * the loop thread, inside gw_http_run). */
typedef ssize_t (gw_request_read_fn) (void *arg, char *buf, size_t max);
typedef void (gw_request_free_fn) (void *arg);

/* Where a request's body is. A transport may write a body to a file as it
 * arrives instead of holding it (HTTP does for the routes whose table row
 * says so): it posts the request before reading any of it (AHEAD), the
 * handler answers it at once (a refusal: nothing is read) or gives it an
 * upload to write to (gw_request_read_body_into), and the transport posts
 * the request again once the body is written there (WRITTEN; the upload
 * holds its size, or the error that stopped it). */
typedef enum {
    GW_BODY_WHOLE = 0,          /* in body/body_len */
    GW_BODY_AHEAD,              /* not read yet; body is "" */
    GW_BODY_WRITTEN,            /* written to upload; body is "" */
} gw_body_t;

/* A connection handed over after a 101 answer (a websocket): its socket,
 * bytes the client sent past the request already read, and how to close
 * it (the transport's close(handle), never close(fd)). */
typedef struct {
    int fd;
    uint8_t *extra;
    size_t extra_len;
    void *handle;
    void (*close) (void *handle);
} gw_upgraded_t;
/* Gets the connection (owned: gw_upgraded_close ends it), or NULL when the
 * client left before the switch; runs in the transport's thread. */
typedef void (gw_request_upgrade_fn) (gw_upgraded_t *up, void *arg);

/* Closes a switched connection through its transport, frees it, and nulls
 * *up_p. Safe on NULL. */
void gw_upgraded_close (gw_upgraded_t **up_p);

struct gw_request {
    /* request, set by the transport */
    char method[8];
    char *path;                 /* URL path, percent-decoded by the server */
    char *query;                /* the query's arguments, "name\0value\0" packed
                                   (query_len bytes; gw_request_query), or NULL */
    size_t query_len;
    char *body;                 /* NUL-terminated; body_len bytes */
    size_t body_len;
    gw_body_t body_at;          /* where the body is (see gw_body_t) */
    gw_upload_t *upload;        /* owned: where a body goes as it arrives, or NULL
                                   (a file not moved into place is removed with it) */
    char tenant[GW_ID_SIZE];
    gw_overrides_t overrides;
    char *headers;              /* every header, "Name\0value\0" packed (headers_len
                                   bytes; gw_request_header), or NULL */
    size_t headers_len;
    /* answer, set by the loop */
    int status;
    json_t *json;               /* the JSON body, or NULL */
    char *raw;                  /* or a raw body (malloc'd) */
    size_t raw_len;
    const char *content_type;   /* of raw or the file; static string */
    bool has_file;              /* or a file streamed from file_fd (owned) */
    int file_fd;
    uint64_t file_size;
    char reply_headers[GW_REQUEST_REPLY_HEADERS];   /* more headers to send, "Name\0value\0"
                                                   packed (gw_request_set_header) */
    size_t reply_headers_len;
    char log_extra[160];        /* more fields for the access log line (MCP's rpc=...) */
    struct gw_stream *stream;   /* a streamed (SSE) body, or NULL */
    gw_request_read_fn *reader; /* or a body made as it is sent (owned: reader_arg
                                   goes with reader_free), or NULL */
    gw_request_free_fn *reader_free;
    void *reader_arg;
    gw_request_upgrade_fn *upgrade;     /* with status 101: who takes the connection */
    void *upgrade_arg;
    /* plumbing */
    gw_request_complete_fn *complete;
    void *transport;            /* the transport's own state */
    gw_loop_item_t item;        /* posted to the loop (gw_server_post) */
    /* the client's socket while the request waits (HTTP): looked at, never
       read, to notice a client that left */
    bool has_client_fd;
    int client_fd;
    const char *route;          /* the route's pattern, for metrics */
};

/* True when the client of a waiting request has closed its connection
 * (a peek at its socket sees the end or a reset). False when unknown. */
bool gw_request_client_gone (const gw_request_t *req);

/* The value of the request header name (case-insensitive; the first of
 * several), or NULL. */
const char *gw_request_header (const gw_request_t *req, const char *name);

/* The value of the query argument name (case-sensitive), or NULL. */
const char *gw_request_query (const gw_request_t *req, const char *name);

/* The header that names the session an answer is about, so an HTTP
 * router in front of many nodes can learn where a session lives. */
#define GW_SESSION_HEADER "X-Codebox-Session"

/* Names the session the answer is about (GW_SESSION_HEADER), once. */
void gw_request_name_session (gw_request_t *req, const char *session_id);

/* Adds a header to the answer (before it completes). Returns 0, or
 * -ENOSPC when the answer's GW_REQUEST_REPLY_HEADERS bytes are full. */
int gw_request_set_header (gw_request_t *req, const char *name, const char *value);

/* Appends "name\0value\0" to a packed header block (*block, *len; grown
 * with realloc) unless that passes max bytes. Returns 0 or -ENOSPC/-ENOMEM
 * (for transports filling headers). */
int gw_request_headers_add (char **block, size_t *len, size_t max, const char *name,
                            const char *value);

/* The request's caller for the core (borrows req's tenant). */
gw_caller_t gw_request_caller (const gw_request_t *req);

/* Answers with a JSON body (stolen) and status, and completes. */
void gw_request_reply_json (gw_request_t *req, int status, json_t *body);

/* Answers {"error":{"code","message"}} with the error's status, and
 * completes. message is printf-style. */
void gw_request_reply_error (gw_request_t *req, gw_error_t e, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* Answers with the file_size bytes of the regular file fd (stolen: closed
 * once sent), streamed by the HTTP edge, never read whole into memory. */
void gw_request_reply_file (gw_request_t *req, int status, int fd, uint64_t file_size,
                            const char *content_type);

/* Answers with a body of unknown length that fn makes as it is sent
 * (arg stolen: free_fn lets it go, whether the body was sent or not). */
void gw_request_reply_reader (gw_request_t *req, int status, gw_request_read_fn *fn,
                              gw_request_free_fn *free_fn, void *arg, const char *content_type);

/* Answers 101 Switching Protocols (headers set with gw_request_set_header
 * first) and completes; fn gets the connection once switched (or NULL). */
void gw_request_reply_upgrade (gw_request_t *req, gw_request_upgrade_fn *fn, void *arg);

/* Hands a GW_BODY_AHEAD request back to its transport with upload
 * (stolen) to write the body to as it arrives. Not an answer: the
 * transport posts the request again as GW_BODY_WRITTEN, which must be
 * completed as any request is. */
void gw_request_read_body_into (gw_request_t *req, gw_upload_t *upload);

/* Answers with a raw body (stolen, malloc'd) of a content type. */
void gw_request_reply_raw (gw_request_t *req, int status, char *body, size_t len,
                           const char *content_type);

#endif
