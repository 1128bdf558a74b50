/* gw_server_state: the server's struct, shared by gw_server.c (making it,
 * the services, the session table) and gw_server_loop.c (its loop source).
 * Nothing else includes it.
 *
 * Threads: as gw_server.h. */
#ifndef GW_SERVER_STATE_H
#define GW_SERVER_STATE_H

#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "gw_hooks.h"
#include "gw_kernel_epoll.h"
#include "gw_loop.h"
#include "gw_registry.h"
#include "gw_sandbox.h"
#include "gw_request.h"
#include "gw_session.h"

#define MAX_SESSIONS_HARD 4096

/* (as in gw_server.h, which this header does not include: the loop source
   and the session table need the state, not the server's functions) */
typedef struct gw_server gw_server_t;

struct gw_server {
    const gw_config_t *config;
    void (*handler) (gw_server_t *server, gw_request_t *req, void *arg);
    void *handler_arg;
    gw_loop_t *loop;
    char state_dir[PATH_MAX];
    char runtime_dir[64];
    gw_jobs_t *jobs;
    gw_metrics_t *metrics;
    gw_session_t **sessions;
    size_t n_sessions, cap_sessions;
    int pool_first, n_items;    /* this turn's items: the pool's start, all */
    gw_kernel_epoll_t *watch;   /* the sessions' kernels, polled and dispatched */
    int64_t next_reap;
    gw_sandbox_t *sandbox;
    struct gw_sql *sql;         /* the SQL workers, or NULL (set by the program) */
    struct gw_downloads *downloads;     /* upload_file's URL downloads, or NULL */
    struct gw_packages *packages;       /* package installs, or NULL */
    struct gw_volumes *volumes;         /* named volumes, or NULL */
    gw_registry_t *registry;   /* shared with other nodes, or NULL (one machine) */
    atomic_bool draining;       /* refuses new sessions (SIGUSR1); read by the HTTP edge */
    int lock_fd;                /* the state folder's lock (gw_state_dir) */
    int runtime_lock_fd;        /* the runtime folder's (gw_runtime_dir) */
    char disk_why[300];         /* how the disk quota is enforced (gw_disk) */
    int64_t next_jobs_expiry;
    gw_hooks_t hooks;           /* the features' */
    gw_session_host_t host;     /* what sessions and the pool need of the server */
};

#endif
