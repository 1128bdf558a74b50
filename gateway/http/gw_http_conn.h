/* gw_http_conn: what the HTTP edge's files share about one connection:
 * its request as libmicrohttpd delivers it (gw_http_conn_t, made by
 * gw_http, filled by gw_http_request, answered by gw_http_answer), a 101
 * answer's hand-over, and the server's answer counters the answers keep
 * (gw_http_answers_t). Private to gateway/http; the server itself
 * (gw_http_t) stays opaque here.
 *
 * Threads: the loop thread, except the atomics, which libmicrohttpd's
 * callbacks (inside gw_http_run) and the loop's completions touch. */
#ifndef GW_HTTP_CONN_H
#define GW_HTTP_CONN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

#include "gw_error.h"
#include "gw_request.h"

typedef struct gw_http gw_http_t;

/* The server's counters that answers change. */
typedef struct {
    atomic_bool resumed;        /* a connection was resumed since the last run */
    atomic_size_t held;         /* bytes of answer bodies in memory, not yet sent */
} gw_http_answers_t;

/* A 101 answer's hand-over, shared by the connection (which may end
 * first) and libmicrohttpd's upgrade callback: whichever claims it first
 * decides; the second frees it. */
typedef struct {
    gw_request_upgrade_fn *fn;
    void *arg;
    gw_http_answers_t *answers;
    atomic_bool claimed;
    atomic_int refs;
} gw_http_upgrade_t;

/* One connection's request: libmicrohttpd's, and (while posted) the
 * request's handler's. */
typedef struct gw_http_conn gw_http_conn_t;
struct gw_http_conn {
    gw_request_t req;
    gw_http_t *http;
    gw_http_answers_t *answers; /* the server's */
    struct MHD_Connection *connection;
    size_t body_cap;
    size_t body_limit;
    bool too_large;
    bool posted;
    atomic_bool done;
    gw_error_t early;           /* an answer decided before the loop */
    char early_message[320];
    char challenge[512];        /* a 401's WWW-Authenticate value, "" : "Bearer" */
    char cors_origin[300];      /* an allowed other origin: CORS headers */
    const char *allow;          /* the route's methods for a 405 or a preflight (static) */
    bool preflight;             /* an OPTIONS preflight, answered here */
    int64_t started_ms;
    gw_http_upgrade_t *upgrade; /* a 101 answer's hand-over, or NULL */
    bool to_file;               /* the body goes to req.upload as it arrives */
    bool again;                 /* resumed with an upload: libmicrohttpd calls the
                                   first call again, then reads the body */
    uint64_t body_seen;         /* bytes of a body going to a file */
    int64_t body_ms;            /* when the last of it came */
    gw_http_conn_t *prev, *next;    /* in http->receiving while it comes */
    bool listed;
};

#endif
