/* gw_routes: the HTTP routes by shape, and the methods each allows, so a
 * known route with a wrong method gets 405 with an Allow header, an unknown
 * one a 404 with one wording, and HEAD works wherever GET does, all decided
 * from the request line before any body is read.
 *
 * Threads: any (pure). */
#ifndef GW_ROUTES_H
#define GW_ROUTES_H

#include <stdbool.h>

/* The Allow header value for path (without its query), e.g. "GET, HEAD,
 * POST", or NULL when no route has that shape. */
const char *gw_routes_allow (const char *path);

/* True when method is in allow (a value from gw_routes_allow). */
bool gw_routes_allows (const char *allow, const char *method);

#endif
