/* gw_sandbox: the mode (bubblewrap or none), the kernel user, and the
 * bubblewrap arguments of each kernel (mounts, namespaces, the network
 * proxy's bridge); cgroups and rlimits are in gw_sandbox_limits.c.
 * Threads: made by the main thread, used by the loop thread. */
#include "gw_sandbox.h"
#include "gw_sandbox_internal.h"
#include "gw_disk.h"
#include "gw_seccomp.h"
#include "jp_log.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define VISIBLE_WORKDIR "/session"
#define MAX_ARGS 512


/* Appends arguments to the vector. */
static void
s_args (char **argv, int *n, int count, ...)
{
    va_list ap;
    va_start (ap, count);
    for (int i = 0; i < count && *n < MAX_ARGS - 1; i++)
        argv[(*n)++] = strdup (va_arg (ap, const char *));
    va_end (ap);
    argv[*n] = NULL;
}

/* Frees a vector s_args filled. */
static void
s_args_free (char **argv)
{
    for (int i = 0; argv && argv[i]; i++)
        free (argv[i]);
    free (argv);
}

/* /usr read-only and the top-level system folders beside it (merged-/usr
 * links stay links): what any program in a sandbox needs to start. */
static void
s_usr_mounts (char **argv, int *n)
{
    s_args (argv, n, 3, "--ro-bind", "/usr", "/usr");
    static const char *const top[] = {"/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"};
    for (size_t i = 0; i < sizeof top / sizeof top[0]; i++) {
        char target[256];
        ssize_t len = readlink (top[i], target, sizeof target - 1);
        if (len > 0) {
            target[len] = '\0';
            s_args (argv, n, 3, "--symlink", target, top[i]);
        } else if (access (top[i], F_OK) == 0)
            s_args (argv, n, 3, "--ro-bind", top[i], top[i]);
    }
}

/* How a trial sandbox ended. */
typedef enum { S_TRY_WORKS, S_TRY_FAILED, S_TRY_NEVER } s_try_t;

/* Runs a trial sandbox (as the kernel user). S_TRY_WORKS; else why[]
 * holds the start of what bubblewrap printed, or how it ended, and
 * S_TRY_NEVER says trying again cannot help (no bwrap on PATH, the kernel
 * user cannot be taken). */
static s_try_t
s_bwrap_try (const gw_sandbox_t *self, char *why, size_t why_len)
{
    /* the system folders as a kernel's sandbox has them, not all of /: a
       recursive bind of / copies every mount under it, and another
       gateway's session file systems come and go under /tmp ("Can't bind
       mount /oldroot/ on /newroot/: ... remount ...: No such file or
       directory") */
    char **argv = calloc (MAX_ARGS, sizeof (char *));
    int argc = 0, out[2];
    if (!argv) {
        snprintf (why, why_len, "out of memory");
        return S_TRY_FAILED;
    }
    s_args (argv, &argc, 1, "bwrap");
    s_usr_mounts (argv, &argc);
    s_args (argv, &argc, 4, "--unshare-pid", "--unshare-net", "--die-with-parent",
            "/usr/bin/true");
    if (pipe2 (out, O_CLOEXEC) < 0) {
        snprintf (why, why_len, "pipe: %s", strerror (errno));
        s_args_free (argv);
        return S_TRY_FAILED;
    }
    pid_t pid = fork ();
    if (pid < 0) {
        snprintf (why, why_len, "fork: %s", strerror (errno));
        close (out[0]);
        close (out[1]);
        s_args_free (argv);
        return S_TRY_FAILED;
    }
    if (pid == 0) {
        int devnull = open ("/dev/null", O_RDWR);
        dup2 (devnull, 1);
        dup2 (out[1], 2);
        if (self->set_user && (setgroups (0, NULL) < 0 || setgid (self->gid) < 0
                               || setuid (self->uid) < 0))
            _exit (126);
        execvp ("bwrap", argv);
        _exit (127);
    }
    close (out[1]);
    s_args_free (argv);
    /* what fits in why[] is kept; the rest is read and dropped, so bwrap
       never blocks on a full pipe */
    size_t got = 0;
    char sink[256];
    for (;;) {
        bool room = got + 1 < why_len;
        ssize_t n = read (out[0], room ? why + got : sink,
                          room ? why_len - 1 - got : sizeof sink);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (room)
            got += (size_t) n;
    }
    why[got] = '\0';
    close (out[0]);
    int status;
    while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
        return S_TRY_WORKS;
    why[strcspn (why, "\n")] = '\0';
    if (why[0])
        return S_TRY_FAILED;    /* bubblewrap said why */
    int code = WIFEXITED (status) ? WEXITSTATUS (status) : -1;
    if (code == 126 || code == 127) {
        snprintf (why, why_len, code == 126 ? "cannot become the kernel user"
                                            : "no bwrap on PATH");
        return S_TRY_NEVER;
    }
    snprintf (why, why_len, "bwrap ended with status %d", status);
    return S_TRY_FAILED;
}

