/* gw_http_answer: the HTTP answer of a request, queued on its connection:
 * the body the loop set (JSON, raw bytes, a file, an event stream, or a
 * 101 that hands the connection to req->upgrade) with the headers every
 * answer gets. Answer bodies held in memory are counted in the server's
 * gw_http_answers_t; past a bound a large one is refused with a 503
 * "busy", so clients that do not read cannot pile copies up.
 *
 * Threads: the loop thread, inside gw_http_run (libmicrohttpd's
 * callbacks). */
#ifndef GW_HTTP_ANSWER_H
#define GW_HTTP_ANSWER_H

#include <microhttpd.h>

#include "gw_http_conn.h"

/* Builds and queues the HTTP answer for c's request. */
enum MHD_Result gw_http_send (gw_http_conn_t *c);

/* Answers an error decided in the HTTP edge (bad header, too large...). */
enum MHD_Result gw_http_send_error (gw_http_conn_t *c, gw_error_t e, const char *message);

/* Answers 413 for a body over c's limit. */
enum MHD_Result gw_http_send_too_large (gw_http_conn_t *c);

/* A connection was resumed (arg: the server's gw_http_answers_t): the
 * turn's end runs libmicrohttpd (a resume does not wake its epoll set). */
void gw_http_note_resume (void *arg);

/* Drops one of the two references of a hand-over; the last frees it. */
void gw_http_upgrade_release (gw_http_upgrade_t *up);

#endif
