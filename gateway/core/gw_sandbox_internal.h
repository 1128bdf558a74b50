/* gw_sandbox_internal: the sandbox's state, shared by gw_sandbox.c (modes,
 * bubblewrap's arguments) and gw_sandbox_limits.c (cgroups and rlimits).
 * Nothing outside gateway/core includes it.
 *
 * Threads: as gw_sandbox.h. */
#ifndef GW_SANDBOX_INTERNAL_H
#define GW_SANDBOX_INTERNAL_H

#include <stdbool.h>
#include <sys/types.h>

#include "gw_exec_options.h"
#include "gw_fork_server.h"
#include "ks_kernel.h"
#include "ks_process.h"

#define CGROUP_ROOT "/sys/fs/cgroup"
#define S_MAX_ETC_LINKS 24

/* (as in gw_sandbox.h, which this header does not include: the limits
   below gw_sandbox.c need only the state) */
typedef struct gw_sandbox gw_sandbox_t;

struct gw_sandbox {
    bool bwrap;
    bool network;
    bool net_private;           /* CODEBOX_DOWNLOAD_ALLOW_PRIVATE: the kernels'
                                   proxy lets private addresses through */
    bool set_user;
    uid_t uid;
    gid_t gid;
    char user[65];
    long memory_mb;
    long max_processes;
    long cpu_time_s;            /* CODEBOX_CPU_TIME_LIMIT, per execution */
    long quota_mb;
    bool cgroup_memory, cgroup_pids, cgroup_cpuacct;
    char why_none[200];
    char exe[512];              /* codebox-sidecar (else this binary): the relay,
                                   seat, bridge and proxy of each kernel */
    /* When kernels run as another user: mount targets in a folder every
       user can pass through; each kernel's launcher binds its session
       folder and this binary there in a mount namespace of its own */
    char stage_session[300];
    char stage_exe[300];
    char stage_work[300];
    char stage_mounts[GW_EXEC_MAX_MOUNTS][300];    /* for execution_options mounts */
    char stage_volumes[GW_EXEC_MAX_VOLUMES][300];  /* for named volumes */
    bool cgroup_cpu;            /* a cpu hierarchy for CPU quotas */
    long cpu_milli;             /* CODEBOX_CPU_LIMIT in thousandths of a core: every
                                   kernel's quota, from its start */
    int seccomp_fd;             /* the BPF program for bwrap --seccomp, or -1 */
    /* the /etc entries installed software under /usr links to (R's
       /usr/lib/R/etc -> /etc/R, octave's octaverc...), shown read-only */
    char etc_links[S_MAX_ETC_LINKS][64];
    int n_etc_links;
    gw_fork_server_t *fork_server;  /* CODEBOX_FORK_SERVER=on, or NULL */
};

/* Finds the /etc entries symlinks under /usr point into (gw_sandbox_etc.c). */
void gw_sandbox_find_etc_links (gw_sandbox_t *self);

/* Makes the codebox folder of a cgroup hierarchy; true when usable. */
bool gw_sandbox_cgroup_ready (const char *controller);

/* A kernel's cgroups (their folders written into cgroups, KS_MAX_CGROUPS
 * of 256 bytes, and joined through x) and rlimits (in x). */
void gw_sandbox_limits (const gw_sandbox_t *self, const ks_spec_t *spec, const char *kernel_id,
                        long memory_mb, const gw_exec_options_t *exec,
                        char cgroups[KS_MAX_CGROUPS][256], ks_spawn_extra_t *x);

#endif
