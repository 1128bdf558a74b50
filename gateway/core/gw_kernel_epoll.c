/* gw_kernel_epoll: the sessions' kernels' descriptors in one epoll set; see
 * gw_kernel_epoll.h. Loop thread only. */
#include "gw_kernel_epoll.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "jp_poll.h"

typedef struct {
    const ks_kernel_t *kernel;
    uint64_t generation;
    int resting_fd;             /* ks_kernel_resting_fd, kept out of the set */
} s_entry_t;

struct gw_kernel_epoll {
    int epfd;                   /* -1: none made (or making it failed) */
    s_entry_t *entries;         /* what the set holds, by index */
    size_t n, cap;
    struct epoll_event *events; /* room for every descriptor of the set,
                                   resting ones too */
    size_t n_fds, cap_events;
    int got;                    /* events of the last s_ready */
    /* the last gw_kernel_epoll_poll_items: its kernels, where each one's
       own items start ([n_turn]: where they end), which the set found
       ready, and the set's own item (-1: none) */
    ks_kernel_t **turn;
    int *first;
    bool *ready;
    size_t n_turn, cap_turn;
    int watch_item;
};

gw_kernel_epoll_t *
gw_kernel_epoll_new (void)
{
    gw_kernel_epoll_t *self = calloc (1, sizeof *self);
    if (self) {
        self->epfd = -1;
        self->watch_item = -1;
    }
    return self;
}

void
gw_kernel_epoll_destroy (gw_kernel_epoll_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gw_kernel_epoll_t *self = *self_p;
    if (self->epfd >= 0)
        close (self->epfd);
    free (self->entries);
    free (self->events);
    free (self->turn);
    free (self->first);
    free (self->ready);
    free (self);
    *self_p = NULL;
}

