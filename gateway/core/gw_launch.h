/* gw_launch: how the gateway starts a kernel for a session folder: the
 * runtime folder, the start timeout and the environment, in one place for
 * sessions and the warm pool. Threads: the loop thread. */
#ifndef GW_LAUNCH_H
#define GW_LAUNCH_H

#include <stddef.h>

#include "gw_exec_options.h"
#include "ks_kernel.h"

typedef struct gw_server gw_server_t;

/* Makes and starts a kernel of spec (borrowed; must outlive the kernel)
 * working in workdir, with the session's execution_options (NULL: none).
 * Returns it STARTING, or NULL with err set. */
ks_kernel_t *gw_launch_kernel (gw_server_t *server, const ks_spec_t *spec, const char *workdir,
                               const gw_exec_options_t *exec, char *err, size_t err_len);

#endif
