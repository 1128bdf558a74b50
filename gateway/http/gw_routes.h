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

/*  X(name,       methods,             pattern,                  label, body)
 *  body: where a PUT's body goes: MEM (read whole into the request, up to
 *  the HTTP edge's bound) or FILE (written to a file as it arrives: the
 *  request is posted before its body, see gw_body_t). */
#define GW_ROUTE_TABLE(X) \
    X (healthz,    "GET, HEAD",         "/healthz",               "/healthz", MEM) \
    X (oauth_resource, "GET, HEAD",     "/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource", MEM) \
    X (oauth_resource_mcp, "GET, HEAD", "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource", MEM) \
    X (metrics,    "GET, HEAD",         "/metrics",               "/metrics", MEM) \
    X (kernelspecs, "GET, HEAD",        "/kernelspecs",           "/kernelspecs", MEM) \
    X (kernelspec_file, "GET, HEAD",    "/kernelspecs/{}/{}",     "/kernelspecs/{name}/{file}", MEM) \
    X (api,        "GET, HEAD",         "/api",                   "/api", MEM) \
    X (api_kernelspecs, "GET, HEAD",    "/api/kernelspecs",       "/api/kernelspecs", MEM) \
    X (api_kernelspec, "GET, HEAD",     "/api/kernelspecs/{}",    "/api/kernelspecs/{name}", MEM) \
    X (api_kernels, "GET, HEAD, POST",  "/api/kernels",           "/api/kernels", MEM) \
    X (api_kernel, "GET, HEAD, DELETE", "/api/kernels/{}",        "/api/kernels/{id}", MEM) \
    X (api_channels, "GET",             "/api/kernels/{}/channels", "/api/kernels/{id}/channels", MEM) \
    X (api_interrupt, "POST",           "/api/kernels/{}/interrupt", "/api/kernels/{id}/interrupt", MEM) \
    X (api_restart, "POST",             "/api/kernels/{}/restart", "/api/kernels/{id}/restart", MEM) \
    X (api_sessions, "GET, HEAD, POST", "/api/sessions",          "/api/sessions", MEM) \
    X (api_session, "GET, HEAD, PATCH, DELETE", "/api/sessions/{}", "/api/sessions/{id}", MEM) \
    X (sessions,   "GET, HEAD, POST",   "/sessions",              "/sessions", MEM) \
    X (session,    "GET, HEAD, DELETE", "/sessions/{}",           "/sessions/{id}", MEM) \
    X (artifacts,  "GET, HEAD",         "/sessions/{}/artifacts", "/sessions/{id}/artifacts", MEM) \
    X (files,      "GET, HEAD, PUT",    "/sessions/{}/files/**",  "/sessions/{id}/files/{path}", FILE) \
    X (notebook,   "GET, HEAD",         "/sessions/{}/notebook",  "/sessions/{id}/notebook", MEM) \
    X (archive,    "GET, HEAD",         "/sessions/{}/archive",   "/sessions/{id}/archive", MEM) \
    X (replay,     "POST",              "/sessions/{}/replay",    "/sessions/{id}/replay", MEM) \
    X (volumes,    "GET, HEAD, POST",   "/volumes",               "/volumes", MEM) \
    X (volume,     "GET, HEAD, DELETE", "/volumes/{}",            "/volumes/{name}", MEM) \
    X (volume_files, "GET, HEAD, PUT",  "/volumes/{}/files/**",   "/volumes/{name}/files/{path}", FILE) \
    X (execute,    "POST",              "/execute",               "/execute", MEM) \
    X (events,     "GET",               "/execute/{}/events",     "/execute/{id}/events", MEM) \
    X (status,     "GET, HEAD",         "/execute/{}/status",     "/execute/{id}/status", MEM) \
    X (results,    "GET, HEAD",         "/execute/{}/results",    "/execute/{id}/results", MEM) \
    X (cancel,     "POST",              "/execute/{}/cancel",     "/execute/{id}/cancel", MEM) \
    X (sql,        "POST",              "/sql",                   "/sql", MEM) \
    X (signed,     "GET, HEAD",         "/signed/**",             "/signed/{tenant}/{session}/{expires}/{sig}/{path}", MEM) \
    X (mcp,        "GET, POST, DELETE", "/mcp",                   "/mcp", MEM) \
    X (sse,        "GET",               "/sse",                   "/sse", MEM) \
    X (messages,   "POST",              "/messages",              "/messages", MEM)

typedef enum {
#define GW_ROUTE_ENUM(name, methods, pattern, label, body) GW_ROUTE_##name,
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
    bool body_to_file;          /* a PUT's body goes to a file as it arrives */
    const char *params[GW_ROUTE_MAX_PARAMS];
    int n_params;
} gw_route_match_t;

/* Matches path (without its query) using buf (at least strlen(path)+1
 * bytes) for the parameters. Returns false when no route has that shape. */
bool gw_routes_match (const char *path, char *buf, size_t buf_len, gw_route_match_t *match);

/* The Allow header value for path, or NULL when no route has its shape. */
const char *gw_routes_allow (const char *path);

/* True when a PUT to path has its body written to a file as it arrives
 * (the route's body column says FILE). */
bool gw_routes_body_to_file (const char *path);

/* True when method is in allow (a value from gw_routes_allow). */
bool gw_routes_allows (const char *allow, const char *method);

#endif
