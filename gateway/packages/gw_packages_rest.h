/* gw_packages_rest: "dependencies" on POST /sessions (REST), on
 * gw_packages: the requirements are judged, a refusal answers 403 at
 * once, and an install answers 201 with the session once they are
 * installed and importable.
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

#endif
