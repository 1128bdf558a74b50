/* gw_launch: how the gateway starts a kernel for a session folder: the
 * session folder itself, the runtime folder, the start timeout and the
 * environment, in one place for sessions and the warm pool. It needs of
 * the server only what a launch context gives (no gw_server_t), so the
 * server, its sessions and its pool all sit above it.
 *
 * Threads: the loop thread. */
#ifndef GW_LAUNCH_H
#define GW_LAUNCH_H

#include <stddef.h>

#include "gw_config.h"
#include "gw_exec_options.h"
#include "gw_hooks.h"
#include "gw_metrics.h"
#include "ks_kernel.h"

struct gw_sandbox;

/* What launching a kernel needs: the server's, borrowed, set once when
 * the server is made and alive as long as it. */
typedef struct {
    const gw_config_t *config;
    const char *runtime_dir;    /* kernels' connection files and sockets */
    const char *state_dir;      /* session folders */
    struct gw_sandbox *sandbox;
    gw_metrics_t *metrics;
    gw_hooks_t *hooks;          /* what features add to a kernel's environment */
} gw_launch_ctx_t;

/* Makes and starts a kernel of spec (borrowed; must outlive the kernel)
 * working in workdir, with the session's execution_options (NULL: none).
 * Returns it STARTING, or NULL with err set. */
ks_kernel_t *gw_launch_kernel (const gw_launch_ctx_t *ctx, const ks_spec_t *spec,
                               const char *workdir, const gw_exec_options_t *exec, char *err,
                               size_t err_len);

/* Makes a session folder (a file system of CODEBOX_DISK_QUOTA_MB where
 * quotas are on, see gw_disk) with input/, output/ and .tmp/ for the
 * kernel user. Returns 0 or -errno with err set. */
int gw_launch_make_folder (const gw_launch_ctx_t *ctx, const char *folder, char *err,
                           size_t err_len);

#endif
