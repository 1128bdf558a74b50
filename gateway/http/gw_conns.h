/* gw_conns: the HTTP connections the edge holds, for two rules
 * libmicrohttpd does not have.
 *
 * A request deadline: a connection must deliver a whole request (headers
 * and body) within request_ms of being ready for one (opened, or its last
 * answer sent); past it, it is shut down. An idle timeout alone never
 * cuts a client that trickles a header line every few seconds.
 * (A request being answered, a long poll, an event stream, a websocket
 * is not held to it.)
 *
 * A per-address bound fair to the clients that behave: past per_address
 * connections from one address, a new connection takes the place of the
 * oldest of that address that has been waiting for its request longer
 * than a second (a slow one), and is refused only when none has.
 *
 * Threads: the thread that runs libmicrohttpd (the loop thread). */
#ifndef GW_CONNS_H
#define GW_CONNS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

typedef struct gw_conns gw_conns_t;
typedef struct gw_conn gw_conn_t;

/* A new table; NULL on OOM. */
gw_conns_t *gw_conns_new (unsigned per_address, int64_t request_ms);
/* Frees the table and every entry; nulls *self_p. Safe on NULL. */
void gw_conns_destroy (gw_conns_t **self_p);

/* Whether a connection from addr may come in (libmicrohttpd's accept
 * policy). May shut down a slow connection of the same address to make
 * room. */
bool gw_conns_admit (gw_conns_t *self, const struct sockaddr *addr, socklen_t len,
                     int64_t now);

/* A connection opened on fd from addr: its entry (the socket context), or
 * NULL on OOM (then it is simply not watched). */
gw_conn_t *gw_conns_opened (gw_conns_t *self, int fd, const struct sockaddr *addr,
                            socklen_t len, int64_t now);
/* It closed: its entry goes. Safe on NULL. */
void gw_conns_closed (gw_conns_t *self, gw_conn_t *conn);

/* Its request is whole: it is being answered (no deadline). */
void gw_conns_request_done (gw_conn_t *conn);
/* Its answer went: it is ready for the next request from now. */
void gw_conns_answer_done (gw_conns_t *self, gw_conn_t *conn, int64_t now);

/* Shuts down the connections past their deadline (libmicrohttpd then
 * closes them); returns how many. Walks the table only once the earliest
 * deadline is due. */
int gw_conns_sweep (gw_conns_t *self, int64_t now);

/* When gw_conns_sweep has work next (no deadline falls before it; it may
 * find none due yet), or -1 when no connection waits for a request: the
 * loop sleeps until then. */
int64_t gw_conns_deadline (const gw_conns_t *self);

/* How many connections are watched (for tests). */
int gw_conns_count (const gw_conns_t *self);

#endif
