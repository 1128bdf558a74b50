/* gw_server_internal: the server's session table and what its sessions
 * need of it, for the core only (gw_sessions and the server itself);
 * every other layer goes through gw_sessions, and `make layers` keeps it
 * so.
 *
 * Threads: the loop thread only. */
#ifndef GW_SERVER_INTERNAL_H
#define GW_SERVER_INTERNAL_H

#include "gw_server.h"

/* What a new session needs of the server (gw_session_new). */
const gw_session_host_t *gw_server_session_host (gw_server_t *self);

/* Sessions: find by id within a tenant; add; count; the i-th. */
gw_session_t *gw_server_find_session (gw_server_t *self, const char *id, const char *tenant);
int gw_server_add_session (gw_server_t *self, gw_session_t *session);
size_t gw_server_session_count (gw_server_t *self);
gw_session_t *gw_server_session_at (gw_server_t *self, size_t i);
/* Ends a session and removes its folder. */
void gw_server_remove_session (gw_server_t *self, gw_session_t *session);

#endif
