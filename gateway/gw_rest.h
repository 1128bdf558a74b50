/* gw_rest: the REST API: routes a request to its handler; an adapter over
 * the core (gw_sessions, gw_jobs) that words errors the REST way.
 *
 * Threads: the loop thread only. */
#ifndef GW_REST_H
#define GW_REST_H

#include <stddef.h>

#include "gw_server.h"
#include "gw_request.h"
#include "ks_spec.h"

/* Routes and answers (now or later) one request; a gw_server_handler_fn. */
void gw_rest_handle (gw_server_t *server, gw_request_t *req);

/* The files and artifacts routes under /sessions/{id}/: what is "files"
 * or "artifacts", rest the path after "files/" (or NULL). */
void gw_rest_files_handle (gw_server_t *server, gw_request_t *req, const char *id,
                           const char *what, const char *rest);

/* POST /sql (gw_sql_tool.c). */
void gw_sql_rest_handle (gw_server_t *server, gw_request_t *req);

/* The session id names for req's tenant, or NULL after answering 400/404. */
gw_session_t *gw_rest_session_or_reply (gw_server_t *server, gw_request_t *req, const char *id);

#endif
