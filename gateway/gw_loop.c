/* gw_loop: the loop thread: polling, dispatch, timers, the session table.
 * Threads: gw_loop_post and gw_loop_stop from any thread; the rest in the
 * loop thread. */
#include "gw_loop.h"

#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zmq.h>

#include "gw_blob.h"
#include "gw_disk.h"
#include "gw_fs.h"
#include "gw_mailbox.h"
#include "gw_pool.h"
#include "gw_sandbox.h"
#include "gw_sql.h"
#include "gw_state_dir.h"
#include "jp_time.h"
#include "jp_log.h"

#define MAX_SESSIONS_HARD 4096

struct gw_loop {
    const gw_config_t *config;
    gw_loop_handler_fn *handler;
    void *zmq;
    gw_mailbox_t *mailbox;
    int signal_fd;
    volatile int stopping;
    char state_dir[PATH_MAX];
    char runtime_dir[64];
    gw_jobs_t *jobs;
    gw_metrics_t *metrics;
    gw_session_t **sessions;
    size_t n_sessions, cap_sessions;
    int64_t next_reap;
    int watch_fd;
    gw_loop_fd_fn *watch_fn;
    void *watch_arg;
    gw_loop_deadline_fn *timer_deadline;
    gw_loop_tick_fn *timer_tick;
    void *timer_arg;
    void *app;
    gw_pool_t *pool;
    gw_sandbox_t *sandbox;
    gw_sql_t *sql;
    gw_blob_t *blob;            /* Azure Blob upload of artifacts, or NULL (off) */
    int lock_fd;                /* the state folder's lock (gw_state_dir) */
    char disk_why[300];         /* how the disk quota is enforced (gw_disk) */
    int64_t next_jobs_expiry;
};

gw_loop_t *
gw_loop_new (const gw_config_t *config, gw_loop_handler_fn *handler, char *err,
             size_t err_len)
{
    gw_loop_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, err_len, "out of memory");
        return NULL;
    }
    self->config = config;
    self->handler = handler;
    self->signal_fd = -1;
    self->watch_fd = -1;
    self->lock_fd = -1;
    char fallback[PATH_MAX];
    const char *state = gw_config_str (config, GW_SET_STATE_DIR);
    if (!state[0] && gw_state_dir_default (fallback, sizeof fallback) == 0)
        state = fallback;
    /* 0711: kernels without a sandbox may pass through to their folder */
    int rc = gw_fs_mkdirs (state, 0711);
    if (rc || !realpath (state, self->state_dir)) {
        snprintf (err, err_len, "cannot use the state folder %s: %s", state,
                  strerror (rc ? -rc : errno));
        gw_loop_destroy (&self);
        return NULL;
    }
    /* one server per state folder; what an earlier one left goes (its
       mounts first), then session folders get file systems of their own */
    if (gw_state_dir_lock (self->state_dir, &self->lock_fd, err, err_len) < 0) {
        gw_loop_destroy (&self);
        return NULL;
    }
    gw_disk_unmount_below (self->state_dir);
    gw_state_dir_sweep (self->state_dir);
    gw_disk_setup (self->state_dir, self->disk_why, sizeof self->disk_why);
    jp_log_info ("state dir=%s disk_quota_by=%s why=\"%s\"", self->state_dir,
                 gw_disk_enabled () ? "filesystem" : "report", self->disk_why);
    snprintf (self->runtime_dir, sizeof self->runtime_dir, "/tmp/codebox-XXXXXX");
    /* 0711: the kernel user may pass through to its own folder, not list */
    if (!mkdtemp (self->runtime_dir) || chmod (self->runtime_dir, 0711) < 0) {
        snprintf (err, err_len, "cannot make a runtime folder in /tmp: %s", strerror (errno));
        self->runtime_dir[0] = '\0';
        gw_loop_destroy (&self);
        return NULL;
    }
    sigset_t mask;
    sigemptyset (&mask);
    sigaddset (&mask, SIGTERM);
    sigaddset (&mask, SIGINT);
    self->signal_fd = signalfd (-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    self->zmq = zmq_ctx_new ();
    self->mailbox = gw_mailbox_new ();
    self->jobs = gw_jobs_new ();
    if (self->jobs)
        gw_jobs_set_max_bytes (self->jobs,
                               (size_t) gw_config_int (config, GW_SET_RESULT_STORE_MB) << 20);
    self->metrics = gw_metrics_new ();
    self->sandbox = gw_sandbox_new (config, self->runtime_dir, err, err_len);
    if (!self->sandbox) {
        gw_loop_destroy (&self);
        return NULL;
    }
    self->pool = gw_pool_new (self);
    self->sql = gw_sql_new (self, config);
    if (gw_blob_new (self, config, &self->blob, err, err_len) < 0) {
        gw_loop_destroy (&self);
        return NULL;
    }
    if (self->signal_fd < 0 || !self->pool || !self->sql || !self->zmq || !self->mailbox || !self->jobs || !self->metrics) {
        snprintf (err, err_len, "cannot set up the loop: %s", strerror (errno));
        gw_loop_destroy (&self);
        return NULL;
    }
    self->next_reap = jp_time_now_ms ()
                      + gw_config_int (config, GW_SET_CLEANUP_INTERVAL) * 1000;
    return self;
}

