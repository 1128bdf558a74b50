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

/* The routes' handlers (gw_router runs them; the HTTP edge has already
 * refused other methods). Each answers now or later. */
void gw_rest_metrics (gw_server_t *server, gw_request_t *req);
/* Kernelspecs in Jupyter's shape (gw_rest_kernelspecs.c): GET /kernelspecs
 * and /api/kernelspecs (all), /api/kernelspecs/{name} (one; name NULL for
 * all), /kernelspecs/{name}/{file} (a logo or other resource of the spec's
 * folder, confined to it), /api (the version). */
void gw_rest_kernelspecs (gw_server_t *server, gw_request_t *req, const char *name);
void gw_rest_kernelspec_file (gw_server_t *server, gw_request_t *req, const char *name,
                              const char *file);
void gw_rest_api_version (gw_server_t *server, gw_request_t *req);
/* GET or POST /sessions */
void gw_rest_sessions (gw_server_t *server, gw_request_t *req);
/* GET or DELETE /sessions/{id} */
void gw_rest_session (gw_server_t *server, gw_request_t *req, const char *id);
/* POST /execute */
void gw_rest_execute (gw_server_t *server, gw_request_t *req);
/* GET /execute/{rid}/status, GET /execute/{rid}/results (the results, a
 * long poll with ?wait=, or 409), POST /execute/{rid}/cancel. */
void gw_rest_execution_status (gw_server_t *server, gw_request_t *req, const char *rid);
void gw_rest_execution_results (gw_server_t *server, gw_request_t *req, const char *rid);
void gw_rest_execution_cancel (gw_server_t *server, gw_request_t *req, const char *rid);

/* GET /sessions/{id}/artifacts (the files under output/); GET or PUT
 * /sessions/{id}/files/{rest} (rest: the path after "files/", or NULL). */
void gw_rest_artifacts (gw_server_t *server, gw_request_t *req, const char *id);
void gw_rest_files (gw_server_t *server, gw_request_t *req, const char *id, const char *rest);

/* A session's record of cells (gw_rest_notebook.c): GET
 * /sessions/{id}/notebook (nbformat 4), GET /sessions/{id}/archive (a
 * tar.gz of notebook.ipynb, session.json and the folder under session/,
 * streamed), POST /sessions/{id}/replay (the cells that succeeded, run
 * again as one execution: answered as POST /execute). */
void gw_rest_notebook (gw_server_t *server, gw_request_t *req, const char *id);
void gw_rest_archive (gw_server_t *server, gw_request_t *req, const char *id);
void gw_rest_replay (gw_server_t *server, gw_request_t *req, const char *id);

/* Named volumes (gw_rest_volumes.c): GET or POST /volumes; GET or DELETE
 * /volumes/{name}; GET or PUT /volumes/{name}/files/{rest}. */
void gw_rest_volumes (gw_server_t *server, gw_request_t *req);
void gw_rest_volume (gw_server_t *server, gw_request_t *req, const char *name);
void gw_rest_volume_files (gw_server_t *server, gw_request_t *req, const char *name,
                           const char *rest);
/* A new session's "volumes" (a request body's member, borrowed) resolved
 * into exec for req's tenant: 0, or -1 after answering why not. */
int gw_rest_volumes_attach (gw_server_t *server, gw_request_t *req, json_t *list,
                            gw_exec_options_t *exec);
/* The new session holds the volumes of exec until it ends. */
void gw_rest_volumes_hold (gw_server_t *server, gw_session_t *session,
                           const gw_exec_options_t *exec);

/* POST /sql (gw_sql_tool.c). */
void gw_sql_rest_handle (gw_server_t *server, gw_request_t *req);

/* The session id names for req's tenant, or NULL after answering 400/404. */
gw_session_t *gw_rest_session_or_reply (gw_server_t *server, gw_request_t *req, const char *id);

/* Answers req (POST /sessions) once the session's first start is over:
 * 201 with the session, or the start's error (and the session ends). */
void gw_rest_answer_when_started (gw_session_t *session, gw_request_t *req);

#endif
