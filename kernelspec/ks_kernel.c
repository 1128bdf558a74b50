/* ks_kernel: one kernel's lifetime: making it, launching its process
 * (connection info and files, the proxy, the relay), killing and reaping
 * it, destroying it; what it is (id, error, CPU time). Its states are in
 * ks_kernel_machine.c and its messages in ks_kernel_messages.c (see
 * ks_kernel_internal.h).
 * Threads: everything runs in the thread that created the kernel. */
#include "ks_kernel.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "jp_time.h"
#include "ks_kernel_internal.h"
#include "ks_process.h"

/* A descriptor of the kernel was opened or closed: a new generation, unique
 * in the process, so an owner that keeps the descriptors registered (an
 * epoll set) sees the change even if a number or an address is reused. */
static void
s_fds_changed (ks_kernel_t *self)
{
    static uint64_t generation;
    self->fds_generation = __atomic_add_fetch (&generation, 1, __ATOMIC_RELAXED);
}

/* s_fds_changed, for the kernel's other files (ks_kernel_internal.h). */
void
ks_kernel_fds_changed (ks_kernel_t *self)
{
    s_fds_changed (self);
}

/* Closes the channels, and forgets the messages away being decoded. */
void
ks_kernel_close_channels (ks_kernel_t *self)
{
    jp_channels_destroy (&self->channels);
    self->iopub_rest_until = 0;
    if (self->inbox)
        ks_decoder_inbox_destroy (&self->inbox);
    memset (self->away, 0, sizeof self->away);
    s_fds_changed (self);
}

/* Replaces the strings of spawn (cgroups, binds) with copies kept in
 * cgroups and binds (from, to pairs). */
static void
s_copy_spawn (ks_spawn_extra_t *spawn, char **cgroups, char **binds)
{
    for (int i = 0; i < KS_MAX_CGROUPS && spawn->cgroups[i]; i++) {
        cgroups[i] = strdup (spawn->cgroups[i]);
        spawn->cgroups[i] = cgroups[i];
    }
    for (int i = 0; i < KS_MAX_BINDS && spawn->bind_from[i]; i++) {
        binds[2 * i] = strdup (spawn->bind_from[i]);
        binds[2 * i + 1] = strdup (spawn->bind_to[i]);
        spawn->bind_from[i] = binds[2 * i];
        spawn->bind_to[i] = binds[2 * i + 1];
    }
}

/* A copy of a NULL-terminated string list, or NULL (none, or no memory). */
static char **
s_strv_copy (const char *const *strv)
{
    size_t n = 0;
    while (strv && strv[n])
        n++;
    char **copy = strv ? calloc (n + 1, sizeof (char *)) : NULL;
    for (size_t i = 0; copy && i < n; i++)
        if (!(copy[i] = strdup (strv[i]))) {
            ks_strv_free (copy);
            return NULL;
        }
    return copy;
}

