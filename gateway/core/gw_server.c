/* gw_server: the application: the state and runtime folders, the session
 * table, the job store, the services (the loop source that polls the
 * kernels and runs the timers is gw_server_loop.c). Threads: gw_server_post, gw_server_call and
 * gw_server_stop from any thread; the rest in the loop thread. */
#include "gw_server_internal.h"
#include "gw_server_state.h"
#include "gw_job_internal.h"
#include "gw_session_internal.h"

#include <errno.h>
#include <stdatomic.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


#include "gw_registry.h"
#include "gw_disk.h"
#include "gw_fs.h"
#include "gw_pool.h"
#include "gw_sandbox.h"
#include "gw_runtime_dir.h"
#include "gw_state_dir.h"
#include "gw_kernel_epoll.h"
#include "jp_poll.h"
#include "jp_time.h"
#include "jp_log.h"


/* SIGUSR1 drains the node (no new sessions; the live ones go on), SIGUSR2
 * ends draining. */
static void
s_on_user_signal (bool first, void *arg)
{
    gw_server_set_draining (arg, first);
}

/* A posted request, in the loop thread: to the handler, or 503 once the
 * loop is stopping. */
static void
s_run_request (gw_loop_item_t *item, bool stopping)
{
    gw_server_t *self = item->ctx;
    gw_request_t *req = item->arg;
    if (stopping)
        gw_request_reply_error (req, GW_E_SHUTTING_DOWN, "the gateway is shutting down");
    else if (self->handler)
        self->handler (self, req, self->handler_arg);
    else
        gw_request_reply_error (req, GW_E_NOT_FOUND, "no route %s %s", req->method,
                                req->path ? req->path : "/");
}

gw_server_t *
gw_server_new (const gw_config_t *config, char *err, size_t err_len)
{
    gw_server_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, err_len, "out of memory");
        return NULL;
    }
    self->config = config;
    self->lock_fd = -1;
    self->runtime_lock_fd = -1;
    char fallback[PATH_MAX];
    const char *state = gw_config_str (config, GW_SET_STATE_DIR);
    if (!state[0] && gw_state_dir_default (fallback, sizeof fallback) == 0)
        state = fallback;
    /* 0711: kernels without a sandbox may pass through to their folder */
    int rc = gw_fs_mkdirs (state, 0711);
    if (rc || !realpath (state, self->state_dir)) {
        snprintf (err, err_len, "cannot use the state folder %s: %s", state,
                  strerror (rc ? -rc : errno));
        gw_server_destroy (&self);
        return NULL;
    }
    /* one server per state folder; what an earlier one left goes (its
       mounts first; never a running stdio server's folder), then session
       folders get file systems of their own */
    if (gw_state_dir_lock (self->state_dir, &self->lock_fd, err, err_len) < 0) {
        gw_server_destroy (&self);
        return NULL;
    }
    gw_state_dir_sweep (self->state_dir);
    char stdio[PATH_MAX + 16];
    snprintf (stdio, sizeof stdio, "%s/" GW_STATE_DIR_STDIO, self->state_dir);
    gw_disk_setup (self->state_dir, stdio, self->disk_why, sizeof self->disk_why);
    jp_log_info ("state dir=%s disk_quota_by=%s why=%s", self->state_dir,
                 gw_disk_enabled () ? "filesystem" : "report", self->disk_why);
    /* what servers that died left in /tmp goes, then this one's folder */
    gw_runtime_dir_sweep ("/tmp");
    if (gw_runtime_dir_make ("/tmp", self->runtime_dir, sizeof self->runtime_dir,
                             &self->runtime_lock_fd, err, err_len) < 0) {
        gw_server_destroy (&self);
        return NULL;
    }
    jp_log_info ("runtime dir=%s", self->runtime_dir);
    self->loop = gw_loop_new (err, err_len);
    if (!self->loop || gw_loop_add_source (self->loop, &gw_server_loop_source, self) < 0) {
        gw_server_destroy (&self);
        return NULL;
    }
    gw_loop_on_user_signal (self->loop, s_on_user_signal, self);
    const char *dir_url = gw_config_str (config, GW_SET_DIRECTORY_URL);
    if (dir_url[0]) {
        char host[65] = "";
        const char *node = gw_config_str (config, GW_SET_NODE_NAME);
        if (!node[0] && gethostname (host, sizeof host - 1) == 0)
            node = host;
        self->registry = gw_registry_new (dir_url, node[0] ? node : "codebox", err, err_len);
        if (!self->registry) {
            gw_server_destroy (&self);
            return NULL;
        }
    }
    self->jobs = gw_jobs_new ();
    if (self->jobs)
        gw_jobs_set_max_bytes (self->jobs,
                               (size_t) gw_config_int (config, GW_SET_RESULT_STORE_MB) << 20);
    self->metrics = gw_metrics_new ();
    self->sandbox = gw_sandbox_new (config, self->runtime_dir, err, err_len);
    if (!self->sandbox) {
        gw_server_destroy (&self);
        return NULL;
    }
    self->host = (gw_session_host_t) {
        .launch = {.config = config, .runtime_dir = self->runtime_dir,
                   .state_dir = self->state_dir, .sandbox = self->sandbox,
                   .metrics = self->metrics, .hooks = &self->hooks},
        .jobs = self->jobs,
        .server = self,
    };
    self->host.pool = gw_pool_new (&self->host.launch);
    self->watch = gw_kernel_epoll_new ();
    if (!self->host.pool || !self->jobs || !self->metrics || !self->watch) {
        snprintf (err, err_len, "cannot set up the server: %s", strerror (errno));
        gw_server_destroy (&self);
        return NULL;
    }
    self->next_reap = jp_time_now_ms () + gw_server_reap_every (self);
    return self;
}

