/* gw_volumes: a tenant's named volumes: folders that outlive sessions and
 * restarts, each with a quota of its own, that a session mounts at its
 * creation (read-write or read-only) and its kernel sees at
 * /volumes/NAME. They live in the state folder, outside every session
 * folder: STATE/.volumes/@TENANT/NAME/ (the folder), NAME.json (its
 * size and birth, written last: a volume without it does not exist) and,
 * as root with file systems per folder (gw_disk), NAME.img: an ext4 image
 * of size_mb that is kept and mounted on the folder at first use after a
 * start, so a write past the size fails there and then with ENOSPC.
 * Without them the folder is plain and its size is checked on uploads.
 * Names are 1-64 of [A-Za-z0-9_-]; another tenant's volume does not
 * exist for a caller. A tenant holds at most CODEBOX_VOLUMES_MAX volumes
 * of CODEBOX_VOLUME_MAX_MB together. A volume that a live session mounts
 * is not deleted (409): the session holds it until it ends.
 *
 * Threads: the loop thread only. */
#ifndef GW_VOLUMES_H
#define GW_VOLUMES_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "gw_error.h"
#include "gw_exec_options.h"
#include "gw_server.h"

typedef struct gw_volumes gw_volumes_t;

/* Watches sessions end (hooks) to let go of their volumes. NULL when out
 * of memory. */
gw_volumes_t *gw_volumes_new (gw_server_t *server);
void gw_volumes_destroy (gw_volumes_t **self_p);

/* The rule a volume name follows, as a sentence for error messages. */
extern const char gw_volumes_name_rule[];

/* True when name is a valid volume name. */
bool gw_volumes_valid_name (const char *name);

/* Makes tenant's volume name of size_mb MiB. Returns its description
 * (new: {"name","size_mb","used_bytes","free_bytes","path" (as kernels
 * see it),"sessions" (the ids of the live sessions that mount it),
 * "created"}) or
 * NULL with *e and err set: GW_E_BAD_REQUEST (the name or size),
 * GW_E_CONFLICT (it exists), GW_E_FORBIDDEN (the tenant has
 * CODEBOX_VOLUMES_MAX), GW_E_TOO_LARGE (past CODEBOX_VOLUME_MAX_MB, or no
 * room on the disk), GW_E_INTERNAL. */
json_t *gw_volumes_create (gw_volumes_t *self, const char *tenant, const char *name,
                           long size_mb, gw_error_t *e, char *err, size_t err_len);

/* Tenant's volumes as a new array of descriptions, by name. */
json_t *gw_volumes_list (gw_volumes_t *self, const char *tenant);

/* One volume's description (new), or NULL with *e (GW_E_NOT_FOUND) and
 * err set. */
json_t *gw_volumes_describe (gw_volumes_t *self, const char *tenant, const char *name,
                             gw_error_t *e, char *err, size_t err_len);

/* Deletes tenant's volume name and its files. Returns 0, or -1 with *e
 * (GW_E_NOT_FOUND, GW_E_CONFLICT while a session mounts it,
 * GW_E_INTERNAL) and err set. */
int gw_volumes_delete (gw_volumes_t *self, const char *tenant, const char *name,
                       gw_error_t *e, char *err, size_t err_len);

/* The host folder of tenant's volume name (mounted when it has an image)
 * into path, and the bytes still free in it into *room. Returns 0, or -1
 * with *e and err set. */
int gw_volumes_folder (gw_volumes_t *self, const char *tenant, const char *name, char *path,
                       size_t path_len, long long *room, gw_error_t *e, char *err,
                       size_t err_len);

/* A new session's "volumes" ([{"name", "read_only"?}], or NULL/null:
 * none) for tenant, resolved into exec->volumes. Returns 0, or -1 with *e
 * and err set: GW_E_BAD_REQUEST (the shape, a name twice, more than
 * GW_EXEC_MAX_VOLUMES), GW_E_NOT_FOUND (no such volume of the tenant's),
 * GW_E_FORBIDDEN (kernels do not run under the sandbox, so nothing can be
 * confined to a volume). */
int gw_volumes_attach (gw_volumes_t *self, const char *tenant, json_t *list,
                       gw_exec_options_t *exec, gw_error_t *e, char *err, size_t err_len);

/* The session (made with exec) holds its volumes until it ends. */
void gw_volumes_hold (gw_volumes_t *self, gw_session_t *session,
                      const gw_exec_options_t *exec);

#endif
