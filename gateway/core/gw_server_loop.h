/* gw_server_loop: the server's session table and the loop source that
 * serves its sessions (see gw_server_loop.c). For the core only, through
 * gw_server_internal.h.
 *
 * Threads: the loop thread only. */
#ifndef GW_SERVER_LOOP_H
#define GW_SERVER_LOOP_H

#include <stddef.h>
#include <stdint.h>

#include "gw_loop.h"
#include "gw_session.h"

/* (as in gw_server.h, which this header does not include) */
typedef struct gw_server gw_server_t;

/* Sessions: find by id within a tenant; add; count; the i-th. */
gw_session_t *gw_server_find_session (gw_server_t *self, const char *id, const char *tenant);
int gw_server_add_session (gw_server_t *self, gw_session_t *session);
size_t gw_server_session_count (gw_server_t *self);
gw_session_t *gw_server_session_at (gw_server_t *self, size_t i);
/* The session was paused or woke: the directory is told. */
void gw_server_session_status (gw_server_t *self, gw_session_t *session);
/* Ends a session and removes its folder. */
void gw_server_remove_session (gw_server_t *self, gw_session_t *session);

/* The loop source that polls the sessions' kernels, dispatches what they
 * send, reaps idle sessions and runs the timers. */
extern const gw_loop_source_t gw_server_loop_source;

/* How often idle sessions are looked for. */
int64_t gw_server_reap_every (const gw_server_t *self);

#endif
