/* gw_caller: who asks the core for something, whatever the transport
 * (REST, MCP over HTTP or stdio): the tenant, and the limits its request
 * asks for (X-Codebox-* headers), which never raise the server's own.
 * Pure types and one pure function. */
#ifndef GW_CALLER_H
#define GW_CALLER_H

/* Per-request limits; 0 when not given. */
typedef struct {
    long exec_timeout;
    long session_ttl;
    long idle_timeout;
    long max_download_size;
    long sql_max_inline_rows;
} gw_overrides_t;

typedef struct {
    const char *tenant;         /* borrowed; "default" without tokens */
    gw_overrides_t overrides;
} gw_caller_t;

/* What applies of a limit: the client's value when it gave one (> 0) under
 * the server's, else the server's. */
static inline long
gw_caller_clamp (long client, long server)
{
    return client > 0 && client < server ? client : server;
}

#endif