void
gw_server_destroy (gw_server_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gw_server_t *self = *self_p;
    for (size_t i = 0; i < self->n_sessions; i++) {
        if (!gw_session_paused (self->sessions[i]))    /* kept: its free space goes back */
            gw_disk_trim (gw_session_workdir (self->sessions[i]));
        gw_session_destroy (&self->sessions[i], false);
    }
    free (self->sessions);
    gw_pool_destroy (&self->host.pool);
    gw_registry_destroy (&self->registry);    /* its sessions are gone: it says so */
    gw_sandbox_destroy (&self->sandbox);
    gw_loop_destroy (&self->loop);     /* its last calls and requests first */
    gw_jobs_destroy (&self->jobs);
    gw_metrics_destroy (&self->metrics);
    gw_kernel_epoll_destroy (&self->watch);
    if (self->runtime_dir[0])
        gw_fs_remove_tree (self->runtime_dir);
    if (self->runtime_lock_fd >= 0)
        close (self->runtime_lock_fd);
    if (self->lock_fd >= 0)
        gw_disk_teardown (self->state_dir);
    if (self->lock_fd >= 0)
        close (self->lock_fd);
    free (self);
    *self_p = NULL;
}

void
gw_server_stop (gw_server_t *self)
{
    gw_loop_stop (self->loop);
}

/* A call for the server, carried by the loop. */
typedef struct {
    gw_server_t *server;
    gw_server_call_fn *fn;
    void *arg;
} s_call_t;

static void
s_run_call (void *arg)
{
    s_call_t call = *(s_call_t *) arg;
    free (arg);
    call.fn (call.server, call.arg);
}

int
gw_server_call (gw_server_t *self, gw_server_call_fn *fn, void *arg)
{
    s_call_t *call = malloc (sizeof *call);
    if (!call)
        return -ENOMEM;
    *call = (s_call_t) {self, fn, arg};
    int rc = gw_loop_call (self->loop, s_run_call, call);
    if (rc)
        free (call);
    return rc;
}