/* The trial sandbox, tried again after a pause when it fails in a way
 * that can pass (a fork or a namespace refused while the machine is
 * busy): under CODEBOX_SANDBOX=auto a wrong "no" runs every kernel of
 * this gateway unconfined, so it tries for about 3 s (pauses of 100 ms,
 * doubling) before it says so. No bwrap on PATH, or no kernel user, is
 * said at once. */
static bool
s_bwrap_works (const gw_sandbox_t *self, char *why, size_t why_len)
{
    for (int attempt = 0, pause_ms = 100; attempt < 6; attempt++, pause_ms *= 2) {
        s_try_t got = s_bwrap_try (self, why, why_len);
        if (got == S_TRY_WORKS)
            return true;
        if (got == S_TRY_NEVER || attempt == 5)
            return false;
        jp_log_warn ("sandbox event=probe-failed attempt=%d why=%s", attempt + 1, why);
        usleep ((useconds_t) pause_ms * 1000);
    }
    return false;
}

/* Makes what every bwrap launch shares: the seccomp program and, when
 * kernels run as another user, the mount targets in stage_dir (a folder
 * that user can pass through). Returns 0 or -1 with err set. */
static int
s_bwrap_ready (gw_sandbox_t *self, const char *stage_dir, char *err, size_t err_len)
{
    self->seccomp_fd = gw_seccomp_program_fd (err, err_len);
    if (self->seccomp_fd < 0)
        return -1;
    if (!self->set_user)
        return 0;
    snprintf (self->stage_session, sizeof self->stage_session, "%s/session", stage_dir);
    snprintf (self->stage_exe, sizeof self->stage_exe, "%s/codebox", stage_dir);
    snprintf (self->stage_work, sizeof self->stage_work, "%s/work", stage_dir);
    int fd = -1;
    bool made = true;
    for (int i = 0; i < GW_EXEC_MAX_MOUNTS && made; i++) {
        snprintf (self->stage_mounts[i], sizeof self->stage_mounts[i], "%s/m%d", stage_dir, i);
        made = mkdir (self->stage_mounts[i], 0755) == 0 || errno == EEXIST;
    }
    for (int i = 0; i < GW_EXEC_MAX_VOLUMES && made; i++) {
        snprintf (self->stage_volumes[i], sizeof self->stage_volumes[i], "%s/v%d", stage_dir, i);
        made = mkdir (self->stage_volumes[i], 0755) == 0 || errno == EEXIST;
    }
    if (!made || (mkdir (self->stage_session, 0755) < 0 && errno != EEXIST)
        || (mkdir (self->stage_work, 0755) < 0 && errno != EEXIST)
        || (fd = open (self->stage_exe, O_WRONLY | O_CREAT | O_CLOEXEC, 0755)) < 0) {
        snprintf (err, err_len, "cannot prepare the sandbox's mount targets in %s: %s",
                  stage_dir, strerror (errno));
        return -1;
    }
    close (fd);
    return 0;
}

