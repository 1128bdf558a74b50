/* gw_byte_pair: two connected stream sockets whose bytes pass both ways
 * unchanged, a bounded buffer per direction, half-closes passed on: the
 * pump of the kernels' network proxy (gw_cmd_kernel_net.c) and of its
 * bridge in the sandbox (gw_cmd_kernel_net_bridge.c). The caller polls
 * what gw_byte_pair_poll asks for and hands each event to
 * gw_byte_pair_pump.
 *
 * Threads: the caller's; one thread per pair. */
#ifndef GW_BYTE_PAIR_H
#define GW_BYTE_PAIR_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

#define GW_BYTE_PAIR_CHUNK 65536    /* bytes in flight per direction */

/* Direction d carries bytes from fd[d] to fd[1 - d] through buf[d]. */
typedef struct {
    int fd[2];
    char *buf[2];
    size_t have[2], sent[2];
    bool open_in[2];
} gw_byte_pair_t;

/* Takes a and b (made nonblocking; closed by gw_byte_pair_clear).
 * Returns 0, or -1 when the buffers cannot be had (a and b still
 * closed). */
int gw_byte_pair_init (gw_byte_pair_t *self, int a, int b);
void gw_byte_pair_clear (gw_byte_pair_t *self);

/* Writes into p (room for 2) what to poll now and, in dir, the direction
 * each is for; returns how many (0: the pair is done). */
int gw_byte_pair_poll (const gw_byte_pair_t *self, struct pollfd *p, int *dir);

/* Moves bytes for the event poll reported on p (of direction d). Returns
 * false when the pair is done: both sides closed and everything passed,
 * or a side that cannot be written to any more. */
bool gw_byte_pair_pump (gw_byte_pair_t *self, int d, const struct pollfd *p);

#endif
