/* gw_loop: the event loop: poll, sources, mailbox, cross-thread calls,
 * signals. Threads: gw_loop_post, gw_loop_call and gw_loop_stop from any
 * thread; the rest in the loop thread. Ours, not zloop or zpoller: both
 * call zmq_poll each turn (Debian's libzmq has no draft poller), which
 * asks every socket's ZMQ_EVENTS, so a round trip beside 64 idle kernels
 * took them 220 us where jp_poll takes 30 us; zpoller cannot watch plain
 * fds (pidfds, the signalfd, the mailbox); and the sources' per-turn read
 * budget is what keeps a flooding kernel fair (measured by `make bench`,
 * tests/bench/czmq_compare.c). */
#include "gw_loop.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "gw_mailbox.h"
#include "jp_log.h"
#include "jp_poll.h"
#include "jp_time.h"

#define FIXED_ITEMS 2           /* the mailbox, the signalfd */

typedef struct {
    const gw_loop_source_t *source;
    void *arg;
} s_source_t;

struct gw_loop {
    gw_mailbox_t *mailbox;
    int signal_fd;
    volatile int stopping;
    s_source_t sources[GW_LOOP_MAX_SOURCES];
    int n_sources;
    void (*on_user_signal) (bool first, void *arg);
    void *on_user_signal_arg;
};

void
gw_loop_on_user_signal (gw_loop_t *self, void (*fn) (bool first, void *arg), void *arg)
{
    self->on_user_signal = fn;
    self->on_user_signal_arg = arg;
}

gw_loop_t *
gw_loop_new (char *err, size_t err_len)
{
    gw_loop_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, err_len, "out of memory");
        return NULL;
    }
    sigset_t mask;
    sigemptyset (&mask);
    sigaddset (&mask, SIGTERM);
    sigaddset (&mask, SIGINT);
    sigaddset (&mask, SIGUSR1);
    sigaddset (&mask, SIGUSR2);
    self->signal_fd = signalfd (-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    self->mailbox = gw_mailbox_new ();
    if (self->signal_fd < 0 || !self->mailbox) {
        snprintf (err, err_len, "cannot set up the loop: %s", strerror (errno));
        gw_loop_destroy (&self);
    }
    return self;
}

void
gw_loop_destroy (gw_loop_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gw_loop_t *self = *self_p;
    if (self->mailbox)
        gw_loop_drain (self);
    gw_mailbox_destroy (&self->mailbox);
    if (self->signal_fd >= 0)
        close (self->signal_fd);
    free (self);
    *self_p = NULL;
}

int
gw_loop_add_source (gw_loop_t *self, const gw_loop_source_t *source, void *arg)
{
    if (self->n_sources == GW_LOOP_MAX_SOURCES)
        return -ENOSPC;
    self->sources[self->n_sources++] = (s_source_t) {source, arg};
    return 0;
}

void
gw_loop_remove_source (gw_loop_t *self, const gw_loop_source_t *source, void *arg)
{
    for (int i = 0; i < self->n_sources; i++)
        if (self->sources[i].source == source && self->sources[i].arg == arg) {
            memmove (&self->sources[i], &self->sources[i + 1],
                     (size_t) (self->n_sources - i - 1) * sizeof self->sources[0]);
            self->n_sources--;
            return;
        }
}

void
gw_loop_stop (gw_loop_t *self)
{
    self->stopping = 1;
    gw_mailbox_wake (self->mailbox);
}

bool
gw_loop_stopping (const gw_loop_t *self)
{
    return self->stopping;
}

/* A cross-thread call: an item that runs fn(arg) and frees itself. */
typedef struct {
    gw_loop_item_t item;
    gw_loop_call_fn *fn;
    void *arg;
} s_call_t;

static void
s_run_call (gw_loop_item_t *item, bool stopping)
{
    (void) stopping;    /* a call runs even then: it hands back a result */
    s_call_t *call = item->arg;
    call->fn (call->arg);
    free (call);
}

int
gw_loop_call (gw_loop_t *self, gw_loop_call_fn *fn, void *arg)
{
    s_call_t *call = calloc (1, sizeof *call);
    if (!call)
        return -ENOMEM;
    call->item.run = s_run_call;
    call->item.arg = call;
    call->fn = fn;
    call->arg = arg;
    gw_mailbox_post (self->mailbox, &call->item.link);
    return 0;
}

void
gw_loop_post (gw_loop_t *self, gw_loop_item_t *item)
{
    gw_mailbox_post (self->mailbox, &item->link);
}

/* Runs every waiting item, oldest first; woken: the eventfd polled
 * readable (it is read), else the items the loop thread posted itself. */