ks_kernel_t *
ks_kernel_new (const ks_spec_t *spec, const ks_kernel_options_t *options)
{
    ks_kernel_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->spec = spec;
    self->options = *options;
    if (self->options.start_timeout_ms <= 0)
        self->options.start_timeout_ms = 30000;
    if (self->options.heartbeat_ms <= 0)
        self->options.heartbeat_ms = 5000;
    self->pidfd = -1;
    s_fds_changed (self);
    self->cpuacct_fd = -2;      /* not opened yet */
    if ((options->cwd && !(self->cwd = strdup (options->cwd)))
        || (options->proxy && !(self->proxy = strdup (options->proxy)))) {
        free (self->cwd);
        free (self);
        return NULL;
    }
    self->options.cwd = self->cwd;
    self->options.proxy = self->proxy;
    size_t n_env = 0;
    while (options->extra_env && options->extra_env[n_env])
        n_env++;
    self->extra_env = calloc (n_env + 1, sizeof (char *));
    for (size_t i = 0; self->extra_env && i < n_env; i++)
        self->extra_env[i] = strdup (options->extra_env[i]);
    self->options.extra_env = (const char *const *) self->extra_env;
    self->wrap_argv = s_strv_copy (options->wrap_argv);
    self->options.wrap_argv = (const char *const *) self->wrap_argv;
    self->extra_argv = s_strv_copy (options->extra_argv);
    self->options.extra_argv = (const char *const *) self->extra_argv;
    s_copy_spawn (&self->options.spawn, self->cgroups, self->binds);
    if (options->relay) {
        self->relay = strdup (options->relay);
        self->relay_dir = strdup (options->relay_dir ? options->relay_dir : "/tmp");
        s_copy_spawn (&self->options.relay_spawn, self->relay_cgroups, self->relay_binds);
        if (options->relay_net)
            self->relay_net = strdup (options->relay_net);
    }
    self->options.relay = self->relay;
    self->options.relay_dir = self->relay_dir;
    self->options.relay_net = self->relay_net;
    self->relay_pidfd = -1;
    char uuid[JP_UUID_LEN + 1];
    jp_random_uuid (uuid);
    snprintf (self->id, sizeof self->id, "%.8s", uuid);
    snprintf (self->runtime_dir, sizeof self->runtime_dir, "%s",
              options->runtime_dir ? options->runtime_dir : "/tmp");
    snprintf (self->conn_path, sizeof self->conn_path, "%s/kernel-%s.json",
              self->runtime_dir, self->id);
    snprintf (self->log_path, sizeof self->log_path, "%s/kernel-%s.log",
              self->runtime_dir, self->id);
    return self;
}

void
ks_kernel_set_handlers (ks_kernel_t *self, ks_kernel_msg_fn *on_msg,
                        ks_kernel_state_fn *on_state, void *arg)
{
    self->on_msg = on_msg;
    self->on_state = on_state;
    self->arg = arg;
}

/* Removes the connection file and any ipc socket files. */
void
ks_kernel_remove_runtime_files (ks_kernel_t *self)
{
    unlink (self->conn_path);
    if (self->tcp_conn_path[0])
        unlink (self->tcp_conn_path);
    if (self->conn.transport == JP_TRANSPORT_IPC)
        for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++) {
            char path[JP_IPC_PATH_MAX + 16];
            snprintf (path, sizeof path, "%s-%d", self->conn.ip, self->conn.ports[ch]);
            unlink (path);
        }
    if (self->front_path[0]) {
        unlink (self->front_path);
        for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++) {
            char path[JP_IPC_PATH_MAX + 16];
            snprintf (path, sizeof path, "%s-%d", self->front.ip, self->front.ports[ch]);
            unlink (path);
        }
    }
}

/* Kills and reaps the relay, if one runs. */
static void
s_stop_relay (ks_kernel_t *self)
{
    if (self->relay_pid > 0) {
        ks_process_signal_group (self->relay_pid, SIGKILL);
        int status;
        while (ks_process_reap (self->relay_pid, &status) == 0)
            usleep (1000);
        self->relay_pid = 0;
    }
    if (self->relay_pidfd >= 0) {
        close (self->relay_pidfd);
        self->relay_pidfd = -1;
        s_fds_changed (self);
    }
}

/* Kills the group, reaps the leader, closes the pidfd. Blocking only for as
 * long as SIGKILL takes. */
void
ks_kernel_kill_and_reap (ks_kernel_t *self)
{
    s_stop_relay (self);
    if (self->pid > 0) {
        ks_process_signal_group (self->pid, SIGKILL);
        int status;
        while (ks_process_reap (self->pid, &status) == 0)
            usleep (1000);
        self->pid = 0;
    }
    if (self->pidfd >= 0) {
        close (self->pidfd);
        self->pidfd = -1;
        s_fds_changed (self);
    }
}

/* SIGKILL to every process of a cgroup (v1) folder. */
static void
s_kill_cgroup (const char *dir)
{
    char path[4200];
    snprintf (path, sizeof path, "%s/cgroup.procs", dir);
    FILE *f = fopen (path, "re");
    if (!f)
        return;
    long pid;
    while (fscanf (f, "%ld", &pid) == 1)
        if (pid > 1)
            kill ((pid_t) pid, SIGKILL);
    fclose (f);
}

