/* gw_server_loop: the server's sessions: their table (find, add, count,
 * remove) and the loop source that serves them: each turn, the sessions'
 * kernels' poll items (the ones used since their last poll item by item,
 * the rest through one epoll set, gw_kernel_epoll), what they send
 * dispatched to their sessions, idle and one-shot sessions reaped, and the
 * sessions', jobs' and pool's timers run.
 *
 * Threads: the loop thread only. */
#include "gw_server_loop.h"
#include "gw_server_state.h"
#include "gw_job_internal.h"
#include "gw_session_internal.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zmq.h>

#include "gw_pool.h"
#include "jp_poll.h"
#include "jp_time.h"
#include "jp_log.h"

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

/* When an idle live session's kernel is to be paused (CODEBOX_IDLE_PAUSE),
 * or -1: never, or not now (busy, paused, a one-shot run's). */
static int64_t
s_pause_due (gw_server_t *self, gw_session_t *s)
{
    int64_t after = gw_config_int (self->config, GW_SET_IDLE_PAUSE) * 1000;
    if (after <= 0 || !gw_session_can_pause (s) || s_session_busy (self, s))
        return -1;
    return s->last_used_ms + after;
}

/* The earlier of the two: a pause, or the session's end. */
static int64_t
s_due (gw_server_t *self, gw_session_t *s)
{
    int64_t end = s_reap_due (self, s), pause = s_pause_due (self, s);
    return pause >= 0 && (end < 0 || pause < end) ? pause : end;
}

/* Ends sessions past their time to live or idle too long (s_reap_due:
 * the loop's wake-up for the reaper asks the same), and pauses the
 * kernels of those idle past CODEBOX_IDLE_PAUSE. */
static void
s_reap (gw_server_t *self, int64_t now)
{
    for (size_t i = 0; i < self->n_sessions;) {
        gw_session_t *s = self->sessions[i];
        int64_t due = s_reap_due (self, s), pause = s_pause_due (self, s);
        if (pause >= 0 && now >= pause && (due < 0 || now < due)) {
            gw_session_pause (s);
            gw_server_session_status (self, s);
        }
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

static ks_kernel_t *
s_session_kernel (void *arg, size_t i)
{
    gw_server_t *self = arg;
    return self->sessions[i]->kernel;
}

/* The session polled at i still has that kernel (gw_kernel_epoll_dispatch). */
static bool
s_still_its_kernel (void *arg, size_t i, const ks_kernel_t *kernel)
{
    gw_server_t *self = arg;
    return i < self->n_sessions && self->sessions[i]->kernel == kernel;
}

/* Fills the loop's items: the epoll set that watches the sessions'
 * kernels and the items of the kernels that must be polled themselves
 * this turn (gw_kernel_epoll), then the pool's. */
static int
s_poll_items (void *arg, zmq_pollitem_t *items, int max)
{
    gw_server_t *self = arg;
    int n = gw_kernel_epoll_poll_items (self->watch, self->n_sessions, s_session_kernel, self,
                                        items, max);
    self->pool_first = n;
    n += gw_pool_poll_items (self->host.pool, items + n, max - n);
    self->n_items = n;
    return n;
}

/* Kernels first (their timers run even when nothing was readable);
 * requests after this may end sessions polled here. */
static void
s_dispatch (void *arg, const zmq_pollitem_t *items, int n)
{
    gw_server_t *self = arg;
    (void) n;
    gw_kernel_epoll_dispatch (self->watch, items, self->pool_first, s_still_its_kernel, self);
    gw_pool_dispatch (self->host.pool, items + self->pool_first,
                      self->n_items - self->pool_first);
}

/* The reaper's interval in ms (a second at least: 0 would spin the loop). */
int64_t
gw_server_reap_every (const gw_server_t *self)
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
        int64_t d = s_due (self, self->sessions[i]);
        if (d >= 0 && (due < 0 || d < due))
            due = d;
    }
    if (due < 0 || due <= self->next_reap)
        return due < 0 ? -1 : self->next_reap;
    int64_t every = gw_server_reap_every (self);
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
        int64_t every = gw_server_reap_every (self);
        while (self->next_reap <= now)  /* on the beat, however late this turn came */
            self->next_reap += every;
    }
    /* the result store's bounds (age, count, bytes), four times a second */
    if (now >= self->next_jobs_expiry) {
        if (gw_jobs_expire (self->jobs, now) > (16u << 20))
            malloc_trim (0);    /* give big freed results back to the system */
        self->next_jobs_expiry = now + 250;
    }
    long live = 0;
    for (size_t i = 0; i < self->n_sessions; i++)
        live += !self->sessions[i]->paused;
    gw_metrics_sessions_live (self->metrics, live);
}

const gw_loop_source_t gw_server_loop_source = {
    .poll_count = s_poll_count,
    .poll_items = s_poll_items,
    .dispatch = s_dispatch,
    .deadline = s_deadline,
    .tick = s_tick,
};

/* ---- the session table (declared in gw_server_internal.h) ---- */

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
    if (self->registry)
        gw_registry_put (self->registry, session->tenant, session->id, session->spec->name,
                         session->paused);
    return 0;
}

void
gw_server_session_status (gw_server_t *self, gw_session_t *session)
{
    if (self->registry && !session->ephemeral)
        gw_registry_put (self->registry, session->tenant, session->id, session->spec->name,
                         session->paused);
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
            if (self->registry)
                gw_registry_drop (self->registry, session->tenant, session->id);
            break;
        }
    gw_session_destroy (&session, true);
}