/* The program run beside each kernel (its relay, seat, bridge, proxy):
 * codebox-sidecar beside this binary, which maps libc only (each relay and
 * seat holds 0.2-0.3 MiB of its own, 4-5 MiB as this binary), else this
 * binary. */
static void
s_find_helper (char *exe, size_t size)
{
    ssize_t len = readlink ("/proc/self/exe", exe, size - 1);
    exe[len > 0 ? len : 0] = '\0';
    char *slash = strrchr (exe, '/');
    char helper[PATH_MAX];
    if (slash && snprintf (helper, sizeof helper, "%.*s/codebox-sidecar", (int) (slash - exe),
                           exe) < (int) sizeof helper
        && access (helper, X_OK) == 0 && strlen (helper) < size)
        snprintf (exe, size, "%s", helper);
}

/* CODEBOX_FORK_SERVER=on: the server (started at the first kernel), when
 * kernels are sandboxed by a root gateway; else said once why not. */
static int
s_fork_server_new (gw_sandbox_t *self, const gw_config_t *config, const char *stage_dir,
                   char *err, size_t err_len)
{
    if (!self->bwrap || !self->set_user) {
        jp_log_info ("fork_server=off why=\"%s\"", !self->bwrap ? "no sandbox: kernels are "
                     "started as usual" : "not root: a forked kernel could not join its sandbox");
        return 0;
    }
    char folder[400];
    snprintf (folder, sizeof folder, "%s/fork", stage_dir);
    self->fork_server = gw_fork_server_new (folder, gw_config_str (config, GW_SET_POOL_PRELOAD),
                                            self->uid, self->gid, self->seccomp_fd, err,
                                            err_len);
    return self->fork_server ? 0 : -1;
}

gw_sandbox_t *
gw_sandbox_new (const gw_config_t *config, const char *stage_dir, char *err, size_t err_len)
{
    gw_sandbox_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->seccomp_fd = -1;
    char why[160] = "";
    gw_sandbox_find_etc_links (self);
    self->network = strcmp (gw_config_str (config, GW_SET_NETWORK), "on") == 0;
    self->net_private = gw_config_bool (config, GW_SET_DOWNLOAD_ALLOW_PRIVATE);
    s_find_helper (self->exe, sizeof self->exe);
    self->memory_mb = gw_config_int (config, GW_SET_MEMORY_LIMIT_MB);
    self->cpu_time_s = gw_config_int (config, GW_SET_CPU_TIME_LIMIT);
    self->max_processes = gw_config_int (config, GW_SET_MAX_PROCESSES);
    self->quota_mb = gw_config_int (config, GW_SET_DISK_QUOTA_MB);
    self->cpu_milli = gw_exec_parse_cpu (gw_config_str (config, GW_SET_CPU_LIMIT));
    if (self->cpu_milli <= 0)
        self->cpu_milli = 1000;
    const char *mode = gw_config_str (config, GW_SET_SANDBOX);
    if (geteuid () == 0) {
        const char *name = gw_config_str (config, GW_SET_KERNEL_USER);
        struct passwd *pw = getpwnam (name);
        if (!pw) {
            jp_log_info ("kernel user %s does not exist (make deps makes it); "
                     "kernels run as nobody", name);
            pw = getpwnam ("nobody");
        }
        if (pw) {
            self->set_user = true;
            self->uid = pw->pw_uid;
            self->gid = pw->pw_gid;
            snprintf (self->user, sizeof self->user, "%s", pw->pw_name);
        }
        self->cgroup_memory = gw_sandbox_cgroup_ready ("memory");
        self->cgroup_pids = gw_sandbox_cgroup_ready ("pids");
        self->cgroup_cpuacct = gw_sandbox_cgroup_ready ("cpuacct");
        self->cgroup_cpu = access (CGROUP_ROOT "/cpu/cpu.cfs_quota_us", F_OK) == 0
                           && gw_sandbox_cgroup_ready ("cpu");
    }
    /* said once: the CPU share is not held where there is no cpu cgroup */
    if (!self->cgroup_cpu)
        jp_log_warn ("cpu_limit=off why=\"%s\": CODEBOX_CPU_LIMIT is not applied; a "
                     "session's processes may use every core", geteuid () != 0
                     ? "not root: no cgroups are made"
                     : "no cgroup v1 cpu hierarchy with CFS quotas at " CGROUP_ROOT "/cpu");
    if (!self->user[0]) {
        struct passwd *pw = getpwuid (geteuid ());
        snprintf (self->user, sizeof self->user, "%s", pw ? pw->pw_name : "?");
    }
    if (strcmp (mode, "none") == 0)
        snprintf (self->why_none, sizeof self->why_none, "CODEBOX_SANDBOX=none");
    else if (s_bwrap_works (self, why, sizeof why))
        self->bwrap = true;
    else if (strcmp (mode, "bwrap") == 0) {
        snprintf (err, err_len, "CODEBOX_SANDBOX=bwrap but bubblewrap cannot start a sandbox "
                  "here (is bwrap installed, and are user namespaces allowed?): %s", why);
        free (self);
        return NULL;
    } else {
        snprintf (self->why_none, sizeof self->why_none,
                  "bubblewrap cannot start a sandbox here (%.120s)", why);
        jp_log_info ("sandbox=none: %s; kernels run unconfined", self->why_none);
    }
    if (self->bwrap && s_bwrap_ready (self, stage_dir, err, err_len) < 0) {
        gw_sandbox_destroy (&self);
        return NULL;
    }
    if (strcmp (gw_config_str (config, GW_SET_FORK_SERVER), "on") == 0
        && s_fork_server_new (self, config, stage_dir, err, err_len) < 0) {
        gw_sandbox_destroy (&self);
        return NULL;
    }
    return self;
}