void
ks_kernel_destroy (ks_kernel_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ks_kernel_t *self = *self_p;
    ks_kernel_kill_and_reap (self);
    if (self->cpuacct_fd >= 0)
        close (self->cpuacct_fd);
    ks_kernel_close_channels (self);
    ks_kernel_remove_runtime_files (self);
    unlink (self->log_path);
    if (self->options.runtime_dir_mounted)
        umount2 (self->runtime_dir, MNT_DETACH);
    if (self->options.own_runtime_dir)
        rmdir (self->runtime_dir);
    for (int i = 0; i < KS_MAX_CGROUPS; i++) {
        /* the sandbox's inner processes take a moment to be reaped after
           SIGKILL; the cgroup can go once they have. One that escaped the
           process group (bwrap's sandbox is a session of its own, and a
           kernel killed while bwrap was still setting up can lose its
           death signal) is still in the cgroup: killed here. */
        for (int tries = 0; self->cgroups[i] && tries < 100; tries++)
            if (rmdir (self->cgroups[i]) == 0 || errno != EBUSY)
                break;
            else {
                s_kill_cgroup (self->cgroups[i]);
                usleep (2000);
            }
        free (self->cgroups[i]);
    }
    for (int i = 0; i < 2 * KS_MAX_BINDS; i++) {
        free (self->binds[i]);
        free (self->relay_binds[i]);
    }
    for (int i = 0; i < KS_MAX_CGROUPS; i++)
        free (self->relay_cgroups[i]);
    if (self->relay) {
        unlink (self->relay_log_path);
        rmdir (self->relay_dir);
    }
    free (self->relay);
    free (self->relay_dir);
    free (self->relay_net);
    free (self->cwd);
    free (self->proxy);
    ks_strv_free (self->extra_env);
    ks_strv_free (self->wrap_argv);
    ks_strv_free (self->extra_argv);
    free (self);
    *self_p = NULL;
}

/* Sends a kernel_info_request on shell. */
void
ks_kernel_send_kernel_info (ks_kernel_t *self)
{
    jp_msg_t *msg = jp_channels_msg_new (self->channels, "kernel_info_request");
    if (msg)
        jp_channels_send (self->channels, JP_CHANNEL_SHELL, msg);
    jp_msg_destroy (&msg);
}

/* The kernelspec's argv and the extra arguments, with the wrapper prefix
 * (a sandbox) and the proxy (if any) first. */
static char **
s_wrapped_argv (ks_kernel_t *self)
{
    bool proxied = self->proxy != NULL;
    char **argv = ks_spec_argv (self->spec, proxied ? self->tcp_conn_path : self->conn_path);
    size_t n_spec = 0, n_extra = 0;
    while (argv && argv[n_spec])
        n_spec++;
    while (self->extra_argv && self->extra_argv[n_extra])
        n_extra++;
    if (argv && n_extra) {
        char **longer = realloc (argv, (n_spec + n_extra + 1) * sizeof (char *));
        if (!longer) {
            ks_strv_free (argv);
            return NULL;
        }
        argv = longer;
        argv[n_spec + n_extra] = NULL;
        for (size_t i = 0; i < n_extra; i++)
            if (!(argv[n_spec + i] = strdup (self->extra_argv[i]))) {
                ks_strv_free (argv);    /* frees up to the NULL just stored */
                return NULL;
            }
    }
    if (!argv || (!self->wrap_argv && !proxied))
        return argv;
    const char *proxy_args[] = {self->proxy, "kernel-proxy", self->conn_path,
                                self->tcp_conn_path, "--", NULL};
    size_t n_wrap = 0, n_proxy = proxied ? 5 : 0, n = 0;
    while (self->wrap_argv && self->wrap_argv[n_wrap])
        n_wrap++;
    while (argv[n])
        n++;
    char **all = calloc (n_wrap + n_proxy + n + 1, sizeof (char *));
    for (size_t i = 0; all && i < n_wrap; i++)
        all[i] = strdup (self->wrap_argv[i]);
    for (size_t i = 0; all && i < n_proxy; i++)
        all[n_wrap + i] = strdup (proxy_args[i]);
    for (size_t i = 0; all && i < n; i++)
        all[n_wrap + n_proxy + i] = argv[i];
    free (argv);    /* its strings moved into all */
    return all;
}