static bool s_run_call (gw_loop_t *self, gw_request_t *req);

/* Answers every request still in the mailbox with 503 (and runs calls). */
static void
s_drain_mailbox_refusing (gw_loop_t *self)
{
    gw_request_t *req = gw_mailbox_take_all (self->mailbox);
    while (req) {
        gw_request_t *next = req->next;
        if (!s_run_call (self, req))
            gw_request_reply_error (req, GW_E_SHUTTING_DOWN, "the gateway is shutting down");
        req = next;
    }
}

void
gw_loop_destroy (gw_loop_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gw_loop_t *self = *self_p;
    /* the SQL workers hand results back through the mailbox: stop them
       first; their last answers run while the mailbox drains below */
    gw_sql_destroy (&self->sql);
    gw_blob_destroy (&self->blob);
    for (size_t i = 0; i < self->n_sessions; i++)
        gw_session_destroy (&self->sessions[i], false);
    free (self->sessions);
    gw_pool_destroy (&self->pool);
    gw_sandbox_destroy (&self->sandbox);
    if (self->mailbox)
        s_drain_mailbox_refusing (self);
    gw_jobs_destroy (&self->jobs);
    gw_metrics_destroy (&self->metrics);
    gw_mailbox_destroy (&self->mailbox);
    if (self->zmq)
        zmq_ctx_term (self->zmq);
    if (self->signal_fd >= 0)
        close (self->signal_fd);
    if (self->runtime_dir[0])
        gw_fs_remove_tree (self->runtime_dir);
    if (self->lock_fd >= 0)
        gw_disk_teardown (self->state_dir);
    if (self->lock_fd >= 0)
        close (self->lock_fd);
    free (self);
    *self_p = NULL;
}

void
gw_loop_stop (gw_loop_t *self)
{
    self->stopping = 1;
    gw_mailbox_wake (self->mailbox);
}

/* A call carried through the mailbox as a request of method "CALL". */
typedef struct {
    gw_request_t req;
    gw_loop_call_fn *fn;
    void *arg;
} s_call_t;

static void
s_call_free (gw_request_t *req)
{
    free (req);
}

int
gw_loop_call (gw_loop_t *self, gw_loop_call_fn *fn, void *arg)
{
    s_call_t *call = calloc (1, sizeof *call);
    if (!call)
        return -ENOMEM;
    snprintf (call->req.method, sizeof call->req.method, "CALL");
    call->req.complete = s_call_free;
    call->fn = fn;
    call->arg = arg;
    gw_mailbox_post (self->mailbox, &call->req);
    return 0;
}

/* Runs a CALL (and frees it), or returns false for an ordinary request. */
static bool
s_run_call (gw_loop_t *self, gw_request_t *req)
{
    if (strcmp (req->method, "CALL") != 0)
        return false;
    s_call_t *call = (s_call_t *) req;
    call->fn (self, call->arg);
    free (call);
    return true;
}

void
gw_loop_post (gw_request_t *req, void *loop)
{
    gw_loop_t *self = loop;
    gw_mailbox_post (self->mailbox, req);
}

/* Ends sessions past their time to live or idle too long. */
static void
s_reap (gw_loop_t *self, int64_t now)
{
    for (size_t i = 0; i < self->n_sessions;) {
        gw_session_t *s = self->sessions[i];
        bool busy = s->running || s->queue_head;
        /* a session whose kernel is still starting is not idle yet: its
           creator is waiting for it */
        bool starting = strcmp (gw_session_status (s), "starting") == 0;
        const char *why = NULL;
        if (starting) {
            i++;
            continue;
        }
        if (now - s->created_ms >= s->limits.ttl_s * 1000)
            why = "ttl";
        else if (!busy && now - s->last_used_ms >= s->limits.idle_s * 1000)
            why = "idle";
        if (why) {
            jp_log_info ("session event=reaped session=%s why=%s", s->id, why);
            gw_loop_remove_session (self, s);
        } else
            i++;
    }
}