void
gw_sandbox_destroy (gw_sandbox_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gw_fork_server_destroy (&(*self_p)->fork_server);
    if ((*self_p)->seccomp_fd >= 0)
        close ((*self_p)->seccomp_fd);
    free (*self_p);
    *self_p = NULL;
}

bool
gw_sandbox_bwrap (const gw_sandbox_t *self)
{
    return self->bwrap;
}

bool
gw_sandbox_network (const gw_sandbox_t *self)
{
    return !self->bwrap || self->network;
}

/* True when the kernel can only speak TCP (so no network namespace). */
/* The fork server's socket when spec is ipykernel's (`PYTHON -m
 * ipykernel_launcher ...`) and the server of that Python runs. */
static const char *
s_fork_server_socket (gw_sandbox_t *self, const ks_spec_t *spec)
{
    char **a = spec->argv;
    if (!self->fork_server || !a || !a[0] || !a[1] || !a[2] || strcmp (a[1], "-m") != 0
        || strcmp (a[2], "ipykernel_launcher") != 0)
        return NULL;
    return gw_fork_server_socket (self->fork_server, a[0]);
}

static bool
s_tcp_only (const ks_spec_t *spec)
{
    return !ks_spec_supports_ipc (spec);
}

/* The read-only system folders: /usr and the rest (s_usr_mounts), then
 * what programs need of /etc. */
static void
s_system_mounts (const gw_sandbox_t *self, char **argv, int *n)
{
    s_usr_mounts (argv, n);
    /* /etc: only what programs need to run; no secrets, no ODBC passwords */
    static const char *const etc[] = {
        "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/hosts", "/etc/resolv.conf",
        "/etc/host.conf", "/etc/gai.conf", "/etc/protocols", "/etc/services", "/etc/ssl",
        "/etc/ca-certificates", "/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf",
        "/etc/ld.so.conf.d", "/etc/localtime", "/etc/timezone", "/etc/matplotlibrc",
        "/etc/fonts", "/etc/mime.types", "/etc/python3", "/etc/python3.11", "/etc/jupyter",
        "/etc/ipython", "/etc/os-release", "/etc/debian_version", "/etc/magic",
    };
    for (size_t i = 0; i < sizeof etc / sizeof etc[0]; i++)
        s_args (argv, n, 3, "--ro-bind-try", etc[i], etc[i]);
    for (int i = 0; i < self->n_etc_links; i++) {
        bool listed = false;
        for (size_t k = 0; k < sizeof etc / sizeof etc[0] && !listed; k++)
            listed = strcmp (etc[k], self->etc_links[i]) == 0;
        if (!listed)
            s_args (argv, n, 3, "--ro-bind-try", self->etc_links[i], self->etc_links[i]);
    }
    s_args (argv, n, 3, "--ro-bind-try", "/opt/codebox", "/opt/codebox");
    s_args (argv, n, 3, "--ro-bind-try", "/sys/devices/system/cpu", "/sys/devices/system/cpu");
}