/* Starts the relay: its connection info towards us (ipc in the relay's
 * folder, the kernel's key), its connection file, its process. Returns 0
 * or a negative errno with self->error set. */
static int
s_start_relay (ks_kernel_t *self)
{
    s_stop_relay (self);
    self->relay_gone_ms = 0;
    char prefix[300];
    snprintf (prefix, sizeof prefix, "%s/f-%s", self->relay_dir, self->id);
    snprintf (self->front_path, sizeof self->front_path, "%s/front-%s.json", self->relay_dir,
              self->id);
    snprintf (self->relay_log_path, sizeof self->relay_log_path, "%s/relay-%s.log",
              self->relay_dir, self->id);
    int rc = jp_connection_init_ipc (&self->front, prefix);
    if (!rc) {
        memcpy (self->front.key, self->conn.key, sizeof self->front.key);
        rc = jp_connection_write (&self->front, self->spec->name, self->front_path);
    }
    const ks_spawn_extra_t *x = &self->options.relay_spawn;
    if (!rc && x->set_user && chown (self->front_path, x->uid, x->gid) < 0)
        rc = -errno;
    if (rc) {
        snprintf (self->error, sizeof self->error, "cannot prepare the kernel's relay: %s",
                  strerror (-rc));
        return rc;
    }
    ks_spawn_extra_t spawn = *x;
    spawn.unshare_net = self->conn.transport == JP_TRANSPORT_IPC && !self->relay_net;
    char *argv[] = {self->relay, "kernel-relay", self->front_path, self->conn_path,
                    self->relay_net ? "--net" : NULL, self->relay_net,
                    self->options.relay_net_private ? "--net-private" : NULL, NULL};
    /* one malloc arena: the address-space limit counts reservations */
    char *envp[] = {"PATH=" KS_CLEAN_PATH, "MALLOC_ARENA_MAX=1", NULL};
    rc = ks_process_spawn (argv, envp, "/", self->relay_log_path, &spawn, &self->relay_pid,
                           &self->relay_pidfd, self->error, sizeof self->error);
    s_fds_changed (self);
    return rc;
}

