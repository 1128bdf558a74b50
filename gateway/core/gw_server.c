/* gw_server: the application: the state and runtime folders, the session
 * table, the job store, the services, and the loop source that polls the
 * kernels and runs the timers. Threads: gw_server_post, gw_server_call and
 * gw_server_stop from any thread; the rest in the loop thread. */
#include "gw_server_internal.h"
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

#include <zmq.h>

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

#define MAX_SESSIONS_HARD 4096

struct gw_server {
    const gw_config_t *config;
    gw_server_handler_fn *handler;
    void *handler_arg;
    gw_loop_t *loop;
    void *zmq;
    char state_dir[PATH_MAX];
    char runtime_dir[64];
    gw_jobs_t *jobs;
    gw_metrics_t *metrics;
    gw_session_t **sessions;
    size_t n_sessions, cap_sessions;
    /* this turn's sessions: where their items start and how many (0: their
       kernel is watched through the epoll set), their kernels for it */
    struct {
        gw_session_t *session;
        int first, count;
    } *polled;
    ks_kernel_t **kernels;
    bool *ready;
    size_t n_polled, cap_polled;
    int pool_first, n_items;
    gw_kernel_epoll_t *watch;          /* the kernels not used since their last poll */
    int watch_item;             /* its item this turn, or -1 */
    int64_t next_reap;
    gw_sandbox_t *sandbox;
    struct gw_sql *sql;         /* the SQL workers, or NULL (set by the program) */
    struct gw_downloads *downloads;     /* upload_file's URL downloads, or NULL */
    struct gw_packages *packages;       /* package installs, or NULL */
    gw_registry_t *directory;  /* shared with other nodes, or NULL (one machine) */
    atomic_bool draining;       /* refuses new sessions (SIGUSR1); read by the HTTP edge */
    int lock_fd;                /* the state folder's lock (gw_state_dir) */
    int runtime_lock_fd;        /* the runtime folder's (gw_runtime_dir) */
    char disk_why[300];         /* how the disk quota is enforced (gw_disk) */
    int64_t next_jobs_expiry;
    gw_hooks_t hooks;           /* the features' */
    gw_session_host_t host;     /* what sessions and the pool need of the server */
};

static const gw_loop_source_t s_source;

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

static int64_t s_reap_every (const gw_server_t *self);

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
       mounts first), then session folders get file systems of their own */
    if (gw_state_dir_lock (self->state_dir, &self->lock_fd, err, err_len) < 0) {
        gw_server_destroy (&self);
        return NULL;
    }
    gw_disk_unmount_below (self->state_dir);
    gw_state_dir_sweep (self->state_dir);
    gw_disk_setup (self->state_dir, self->disk_why, sizeof self->disk_why);
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
    if (!self->loop || gw_loop_add_source (self->loop, &s_source, self) < 0) {
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
        self->directory = gw_registry_new (dir_url, node[0] ? node : "codebox", err, err_len);
        if (!self->directory) {
            gw_server_destroy (&self);
            return NULL;
        }
    }
    self->zmq = zmq_ctx_new ();
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
        .launch = {.config = config, .zmq = self->zmq, .runtime_dir = self->runtime_dir,
                   .state_dir = self->state_dir, .sandbox = self->sandbox,
                   .metrics = self->metrics, .hooks = &self->hooks},
        .jobs = self->jobs,
        .server = self,
    };
    self->host.pool = gw_pool_new (&self->host.launch);
    self->watch = gw_kernel_epoll_new ();     /* NULL: every kernel is polled each turn */
    if (!self->host.pool || !self->zmq || !self->jobs || !self->metrics) {
        snprintf (err, err_len, "cannot set up the server: %s", strerror (errno));
        gw_server_destroy (&self);
        return NULL;
    }
    self->next_reap = jp_time_now_ms () + s_reap_every (self);
    return self;
}