static void
s_run_items (gw_loop_t *self, bool stopping, bool woken)
{
    gw_mailbox_item_t *link = woken ? gw_mailbox_take_all (self->mailbox)
                                    : gw_mailbox_take_posted (self->mailbox);
    while (link) {
        gw_mailbox_item_t *next = link->next;
        link->next = NULL;
        gw_loop_item_t *item = (gw_loop_item_t *) link;   /* link is its first member */
        item->run (item, stopping);
        link = next;
    }
}

void
gw_loop_drain (gw_loop_t *self)
{
    s_run_items (self, true, true);
}

/* The earliest deadline of any source, or -1. */
static int64_t
s_next_deadline (gw_loop_t *self, int64_t now)
{
    int64_t next = -1;
    for (int i = 0; i < self->n_sources; i++) {
        const gw_loop_source_t *s = self->sources[i].source;
        int64_t d = s->deadline ? s->deadline (self->sources[i].arg, now) : -1;
        if (d >= 0 && (next < 0 || d < next))
            next = d;
    }
    return next;
}

/* Every source's tick. */
static void
s_tick (gw_loop_t *self)
{
    int64_t now = jp_time_now_ms ();
    for (int i = 0; i < self->n_sources; i++)
        if (self->sources[i].source->tick)
            self->sources[i].source->tick (self->sources[i].arg, now);
}

/* One turn: poll, dispatch, signal, mailbox, ticks, then what the ticks
 * posted and the ticks again. */
static void
s_turn (gw_loop_t *self)
{
    int n_sources = self->n_sources;
    s_source_t sources[GW_LOOP_MAX_SOURCES];
    memcpy (sources, self->sources, sizeof sources);
    int max_items = FIXED_ITEMS;
    for (int i = 0; i < n_sources; i++)
        if (sources[i].source->poll_count)
            max_items += sources[i].source->poll_count (sources[i].arg);
    zmq_pollitem_t *items = calloc ((size_t) max_items, sizeof *items + sizeof (struct pollfd));
    if (!items) {
        usleep (10000);     /* out of memory: try again shortly */
        return;
    }
    items[0] = (zmq_pollitem_t) {.fd = gw_mailbox_fd (self->mailbox), .events = ZMQ_POLLIN};
    items[1] = (zmq_pollitem_t) {.fd = self->signal_fd, .events = ZMQ_POLLIN};
    int first[GW_LOOP_MAX_SOURCES + 1];
    int n = FIXED_ITEMS;
    for (int i = 0; i < n_sources; i++) {
        first[i] = n;
        if (sources[i].source->poll_items)
            n += sources[i].source->poll_items (sources[i].arg, items + n, max_items - n);
    }
    first[n_sources] = n;
    int64_t now = jp_time_now_ms ();
    int64_t deadline = s_next_deadline (self, now);
    long timeout = deadline < 0 ? -1 : deadline > now ? (long) (deadline - now) : 0;
    if (gw_mailbox_pending (self->mailbox))
        timeout = 0;        /* posted by this thread: no eventfd was written */
    struct pollfd *pfds = (struct pollfd *) (items + max_items);
    int rc = jp_poll (items, pfds, n, timeout);
    if (rc < 0)
        jp_log_error ("poll: %s", strerror (errno));
    for (int i = 0; i < n_sources; i++)
        if (sources[i].source->dispatch)
            sources[i].source->dispatch (sources[i].arg, items + first[i],
                                         first[i + 1] - first[i]);
    if (rc > 0 && (items[1].revents & ZMQ_POLLIN)) {
        struct signalfd_siginfo info;
        if (read (self->signal_fd, &info, sizeof info) != (ssize_t) sizeof info)
            ;
        else if (info.ssi_signo == SIGUSR1 || info.ssi_signo == SIGUSR2) {
            if (self->on_user_signal)
                self->on_user_signal (info.ssi_signo == SIGUSR1, self->on_user_signal_arg);
        } else {
            jp_log_info ("signal %u: shutting down", info.ssi_signo);
            self->stopping = 1;
        }
    }
    /* what the turn's dispatch posted (the HTTP edge, run by this thread,
       posts its requests) runs now, not after another poll */
    bool woken = rc > 0 && (items[0].revents & ZMQ_POLLIN);
    if (woken || gw_mailbox_pending (self->mailbox))
        s_run_items (self, self->stopping, woken);
    free (items);
    s_tick (self);
    /* and what the ticks posted (the HTTP edge runs in a tick and posts
       each request it reads) runs in this turn too, with the ticks again
       after it (an answer given at once goes out now, not a turn later) */
    for (int again = 0; again < 2 && gw_mailbox_pending (self->mailbox); again++) {
        s_run_items (self, self->stopping, false);
        s_tick (self);
    }
}

int
gw_loop_run (gw_loop_t *self)
{
    gw_mailbox_set_owner (self->mailbox);
    while (!self->stopping)
        s_turn (self);
    return 0;
}