/* The earliest time anything needs the loop, or -1. */
static int64_t
s_next_deadline (gw_loop_t *self, int64_t now)
{
    int64_t next = self->next_reap;
    for (size_t i = 0; i < self->n_sessions; i++) {
        int64_t d = gw_session_deadline (self->sessions[i]);
        if (d >= 0 && d < next)
            next = d;
    }
    int64_t w = gw_jobs_expire_waits (self->jobs, now);
    if (w >= 0 && w < next)
        next = w;
    int64_t p = gw_pool_deadline (self->pool);
    if (p >= 0 && p < next)
        next = p;
    int64_t t = self->timer_deadline ? self->timer_deadline (self->timer_arg) : -1;
    if (t >= 0 && t < next)
        next = t;
    return next;
}

/* One turn: poll, kernel messages, requests, timers. */
static void
s_turn (gw_loop_t *self)
{
    size_t n_sessions = self->n_sessions;
    size_t max_items = 3 + n_sessions * KS_KERNEL_POLL_ITEMS + (size_t) gw_pool_poll_count (self->pool);
    zmq_pollitem_t *items = calloc (max_items, sizeof *items);
    int *first = calloc (n_sessions + 1, sizeof *first);
    gw_session_t **polled = calloc (n_sessions + 1, sizeof *polled);
    if (!items || !first || !polled) {
        free (items);
        free (first);
        free (polled);
        usleep (10000);     /* out of memory: try again shortly */
        return;
    }
    items[0] = (zmq_pollitem_t) {.fd = gw_mailbox_fd (self->mailbox), .events = ZMQ_POLLIN};
    items[1] = (zmq_pollitem_t) {.fd = self->signal_fd, .events = ZMQ_POLLIN};
    items[2] = (zmq_pollitem_t) {.fd = self->watch_fd, .events = self->watch_fd >= 0 ? ZMQ_POLLIN : 0};
    int n = 3;
    for (size_t i = 0; i < n_sessions; i++) {
        polled[i] = self->sessions[i];
        first[i] = n;
        n += gw_session_poll_items (self->sessions[i], items + n, (int) max_items - n);
    }
    first[n_sessions] = n;
    int pool_first = n;
    n += gw_pool_poll_items (self->pool, items + n, (int) max_items - n);
    int64_t now = jp_time_now_ms ();
    int64_t deadline = s_next_deadline (self, now);
    long timeout = deadline < 0 ? -1 : deadline > now ? (long) (deadline - now) : 0;
    int rc = zmq_poll (items, n, timeout);
    if (rc < 0 && errno != EINTR)
        jp_log_error ("zmq_poll: %s", zmq_strerror (errno));
    /* kernels first (their timers run even when nothing was readable);
       requests below may end sessions polled here */
    for (size_t i = 0; i < n_sessions; i++)
        gw_session_dispatch (polled[i], items + first[i], first[i + 1] - first[i]);
    gw_pool_dispatch (self->pool, items + pool_first, n - pool_first);
    if (rc > 0 && (items[1].revents & ZMQ_POLLIN)) {
        struct signalfd_siginfo info;
        if (read (self->signal_fd, &info, sizeof info) == (ssize_t) sizeof info) {
            jp_log_info ("signal %u: shutting down", info.ssi_signo);
            self->stopping = 1;
        }
    }
    if (rc > 0 && self->watch_fd >= 0 && (items[2].revents & (ZMQ_POLLIN | ZMQ_POLLERR)))
        self->watch_fn (self, self->watch_arg);
    if (rc > 0 && (items[0].revents & ZMQ_POLLIN)) {
        gw_request_t *req = gw_mailbox_take_all (self->mailbox);
        while (req) {
            gw_request_t *next = req->next;
            req->next = NULL;
            if (s_run_call (self, req))
                ;
            else if (self->stopping)
                gw_request_reply_error (req, GW_E_SHUTTING_DOWN, "the gateway is shutting down");
            else
                self->handler (self, req);
            req = next;
        }
    }
    free (items);
    free (first);
    free (polled);
    now = jp_time_now_ms ();
    for (size_t i = 0; i < self->n_sessions; i++)
        gw_session_tick (self->sessions[i], now);
    if (!self->stopping)
        gw_pool_tick (self->pool, now);
    if (self->timer_tick)
        self->timer_tick (self->timer_arg, now);
    for (size_t i = 0; i < self->n_sessions;) {
        if (self->sessions[i]->doomed)
            gw_loop_remove_session (self, self->sessions[i]);
        else
            i++;
    }
    if (now >= self->next_reap) {
        s_reap (self, now);
        self->next_reap = now + gw_config_int (self->config, GW_SET_CLEANUP_INTERVAL) * 1000;
    }
    /* the result store's bounds (age, count, bytes), four times a second */
    if (now >= self->next_jobs_expiry) {
        if (gw_jobs_expire (self->jobs, now) > (16u << 20))
            malloc_trim (0);    /* give big freed results back to the system */
        self->next_jobs_expiry = now + 250;
    }
    gw_metrics_sessions_live (self->metrics, (long) self->n_sessions);
}