/* The kernel's relay (gateway/gw_cmd_kernel_relay.c): every message
 * between a sandboxed kernel and us passes a process outside the sandbox,
 * as the kernel's user, charged to the kernel's memory cgroup and limited
 * in address space, that drops what is over the bounds. Its folder, next
 * to the kernel's runtime folder, is not mounted in the sandbox. */
static int
s_prepare_relay (gw_sandbox_t *self, const char *runtime_dir, gw_sandbox_launch_t *launch,
                 ks_kernel_options_t *options)
{
    snprintf (launch->relay_dir, sizeof launch->relay_dir, "%s.r", runtime_dir);
    if (mkdir (launch->relay_dir, 0700) < 0)
        return -errno;
    ks_spawn_extra_t *x = &options->relay_spawn;
    x->set_user = self->set_user;
    x->uid = self->uid;
    x->gid = self->gid;
    if (self->set_user && chown (launch->relay_dir, self->uid, self->gid) < 0) {
        int e = errno;
        rmdir (launch->relay_dir);
        return -e;
    }
    options->relay = self->exe;
    if (self->set_user) {
        /* the binary may sit where the kernel's user cannot pass */
        x->bind_from[0] = self->exe;
        x->bind_to[0] = self->stage_exe;
        options->relay = self->stage_exe;
    }
    options->relay_dir = launch->relay_dir;
    if (options->spawn.cgroups[0] && strstr (options->spawn.cgroups[0], "/memory/"))
        x->cgroups[0] = options->spawn.cgroups[0];
#ifndef __SANITIZE_ADDRESS__     /* ASan's shadow needs terabytes of address space:
                                   its test builds rely on the cgroup alone */
    x->rlimits[x->n_rlimits++] = (ks_rlimit_t) {RLIMIT_AS, (rlim_t) KS_RELAY_MEMORY_MB << 20};
#endif
    x->rlimits[x->n_rlimits++] = (ks_rlimit_t) {RLIMIT_CORE, 0};
    x->rlimits[x->n_rlimits++] = (ks_rlimit_t) {RLIMIT_NOFILE, 256};
    return 0;
}

/* CODEBOX_NETWORK=on: the proxy's socket in the runtime folder, which the
 * relay serves (options->relay_net), and the variables that lead the
 * kernel's HTTP clients to the bridge on its loopback. */
static void
s_net_args (const gw_sandbox_t *self, const char *runtime_dir, gw_sandbox_launch_t *launch,
            ks_kernel_options_t *options, char **argv, int *n)
{
    snprintf (launch->net_socket, sizeof launch->net_socket, "%s/net.sock", runtime_dir);
    options->relay_net = launch->net_socket;
    options->relay_net_private = self->net_private;
    char proxy_url[48];
    snprintf (proxy_url, sizeof proxy_url, "http://127.0.0.1:%d", GW_SANDBOX_NET_PORT);
    static const char *const proxy_vars[] = {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy",
                                             "https_proxy"};
    for (size_t i = 0; i < sizeof proxy_vars / sizeof proxy_vars[0]; i++)
        s_args (argv, n, 3, "--setenv", proxy_vars[i], proxy_url);
    s_args (argv, n, 3, "--setenv", "NO_PROXY", "localhost,127.0.0.1,::1");
    s_args (argv, n, 3, "--setenv", "no_proxy", "localhost,127.0.0.1,::1");
}

