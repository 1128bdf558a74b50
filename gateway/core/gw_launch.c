/* gw_launch: how a session folder is made and a kernel started for it:
 * its own runtime folder, the start timeout, and the sandbox's wrapper,
 * user, limits and clean environment. Loop thread. */
#include "gw_launch.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw_disk.h"
#include "gw_ipykernel.h"
#include "gw_sandbox.h"
#include "jp_random.h"

ks_kernel_t *
gw_launch_kernel (const gw_launch_ctx_t *ctx, const ks_spec_t *spec, const char *workdir,
                  const gw_exec_options_t *exec, char *err, size_t err_len)
{
    const gw_config_t *config = ctx->config;
    /* each kernel sees only its own runtime folder inside the sandbox */
    char uuid[JP_UUID_LEN + 1], runtime[128];
    jp_random_uuid (uuid);
    snprintf (runtime, sizeof runtime, "%s/%.8s", ctx->runtime_dir, uuid);
    if (mkdir (runtime, 0700) < 0) {
        snprintf (err, err_len, "cannot make %s: %s", runtime, strerror (errno));
        return NULL;
    }
    /* as root, the runtime folder (connection file, ipc sockets, the
       kernel's log; writable by the kernel) is a small tmpfs of its own:
       kernel code cannot fill the host's /tmp through it, and it goes with
       the kernel */
    bool mounted = geteuid () == 0
                   && mount ("tmpfs", runtime, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                             "size=4m,nr_inodes=256,mode=0700") == 0;
    /* what features add (a restarted kernel still finds the session's
       packages, gw_packages.c) */
    gw_kernel_env_t kenv = {.n = 0};
    gw_hooks_kernel_env (ctx->hooks, gw_sandbox_visible (ctx->sandbox, workdir), &kenv);
    const char *env[GW_KERNEL_ENV_MAX + GW_EXEC_MAX_ENV + 1] = {NULL};
    int n_env = 0;
    for (int i = 0; i < kenv.n; i++)
        env[n_env++] = kenv.vars[i];
    /* a client's variables: without bubblewrap straight to the kernel;
       with it, inside the sandbox only (gw_sandbox_prepare) */
    for (int i = 0; exec && !gw_sandbox_bwrap (ctx->sandbox) && exec->env[i]; i++)
        env[n_env++] = exec->env[i];
    ks_kernel_options_t options = {
        .extra_env = env,
        .extra_argv = gw_ipykernel_argv (spec, config),
        .cwd = workdir,
        .runtime_dir = runtime,
        .start_timeout_ms = (int) gw_config_int (config, GW_SET_KERNEL_START_TIMEOUT) * 1000,
        .own_runtime_dir = true,
        .runtime_dir_mounted = mounted,
    };
    gw_sandbox_launch_t launch;
    char cgroup_id[16];
    snprintf (cgroup_id, sizeof cgroup_id, "%.8s", uuid);
    int rc = gw_sandbox_prepare (ctx->sandbox, spec, workdir, runtime, cgroup_id,
                                 exec, &launch, &options);
    if (rc) {
        snprintf (err, err_len, "cannot prepare the sandbox: %s", strerror (-rc));
        if (launch.relay_dir[0])
            rmdir (launch.relay_dir);
        gw_sandbox_launch_clear (&launch);
        if (mounted)
            umount2 (runtime, MNT_DETACH);
        rmdir (runtime);
        return NULL;
    }
    ks_kernel_t *kernel = ks_kernel_new (spec, &options);
    if (!kernel && launch.relay_dir[0])
        rmdir (launch.relay_dir);
    gw_sandbox_launch_clear (&launch);
    if (!kernel) {
        snprintf (err, err_len, "out of memory");
        if (mounted)
            umount2 (runtime, MNT_DETACH);
        rmdir (runtime);
        return NULL;
    }
    gw_metrics_kernel_start (ctx->metrics);
    if (ks_kernel_start (kernel)) {
        snprintf (err, err_len, "%s", ks_kernel_error (kernel));
        ks_kernel_destroy (&kernel);
    }
    return kernel;
}

int
gw_launch_make_folder (const gw_launch_ctx_t *ctx, const char *folder, char *err,
                       size_t err_len)
{
    uid_t uid = geteuid ();
    gid_t gid = getegid ();
    gw_sandbox_owner (ctx->sandbox, &uid, &gid);
    return gw_disk_make_session (folder, gw_config_int (ctx->config, GW_SET_DISK_QUOTA_MB),
                                 uid, gid, err, err_len);
}
