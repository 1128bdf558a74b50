/* gw_http_request: a connection's request read from libmicrohttpd into
 * its gw_request_t, and the refusals decided before the loop sees it:
 * Host and Origin (gw_origin), a CORS preflight, the bearer token, the
 * X-Codebox-* limits, the route and its methods (gw_routes), the declared
 * body size. The body is kept in memory under a limit, or written to the
 * request's upload as it arrives.
 *
 * Threads: the loop thread, inside gw_http_run (libmicrohttpd's
 * callbacks). */
#ifndef GW_HTTP_REQUEST_H
#define GW_HTTP_REQUEST_H

#include <stddef.h>

#include "gw_auth.h"
#include "gw_http_conn.h"
#include "gw_origin.h"

/* Fills c's request (c->connection set) from the request line, query and
 * headers, and decides what the HTTP edge answers itself: c->early with
 * its message (refused), c->preflight, c->too_large; else c->to_file
 * when the route writes the body to a file. origins (the Host and
 * Origin rules) NULL: no such checks (tests only). */
void gw_http_request_read (gw_http_conn_t *c, const char *url, const char *method,
                           const gw_auth_t *auth, const gw_origin_t *origins);

/* Appends a body chunk, refusing more than the limit (c->too_large). */
void gw_http_conn_append (gw_http_conn_t *c, const char *data, size_t size);

/* Writes a body chunk to the request's upload (a body that goes to a
 * file). A write that fails, or passes the room the loop gave, fails the
 * upload and removes its file; the rest of the body is read and dropped
 * and the loop answers the upload's error. Past the HTTP edge's own bound
 * the upload goes and the answer is a 413 from here. */
void gw_http_conn_write (gw_http_conn_t *c, const char *data, size_t size);

#endif