/* execution_options: the client's folders and variables, inside the
 * sandbox only (never the launcher's own environment). As another user,
 * each folder is reached through a mount the launcher makes first. */
static void
s_exec_args (const gw_sandbox_t *self, const gw_exec_options_t *exec, ks_spawn_extra_t *x,
             char **argv, int *n)
{
    for (int i = 0; i < exec->n_mounts && 2 + i < KS_MAX_BINDS; i++) {
        const char *source = exec->mounts[i].host;
        if (self->set_user) {
            x->bind_from[2 + i] = exec->mounts[i].host;
            x->bind_to[2 + i] = self->stage_mounts[i];
            source = self->stage_mounts[i];
        }
        s_args (argv, n, 3, exec->mounts[i].read_write ? "--bind" : "--ro-bind", source,
                exec->mounts[i].container);
        /* codebox's own folders in it: an empty folder over each */
        for (int k = 0; k < GW_EXEC_OWN_DIRS && exec->mounts[i].hide[k][0]; k++)
            s_args (argv, n, 4, "--tmpfs", exec->mounts[i].hide[k], "--remount-ro",
                    exec->mounts[i].hide[k]);
    }
    /* named volumes at /volumes/NAME, after the mounts' binds (the
       launcher stops at the first empty bind) */
    int bind = 2 + (exec->n_mounts < GW_EXEC_MAX_MOUNTS ? exec->n_mounts : GW_EXEC_MAX_MOUNTS);
    for (int i = 0; i < exec->n_volumes && bind < KS_MAX_BINDS; i++, bind++) {
        const char *source = exec->volumes[i].host;
        if (self->set_user) {
            x->bind_from[bind] = exec->volumes[i].host;
            x->bind_to[bind] = self->stage_volumes[i];
            source = self->stage_volumes[i];
        }
        char at[128];
        snprintf (at, sizeof at, "%s/%s", GW_VOLUMES_AT, exec->volumes[i].name);
        s_args (argv, n, 3, exec->volumes[i].read_write ? "--bind" : "--ro-bind", source, at);
    }
    for (int i = 0; exec->env[i] && *n + 4 < MAX_ARGS; i++) {
        char name[130];
        size_t len = strcspn (exec->env[i], "=");
        snprintf (name, sizeof name, "%.*s", (int) len, exec->env[i]);
        s_args (argv, n, 3, "--setenv", name, exec->env[i][len] ? exec->env[i] + len + 1 : "");
    }
}

