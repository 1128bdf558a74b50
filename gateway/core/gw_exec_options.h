/* gw_exec_options: codebox-ai's "execution_options" of POST /sessions:
 * what a session's kernel runs with. timeout (seconds), memory_limit
 * ("2G", "512m", bytes), cpu_limit (cores, "0.5"), environment_variables
 * ({NAME: value}) and mount_points ([{host_path, container_path,
 * read_only?}]). Limits are clamped to the server's; mounts are allowed
 * only inside the folders of CODEBOX_MOUNT_ROOTS (read-only unless the
 * root says "=rw" and the client asks), and only with the sandbox;
 * codebox's own folders inside a mounted one stay hidden.
 * Parsing is pure but for realpath on host paths; any thread. */
#ifndef GW_EXEC_OPTIONS_H
#define GW_EXEC_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "gw_error.h"

#define GW_EXEC_MAX_ENV 64
#define GW_EXEC_ENV_BYTES 4096          /* per value */
#define GW_EXEC_MAX_MOUNTS 4

#define GW_EXEC_OWN_DIRS 2

typedef struct {
    char host[1024];            /* real path on the host */
    char container[256];        /* where the kernel sees it */
    bool read_write;
    /* where codebox's own folders (gw_exec_rules_t.own_dirs) lie inside
       the mount as the kernel sees it, each to be covered by an empty
       folder ("": none) */
    char hide[GW_EXEC_OWN_DIRS][256];
} gw_mount_t;

/* A tenant's named volume, mounted at /volumes/NAME (set by
 * gateway/files/gw_volumes.c, never parsed from a client's JSON). */
#define GW_EXEC_MAX_VOLUMES 4
#define GW_VOLUMES_AT "/volumes"

typedef struct {
    char name[65];
    char host[1024];            /* the volume's folder on the host */
    bool read_write;
} gw_volume_mount_t;

typedef struct gw_exec_options {
    long timeout_s;             /* 0: the server's */
    long memory_mb;             /* 0: the server's */
    long cpu_milli;             /* thousandths of a core; 0: no quota */
    char *env[GW_EXEC_MAX_ENV + 1];     /* "NAME=value", NULL-terminated (malloc'd) */
    gw_mount_t mounts[GW_EXEC_MAX_MOUNTS];
    int n_mounts;
    gw_volume_mount_t volumes[GW_EXEC_MAX_VOLUMES];
    int n_volumes;
} gw_exec_options_t;

/* The server's side of the rules. */
typedef struct {
    long max_memory_mb;         /* CODEBOX_MEMORY_LIMIT_MB */
    long max_cpu_milli;         /* the online CPUs, in thousandths */
    const char *mount_roots;    /* CODEBOX_MOUNT_ROOTS ("" or NULL: none) */
    bool sandbox;               /* kernels run under bubblewrap (mounts need it) */
    /* the server's state and runtime folders (every session's files,
       kernels' connection files): never mounted themselves, and hidden in
       a mount that holds them (CODEBOX_MOUNT_ROOTS=/tmp, codebox-ai's
       example, while the state folder is in /tmp) */
    const char *own_dirs[GW_EXEC_OWN_DIRS];
} gw_exec_rules_t;

/* Parses options (a JSON object, or NULL/null: nothing) into out (zeroed
 * first). Returns 0, or -1 with *e (GW_E_BAD_REQUEST for a malformed
 * value, GW_E_FORBIDDEN for a mount outside CODEBOX_MOUNT_ROOTS or inside
 * one of codebox's own folders) and a
 * sentence in err. out is always safe to clear. */
int gw_exec_options_parse (json_t *options, const gw_exec_rules_t *rules, gw_exec_options_t *out,
                           gw_error_t *e, char *err, size_t err_len);

/* True when the options change how a kernel is started (a warm kernel of
 * the pool will not do). */
bool gw_exec_options_custom (const gw_exec_options_t *self);

/* A deep copy of src into dst. Returns 0 or -ENOMEM (dst cleared). */
int gw_exec_options_copy (gw_exec_options_t *dst, const gw_exec_options_t *src);

/* Frees what the options hold and zeroes them. */
void gw_exec_options_clear (gw_exec_options_t *self);

/* The options in the shape gw_exec_options_parse reads (new; {} for
 * none): what a kept session's settings hold, to start its kernel again;
 * volumes as "volumes": [{"name","read_only"}], which the parser leaves
 * (gw_volumes_attach resolves them again, for the session's tenant). */
json_t *gw_exec_options_json (const gw_exec_options_t *self);

/* "2G", "512m", "1.5g", "1024k", "1048576" (bytes) -> MiB, rounded up;
 * -1 when malformed or zero. */
long gw_exec_parse_memory (const char *text);

/* "1", "0.5", "2.25" (cores) -> thousandths of a core; -1 when malformed
 * or zero. */
long gw_exec_parse_cpu (const char *text);

#endif