/* One launch attempt: connection info, connection file, channels, process. */
int
ks_kernel_launch (ks_kernel_t *self)
{
    int rc;
    if (self->proxy || ks_spec_supports_ipc (self->spec)) {
        char prefix[300];
        snprintf (prefix, sizeof prefix, "%s/k-%s", self->runtime_dir, self->id);
        rc = jp_connection_init_ipc (&self->conn, prefix);
        if (rc == -ENAMETOOLONG)    /* fall back when the folder path is long */
            rc = jp_connection_init_tcp (&self->conn, "127.0.0.1");
    } else
        rc = jp_connection_init_tcp (&self->conn, "127.0.0.1");
    if (rc) {
        snprintf (self->error, sizeof self->error, "cannot make connection info: %s",
                  strerror (-rc));
        return rc;
    }
    rc = jp_connection_write (&self->conn, self->spec->name, self->conn_path);
    if (rc) {
        snprintf (self->error, sizeof self->error, "cannot write %s: %s",
                  self->conn_path, strerror (-rc));
        return rc;
    }
    /* the kernel's user reads it (the kernel, or its proxy, and the relay,
       which starts right below: before the file is its) */
    if (self->options.spawn.set_user
        && chown (self->conn_path, self->options.spawn.uid, self->options.spawn.gid) < 0) {
        rc = -errno;
        snprintf (self->error, sizeof self->error, "cannot give %s to the kernel user: %s",
                  self->conn_path, strerror (errno));
        return rc;
    }
    if (self->relay && (rc = s_start_relay (self)) != 0)
        return rc;
    /* the channels read only what the gateway asks for: the rest waits
       in the relay (which then holds the kernel back: its queue, in its
       memory, drops) or, without one, in the kernel's sockets */
    self->channels = jp_channels_new (self->relay ? &self->front : &self->conn);
    s_fds_changed (self);
    if (!self->channels) {
        rc = -errno;
        snprintf (self->error, sizeof self->error, "cannot open channels: %s",
                  strerror (errno));
        return rc;
    }
    if (self->proxy) {
        /* the kernel's side: loopback TCP inside the sandbox, same key */
        jp_connection_t kernel_conn;
        rc = jp_connection_init_tcp (&kernel_conn, "127.0.0.1");
        snprintf (self->tcp_conn_path, sizeof self->tcp_conn_path, "%s/kernel-%s-tcp.json",
                  self->runtime_dir, self->id);
        if (!rc) {
            memcpy (kernel_conn.key, self->conn.key, sizeof kernel_conn.key);
            rc = jp_connection_write (&kernel_conn, self->spec->name, self->tcp_conn_path);
        }
        if (!rc && self->options.spawn.set_user
            && chown (self->tcp_conn_path, self->options.spawn.uid, self->options.spawn.gid) < 0)
            rc = -errno;
        if (rc) {
            snprintf (self->error, sizeof self->error, "cannot write %s: %s",
                      self->tcp_conn_path, strerror (-rc));
            return rc;
        }
    }
    char **argv = s_wrapped_argv (self);
    const char *extra[64] = {"PYDEVD_DISABLE_FILE_VALIDATION=1", "JPY_PARENT_PID=0"};
    size_t n_extra = 2;
    for (const char *const *e = self->options.extra_env; e && *e && n_extra < 63; e++)
        extra[n_extra++] = *e;
    extra[n_extra] = NULL;
    char **envp = ks_process_env (self->spec->env, extra, self->options.clean_env);
    rc = argv && envp ? 0 : -ENOMEM;
    if (!rc)
        rc = ks_process_spawn (argv, envp, self->options.cwd, self->log_path,
                               &self->options.spawn, &self->pid, &self->pidfd, self->error,
                               sizeof self->error);
    s_fds_changed (self);
    ks_strv_free (argv);
    ks_strv_free (envp);
    if (rc)
        return rc;
    self->got_info_reply = self->iopub_live = false;
    self->working = self->asked = false;
    ks_kernel_send_kernel_info (self);
    int64_t now = jp_time_now_ms ();
    self->next_resend = now + KS_KERNEL_RESEND_MS;
    return 0;
}

ks_kernel_state_t
ks_kernel_state (const ks_kernel_t *self)
{
    return self->state;
}

const char *
ks_kernel_error (const ks_kernel_t *self)
{
    return self->error;
}

const char *
ks_kernel_id (const ks_kernel_t *self)
{
    return self->id;
}

long long
ks_kernel_cpu_ns (ks_kernel_t *self)
{
    /* opened once: the cgroup lives as long as the kernel object (the
       open was most of the cost of a read, in the loop thread) */
    for (int i = 0; self->cpuacct_fd == -2 && i < KS_MAX_CGROUPS && self->cgroups[i]; i++)
        if (strstr (self->cgroups[i], "/cpuacct/")) {
            char path[512];
            snprintf (path, sizeof path, "%s/cpuacct.usage", self->cgroups[i]);
            self->cpuacct_fd = open (path, O_RDONLY | O_CLOEXEC);
        }
    if (self->cpuacct_fd == -2)
        self->cpuacct_fd = -1;
    char text[32];
    ssize_t n = self->cpuacct_fd >= 0 ? pread (self->cpuacct_fd, text, sizeof text - 1, 0) : -1;
    if (n <= 0)
        return -1;
    text[n] = '\0';
    char *end;
    long long ns = strtoll (text, &end, 10);
    return end > text ? ns : -1;
}

int64_t
ks_kernel_start_ms (const ks_kernel_t *self)
{
    return self->ready_ms ? self->ready_ms - self->launched_ms : -1;
}

size_t
ks_kernel_last_msg_bytes (const ks_kernel_t *self)
{
    return self->channels ? jp_channels_last_bytes (self->channels) : 0;
}