void
gw_server_post (gw_request_t *req, void *server)
{
    gw_server_t *self = server;
    req->item = (gw_loop_item_t) {.run = s_run_request, .arg = req, .ctx = self};
    gw_loop_post (self->loop, &req->item);
}

gw_loop_t *
gw_server_loop (gw_server_t *self)
{
    return self->loop;
}

int
gw_server_run (gw_server_t *self)
{
    gw_loop_run (self->loop);
    /* answer everything that waits before the HTTP server goes away */
    gw_loop_drain (self->loop);
    for (size_t i = 0; i < self->n_sessions; i++)
        gw_session_destroy (&self->sessions[i], false);
    self->n_sessions = 0;
    gw_pool_destroy (&self->host.pool);
    gw_jobs_shutdown (self->jobs);
    return 0;
}

int
gw_server_add_hooks (gw_server_t *self, const gw_session_hooks_t *hooks, void *arg)
{
    return gw_hooks_add (&self->hooks, hooks, arg);
}

void
gw_server_remove_hooks (gw_server_t *self, const gw_session_hooks_t *hooks, void *arg)
{
    gw_hooks_remove (&self->hooks, hooks, arg);
}

bool
gw_server_has_hooks (gw_server_t *self, const gw_session_hooks_t *hooks, void *arg)
{
    return gw_hooks_has (&self->hooks, hooks, arg);
}

void
gw_server_annotate (gw_server_t *self, const gw_session_t *session, json_t *artifacts)
{
    gw_hooks_annotate (&self->hooks, session, artifacts);
}

const gw_session_host_t *
gw_server_session_host (gw_server_t *self)
{
    return &self->host;
}

void
gw_server_set_sql (gw_server_t *self, struct gw_sql *sql)
{
    self->sql = sql;
}

void
gw_server_set_handler (gw_server_t *self, gw_server_handler_fn *handler, void *arg)
{
    self->handler = handler;
    self->handler_arg = arg;
}

const gw_config_t *
gw_server_config (gw_server_t *self)
{
    return self->config;
}

const char *
gw_server_state_dir (gw_server_t *self)
{
    return self->state_dir;
}

gw_jobs_t *
gw_server_jobs (gw_server_t *self)
{
    return self->jobs;
}

void
gw_server_set_downloads (gw_server_t *self, struct gw_downloads *downloads)
{
    self->downloads = downloads;
}

void
gw_server_set_packages (gw_server_t *self, struct gw_packages *packages)
{
    self->packages = packages;
}

struct gw_downloads *
gw_server_downloads (gw_server_t *self)
{
    return self->downloads;
}

struct gw_packages *
gw_server_packages (gw_server_t *self)
{
    return self->packages;
}

void
gw_server_set_volumes (gw_server_t *self, struct gw_volumes *volumes)
{
    self->volumes = volumes;
}

struct gw_volumes *
gw_server_volumes (gw_server_t *self)
{
    return self->volumes;
}

struct gw_sql *
gw_server_sql (gw_server_t *self)
{
    return self->sql;
}

gw_sandbox_t *
gw_server_sandbox (gw_server_t *self)
{
    return self->sandbox;
}

gw_exec_rules_t
gw_server_exec_rules (gw_server_t *self)
{
    gw_exec_rules_t rules = gw_sandbox_exec_rules (self->sandbox, self->config);
    rules.own_dirs[0] = self->state_dir;
    rules.own_dirs[1] = self->runtime_dir;
    return rules;
}

gw_metrics_t *
gw_server_metrics (gw_server_t *self)
{
    return self->metrics;
}



gw_registry_t *
gw_server_registry (gw_server_t *self)
{
    return self->registry;
}

void
gw_server_set_draining (gw_server_t *self, bool draining)
{
    atomic_store (&self->draining, draining);
    if (self->registry)
        gw_registry_set_draining (self->registry, draining);
    jp_log_info ("node event=%s", draining ? "draining" : "serving");
}

bool
gw_server_draining (gw_server_t *self)
{
    return atomic_load (&self->draining);
}
