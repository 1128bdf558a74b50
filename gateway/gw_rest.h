/* gw_rest: the REST API: routes a request to its handler, and the session
 * helpers the MCP tools share (create a session the same way, find one or
 * answer the error, the effective limits of a request).
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

/* Creates a session for req's tenant (id NULL: a new uuid) with the kernel
 * named, or one for language, or the default. Returns it starting, or NULL
 * with *e and err set. */
gw_session_t *gw_rest_create_session (gw_server_t *server, gw_request_t *req, const char *id,
                                      const char *kernel, const char *language,
                                      gw_error_t *e, char *err, size_t err_len);

/* The session id names for req's tenant, or NULL after answering 400/404. */
gw_session_t *gw_rest_session_or_reply (gw_server_t *server, gw_request_t *req, const char *id);

/* Finds the kernelspec by name, by language, or the default. */
ks_spec_t *gw_rest_find_spec (gw_server_t *server, const char *kernel, const char *language,
                              char *err, size_t err_len);

/* The limits of a new session: the server's, lowered by req's headers. */
gw_limits_t gw_rest_limits (gw_server_t *server, const gw_request_t *req);

/* min(client, server) when client > 0, else server. */
long gw_rest_effective (long client, long server);

#endif
