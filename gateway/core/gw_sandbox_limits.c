/* gw_sandbox_limits: what bounds one kernel besides the sandbox's walls:
 * its cgroups (v1: memory without swap, processes, CPU time used, a CPU
 * quota), where the gateway may make them, and its rlimits. See
 * gw_sandbox.h.
 *
 * Threads: the loop thread, while a kernel is prepared; the main thread
 * for gw_sandbox_cgroup_ready (gw_sandbox_new). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw_sandbox_internal.h"

/* Writes text to the file path (a cgroup setting). True when it took it. */
static bool
s_write_text (const char *path, const char *text)
{
    FILE *f = fopen (path, "we");
    bool ok = f && fputs (text, f) >= 0;
    return f && fclose (f) == 0 && ok;
}

/* Makes the codebox folder of a cgroup hierarchy; true when usable. */
bool
gw_sandbox_cgroup_ready (const char *controller)
{
    char dir[256];
    snprintf (dir, sizeof dir, CGROUP_ROOT "/%s/codebox", controller);
    return (mkdir (dir, 0755) == 0 || errno == EEXIST) && access (dir, W_OK) == 0;
}

/* Makes the kernel's folder in one cgroup hierarchy, writes its settings
 * (pairs of file name and value, NULL-ended; a name starting with '?' is
 * written when the file exists, its failure ignored) and, when every
 * setting took, has the kernel join it; otherwise removes the folder. */
static void
s_cgroup_join (char cgroups[KS_MAX_CGROUPS][256], ks_spawn_extra_t *x, int *cg,
               const char *hierarchy, const char *kernel_id, const char *const *settings)
{
    if (*cg >= KS_MAX_CGROUPS)
        return;
    char *dir = cgroups[*cg];
    snprintf (dir, 256, CGROUP_ROOT "/%s/codebox/%s", hierarchy,
              kernel_id);
    bool ok = mkdir (dir, 0755) == 0;
    for (int i = 0; ok && settings[i]; i += 2) {
        bool optional = settings[i][0] == '?';
        char file[320];
        snprintf (file, sizeof file, "%s/%s", dir, settings[i] + optional);
        if (optional && access (file, F_OK) != 0)
            continue;
        ok = s_write_text (file, settings[i + 1]) || optional;
    }
    if (ok)
        x->cgroups[(*cg)++] = dir;
    else
        rmdir (dir);
}

/* The kernel's cgroups (v1), where the gateway may make them: memory (and
 * no escape into swap, where the kernel accounts for it), processes, CPU
 * time used (read per execution for CODEBOX_CPU_TIME_LIMIT) and a CFS quota
 * of CODEBOX_CPU_LIMIT, or a lower execution_options.cpu_limit, on
 * everything the kernel runs, from its start, whether an execution runs
 * or not. */
static void
s_join_cgroups (const gw_sandbox_t *self, const char *kernel_id, long memory_mb,
                const gw_exec_options_t *exec, char cgroups[KS_MAX_CGROUPS][256],
                ks_spawn_extra_t *x)
{
    int cg = 0;
    char memory[32], pids[32], quota[32];
    snprintf (memory, sizeof memory, "%lld", (long long) memory_mb << 20);
    snprintf (pids, sizeof pids, "%ld", self->max_processes);
    long cpu_milli = exec && exec->cpu_milli && exec->cpu_milli < self->cpu_milli
                     ? exec->cpu_milli : self->cpu_milli;
    snprintf (quota, sizeof quota, "%ld", cpu_milli * 100);
    const char *const memory_settings[] = {"memory.limit_in_bytes", memory,
                                           "?memory.memsw.limit_in_bytes", memory, NULL};
    const char *const pids_settings[] = {"pids.max", pids, NULL};
    const char *const no_settings[] = {NULL};
    const char *const cpu_settings[] = {"cpu.cfs_period_us", "100000", "cpu.cfs_quota_us",
                                        quota, NULL};
    if (self->cgroup_memory)
        s_cgroup_join (cgroups, x, &cg, "memory", kernel_id, memory_settings);
    if (self->cgroup_pids)
        s_cgroup_join (cgroups, x, &cg, "pids", kernel_id, pids_settings);
    if (self->cgroup_cpuacct)
        s_cgroup_join (cgroups, x, &cg, "cpuacct", kernel_id, no_settings);
    if (self->cgroup_cpu)
        s_cgroup_join (cgroups, x, &cg, "cpu", kernel_id, cpu_settings);
}


/* rlimits: always open files, core dumps, file size; memory and processes
 * when no cgroup does it (V8 reserves far more address space than it
 * uses, so RLIMIT_AS is left alone for JavaScript). RLIMIT_NPROC counts
 * every process of the kernel user, all kernels together: a loose
 * backstop only. */
static void
s_rlimits (const gw_sandbox_t *self, const ks_spec_t *spec, long memory_mb, ks_spawn_extra_t *x)
{
    x->rlimits[x->n_rlimits++] = (ks_rlimit_t) {RLIMIT_NOFILE, 4096};
    x->rlimits[x->n_rlimits++] = (ks_rlimit_t) {RLIMIT_CORE, 0};
    x->rlimits[x->n_rlimits++] = (ks_rlimit_t) {RLIMIT_FSIZE, (rlim_t) self->quota_mb << 20};
    if (!self->cgroup_memory && strcmp (spec->language, "javascript") != 0)
        x->rlimits[x->n_rlimits++] = (ks_rlimit_t) {RLIMIT_AS, (rlim_t) memory_mb << 20};
    if (!self->cgroup_pids && self->set_user)
        x->rlimits[x->n_rlimits++] = (ks_rlimit_t) {RLIMIT_NPROC, 8192};
}

void
gw_sandbox_limits (const gw_sandbox_t *self, const ks_spec_t *spec, const char *kernel_id,
                   long memory_mb, const gw_exec_options_t *exec, char cgroups[KS_MAX_CGROUPS][256],
                   ks_spawn_extra_t *x)
{
    s_join_cgroups (self, kernel_id, memory_mb, exec, cgroups, x);
    s_rlimits (self, spec, memory_mb, x);
}
