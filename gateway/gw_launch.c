/* gw_launch: kernel start options for sessions and the pool. Loop thread. */
#include "gw_launch.h"

#include <stdio.h>

#include "gw_loop.h"
#include "gw_metrics.h"

ks_kernel_t *
gw_launch_kernel (gw_loop_t *loop, const ks_spec_t *spec, const char *workdir, char *err,
                  size_t err_len)
{
    const gw_config_t *config = gw_loop_config (loop);
    ks_kernel_options_t options = {
        .cwd = workdir,
        .runtime_dir = gw_loop_runtime_dir (loop),
        .start_timeout_ms = (int) gw_config_int (config, GW_SET_KERNEL_START_TIMEOUT) * 1000,
    };
    ks_kernel_t *kernel = ks_kernel_new (gw_loop_zmq (loop), spec, &options);
    if (!kernel) {
        snprintf (err, err_len, "out of memory");
        return NULL;
    }
    gw_metrics_kernel_start (gw_loop_metrics (loop));
    if (ks_kernel_start (kernel)) {
        snprintf (err, err_len, "%s", ks_kernel_error (kernel));
        ks_kernel_destroy (&kernel);
    }
    return kernel;
}
