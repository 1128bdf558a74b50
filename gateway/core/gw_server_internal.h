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

/* The session table (gw_server_loop.c). */
#include "gw_server_loop.h"

#endif