void
gw_server_destroy (gw_server_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gw_server_t *self = *self_p;
    for (size_t i = 0; i < self->n_sessions; i++)
        gw_session_destroy (&self->sessions[i], false);
    free (self->sessions);
    gw_pool_destroy (&self->host.pool);
    gw_registry_destroy (&self->directory);    /* its sessions are gone: it says so */
    gw_sandbox_destroy (&self->sandbox);
    gw_loop_destroy (&self->loop);     /* its last calls and requests first */
    gw_jobs_destroy (&self->jobs);
    gw_metrics_destroy (&self->metrics);
    if (self->zmq)
        zmq_ctx_term (self->zmq);
    free (self->polled);
    free (self->kernels);
    free (self->ready);
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

/* Busy, for the reaper: a job of ours, code a Jupyter client runs (the
 * kernel's own status says so), or a client holding it open, as Jupyter
 * does not cull connected kernels. Each of these ends with an event that
 * wakes the loop (a job's end, the kernel's status, a connection closed). */
static bool
s_session_busy (gw_server_t *self, gw_session_t *s)
{
    return s->running || s->queue_head
           || strcmp (gw_session_execution_state (s), "busy") == 0
           || gw_hooks_in_use (&self->hooks, s);
}

/* The earliest time a session could be reaped: its TTL's end, or its
 * idle end if it is not busy now (when it stops being busy, that event
 * wakes the loop and this is asked again); -1 while it is starting (not
 * idle yet: its creator waits for it; its kernel's next event wakes the
 * loop). */
static int64_t
s_reap_due (gw_server_t *self, gw_session_t *s)
{
    if (strcmp (gw_session_status (s), "starting") == 0)
        return -1;
    int64_t ttl = s->created_ms + (int64_t) s->limits.ttl_s * 1000;
    if (s_session_busy (self, s))
        return ttl;
    int64_t idle = s->last_used_ms + (int64_t) s->limits.idle_s * 1000;
    return idle < ttl ? idle : ttl;
}

/* Ends sessions past their time to live or idle too long (s_reap_due:
 * the loop's wake-up for the reaper asks the same). */
static void
s_reap (gw_server_t *self, int64_t now)
{
    for (size_t i = 0; i < self->n_sessions;) {
        gw_session_t *s = self->sessions[i];
        int64_t due = s_reap_due (self, s);
        if (due < 0 || now < due) {
            i++;
            continue;
        }
        const char *why = now - s->created_ms >= (int64_t) s->limits.ttl_s * 1000 ? "ttl" : "idle";
        jp_log_info ("session event=reaped session=%s why=%s", s->id, why);
        gw_server_remove_session (self, s);
    }
}

/* The source's poll capacity: the epoll set, every session's kernel, the pool. */
static int
s_poll_count (void *arg)
{
    gw_server_t *self = arg;
    return 1 + (int) (self->n_sessions * KS_KERNEL_POLL_ITEMS)    /* 1: the epoll set */
           + gw_pool_poll_count (self->host.pool);
}

/* Room for this turn's per-session arrays. Returns false if out of memory. */
static bool
s_polled_room (gw_server_t *self)
{
    if (self->cap_polled >= self->n_sessions + 1)
        return true;
    size_t cap = self->n_sessions + 16;
    void *polled = realloc (self->polled, cap * sizeof *self->polled);
    if (polled)
        self->polled = polled;
    ks_kernel_t **kernels = realloc (self->kernels, cap * sizeof *kernels);
    if (kernels)
        self->kernels = kernels;
    bool *ready = realloc (self->ready, cap * sizeof *ready);
    if (ready)
        self->ready = ready;
    if (!polled || !kernels || !ready)
        return false;
    self->cap_polled = cap;
    return true;
}

/* Fills the loop's items: the epoll set that watches the kernels, and the
 * items of the kernels that must be polled themselves this turn (used
 * since their last poll, or all of them if there is no set); remembers
 * whose they are for dispatch. */
static int
s_poll_items (void *arg, zmq_pollitem_t *items, int max)
{
    gw_server_t *self = arg;
    self->n_polled = 0;
    self->watch_item = -1;
    if (!s_polled_room (self))
        return 0;       /* out of memory: this turn polls no kernel */
    for (size_t i = 0; i < self->n_sessions; i++) {
        self->polled[i].session = self->sessions[i];
        self->kernels[i] = self->sessions[i]->kernel;
    }
    int n = 0;
    int epfd = self->watch ? gw_kernel_epoll_sync (self->watch, self->kernels, self->n_sessions) : -1;
    if (epfd >= 0 && n < max) {
        self->watch_item = n;
        items[n++] = (zmq_pollitem_t) {.fd = epfd, .events = ZMQ_POLLIN};
    }
    for (size_t i = 0; i < self->n_sessions; i++) {
        ks_kernel_t *kernel = self->kernels[i];
        bool watched = self->watch_item >= 0
                       && !(kernel && ks_kernel_needs_poll_items (kernel));
        self->polled[i].first = n;
        self->polled[i].count = watched ? 0 : gw_session_poll_items (self->sessions[i], items + n,
                                                                     max - n);
        n += self->polled[i].count;
    }
    self->n_polled = self->n_sessions;
    self->pool_first = n;
    n += gw_pool_poll_items (self->host.pool, items + n, max - n);
    self->n_items = n;
    return n;
}

/* A watched session the epoll set found readable: its own items, polled
 * without waiting, then dispatched. */
static void
s_dispatch_ready (gw_session_t *session)
{
    zmq_pollitem_t items[KS_KERNEL_POLL_ITEMS];
    struct pollfd pfds[KS_KERNEL_POLL_ITEMS];
    int k = gw_session_poll_items (session, items, KS_KERNEL_POLL_ITEMS);
    if (jp_poll (items, pfds, k, 0) < 0)
        k = 0;
    gw_session_dispatch (session, items, k);
}

/* Kernels first (their timers run even when nothing was readable);
 * requests after this may end sessions polled here. */
static void
s_dispatch (void *arg, const zmq_pollitem_t *items, int n)
{
    gw_server_t *self = arg;
    (void) n;
    if (self->n_polled)
        memset (self->ready, 0, self->n_polled * sizeof *self->ready);
    if (self->watch_item >= 0 && (items[self->watch_item].revents & ZMQ_POLLIN))
        gw_kernel_epoll_ready (self->watch, self->ready, self->n_polled);
    for (size_t i = 0; i < self->n_polled; i++) {
        gw_session_t *session = self->polled[i].session;
        if (self->polled[i].count)
            gw_session_dispatch (session, items + self->polled[i].first, self->polled[i].count);
        else if (self->ready[i] && session->kernel == self->kernels[i])
            s_dispatch_ready (session);
        else
            gw_session_dispatch (session, NULL, 0);     /* its timers */
    }
    gw_pool_dispatch (self->host.pool, items + self->pool_first,
                      self->n_items - self->pool_first);
    self->n_polled = 0;
}

/* The reaper's interval in ms (a second at least: 0 would spin the loop). */
static int64_t
s_reap_every (const gw_server_t *self)
{
    int64_t every = gw_config_int (self->config, GW_SET_CLEANUP_INTERVAL) * 1000;
    return every < 1000 ? 1000 : every;
}

/* The reaper's passes keep to the cleanup interval's beat, but the loop
 * wakes only for the first pass that may find a session to reap, so a
 * gateway whose sessions are idle sleeps until one could expire: -1 if
 * none could. */
static int64_t
s_reap_deadline (gw_server_t *self)
{
    int64_t due = -1;
    for (size_t i = 0; i < self->n_sessions; i++) {
        int64_t d = s_reap_due (self, self->sessions[i]);
        if (d >= 0 && (due < 0 || d < due))
            due = d;
    }
    if (due < 0 || due <= self->next_reap)
        return due < 0 ? -1 : self->next_reap;
    int64_t every = s_reap_every (self);
    return self->next_reap + (due - self->next_reap + every - 1) / every * every;
}

/* The earliest time the sessions, the long polls, the pool or the
 * reaper need the loop, or -1 for none. */
static int64_t
s_deadline (void *arg, int64_t now)
{
    gw_server_t *self = arg;
    int64_t next = s_reap_deadline (self);
    for (size_t i = 0; i < self->n_sessions; i++) {
        int64_t d = gw_session_deadline (self->sessions[i]);
        if (d >= 0 && (next < 0 || d < next))
            next = d;
    }
    int64_t w = gw_jobs_expire_waits (self->jobs, now);
    if (w >= 0 && (next < 0 || w < next))
        next = w;
    int64_t p = gw_pool_deadline (self->host.pool);
    if (p >= 0 && (next < 0 || p < next))
        next = p;
    return next;
}

/* After the turn's requests: sessions' timers, the pool, doomed and
 * expired sessions, the result store's bounds. */
static void
s_tick (void *arg, int64_t now)
{
    gw_server_t *self = arg;
    for (size_t i = 0; i < self->n_sessions; i++)
        gw_session_tick (self->sessions[i], now);
    if (!gw_loop_stopping (self->loop))
        gw_pool_tick (self->host.pool, now);
    for (size_t i = 0; i < self->n_sessions;) {
        if (self->sessions[i]->doomed)
            gw_server_remove_session (self, self->sessions[i]);
        else
            i++;
    }
    if (now >= self->next_reap) {
        s_reap (self, now);
        int64_t every = s_reap_every (self);
        while (self->next_reap <= now)  /* on the beat, however late this turn came */
            self->next_reap += every;
    }
    /* the result store's bounds (age, count, bytes), four times a second */
    if (now >= self->next_jobs_expiry) {
        if (gw_jobs_expire (self->jobs, now) > (16u << 20))
            malloc_trim (0);    /* give big freed results back to the system */
        self->next_jobs_expiry = now + 250;
    }
    gw_metrics_sessions_live (self->metrics, (long) self->n_sessions);
}

static const gw_loop_source_t s_source = {
    .poll_count = s_poll_count,
    .poll_items = s_poll_items,
    .dispatch = s_dispatch,
    .deadline = s_deadline,
    .tick = s_tick,
};

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

gw_metrics_t *
gw_server_metrics (gw_server_t *self)
{
    return self->metrics;
}

gw_session_t *
gw_server_find_session (gw_server_t *self, const char *id, const char *tenant)
{
    for (size_t i = 0; i < self->n_sessions; i++)
        if (strcmp (self->sessions[i]->id, id) == 0
            && strcmp (self->sessions[i]->tenant, tenant) == 0)
            return self->sessions[i];
    return NULL;
}

int
gw_server_add_session (gw_server_t *self, gw_session_t *session)
{
    if (self->n_sessions == self->cap_sessions) {
        size_t cap = self->cap_sessions ? self->cap_sessions * 2 : 16;
        if (cap > MAX_SESSIONS_HARD)
            return -ENOSPC;
        gw_session_t **grown = realloc (self->sessions, cap * sizeof *grown);
        if (!grown)
            return -ENOMEM;
        self->sessions = grown;
        self->cap_sessions = cap;
    }
    self->sessions[self->n_sessions++] = session;
    if (self->directory)
        gw_registry_put (self->directory, session->tenant, session->id, session->spec->name);
    return 0;
}

gw_registry_t *
gw_server_directory (gw_server_t *self)
{
    return self->directory;
}

void
gw_server_set_draining (gw_server_t *self, bool draining)
{
    atomic_store (&self->draining, draining);
    if (self->directory)
        gw_registry_set_draining (self->directory, draining);
    jp_log_info ("node event=%s", draining ? "draining" : "serving");
}

bool
gw_server_draining (gw_server_t *self)
{
    return atomic_load (&self->draining);
}

size_t
gw_server_session_count (gw_server_t *self)
{
    return self->n_sessions;
}

gw_session_t *
gw_server_session_at (gw_server_t *self, size_t i)
{
    return i < self->n_sessions ? self->sessions[i] : NULL;
}

void
gw_server_remove_session (gw_server_t *self, gw_session_t *session)
{
    for (size_t i = 0; i < self->n_sessions; i++)
        if (self->sessions[i] == session) {
            memmove (&self->sessions[i], &self->sessions[i + 1],
                     (self->n_sessions - i - 1) * sizeof *self->sessions);
            self->n_sessions--;
            if (self->directory)
                gw_registry_drop (self->directory, session->tenant, session->id);
            break;
        }
    gw_session_destroy (&session, true);
}
