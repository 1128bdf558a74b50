/* gw_pool: warm kernels. For each pooled kernelspec (CODEBOX_POOL_KERNELS,
 * default: the default kernel) it keeps CODEBOX_POOL_SIZE kernels started
 * and ready, each working in its own empty folder STATE_DIR/.pool-<id>/
 * (with input/ and output/). A new session takes one: the folder is
 * renamed to STATE_DIR/<session>/, which moves the kernel's working
 * directory with it (a process's cwd follows the folder, not its name),
 * and the pool starts a replacement. A kernel is never reused after a
 * session had it. Session ids cannot start with '.', so pool folders never
 * clash with sessions.
 *
 * Threads: the loop thread (it owns the pool kernels' sockets). */
#ifndef GW_POOL_H
#define GW_POOL_H

#include <stdint.h>

#include <zmq.h>

#include "gw_launch.h"
#include "ks_kernel.h"

typedef struct gw_pool gw_pool_t;

/* A pool for the settings of ctx (borrowed: the server's, which outlives
 * the pool), empty when CODEBOX_POOL_SIZE is 0. */
gw_pool_t *gw_pool_new (const gw_launch_ctx_t *ctx);
/* Kills every pool kernel and removes their folders. */
void gw_pool_destroy (gw_pool_t **self_p);

/* Takes a READY kernel of the kernelspec named spec_name, moving its
 * folder to workdir (which must not exist). Returns it with its spec in
 * *spec_p (both now the caller's), or NULL when none is ready. */
ks_kernel_t *gw_pool_take (gw_pool_t *self, const char *spec_name, const char *workdir,
                           ks_spec_t **spec_p);

/* Poll set, deadline, dispatch and timers, as a session's. */
int gw_pool_poll_count (gw_pool_t *self);
int gw_pool_poll_items (gw_pool_t *self, zmq_pollitem_t *items, int max);
int64_t gw_pool_deadline (gw_pool_t *self);
void gw_pool_dispatch (gw_pool_t *self, const zmq_pollitem_t *items, int n);
/* Starts kernels to refill the pool; drops dead ones. */
void gw_pool_tick (gw_pool_t *self, int64_t now);

#endif
