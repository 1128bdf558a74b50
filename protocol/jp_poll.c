/* jp_poll: one poll(2) for many ZeroMQ sockets and fds; see jp_poll.h.
 * Pure code, the caller's thread. */
#include "jp_poll.h"

#include <errno.h>
#include <limits.h>

#include "jp_zmtp_client.h"

/* The revents ZMQ_EVENTS gives a socket item, -1 when the socket fails. */
static int
s_socket_revents (const zmq_pollitem_t *item)
{
    int events = 0;
    size_t size = sizeof events;
    if (zmq_getsockopt (item->socket, ZMQ_EVENTS, &events, &size) < 0)
        return -1;
    return events & item->events & (ZMQ_POLLIN | ZMQ_POLLOUT);
}

int
jp_poll_prepare (zmq_pollitem_t *items, struct pollfd *pfds, int n)
{
    int ready = 0;
    for (int i = 0; i < n; i++) {
        zmq_pollitem_t *it = &items[i];
        it->revents = 0;
        pfds[i] = (struct pollfd) {.fd = -1};
        if (it->events & JP_POLL_ZMTP) {
            jp_zmtp_client_t *client = it->socket;
            pfds[i] = (struct pollfd) {.fd = jp_zmtp_client_fd (client),
                                       .events = jp_zmtp_client_poll_events (client)};
            if ((it->events & ZMQ_POLLIN) && jp_zmtp_client_readable (client)) {
                it->revents = ZMQ_POLLIN;
                ready++;
            }
            continue;
        }
        if (!it->socket) {
            pfds[i].fd = it->fd;
            pfds[i].events = (short) (((it->events & ZMQ_POLLIN) ? POLLIN : 0)
                                      | ((it->events & ZMQ_POLLOUT) ? POLLOUT : 0)
                                      | ((it->events & ZMQ_POLLPRI) ? POLLPRI : 0));
            continue;
        }
        int fd;
        size_t size = sizeof fd;
        if (zmq_getsockopt (it->socket, ZMQ_FD, &fd, &size) < 0) {
            it->revents = ZMQ_POLLERR;
            ready++;
            continue;
        }
        pfds[i] = (struct pollfd) {.fd = fd, .events = POLLIN};
        if (it->events & JP_POLL_USED) {
            int r = s_socket_revents (it);
            it->revents = (short) (r < 0 ? ZMQ_POLLERR : r);
            ready += it->revents != 0;
        }
    }
    return ready;
}

int
jp_poll_finish (zmq_pollitem_t *items, struct pollfd *pfds, int n)
{
    int ready = 0;
    for (int i = 0; i < n; i++) {
        zmq_pollitem_t *it = &items[i];
        short got = pfds[i].revents;
        if (it->events & JP_POLL_ZMTP) {
            if (got)
                jp_zmtp_client_service (it->socket, got);
            if (got || jp_zmtp_client_readable (it->socket))
                it->revents = (short) (it->events & ZMQ_POLLIN);
        } else if (it->socket) {
            if (got && !it->revents) {
                int r = s_socket_revents (it);
                it->revents = (short) (r < 0 ? ZMQ_POLLERR : r);
            }
        } else if (got) {
            it->revents = (short) (((got & POLLIN) ? ZMQ_POLLIN : 0)
                                   | ((got & POLLOUT) ? ZMQ_POLLOUT : 0)
                                   | ((got & POLLPRI) ? ZMQ_POLLPRI : 0)
                                   | ((got & ~(POLLIN | POLLOUT | POLLPRI)) ? ZMQ_POLLERR : 0));
        }
        ready += it->revents != 0;
    }
    return ready;
}

int
jp_poll (zmq_pollitem_t *items, struct pollfd *pfds, int n, long timeout)
{
    int ready = jp_poll_prepare (items, pfds, n);
    if (timeout > INT_MAX)
        timeout = INT_MAX;
    if (poll (pfds, (nfds_t) n, ready ? 0 : (int) timeout) < 0) {
        if (errno != EINTR)
            return -1;
        for (int i = 0; i < n; i++)
            pfds[i].revents = 0;
    }
    return jp_poll_finish (items, pfds, n);
}
