/* gw_kernel_epoll: the descriptors of an owner's kernels (the sessions',
 * the warm pool's) kept in one epoll set, and a turn's polling and
 * dispatch of those kernels through it, so that a loop turn polls one
 * descriptor for all the kernels that were not
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

/* A turn's polling of the kernels of an owner (sessions, the warm pool):
 * brings the set up to date with the n kernels kernel_of(arg, i) gives
 * (NULL: none), then fills items with the set's descriptor and the items
 * of each kernel that must be polled by its own (busy since its last
 * poll: ks_kernel_needs_poll_items; or every kernel if the set could not
 * be made). Returns how many items (at most max); 0 for all of them if
 * out of memory. */
int gw_kernel_epoll_poll_items (gw_kernel_epoll_t *self, size_t n,
                                ks_kernel_t *(*kernel_of) (void *arg, size_t i), void *arg,
                                zmq_pollitem_t *items, int max);

/* After the poll, with the same n items: dispatches each kernel of the
 * last gw_kernel_epoll_poll_items that its owner still has (still(arg, i,
 * kernel)): with its own items, with what the set said of each of its
 * descriptors if the set found it ready (no poll(2) of its own), or for
 * its timers alone. */
void gw_kernel_epoll_dispatch (gw_kernel_epoll_t *self, const zmq_pollitem_t *items, int n,
                               bool (*still) (void *arg, size_t i, const ks_kernel_t *kernel),
                               void *arg);

#endif
