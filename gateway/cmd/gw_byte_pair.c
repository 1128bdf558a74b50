/* gw_byte_pair: bytes both ways between two sockets; see gw_byte_pair.h.
 * Threads: the caller's. */
#include "gw_byte_pair.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

int
gw_byte_pair_init (gw_byte_pair_t *self, int a, int b)
{
    *self = (gw_byte_pair_t) {.fd = {a, b}, .open_in = {true, true},
                              .buf = {malloc (GW_BYTE_PAIR_CHUNK), malloc (GW_BYTE_PAIR_CHUNK)}};
    for (int i = 0; i < 2; i++) {
        int flags = fcntl (self->fd[i], F_GETFL);
        if (flags >= 0)
            fcntl (self->fd[i], F_SETFL, flags | O_NONBLOCK);
    }
    if (self->buf[0] && self->buf[1])
        return 0;
    gw_byte_pair_clear (self);
    return -1;
}

void
gw_byte_pair_clear (gw_byte_pair_t *self)
{
    for (int i = 0; i < 2; i++) {
        if (self->fd[i] >= 0)
            close (self->fd[i]);
        self->fd[i] = -1;
        free (self->buf[i]);
        self->buf[i] = NULL;
    }
}

int
gw_byte_pair_poll (const gw_byte_pair_t *self, struct pollfd *p, int *dir)
{
    int n = 0;
    for (int d = 0; d < 2; d++) {
        if (self->have[d] > self->sent[d])
            p[n] = (struct pollfd) {.fd = self->fd[1 - d], .events = POLLOUT};
        else if (self->open_in[d])
            p[n] = (struct pollfd) {.fd = self->fd[d], .events = POLLIN};
        else
            continue;
        dir[n++] = d;
    }
    return n;
}

bool
gw_byte_pair_pump (gw_byte_pair_t *self, int d, const struct pollfd *p)
{
    int to = self->fd[1 - d];
    if (p->events == POLLIN) {
        ssize_t r = read (self->fd[d], self->buf[d], GW_BYTE_PAIR_CHUNK);
        if (r > 0)
            self->have[d] = (size_t) r, self->sent[d] = 0;
        else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
            self->open_in[d] = false;
            shutdown (to, SHUT_WR);
        }
    } else {
        ssize_t w = write (to, self->buf[d] + self->sent[d], self->have[d] - self->sent[d]);
        if (w > 0 && (self->sent[d] += (size_t) w) == self->have[d])
            self->have[d] = self->sent[d] = 0;
        else if (w < 0 && errno != EINTR && errno != EAGAIN)
            return false;
    }
    return self->open_in[0] || self->open_in[1] || self->have[0] || self->have[1];
}
