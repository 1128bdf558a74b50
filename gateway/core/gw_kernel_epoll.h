/* gw_kernel_epoll: the sessions' kernels' descriptors kept in one epoll set, so
 * that a loop turn polls one descriptor for all the kernels that were not
 * used since their last poll instead of six or seven each (with 64 idle
 * sessions poll(2) over ~450 descriptors was most of a turn's cost). The
 * set is made again whenever the kernels or the generation of their
 * descriptors (ks_kernel_fds_generation) change, so a descriptor closed
 * and its number reused is never missed; a kernel's resting iopub
 * (ks_kernel_resting_fd) is taken out and put back alone. Level-triggered,
 * like poll(2).
 * Loop thread only. */
#ifndef GW_KERNEL_EPOLL_H
#define GW_KERNEL_EPOLL_H

#include <stdbool.h>
#include <stddef.h>

#include "ks_kernel.h"

typedef struct gw_kernel_epoll gw_kernel_epoll_t;

gw_kernel_epoll_t *gw_kernel_epoll_new (void);
void gw_kernel_epoll_destroy (gw_kernel_epoll_t **self_p);

/* Brings the set up to date with these kernels (NULL entries hold no
 * descriptor), their index in the array being the index ready reports.
 * Returns the epoll descriptor to poll for POLLIN, or -1 if the set could
 * not be made: then poll every kernel's items. */
int gw_kernel_epoll_sync (gw_kernel_epoll_t *self, ks_kernel_t *const *kernels, size_t n);

/* After the descriptor polled readable: sets ready[i] for each kernel i
 * (of the last sync, n of them) with a readable descriptor. */
void gw_kernel_epoll_ready (gw_kernel_epoll_t *self, bool *ready, size_t n);

/* What that epoll_wait said of kernel k's descriptor fd, as poll(2)'s
 * revents (POLLIN, POLLERR, POLLHUP; 0 for nothing), so a ready kernel's
 * items need no poll(2) of their own. (A number closed and reused since
 * can only give a read that finds nothing; level-triggered, nothing is
 * missed: the set says it again next turn.) */
short gw_kernel_epoll_revents (const gw_kernel_epoll_t *self, size_t k, int fd);

/* Dispatches kernel k (of the last sync) that gw_kernel_epoll_ready found
 * ready: its items, with what the set said of each descriptor. */
void gw_kernel_epoll_dispatch (const gw_kernel_epoll_t *self, size_t k, ks_kernel_t *kernel);

#endif