int
gw_sandbox_prepare (gw_sandbox_t *self, const ks_spec_t *spec, const char *workdir,
                    const char *runtime_dir, const char *kernel_id,
                    const gw_exec_options_t *exec, gw_sandbox_launch_t *launch,
                    ks_kernel_options_t *options)
{
    long memory_mb = exec && exec->memory_mb ? exec->memory_mb : self->memory_mb;
    memset (launch, 0, sizeof *launch);
    options->clean_env = true;
    ks_spawn_extra_t *x = &options->spawn;
    x->set_user = self->set_user;
    x->uid = self->uid;
    x->gid = self->gid;
    if (self->set_user && chown (runtime_dir, self->uid, self->gid) < 0)
        return -errno;
    gw_sandbox_limits (self, spec, kernel_id, memory_mb, exec, launch->cgroups, x);

    if (!self->bwrap)
        return exec && (exec->n_mounts || exec->n_volumes) ? -EPERM : 0;
    char **argv = calloc (MAX_ARGS, sizeof (char *));
    if (!argv)
        return -ENOMEM;
    int n = 0;
    s_args (argv, &n, 6, "bwrap", "--die-with-parent", "--new-session", "--unshare-pid",
            "--unshare-ipc", "--unshare-uts");
    /* no capability inside, and a filter that refuses new namespaces,
       mounts, ptrace, keyrings, BPF... (gw_seccomp.c) */
    s_args (argv, &n, 2, "--cap-drop", "ALL");
    char seccomp_fd[16];
    snprintf (seccomp_fd, sizeof seccomp_fd, "%d", KS_CHILD_SECCOMP_FD);
    s_args (argv, &n, 2, "--seccomp", seccomp_fd);
    x->has_seccomp = true;
    x->seccomp_fd = self->seccomp_fd;
    /* as another user, the session folder and this binary are reached
       through mounts the launcher makes before dropping privileges */
    const char *session_source = workdir, *exe = self->exe;
    if (self->set_user) {
        x->bind_from[0] = workdir;
        x->bind_to[0] = self->stage_session;
        x->bind_from[1] = self->exe;
        x->bind_to[1] = self->stage_exe;
        session_source = self->stage_session;
        exe = self->stage_exe;
    }
    s_args (argv, &n, 1, "--unshare-cgroup-try");
    /* a network namespace of its own, always: with CODEBOX_NETWORK=on its
       way out is the proxy the relay serves (gw_cmd_kernel_net.c), which
       the bridge below reaches from the namespace's loopback */
    bool tcp_only = s_tcp_only (spec);
    bool bridge = self->network && exe[0]
                  && strlen (runtime_dir) + sizeof "/net.sock" <= sizeof launch->net_socket;
    if (exe[0])
        s_args (argv, &n, 1, "--unshare-net");
    s_system_mounts (self, argv, &n);
    s_args (argv, &n, 4, "--proc", "/proc", "--dev", "/dev");
    /* /tmp is the session folder's hidden .tmp, so it counts against the
       session's disk quota and goes with the session (gw_disk) */
    char session_tmp[400], host_tmp[1200];
    snprintf (session_tmp, sizeof session_tmp, "%s/.tmp", session_source);
    snprintf (host_tmp, sizeof host_tmp, "%s/.tmp", workdir);
    if (access (host_tmp, F_OK) == 0)
        s_args (argv, &n, 3, "--bind", session_tmp, "/tmp");
    else
        s_args (argv, &n, 2, "--tmpfs", "/tmp");
    /* this binary, for the kernel-proxy and the bridge (bound after /tmp,
       which would hide a binary built under /tmp) */
    const char *seat = exe[0] ? s_fork_server_socket (self, spec) : NULL;
    if (exe[0] && (tcp_only || bridge || seat))
        s_args (argv, &n, 3, "--ro-bind", exe, exe);
    if (seat)
        s_args (argv, &n, 3, "--bind", seat, GW_FORK_SERVER_SEAT_SOCKET);
    if (exe[0] && tcp_only)
        options->proxy = exe;   /* no way in over TCP: it bridges to ipc sockets */
    if (bridge)
        s_net_args (self, runtime_dir, launch, options, argv, &n);
    s_args (argv, &n, 3, "--bind", runtime_dir, runtime_dir);
    s_args (argv, &n, 3, "--bind", session_source, VISIBLE_WORKDIR);
    s_args (argv, &n, 2, "--chdir", VISIBLE_WORKDIR);
    s_args (argv, &n, 3, "--setenv", "HOME", "/tmp");
    s_args (argv, &n, 3, "--setenv", "MPLCONFIGDIR", "/tmp/.matplotlib");
    s_args (argv, &n, 3, "--setenv", "IPYTHONDIR", "/tmp/.ipython");
    if (exec)
        s_exec_args (self, exec, x, argv, &n);
    s_args (argv, &n, 1, "--");
    if (bridge) {
        char port[8];
        snprintf (port, sizeof port, "%d", GW_SANDBOX_NET_PORT);
        s_args (argv, &n, 5, exe, "kernel-net-bridge", launch->net_socket, port, "--");
    }
    if (seat)
        s_args (argv, &n, 4, exe, "kernel-seat", GW_FORK_SERVER_SEAT_SOCKET, "--");
    launch->wrap = argv;
    int rc = s_prepare_relay (self, runtime_dir, launch, options);
    if (rc)
        return rc;
    options->wrap_argv = (const char *const *) argv;
    /* without bwrap, cwd is the host folder; with it, bwrap changes there */
    options->cwd = NULL;
    return 0;
}

