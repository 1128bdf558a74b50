/* gw_routes: the one table of HTTP routes: for each, the methods it
 * allows, its path pattern, its name (the handler gw_router runs, and the
 * enum id) and the route label metrics and logs use. The HTTP edge
 * matches the request line against it before any body is read (404 with
 * one wording, 405 with an Allow header, HEAD wherever GET is); the loop's
 * router (gw_router) runs the matched route's handler with its
 * parameters. Pattern parts: a literal, {} (one part), ** (one part or
 * more, the rest of the path); empty parts are skipped.
 *
 * Threads: any (pure). */
#ifndef GW_ROUTES_H
#define GW_ROUTES_H

#include <stdbool.h>
#include <stddef.h>

/*  X(name,       methods,             pattern,                  label) */
#define GW_ROUTE_TABLE(X) \
    X (healthz,    "GET, HEAD",         "/healthz",               "/healthz") \
    X (metrics,    "GET, HEAD",         "/metrics",               "/metrics") \
    X (kernelspecs, "GET, HEAD",        "/kernelspecs",           "/kernelspecs") \
    X (kernelspec_file, "GET, HEAD",    "/kernelspecs/{}/{}",     "/kernelspecs/{name}/{file}") \
    X (api,        "GET, HEAD",         "/api",                   "/api") \
    X (api_kernelspecs, "GET, HEAD",    "/api/kernelspecs",       "/api/kernelspecs") \
    X (api_kernelspec, "GET, HEAD",     "/api/kernelspecs/{}",    "/api/kernelspecs/{name}") \
    X (api_kernels, "GET, HEAD, POST",  "/api/kernels",           "/api/kernels") \
    X (api_kernel, "GET, HEAD, DELETE", "/api/kernels/{}",        "/api/kernels/{id}") \
    X (api_channels, "GET",             "/api/kernels/{}/channels", "/api/kernels/{id}/channels") \
    X (api_interrupt, "POST",           "/api/kernels/{}/interrupt", "/api/kernels/{id}/interrupt") \
    X (api_restart, "POST",             "/api/kernels/{}/restart", "/api/kernels/{id}/restart") \
    X (api_sessions, "GET, HEAD, POST", "/api/sessions",          "/api/sessions") \
    X (api_session, "GET, HEAD, PATCH, DELETE", "/api/sessions/{}", "/api/sessions/{id}") \
    X (sessions,   "GET, HEAD, POST",   "/sessions",              "/sessions") \
    X (session,    "GET, HEAD, DELETE", "/sessions/{}",           "/sessions/{id}") \
    X (artifacts,  "GET, HEAD",         "/sessions/{}/artifacts", "/sessions/{id}/artifacts") \
    X (files,      "GET, HEAD, PUT",    "/sessions/{}/files/**",  "/sessions/{id}/files/{path}") \
    X (execute,    "POST",              "/execute",               "/execute") \
    X (events,     "GET",               "/execute/{}/events",     "/execute/{id}/events") \
    X (status,     "GET, HEAD",         "/execute/{}/status",     "/execute/{id}/status") \
    X (results,    "GET, HEAD",         "/execute/{}/results",    "/execute/{id}/results") \
    X (cancel,     "POST",              "/execute/{}/cancel",     "/execute/{id}/cancel") \
    X (sql,        "POST",              "/sql",                   "/sql") \
    X (signed,     "GET, HEAD",         "/signed/**",             "/signed/{tenant}/{session}/{expires}/{sig}/{path}") \
    X (mcp,        "GET, POST, DELETE", "/mcp",                   "/mcp") \
    X (sse,        "GET",               "/sse",                   "/sse") \
    X (messages,   "POST",              "/messages",              "/messages")

typedef enum {
#define GW_ROUTE_ENUM(name, methods, pattern, label) GW_ROUTE_##name,
    GW_ROUTE_TABLE (GW_ROUTE_ENUM)
#undef GW_ROUTE_ENUM
    GW_ROUTE_COUNT
} gw_route_id_t;

#define GW_ROUTE_MAX_PARAMS 3

/* A path matched against the table: the route, and its {} and **
 * parameters in order (pointing into the caller's buffer). */
typedef struct {
    gw_route_id_t id;
    const char *allow;          /* e.g. "GET, HEAD, POST" */
    const char *label;
    const char *params[GW_ROUTE_MAX_PARAMS];
    int n_params;
} gw_route_match_t;

/* Matches path (without its query) using buf (at least strlen(path)+1
 * bytes) for the parameters. Returns false when no route has that shape. */
bool gw_routes_match (const char *path, char *buf, size_t buf_len, gw_route_match_t *match);

/* The Allow header value for path, or NULL when no route has its shape. */
const char *gw_routes_allow (const char *path);

/* True when method is in allow (a value from gw_routes_allow). */
bool gw_routes_allows (const char *allow, const char *method);

#endif
