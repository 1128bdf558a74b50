/* gw_sandbox: how kernels are confined (CODEBOX_SANDBOX, CODEBOX_NETWORK,
 * CODEBOX_KERNEL_USER, CODEBOX_MEMORY_LIMIT_MB). With bwrap each kernel
 * runs under bubblewrap: system folders read-only, a handful of /etc
 * files, a private /tmp, its session folder (writable, seen as /session)
 * and its own runtime folder (connection file and ipc sockets) and nothing
 * else of the host; new PID, IPC, UTS and network namespaces (with
 * CODEBOX_NETWORK=on the way out is a proxy with the gateway's address
 * rules, gateway/cmd/gw_cmd_kernel_net.c); no capabilities. When the gateway runs as root, kernels run
 * as the kernel user. Memory and process counts are capped by a cgroup (v1)
 * per kernel where the gateway may make one, otherwise by rlimits; open
 * files, core dumps and file sizes by rlimits. Kernels get a clean
 * environment: no secret of the gateway's reaches them.
 *
 * Threads: built by the main thread; used by the loop thread. */
#ifndef GW_SANDBOX_H
#define GW_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#include "gw_config.h"
#include "gw_exec_options.h"
#include "ks_kernel.h"

typedef struct gw_sandbox gw_sandbox_t;

/* With CODEBOX_NETWORK=on: the port of the proxy bridge on each kernel's
 * own loopback (gateway/cmd/gw_cmd_kernel_net_bridge.c); every kernel has
 * a network namespace of its own, so all may use the same one. */
#define GW_SANDBOX_NET_PORT 3128

/* The strings one kernel's launch options point at (the kernel copies
 * them; clear after ks_kernel_new). */
typedef struct {
    char **wrap;
    char *env[8];
    char cgroups[KS_MAX_CGROUPS][256];
    char relay_dir[300];        /* made here; the kernel removes it */
    char net_socket[108];       /* the kernel's network proxy (CODEBOX_NETWORK=on) */
} gw_sandbox_launch_t;

/* Decides the mode (auto: bwrap when a trial sandbox starts), finds the
 * kernel user and the cgroup hierarchies, builds the seccomp filter, and
 * makes the mount targets in stage_dir (a folder the kernel user can pass
 * through, e.g. the runtime folder) that launchers bind session folders
 * to. NULL with err set when bwrap was asked for and does not work. */
gw_sandbox_t *gw_sandbox_new (const gw_config_t *config, const char *stage_dir, char *err,
                              size_t err_len);

/* For other bubblewrap launches (package installs): copies the mount
 * targets for a work folder and the session folder into work and session
 * (len bytes each; "" when no binds are needed) and returns the seccomp
 * program's descriptor (-1 without bwrap). */
int gw_sandbox_stage (const gw_sandbox_t *self, char *work, char *session, size_t len);
void gw_sandbox_destroy (gw_sandbox_t **self_p);

/* True when kernels run under bubblewrap. */
bool gw_sandbox_bwrap (const gw_sandbox_t *self);

/* True when kernel code may reach the network: CODEBOX_NETWORK=on, or no
 * bubblewrap (nothing takes the network away). */
bool gw_sandbox_network (const gw_sandbox_t *self);

/* Fills options (wrap_argv, spawn, extra_env, clean_env) for a kernel of
 * spec working in workdir, with its own runtime_dir (made by the caller),
 * and gives runtime_dir to the kernel user; exec (may be NULL): the
 * session's execution_options (memory, CPU quota, mounts and variables,
 * the last two inside bubblewrap only). Returns 0 or -errno (-EPERM for
 * mounts without bubblewrap). */
int gw_sandbox_prepare (gw_sandbox_t *self, const ks_spec_t *spec, const char *workdir,
                        const char *runtime_dir, const char *kernel_id,
                        const gw_exec_options_t *exec, gw_sandbox_launch_t *launch,
                        ks_kernel_options_t *options);

/* The server's rules for execution_options: the memory cap, the CPUs, the
 * mount roots, whether mounts are possible. */
gw_exec_rules_t gw_sandbox_exec_rules (const gw_sandbox_t *self, const gw_config_t *config);
void gw_sandbox_launch_clear (gw_sandbox_launch_t *launch);

/* The path kernel code sees for the session folder at host_workdir. */
const char *gw_sandbox_visible (const gw_sandbox_t *self, const char *host_workdir);

/* The kernel user's uid and gid when kernels run as one (true), else
 * false (files stay the gateway's). */
bool gw_sandbox_owner (const gw_sandbox_t *self, uid_t *uid, gid_t *gid);

/* Gives path to the kernel user (when kernels run as one). Returns 0 or
 * -errno. */
int gw_sandbox_own (const gw_sandbox_t *self, const char *path);
int gw_sandbox_own_fd (const gw_sandbox_t *self, int fd);

/* {"sandbox","network","user","memory_limit_mb","limits_by",...} (new);
 * "network_by" says how a kernel reaches the network when it may, and
 * "bridge" how a kernel that speaks only TCP is reached in its namespace. */
json_t *gw_sandbox_describe (const gw_sandbox_t *self, const ks_spec_t *spec);

#endif
