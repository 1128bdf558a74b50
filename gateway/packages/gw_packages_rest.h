/* gw_packages_rest: "dependencies" on POST /sessions (REST), and on POST
 * /execute without a session_id, on gw_packages: the requirements are
 * judged, a refusal answers 403 at once, and an install answers 201 with
 * the session once they are installed and importable (or hands over to
 * what comes next).
 *
 * Threads: the loop thread. */
#ifndef GW_PACKAGES_REST_H
#define GW_PACKAGES_REST_H

#include <stdbool.h>

#include <jansson.h>

#include "gw_packages.h"
#include "gw_request.h"

/* POST /sessions with "dependencies": the session was just made for req.
 * Returns false when there is nothing to install (the caller goes on);
 * true when it took req over: it answers 201 with the session and its
 * "dependencies" once they are installed and importable, or an error that
 * says what was refused (403) or what failed, and then ends the session. */
bool gw_packages_rest_start (gw_packages_t *self, gw_request_t *req, gw_session_t *session,
                             json_t *dependencies);

/* What comes after the install instead of the 201 (POST /execute without
 * a session_id runs its code): called exactly once when
 * gw_packages_rest_then returned true, in the loop thread. With session,
 * the dependencies are in (result: gw_packages' result, a new reference
 * for the callee) and the callee answers req; with session NULL, req was
 * answered with what was refused or failed (result NULL) and only arg is
 * left to free. */
typedef void (gw_packages_rest_then_fn) (gw_request_t *req, gw_session_t *session,
                                         json_t *result, void *arg);

/* As gw_packages_rest_start, then then(..., arg) on success; false: no
 * dependencies, then is not called. */
bool gw_packages_rest_then (gw_packages_t *self, gw_request_t *req, gw_session_t *session,
                            json_t *dependencies, gw_packages_rest_then_fn *then, void *arg);

#endif
