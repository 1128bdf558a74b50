/* jp_poll: one poll(2) over plain descriptors, the gateway's own ZMTP
 * connections (JP_POLL_ZMTP: the kernel channels) and ZeroMQ sockets
 * (which only the tests' peers still use). zmq_poll asks every socket's
 * ZMQ_EVENTS before and after it sleeps, a system call each; jp_poll polls
 * a socket by its ZMQ_FD (which wakes when something may have changed for
 * it) and asks ZMQ_EVENTS only of one whose fd woke or whose item carries
 * JP_POLL_USED. Pure code; everything polled belongs to the calling
 * thread. */
#ifndef JP_POLL_H
#define JP_POLL_H

#include <poll.h>

#include <zmq.h>

/* In a zmq_pollitem_t's events: this socket was used (made, sent on,
 * read, or asked ZMQ_EVENTS) since it was last polled. Any such call may
 * take the wake-up of the socket's ZMQ_FD, so jp_poll asks ZMQ_EVENTS of
 * it before it sleeps. A caller that forgets it can sleep through a
 * message that is waiting. jp_poll's own question counts as a use too
 * when the item did not ask for what the socket had (a socket polled
 * without ZMQ_POLLIN while a message waits): keep the bit on until the
 * socket is polled for it. zmq_poll ignores the bit (it asks every
 * socket). */
#define JP_POLL_USED 0x100

/* In a zmq_pollitem_t's events: the item's socket is a jp_zmtp_client_t,
 * not a ZeroMQ socket. jp_poll polls its descriptor for what it needs,
 * serves what comes back (jp_zmtp_client_service) and reports ZMQ_POLLIN
 * when anything happened on it or a message waits whole (then it does not
 * sleep: such a message wakes no descriptor). */
#define JP_POLL_ZMTP 0x200

/* Polls n items as zmq_poll does (revents set; a socket's error is
 * ZMQ_POLLERR; a plain fd's POLLHUP or POLLERR is ZMQ_POLLERR), waiting at
 * most timeout ms (-1: no limit). pfds is scratch space for n entries.
 * Returns how many items have revents, or -1 with errno set (EINTR is not
 * an error: it returns what was ready). */
int jp_poll (zmq_pollitem_t *items, struct pollfd *pfds, int n, long timeout);

/* jp_poll in two halves, for a caller that knows what poll(2) would say
 * (an epoll set just told it): prepare fills pfds (and the revents of
 * items ready without waiting; returns how many); the caller sets
 * pfds[i].revents; finish serves and reports as jp_poll does (returns how
 * many items have revents). */
int jp_poll_prepare (zmq_pollitem_t *items, struct pollfd *pfds, int n);
int jp_poll_finish (zmq_pollitem_t *items, struct pollfd *pfds, int n);

#endif