int
gw_loop_run (gw_loop_t *self)
{
    while (!self->stopping)
        s_turn (self);
    /* answer everything that waits before the HTTP server goes away */
    s_drain_mailbox_refusing (self);
    for (size_t i = 0; i < self->n_sessions; i++)
        gw_session_destroy (&self->sessions[i], false);
    self->n_sessions = 0;
    gw_pool_destroy (&self->pool);
    gw_jobs_fail_all_waiters (self->jobs);
    return 0;
}

void
gw_loop_watch_fd (gw_loop_t *self, int fd, gw_loop_fd_fn *fn, void *arg)
{
    self->watch_fd = fd;
    self->watch_fn = fn;
    self->watch_arg = arg;
}

void
gw_loop_set_timer (gw_loop_t *self, gw_loop_deadline_fn *deadline, gw_loop_tick_fn *tick,
                   void *arg)
{
    self->timer_deadline = deadline;
    self->timer_tick = tick;
    self->timer_arg = arg;
}

void
gw_loop_set_app (gw_loop_t *self, void *app)
{
    self->app = app;
}

void *
gw_loop_app (gw_loop_t *self)
{
    return self->app;
}

const gw_config_t *
gw_loop_config (gw_loop_t *self)
{
    return self->config;
}

void *
gw_loop_zmq (gw_loop_t *self)
{
    return self->zmq;
}

const char *
gw_loop_runtime_dir (gw_loop_t *self)
{
    return self->runtime_dir;
}

const char *
gw_loop_state_dir (gw_loop_t *self)
{
    return self->state_dir;
}

gw_jobs_t *
gw_loop_jobs (gw_loop_t *self)
{
    return self->jobs;
}

gw_sql_t *
gw_loop_sql (gw_loop_t *self)
{
    return self->sql;
}

gw_blob_t *
gw_loop_blob (gw_loop_t *self)
{
    return self->blob;
}

gw_sandbox_t *
gw_loop_sandbox (gw_loop_t *self)
{
    return self->sandbox;
}

gw_pool_t *
gw_loop_pool (gw_loop_t *self)
{
    return self->pool;
}

gw_metrics_t *
gw_loop_metrics (gw_loop_t *self)
{
    return self->metrics;
}

gw_session_t *
gw_loop_find_session (gw_loop_t *self, const char *id, const char *tenant)
{
    for (size_t i = 0; i < self->n_sessions; i++)
        if (strcmp (self->sessions[i]->id, id) == 0
            && strcmp (self->sessions[i]->tenant, tenant) == 0)
            return self->sessions[i];
    return NULL;
}

int
gw_loop_add_session (gw_loop_t *self, gw_session_t *session)
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
    return 0;
}

size_t
gw_loop_session_count (gw_loop_t *self)
{
    return self->n_sessions;
}

gw_session_t *
gw_loop_session_at (gw_loop_t *self, size_t i)
{
    return i < self->n_sessions ? self->sessions[i] : NULL;
}

void
gw_loop_remove_session (gw_loop_t *self, gw_session_t *session)
{
    for (size_t i = 0; i < self->n_sessions; i++)
        if (self->sessions[i] == session) {
            memmove (&self->sessions[i], &self->sessions[i + 1],
                     (self->n_sessions - i - 1) * sizeof *self->sessions);
            self->n_sessions--;
            break;
        }
    gw_session_destroy (&session, true);
}