/* True if the set holds exactly these kernels with these generations. */
static bool
s_same (const gw_kernel_epoll_t *self, ks_kernel_t *const *kernels, size_t n)
{
    if (self->epfd < 0 || n != self->n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (self->entries[i].kernel != kernels[i]
            || (kernels[i] && self->entries[i].generation != ks_kernel_fds_generation (kernels[i])))
            return false;
    return true;
}

/* A new set with every descriptor of every kernel. Returns 0 or -errno. */
static int
s_make (gw_kernel_epoll_t *self, ks_kernel_t *const *kernels, size_t n)
{
    if (self->epfd >= 0)
        close (self->epfd);
    self->n = 0;
    self->n_fds = 0;
    self->epfd = epoll_create1 (EPOLL_CLOEXEC);
    if (self->epfd < 0)
        return -errno;
    if (n > self->cap) {
        s_entry_t *entries = realloc (self->entries, n * sizeof *entries);
        if (!entries)
            return -ENOMEM;
        self->entries = entries;
        self->cap = n;
    }
    size_t n_fds = 0;
    for (size_t i = 0; i < n; i++) {
        self->entries[i].kernel = kernels[i];
        self->entries[i].generation = kernels[i] ? ks_kernel_fds_generation (kernels[i]) : 0;
        self->entries[i].resting_fd = kernels[i] ? ks_kernel_resting_fd (kernels[i]) : -1;
        if (!kernels[i])
            continue;
        n_fds += self->entries[i].resting_fd >= 0;    /* may be put back */
        int fds[KS_KERNEL_POLL_ITEMS];
        int k = ks_kernel_fds (kernels[i], fds, KS_KERNEL_POLL_ITEMS);
        for (int j = 0; j < k; j++) {
            /* the kernel's index and the descriptor: gw_kernel_epoll_revents */
            struct epoll_event ev = {.events = EPOLLIN,
                                     .data.u64 = (uint64_t) i << 32 | (uint32_t) fds[j]};
            if (epoll_ctl (self->epfd, EPOLL_CTL_ADD, fds[j], &ev) < 0 && errno != EEXIST)
                return -errno;
            n_fds++;
        }
    }
    if (n_fds > self->cap_events) {
        struct epoll_event *events = realloc (self->events, n_fds * sizeof *events);
        if (!events)
            return -ENOMEM;
        self->events = events;
        self->cap_events = n_fds;
    }
    self->n = n;
    self->n_fds = n_fds;
    return 0;
}

/* The same kernels and descriptors: takes out of the set a kernel's
 * descriptor that rests now and puts back one that rested (the room for
 * events counts it either way). Returns 0, or -1 if the set must be made
 * again. */
static int
s_update_rests (gw_kernel_epoll_t *self)
{
    for (size_t i = 0; i < self->n; i++) {
        s_entry_t *e = &self->entries[i];
        int now = e->kernel ? ks_kernel_resting_fd (e->kernel) : -1;
        if (now == e->resting_fd)
            continue;
        /* the same generation: both are open and the kernel's own */
        if (e->resting_fd >= 0) {
            struct epoll_event ev = {.events = EPOLLIN,
                                     .data.u64 = (uint64_t) i << 32 | (uint32_t) e->resting_fd};
            if (epoll_ctl (self->epfd, EPOLL_CTL_ADD, e->resting_fd, &ev) < 0 && errno != EEXIST)
                return -1;
        }
        if (now >= 0 && epoll_ctl (self->epfd, EPOLL_CTL_DEL, now, NULL) < 0 && errno != ENOENT)
            return -1;
        e->resting_fd = now;
    }
    return 0;
}

/* Brings the set up to date with these kernels (NULL entries hold no
 * descriptor), their index in the array being the index s_ready reports.
 * Returns the epoll descriptor to poll for POLLIN, or -1 if the set could
 * not be made: then every kernel's items are polled. */
static int
s_sync (gw_kernel_epoll_t *self, ks_kernel_t *const *kernels, size_t n)
{
    if (s_same (self, kernels, n) && s_update_rests (self) == 0)
        return self->epfd;
    if (s_make (self, kernels, n) < 0) {
        if (self->epfd >= 0)
            close (self->epfd);
        self->epfd = -1;
        self->n = 0;
        return -1;
    }
    return self->epfd;
}

/* After the descriptor polled readable: sets ready[i] for each kernel i
 * (of the last sync, n of them) with a readable descriptor. */
static void
s_ready (gw_kernel_epoll_t *self, bool *ready, size_t n)
{
    if (self->epfd < 0 || self->n_fds == 0)
        return;
    /* one call with room for every descriptor: level-triggered, a second
       call would report the same ones again */
    int got = epoll_wait (self->epfd, self->events, (int) self->n_fds, 0);
    self->got = got > 0 ? got : 0;
    for (int i = 0; i < self->got; i++) {
        uint64_t k = self->events[i].data.u64 >> 32;
        if (k < n && k < self->n)
            ready[k] = true;
    }
}

/* What that epoll_wait said of kernel k's descriptor fd, as poll(2)'s
 * revents (POLLIN, POLLERR, POLLHUP; 0 for nothing), so a ready kernel's
 * items need no poll(2) of their own. (A number closed and reused since
 * can only give a read that finds nothing; level-triggered, nothing is
 * missed: the set says it again next turn.) */
static short
s_revents (const gw_kernel_epoll_t *self, size_t k, int fd)
{
    uint64_t want = (uint64_t) k << 32 | (uint32_t) fd;
    for (int i = 0; i < self->got; i++)
        if (self->events[i].data.u64 == want)
            return (short) (self->events[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP));
    return 0;
}

/* Dispatches kernel k of the last sync, found ready: its items, with what
 * the set said of each descriptor. */
static void
s_dispatch_ready (const gw_kernel_epoll_t *self, size_t k, ks_kernel_t *kernel)
{
    zmq_pollitem_t items[KS_KERNEL_POLL_ITEMS];
    struct pollfd pfds[KS_KERNEL_POLL_ITEMS];
    int n = ks_kernel_poll_items (kernel, items, KS_KERNEL_POLL_ITEMS);
    jp_poll_prepare (items, pfds, n);
    for (int j = 0; j < n; j++)
        pfds[j].revents = pfds[j].fd < 0 ? 0
                          : (short) (s_revents (self, k, pfds[j].fd)
                                     & (pfds[j].events | POLLERR | POLLHUP));
    jp_poll_finish (items, pfds, n);
    ks_kernel_dispatch (kernel, items, n);
}

/* Room for a turn of n kernels. False if out of memory. */
static bool
s_turn_room (gw_kernel_epoll_t *self, size_t n)
{
    if (self->cap_turn > n)
        return true;
    size_t cap = n + 16;
    ks_kernel_t **turn = realloc (self->turn, cap * sizeof *turn);
    if (turn)
        self->turn = turn;
    int *first = realloc (self->first, cap * sizeof *first);
    if (first)
        self->first = first;
    bool *ready = realloc (self->ready, cap * sizeof *ready);
    if (ready)
        self->ready = ready;
    if (!turn || !first || !ready)
        return false;
    self->cap_turn = cap;
    return true;
}

int
gw_kernel_epoll_poll_items (gw_kernel_epoll_t *self, size_t n,
                            ks_kernel_t *(*kernel_of) (void *arg, size_t i), void *arg,
                            zmq_pollitem_t *items, int max)
{
    self->n_turn = 0;
    self->watch_item = -1;
    if (!s_turn_room (self, n))
        return 0;       /* out of memory: this turn polls none of them */
    for (size_t i = 0; i < n; i++)
        self->turn[i] = kernel_of (arg, i);
    int count = 0;
    int epfd = s_sync (self, self->turn, n);
    if (epfd >= 0 && count < max) {
        self->watch_item = count;
        items[count++] = (zmq_pollitem_t) {.fd = epfd, .events = ZMQ_POLLIN};
    }
    for (size_t i = 0; i < n; i++) {
        self->first[i] = count;
        ks_kernel_t *kernel = self->turn[i];
        if (kernel && (self->watch_item < 0 || ks_kernel_needs_poll_items (kernel)))
            count += ks_kernel_poll_items (kernel, items + count, max - count);
    }
    self->first[n] = count;
    self->n_turn = n;
    return count;
}

void
gw_kernel_epoll_dispatch (gw_kernel_epoll_t *self, const zmq_pollitem_t *items, int n,
                          bool (*still) (void *arg, size_t i, const ks_kernel_t *kernel),
                          void *arg)
{
    size_t count = self->n_turn;
    self->n_turn = 0;
    if (!count)
        return;
    memset (self->ready, 0, count * sizeof *self->ready);
    if (self->watch_item >= 0 && self->watch_item < n
        && (items[self->watch_item].revents & ZMQ_POLLIN))
        s_ready (self, self->ready, count);
    for (size_t i = 0; i < count; i++) {
        ks_kernel_t *kernel = self->turn[i];
        if (!kernel || !still (arg, i, kernel))
            continue;   /* gone or replaced since the poll: the next poll's */
        int own = self->first[i + 1] - self->first[i];
        if (own && self->first[i + 1] <= n)
            ks_kernel_dispatch (kernel, items + self->first[i], own);
        else if (self->ready[i])
            s_dispatch_ready (self, i, kernel);
        else
            ks_kernel_dispatch (kernel, NULL, 0);      /* its timers */
    }
}
