/* gw_conns: the request deadline and the fair per-address bound of the
 * HTTP edge (see gw_conns.h). The entries are a list, oldest first: at
 * most 4000 connections, and each look walks it once.
 *
 * Threads: the loop thread (libmicrohttpd's callbacks run there). */
#include "gw_conns.h"

#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#define S_SLOW_MS 1000          /* waiting this long for its request: may be made room for */

struct gw_conn {
    int fd;
    unsigned char addr[16];     /* IPv4 in its first 4 bytes, else IPv6 */
    bool v6;
    bool busy;                  /* its request is whole and being answered */
    bool shut;                  /* shut down by us: closing */
    int64_t ready_ms;           /* waiting for a request since */
    gw_conn_t *prev, *next;
};

struct gw_conns {
    unsigned per_address;
    int64_t request_ms;
    gw_conn_t *head, *tail;     /* oldest first */
    int count;
    int64_t earliest;           /* no deadline before this; -1: none waits (so an
                                   idle server with only websockets never wakes) */
};

/* A connection waits for its request from ready_ms: its deadline counts. */
static void
s_waits (gw_conns_t *self, int64_t ready_ms)
{
    int64_t due = ready_ms + self->request_ms;
    if (self->earliest < 0 || due < self->earliest)
        self->earliest = due;
}

gw_conns_t *
gw_conns_new (unsigned per_address, int64_t request_ms)
{
    gw_conns_t *self = calloc (1, sizeof *self);
    if (self) {
        self->per_address = per_address;
        self->request_ms = request_ms;
        self->earliest = -1;
    }
    return self;
}

void
gw_conns_destroy (gw_conns_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    for (gw_conn_t *c = (*self_p)->head, *next; c; c = next) {
        next = c->next;
        free (c);
    }
    free (*self_p);
    *self_p = NULL;
}

/* The address of addr as a key; false for a family without one. */
static bool
s_key (const struct sockaddr *addr, socklen_t len, unsigned char key[16], bool *v6)
{
    memset (key, 0, 16);
    if (addr && addr->sa_family == AF_INET && len >= (socklen_t) sizeof (struct sockaddr_in)) {
        memcpy (key, &((const struct sockaddr_in *) addr)->sin_addr, 4);
        *v6 = false;
        return true;
    }
    if (addr && addr->sa_family == AF_INET6 && len >= (socklen_t) sizeof (struct sockaddr_in6)) {
        memcpy (key, &((const struct sockaddr_in6 *) addr)->sin6_addr, 16);
        *v6 = true;
        return true;
    }
    return false;
}

static void
s_shut (gw_conn_t *c)
{
    if (c->shut)
        return;
    c->shut = true;
    shutdown (c->fd, SHUT_RDWR);    /* libmicrohttpd sees the end and closes it */
}

bool
gw_conns_admit (gw_conns_t *self, const struct sockaddr *addr, socklen_t len, int64_t now)
{
    unsigned char key[16];
    bool v6;
    if (!s_key (addr, len, key, &v6))
        return true;
    unsigned held = 0;
    gw_conn_t *slowest = NULL;
    for (gw_conn_t *c = self->head; c; c = c->next) {
        if (c->shut || c->v6 != v6 || memcmp (c->addr, key, 16) != 0)
            continue;
        held++;
        if (!slowest && !c->busy && now - c->ready_ms >= S_SLOW_MS)
            slowest = c;    /* the list is oldest first */
    }
    if (held < self->per_address)
        return true;
    if (!slowest)
        return false;
    s_shut (slowest);
    return true;
}

gw_conn_t *
gw_conns_opened (gw_conns_t *self, int fd, const struct sockaddr *addr, socklen_t len,
                 int64_t now)
{
    gw_conn_t *c = calloc (1, sizeof *c);
    if (!c)
        return NULL;
    c->fd = fd;
    s_key (addr, len, c->addr, &c->v6);
    c->ready_ms = now;
    s_waits (self, now);
    c->prev = self->tail;
    if (self->tail)
        self->tail->next = c;
    else
        self->head = c;
    self->tail = c;
    self->count++;
    return c;
}

void
gw_conns_closed (gw_conns_t *self, gw_conn_t *c)
{
    if (!c)
        return;
    if (c->prev)
        c->prev->next = c->next;
    else
        self->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        self->tail = c->prev;
    self->count--;
    free (c);
}

void
gw_conns_request_done (gw_conn_t *c)
{
    if (c)
        c->busy = true;
}

void
gw_conns_answer_done (gw_conns_t *self, gw_conn_t *c, int64_t now)
{
    if (c) {
        c->busy = false;
        c->ready_ms = now;
        s_waits (self, now);
    }
}

int
gw_conns_sweep (gw_conns_t *self, int64_t now)
{
    if (self->earliest < 0 || now < self->earliest)
        return 0;
    int n = 0;
    self->earliest = -1;
    for (gw_conn_t *c = self->head; c; c = c->next) {
        if (c->busy || c->shut)
            continue;
        if (now - c->ready_ms >= self->request_ms) {
            s_shut (c);
            n++;
        } else
            s_waits (self, c->ready_ms);
    }
    return n;
}

int64_t
gw_conns_deadline (const gw_conns_t *self)
{
    return self->earliest;
}

int
gw_conns_count (const gw_conns_t *self)
{
    return self->count;
}
