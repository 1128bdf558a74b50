/* gw_registry: the registry of sessions and nodes that many nodes share in
 * Redis (the "directory" of the settings and docs: CODEBOX_DIRECTORY_URL,
 * redis://host:port/db, through hiredis). Each node
 * registers its sessions (tenant, id, kernel, node, created) and itself
 * (with whether it drains), each with an expiry it keeps refreshing; every
 * node reads the whole directory every couple of seconds. So listings span
 * the nodes, a request for a session another node holds is refused naming
 * that node, and a session whose node stopped refreshing is reported lost.
 *
 * Redis:  codebox:s:<tenant>:<id>  {"tenant","session_id","kernel","node","created",
 *                                  "status": "live"|"paused"}
 *                                  (expires an hour after its node stops)
 *         codebox:n:<node>         {"node","draining","sessions"} (expires in 10 s)
 *
 * Threads: a thread of its own talks to Redis; the functions here are for
 * the loop thread (they queue work for it, or read its latest view). */
#ifndef GW_REGISTRY_H
#define GW_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

typedef struct gw_registry gw_registry_t;

/* Starts the directory thread for url as node. NULL with err set when url
 * is not redis://HOST[:PORT][/DB]. (Redis being down is not an error: the
 * thread keeps trying, and the view stays empty meanwhile.) */
gw_registry_t *gw_registry_new (const char *url, const char *node, char *err,
                                  size_t err_len);
/* Removes this node's keys (best effort), stops the thread, frees. */
void gw_registry_destroy (gw_registry_t **self_p);

const char *gw_registry_node (const gw_registry_t *self);

/* A session of this node began (or was loaded again, or paused or woke:
 * its status "paused" or "live"), or ended. */
void gw_registry_put (gw_registry_t *self, const char *tenant, const char *id,
                      const char *kernel, bool paused);
void gw_registry_drop (gw_registry_t *self, const char *tenant, const char *id);

/* This node drains: it says so in the directory. */
void gw_registry_set_draining (gw_registry_t *self, bool draining);

typedef enum {
    GW_DIR_UNKNOWN,             /* no other node holds it */
    GW_DIR_ELSEWHERE,           /* a live node holds it (node) */
    GW_DIR_LOST,                /* its node (node) is gone */
} gw_dir_where_t;

/* Where tenant's session id is, by the latest view; node gets the name. */
gw_dir_where_t gw_registry_where (gw_registry_t *self, const char *tenant, const char *id,
                                   char *node, size_t node_len);

/* The tenant's sessions on other nodes (new array of {"session_id",
 * "kernel","node","created","status","lost"}). */
json_t *gw_registry_sessions (gw_registry_t *self, const char *tenant);

#endif