gw_exec_rules_t
gw_sandbox_exec_rules (const gw_sandbox_t *self, const gw_config_t *config)
{
    long cpus = sysconf (_SC_NPROCESSORS_ONLN);
    return (gw_exec_rules_t) {
        .max_memory_mb = self->memory_mb,
        .max_cpu_milli = (cpus > 0 ? cpus : 1) * 1000 < self->cpu_milli
                         ? (cpus > 0 ? cpus : 1) * 1000 : self->cpu_milli,
        .mount_roots = gw_config_str (config, GW_SET_MOUNT_ROOTS),
        .sandbox = self->bwrap,
    };
}

int
gw_sandbox_stage (const gw_sandbox_t *self, char *work, char *session, size_t len)
{
    snprintf (work, len, "%s", self->bwrap ? self->stage_work : "");
    snprintf (session, len, "%s", self->bwrap ? self->stage_session : "");
    return self->bwrap ? self->seccomp_fd : -1;
}

void
gw_sandbox_launch_clear (gw_sandbox_launch_t *launch)
{
    s_args_free (launch->wrap);
    launch->wrap = NULL;
}

const char *
gw_sandbox_visible (const gw_sandbox_t *self, const char *host_workdir)
{
    return self && self->bwrap ? VISIBLE_WORKDIR : host_workdir;
}

bool
gw_sandbox_owner (const gw_sandbox_t *self, uid_t *uid, gid_t *gid)
{
    if (!self || !self->set_user)
        return false;
    *uid = self->uid;
    *gid = self->gid;
    return true;
}

int
gw_sandbox_own (const gw_sandbox_t *self, const char *path)
{
    if (!self || !self->set_user)
        return 0;
    return lchown (path, self->uid, self->gid) < 0 ? -errno : 0;
}

int
gw_sandbox_own_fd (const gw_sandbox_t *self, int fd)
{
    if (!self || !self->set_user)
        return 0;
    return fchown (fd, self->uid, self->gid) < 0 ? -errno : 0;
}

json_t *
gw_sandbox_describe (const gw_sandbox_t *self, const ks_spec_t *spec)
{
    bool net_on = gw_sandbox_network (self);
    json_t *d = json_pack ("{s:s, s:s, s:s, s:I, s:I, s:I, s:s, s:s}", "sandbox",
                           self->bwrap ? "bwrap" : "none", "network", net_on ? "on" : "off",
                           "user", self->user, "memory_limit_mb", (json_int_t) self->memory_mb,
                           "max_processes", (json_int_t) self->max_processes, "disk_quota_mb",
                           (json_int_t) self->quota_mb, "limits_by",
                           self->cgroup_memory ? "cgroup" : "rlimit", "disk_quota_by",
                           gw_disk_enabled () ? "filesystem" : "report");
    if (d) {
        json_object_set_new (d, "cpu_time_limit_s", json_integer (self->cpu_time_s));
        json_object_set_new (d, "cpu_time_by", json_string (self->cgroup_cpuacct
                                                                ? "cgroup" : "none"));
        json_object_set_new (d, "cpu_limit", json_real ((double) self->cpu_milli / 1000));
        json_object_set_new (d, "cpu_limit_by", json_string (self->cgroup_cpu
                                                                 ? "cgroup" : "none"));
    }
    if (d && !self->bwrap)
        json_object_set_new (d, "why", json_string (self->why_none));
    if (d && self->bwrap && net_on)
        json_object_set_new (d, "network_by", json_string (
            "a network namespace of the kernel's own; HTTP_PROXY and HTTPS_PROXY lead to a "
            "proxy that reaches public addresses only (private ones with "
            "CODEBOX_DOWNLOAD_ALLOW_PRIVATE=1), never the host's own"));
    if (d && self->bwrap && s_tcp_only (spec))
        json_object_set_new (d, "bridge", json_string ("this kernel speaks only TCP: a "
                                                       "kernel-proxy in its sandbox bridges "
                                                       "its loopback to Unix sockets"));
    return d;
}
