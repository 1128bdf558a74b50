/* gw_sessions: the session operations every transport shares: create
 * (id rules, conflicts, the tenant's share and the server's bound, the
 * kernel by name or language, limits clamped for the caller), look up,
 * list (a tenant's sessions, one-shot ones left out) and end. REST, MCP
 * over HTTP and over stdio are thin adapters over these; each words its
 * own errors from the gw_error_t they return.
 *
 * Threads: the loop thread only. */
#ifndef GW_SESSIONS_H
#define GW_SESSIONS_H

#include <jansson.h>

#include "gw_caller.h"
#include "gw_error.h"
#include "gw_server.h"
#include "gw_session.h"
#include "ks_spec.h"

/* The limits a new session of caller gets. */
gw_limits_t gw_sessions_limits (gw_server_t *server, const gw_caller_t *caller);

/* The kernelspec by name, else the default kernel if it speaks language,
 * else the first that does, else the default kernel. NULL with err set. */
ks_spec_t *gw_sessions_find_spec (gw_server_t *server, const char *kernel, const char *language,
                                  char *err, size_t err_len);

/* Makes and starts a session (id NULL: a new uuid). NULL with *e and err
 * set: GW_E_INVALID_SESSION_ID, GW_E_CONFLICT, GW_E_TOO_MANY_SESSIONS (the
 * tenant holds its share, CODEBOX_TENANT_MAX_SESSIONS, or the server its
 * CODEBOX_MAX_SESSIONS; err says which), GW_E_KERNEL_NOT_FOUND,
 * GW_E_KERNEL_START_FAILED. */
gw_session_t *gw_sessions_create (gw_server_t *server, const gw_caller_t *caller,
                                  const char *id, const char *kernel, const char *language,
                                  gw_error_t *e, char *err, size_t err_len);

/* The live sessions tenant holds (one-shot ones too: each has a kernel). */
size_t gw_sessions_count_tenant (gw_server_t *server, const char *tenant);

/* The caller's session id, or NULL with *e = GW_E_INVALID_SESSION_ID,
 * GW_E_SESSION_NOT_FOUND, or, with a directory shared by many nodes,
 * GW_E_WRONG_NODE (another node holds it) or GW_E_SESSION_LOST (its node
 * is gone). */
gw_session_t *gw_sessions_lookup (gw_server_t *server, const gw_caller_t *caller,
                                  const char *id, gw_error_t *e);

/* The message for a lookup's failure e (naming the node that holds the
 * session, or the one it was lost with). */
void gw_sessions_missing_why (gw_server_t *server, const gw_caller_t *caller, const char *id,
                              gw_error_t e, char *msg, size_t msg_len);

/* The caller's sessions as a new JSON array of gw_session_json (one-shot
 * sessions left out); with a shared directory and all_nodes, also those
 * of the other nodes ({"session_id","kernel","node","created","lost"}),
 * and every entry says its "node". */
json_t *gw_sessions_list (gw_server_t *server, const gw_caller_t *caller, bool all_nodes);

/* Ends a session at a client's request: its kernel, jobs and folder. */
void gw_sessions_end (gw_server_t *server, gw_session_t *session);

/* The rule session ids follow, as a sentence for error messages. */
extern const char gw_sessions_id_rule[];

#endif
