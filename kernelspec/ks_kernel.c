/* ks_kernel: the kernel state machine: launch, kernel_info handshake,
 * heartbeat, interrupt, orderly shutdown, death detection through a pidfd.
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
#include "ks_decoder.h"
#include "ks_process.h"
#include "jp_log.h"

#define RESEND_MS 200           /* kernel_info again while iopub is silent */
#define STOP_TERM_MS 2000       /* shutdown_request, then SIGTERM... */
#define STOP_KILL_MS 4000       /* ...then SIGKILL */
#define HB_MISSES_FATAL 4
#define MAX_MSGS_PER_DISPATCH 512
#define MAX_BYTES_PER_DISPATCH (4u << 20)
#define PORT_RACE_RETRIES 3
#define RELAY_GONE_GRACE_MS 500  /* a dying kernel's own exit comes first */

struct ks_kernel {
    void *ctx;
    const ks_spec_t *spec;
    ks_kernel_options_t options;
    char id[16];
    char runtime_dir[256];
    char *cwd;                  /* copied from the options */
    char *proxy;                /* copied from the options */
    char tcp_conn_path[340];    /* the kernel's own connection file (proxy) */
    char **extra_env;           /* copied from the options */
    char **wrap_argv;           /* copied from the options */
    char **extra_argv;          /* copied from the options */
    char *cgroups[KS_MAX_CGROUPS];  /* copied from the options */
    int cpuacct_fd;             /* the cpuacct cgroup's usage file, kept open
                                   (read at each execution's start), -1 */
    char *binds[2 * KS_MAX_BINDS];  /* copied from the options: from, to */
    /* the relay (options.relay): copies of its strings, its connection
       info towards us, its process */
    char *relay, *relay_dir;
    char *relay_cgroups[KS_MAX_CGROUPS];
    char *relay_binds[2 * KS_MAX_BINDS];
    jp_connection_t front;
    char front_path[320], relay_log_path[320];
    pid_t relay_pid;
    int relay_pidfd;
    int64_t relay_gone_ms;      /* the relay ended on its own then */
    char relay_why[512];
    char conn_path[320];
    char log_path[320];
    ks_kernel_state_t state;
    char error[1024];
    jp_connection_t conn;
    jp_channels_t *channels;
    /* large messages are decoded by ks_decoder's worker: its inbox (made
       on first use), and the channels with a message away there (read no
       further until it is back, so order is kept) */
    ks_decoder_inbox_t *inbox;
    bool away[JP_CHANNEL_COUNT];
    pid_t pid;
    int pidfd;
    int attempts;
    /* handshake */
    int64_t launched_ms, ready_ms, start_deadline, next_resend;
    bool got_info_reply, iopub_live;
    /* heartbeat */
    int64_t next_beat;          /* -1: none (the kernel is idle) */
    bool beat_pending;
    int beats_missed;
    bool working;               /* its last iopub status was not "idle" */
    bool asked;                 /* a request of ours it has not said idle to */
    char last_request[128];     /* the msg_id of our last request (a longer
                                   one never matches: it beats on, safely) */
    /* shutdown */
    int64_t stop_since;
    int stop_stage;
    ks_kernel_msg_fn *on_msg;
    ks_kernel_state_fn *on_state;
    uint64_t fds_generation;    /* see ks_kernel_fds_generation */
    void *arg;
};

/* A descriptor of the kernel was opened or closed: a new generation, unique
 * in the process, so an owner that keeps the descriptors registered (an
 * epoll set) sees the change even if a number or an address is reused. */
static void
s_fds_changed (ks_kernel_t *self)
{
    static uint64_t generation;
    self->fds_generation = __atomic_add_fetch (&generation, 1, __ATOMIC_RELAXED);
}

/* Closes the channels, and forgets the messages away being decoded. */
static void
s_close_channels (ks_kernel_t *self)
{
    jp_channels_destroy (&self->channels);
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
ks_kernel_new (void *zmq_ctx, const ks_spec_t *spec, const ks_kernel_options_t *options)
{
    ks_kernel_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->ctx = zmq_ctx;
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
    }
    self->options.relay = self->relay;
    self->options.relay_dir = self->relay_dir;
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
static void
s_remove_runtime_files (ks_kernel_t *self)
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
static void
s_kill_and_reap (ks_kernel_t *self)
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

/* The next heartbeat after now, or -1 for none: every heartbeat_ms while
 * the kernel works or has a request of ours it has not said idle to, none
 * while it is idle. An idle kernel's end is seen through the pidfd; one
 * that hangs while idle is found by the beats that start with the next
 * request sent to it (which is when it matters), so idle sessions cost the
 * gateway nothing. On the next multiple of the interval on the monotonic
 * clock, so kernels that work together beat in the same loop turn; at
 * least half an interval away. */
static int64_t
s_next_beat (const ks_kernel_t *self, int64_t now)
{
    if (!self->working && !self->asked)
        return -1;
    int64_t every = self->options.heartbeat_ms;
    int64_t next = (now / every + 1) * every;
    return next - now < every / 2 ? next + every : next;
}

/* Beats at the working pace from now, if it is not beating sooner. */
static void
s_beat_sooner (ks_kernel_t *self, int64_t now)
{
    if (self->state != KS_KERNEL_READY)
        return;
    int64_t sooner = s_next_beat (self, now);
    if (sooner >= 0 && (self->next_beat < 0 || sooner < self->next_beat))
        self->next_beat = sooner;
}

/* Enters a state and tells the owner. DEAD also closes the channels. */
static void
s_set_state (ks_kernel_t *self, ks_kernel_state_t state)
{
    if (self->state == state)
        return;
    self->state = state;
    if (state == KS_KERNEL_DEAD) {
        s_close_channels (self);
        s_remove_runtime_files (self);
    }
    if (self->on_state)
        self->on_state (self, state, self->arg);
}

/* Records why the kernel failed, with the tail of its log, kills it, and
 * enters DEAD. */
static void
s_fail (ks_kernel_t *self, const char *why)
{
    char *tail = ks_process_log_tail (self->log_path, 600);
    /* keep the error on one readable paragraph */
    for (char *p = tail; p && *p; p++)
        if (*p == '\r')
            *p = ' ';
    snprintf (self->error, sizeof self->error, "%s%s%s", why,
              tail && *tail ? "; kernel log ends with: " : "", tail ? tail : "");
    free (tail);
    s_kill_and_reap (self);
    s_set_state (self, KS_KERNEL_DEAD);
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
    s_kill_and_reap (self);
    if (self->cpuacct_fd >= 0)
        close (self->cpuacct_fd);
    s_close_channels (self);
    s_remove_runtime_files (self);
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
    free (self->cwd);
    free (self->proxy);
    ks_strv_free (self->extra_env);
    ks_strv_free (self->wrap_argv);
    ks_strv_free (self->extra_argv);
    free (self);
    *self_p = NULL;
}

/* Sends a kernel_info_request on shell. */
static void
s_send_kernel_info (ks_kernel_t *self)
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
    spawn.unshare_net = self->conn.transport == JP_TRANSPORT_IPC;
    char *argv[] = {self->relay, "kernel-relay", self->front_path, self->conn_path, NULL};
    /* one malloc arena: the address-space limit counts reservations */
    char *envp[] = {"PATH=" KS_CLEAN_PATH, "MALLOC_ARENA_MAX=1", NULL};
    rc = ks_process_spawn (argv, envp, "/", self->relay_log_path, &spawn, &self->relay_pid,
                           &self->relay_pidfd, self->error, sizeof self->error);
    s_fds_changed (self);
    return rc;
}

/* One launch attempt: connection info, connection file, channels, process. */
static int
s_launch (ks_kernel_t *self)
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
    /* with a relay, few messages wait on our side: the relay holds the
       rest back (and the kernel's queue, in its memory, drops) */
    self->channels = jp_channels_new (self->ctx, self->relay ? &self->front : &self->conn,
                                      self->relay ? KS_RELAY_HWM : 0);
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
    s_send_kernel_info (self);
    int64_t now = jp_time_now_ms ();
    self->next_resend = now + RESEND_MS;
    return 0;
}

int
ks_kernel_start (ks_kernel_t *self)
{
    if (self->state != KS_KERNEL_NEW)
        return -EALREADY;
    self->launched_ms = jp_time_now_ms ();
    self->start_deadline = self->launched_ms + self->options.start_timeout_ms;
    self->attempts = 1;
    self->state = KS_KERNEL_STARTING;
    int rc = s_launch (self);
    if (rc) {
        s_kill_and_reap (self);
        s_set_state (self, KS_KERNEL_DEAD);
        return rc;
    }
    if (self->on_state)
        self->on_state (self, KS_KERNEL_STARTING, self->arg);
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

int
ks_kernel_poll_items (ks_kernel_t *self, zmq_pollitem_t *items, int max)
{
    int n = 0;
    if (self->channels)
        for (int ch = 0; ch < JP_CHANNEL_COUNT && n < max; ch++) {
            if (self->away[ch])
                continue;   /* not read until its message is back: not polled */
            items[n++] = (zmq_pollitem_t) {
                .socket = jp_channels_socket (self->channels, (jp_channel_t) ch),
                .events = ZMQ_POLLIN | (jp_channels_take_used (self->channels, (jp_channel_t) ch)
                                        ? JP_POLL_USED : 0)};
        }
    if (self->pidfd >= 0 && n < max)
        items[n++] = (zmq_pollitem_t) {.fd = self->pidfd, .events = ZMQ_POLLIN};
    if (self->relay_pidfd >= 0 && n < max)
        items[n++] = (zmq_pollitem_t) {.fd = self->relay_pidfd, .events = ZMQ_POLLIN};
    if (self->inbox && n < max)
        items[n++] = (zmq_pollitem_t) {.fd = ks_decoder_inbox_fd (self->inbox),
                                       .events = ZMQ_POLLIN};
    return n;
}

uint64_t
ks_kernel_fds_generation (const ks_kernel_t *self)
{
    return self->fds_generation;
}

int
ks_kernel_fds (const ks_kernel_t *self, int *fds, int max)
{
    int n = 0;
    if (self->channels)
        for (int ch = 0; ch < JP_CHANNEL_COUNT && n < max; ch++) {
            size_t size = sizeof fds[n];
            if (self->away[ch])
                continue;   /* its descriptor would wake every turn meanwhile */
            if (zmq_getsockopt (jp_channels_socket (self->channels, (jp_channel_t) ch),
                                ZMQ_FD, &fds[n], &size) == 0)
                n++;
        }
    if (self->pidfd >= 0 && n < max)
        fds[n++] = self->pidfd;
    if (self->relay_pidfd >= 0 && n < max)
        fds[n++] = self->relay_pidfd;
    if (self->inbox && n < max)
        fds[n++] = ks_decoder_inbox_fd (self->inbox);
    return n;
}

bool
ks_kernel_decoding (const ks_kernel_t *self)
{
    for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++)
        if (self->away[ch])
            return true;
    return false;
}

bool
ks_kernel_needs_poll_items (const ks_kernel_t *self)
{
    return self->channels && jp_channels_any_used (self->channels);
}

int64_t
ks_kernel_deadline (const ks_kernel_t *self)
{
    if (self->relay_gone_ms && self->state != KS_KERNEL_DEAD)
        return self->relay_gone_ms + RELAY_GONE_GRACE_MS;
    switch (self->state) {
    case KS_KERNEL_STARTING:
        return self->next_resend < self->start_deadline ? self->next_resend
                                                        : self->start_deadline;
    case KS_KERNEL_READY:
        return self->next_beat;
    case KS_KERNEL_STOPPING:
        return self->stop_since + (self->stop_stage == 0 ? STOP_TERM_MS : STOP_KILL_MS);
    default:
        return -1;
    }
}

/* The kernel process ended: reap it and decide what that means. */
static void
s_on_exit (ks_kernel_t *self)
{
    int status = 0;
    if (ks_process_reap (self->pid, &status) == 0)
        return;     /* spurious wake-up */
    pid_t pgid = self->pid;
    self->pid = 0;
    ks_process_signal_group (pgid, SIGKILL);    /* leftovers of the group */
    close (self->pidfd);
    self->pidfd = -1;
    s_fds_changed (self);
    char how[128], why[256];
    ks_process_describe (status, how, sizeof how);
    if (self->state == KS_KERNEL_STOPPING) {
        s_set_state (self, KS_KERNEL_DEAD);
        return;
    }
    if (self->state == KS_KERNEL_STARTING) {
        char *tail = ks_process_log_tail (self->log_path, 4096);
        bool port_race = tail && strstr (tail, "Address already in use");
        free (tail);
        if (port_race && self->conn.transport == JP_TRANSPORT_TCP
            && self->attempts < PORT_RACE_RETRIES) {
            /* another process took a port between our probe and its bind */
            self->attempts++;
            s_close_channels (self);
            s_remove_runtime_files (self);
            if (s_launch (self) == 0)
                return;
        }
        snprintf (why, sizeof why, "kernel %s %s before it was ready", self->spec->name, how);
        s_fail (self, why);
        return;
    }
    /* after start the log holds only the kernel's banner: leave it out */
    bool oom = false;
    for (int i = 0; i < KS_MAX_CGROUPS && self->cgroups[i]; i++)
        oom |= strstr (self->cgroups[i], "/memory/") && ks_process_cgroup_oom (self->cgroups[i]);
    snprintf (self->error, sizeof self->error, "the kernel process (%s) %s%s", self->spec->name,
              how,
              oom ? " after using all the memory it may (CODEBOX_MEMORY_LIMIT_MB)" : "");
    s_set_state (self, KS_KERNEL_DEAD);
}

/* The relay ended on its own: a connection with the kernel broke (the
 * kernel sent what it may not, or it is dying), or the relay died. A
 * kernel that dies closes its connections before it exits, and its exit
 * says more: the kernel is stopped for the relay only after a grace. */
static void
s_on_relay_exit (ks_kernel_t *self)
{
    int status = 0;
    if (ks_process_reap (self->relay_pid, &status) == 0)
        return;
    self->relay_pid = 0;
    close (self->relay_pidfd);
    self->relay_pidfd = -1;
    s_fds_changed (self);
    if (self->state == KS_KERNEL_STOPPING)
        return;
    char how[128];
    ks_process_describe (status, how, sizeof how);
    char *tail = ks_process_log_tail (self->relay_log_path, 300);
    for (char *p = tail; p && *p; p++)
        if (*p == '\n')
            *p = ' ';
    for (size_t n = tail ? strlen (tail) : 0; n > 0 && tail[n - 1] == ' '; n--)
        tail[n - 1] = '\0';
    /* the relay shares the kernel's memory cgroup: the OOM killer may pick it */
    bool oom = false;
    for (int i = 0; i < KS_MAX_CGROUPS && self->cgroups[i]; i++)
        oom |= strstr (self->cgroups[i], "/memory/") && ks_process_cgroup_oom (self->cgroups[i]);
    snprintf (self->relay_why, sizeof self->relay_why,
              "the relay between the kernel and the gateway %s%s%s%s; the kernel was stopped",
              how, oom ? " after the kernel used all the memory it may (CODEBOX_MEMORY_LIMIT_MB)"
                       : "",
              tail && *tail ? ": " : "", tail ? tail : "");
    free (tail);
    jp_log_warn ("kernel=%s event=relay-ended how=%s", self->id, how);
    self->relay_gone_ms = jp_time_now_ms ();
}

/* Handles one message during the handshake. */
static void
s_handshake (ks_kernel_t *self, jp_channel_t channel, jp_msg_t *msg)
{
    if (channel == JP_CHANNEL_IOPUB)
        self->iopub_live = true;
    else if (channel == JP_CHANNEL_SHELL
             && strcmp (jp_msg_type (msg), "kernel_info_reply") == 0)
        self->got_info_reply = true;
    if (self->got_info_reply && self->iopub_live) {
        self->ready_ms = jp_time_now_ms ();
        self->next_beat = s_next_beat (self, self->ready_ms);
        s_set_state (self, KS_KERNEL_READY);
    }
}

/* Follows the kernel's busy/idle status for the heartbeat's pace: a
 * kernel that starts working beats at the working pace from now; one that
 * said idle to our last request stops beating after its next beat. */
static void
s_note_status (ks_kernel_t *self, const jp_msg_t *msg)
{
    const char *state = json_string_value (json_object_get (msg->content, "execution_state"));
    bool working = state && strcmp (state, "idle") != 0;
    if (!working && self->asked && strcmp (jp_msg_parent_id (msg), self->last_request) == 0)
        self->asked = false;
    if (working == self->working)
        return;
    self->working = working;
    if (working)
        s_beat_sooner (self, jp_time_now_ms ());
}

/* Does what one decoded message of channel asks (msg taken). */
static void
s_handle (ks_kernel_t *self, jp_channel_t channel, jp_msg_t **msg_p)
{
    jp_msg_t *msg = *msg_p;
    if (channel == JP_CHANNEL_IOPUB && strcmp (jp_msg_type (msg), "status") == 0)
        s_note_status (self, msg);
    if (self->state == KS_KERNEL_STARTING)
        s_handshake (self, channel, msg);
    else if (self->state == KS_KERNEL_READY && self->on_msg)
        self->on_msg (self, channel, msg_p, self->arg);
    jp_msg_destroy (msg_p);
}

/* Hands a large message to the decoder; false when it could not take it
 * (then *raw_p is still the caller's). */
static bool
s_send_away (ks_kernel_t *self, jp_channel_t channel, jp_raw_t **raw_p)
{
    if (!self->inbox) {
        self->inbox = ks_decoder_inbox_new ();
        if (!self->inbox)
            return false;
        s_fds_changed (self);
    }
    if (ks_decoder_submit (self->inbox, (int) channel, raw_p) != 0)
        return false;
    self->away[channel] = true;
    s_fds_changed (self);
    return true;
}

/* Reads the waiting messages of one channel up to a fair bound, in count
 * and in bytes: a kernel that floods waits for the next turn of the loop,
 * and every other kernel is served in between. A message over
 * KS_DECODER_MIN_BYTES is verified and decoded by ks_decoder's worker:
 * the channel is then not read until it is back (s_take_decoded). */
static void
s_drain (ks_kernel_t *self, jp_channel_t channel)
{
    size_t bytes = 0;
    for (int i = 0; i < MAX_MSGS_PER_DISPATCH && bytes < MAX_BYTES_PER_DISPATCH
                    && self->channels && !self->away[channel]; i++) {
        jp_msg_t *msg = NULL;
        jp_raw_t *raw = NULL;
        int rc = jp_channels_recv_or_defer (self->channels, channel, KS_DECODER_MIN_BYTES, &msg,
                                            &raw);
        if (rc == -EAGAIN)
            return;
        bytes += jp_channels_last_bytes (self->channels);
        if (rc == JP_CHANNELS_DEFERRED) {
            if (s_send_away (self, channel, &raw))
                return;
            rc = jp_raw_decode (&raw, &msg);    /* no worker: decode here */
        }
        if (rc) {
            jp_log_warn ("kernel=%s channel=%s dropped a message: %s",
                     self->id, jp_channel_name (channel), jp_strerror (rc));
            continue;
        }
        s_handle (self, channel, &msg);
    }
}

/* Takes the messages the decoder is done with, in the order they went,
 * and reads on in their channels. */
static void
s_take_decoded (ks_kernel_t *self)
{
    int channel, rc;
    jp_msg_t *msg;
    while (self->inbox && ks_decoder_take (self->inbox, &channel, &msg, &rc)) {
        self->away[channel] = false;
        s_fds_changed (self);
        if (rc)
            jp_log_warn ("kernel=%s channel=%s dropped a message: %s", self->id,
                         jp_channel_name ((jp_channel_t) channel), jp_strerror (rc));
        else
            s_handle (self, (jp_channel_t) channel, &msg);
        if (self->state == KS_KERNEL_DEAD)
            return;
        /* what came meanwhile woke the socket's descriptor already */
        if (self->channels)
            s_drain (self, (jp_channel_t) channel);
    }
}

/* Runs the timers that are due. */
static void
s_timers (ks_kernel_t *self, int64_t now)
{
    if (self->relay_gone_ms && now >= self->relay_gone_ms + RELAY_GONE_GRACE_MS) {
        self->relay_gone_ms = 0;
        s_kill_and_reap (self);
        snprintf (self->error, sizeof self->error, "%s", self->relay_why);
        s_set_state (self, KS_KERNEL_DEAD);
        return;
    }
    if (self->state == KS_KERNEL_STARTING) {
        if (now >= self->start_deadline) {
            char why[256];
            snprintf (why, sizeof why, "kernel %s did not become ready within %d ms",
                      self->spec->name, self->options.start_timeout_ms);
            s_fail (self, why);
        } else if (now >= self->next_resend) {
            /* until iopub shows life, each request makes the kernel publish */
            if (self->got_info_reply || now - self->launched_ms > 2000)
                s_send_kernel_info (self);
            self->next_resend = now + (self->got_info_reply ? RESEND_MS : 1000);
        }
    } else if (self->state == KS_KERNEL_READY && self->next_beat >= 0 && now >= self->next_beat) {
        if (self->beat_pending) {
            if (++self->beats_missed >= HB_MISSES_FATAL) {
                s_fail (self, "kernel stopped answering heartbeats");
                return;
            }
            jp_channels_hb_reset (self->channels);   /* a REQ socket is stuck
                                                        until it gets a reply */
            s_fds_changed (self);
        }
        self->beat_pending = jp_channels_hb_ping (self->channels) == 0;
        self->next_beat = s_next_beat (self, now);
    } else if (self->state == KS_KERNEL_STOPPING) {
        if (self->stop_stage == 0 && now >= self->stop_since + STOP_TERM_MS) {
            ks_process_signal_group (self->pid, SIGTERM);
            self->stop_stage = 1;
        } else if (self->stop_stage == 1 && now >= self->stop_since + STOP_KILL_MS) {
            ks_process_signal_group (self->pid, SIGKILL);
            self->stop_stage = 2;
        }
    }
}

void
ks_kernel_dispatch (ks_kernel_t *self, const zmq_pollitem_t *items, int n)
{
    /* nothing readable and no timer due: nothing to do (an idle kernel
       costs a busy gateway's turn nothing but this look) */
    bool readable = false;
    for (int i = 0; i < n && !readable; i++)
        readable = items[i].revents & ZMQ_POLLIN;
    int64_t due = ks_kernel_deadline (self);
    if (!readable && (due < 0 || due > jp_time_now_ms ()))
        return;
    for (int i = 0; i < n && self->state != KS_KERNEL_DEAD; i++) {
        if (!(items[i].revents & ZMQ_POLLIN))
            continue;
        if (!items[i].socket) {
            if (items[i].fd == self->pidfd)
                s_on_exit (self);
            else if (items[i].fd == self->relay_pidfd)
                s_on_relay_exit (self);
            else if (self->inbox && items[i].fd == ks_decoder_inbox_fd (self->inbox))
                s_take_decoded (self);
            continue;
        }
        if (!self->channels)
            continue;
        if (items[i].socket == jp_channels_socket (self->channels, JP_CHANNEL_HB)) {
            if (jp_channels_hb_recv (self->channels) == 0) {
                self->beat_pending = false;
                self->beats_missed = 0;
            }
            continue;
        }
        for (int ch = 0; ch < JP_CHANNEL_HB; ch++)
            if (items[i].socket == jp_channels_socket (self->channels, (jp_channel_t) ch))
                s_drain (self, (jp_channel_t) ch);
    }
    if (self->state != KS_KERNEL_DEAD)
        s_timers (self, jp_time_now_ms ());
}

bool
ks_kernel_run_until (ks_kernel_t *self, bool (*done) (void *arg), void *arg,
                     int timeout_ms)
{
    int64_t end = timeout_ms < 0 ? -1 : jp_time_now_ms () + timeout_ms;
    while (!done (arg) && self->state != KS_KERNEL_DEAD) {
        zmq_pollitem_t items[KS_KERNEL_POLL_ITEMS];
        int n = ks_kernel_poll_items (self, items, KS_KERNEL_POLL_ITEMS);
        int64_t now = jp_time_now_ms ();
        int64_t wake = ks_kernel_deadline (self);
        if (end >= 0 && (wake < 0 || end < wake))
            wake = end;
        if (end >= 0 && now >= end)
            break;
        long wait = wake < 0 ? -1 : (long) (wake > now ? wake - now : 0);
        if (zmq_poll (items, n, wait) < 0 && errno != EINTR)
            break;
        ks_kernel_dispatch (self, items, n);
    }
    return done (arg);
}

jp_msg_t *
ks_kernel_msg_new (ks_kernel_t *self, const char *msg_type)
{
    return self->channels ? jp_channels_msg_new (self->channels, msg_type) : NULL;
}

int
ks_kernel_send (ks_kernel_t *self, jp_channel_t channel, const jp_msg_t *msg)
{
    if (!self->channels || !msg)
        return -ENOTCONN;
    int rc = jp_channels_send (self->channels, channel, msg);
    if (rc == 0 && (channel == JP_CHANNEL_SHELL || channel == JP_CHANNEL_CONTROL)) {
        /* it has work: beat until it says idle to this request */
        snprintf (self->last_request, sizeof self->last_request, "%s", jp_msg_id (msg));
        self->asked = true;
        s_beat_sooner (self, jp_time_now_ms ());
    }
    return rc;
}

int
ks_kernel_interrupt (ks_kernel_t *self)
{
    if (self->state != KS_KERNEL_READY)
        return -ENOTCONN;
    if (!self->spec->interrupt_by_message && self->wrap_argv) {
        /* the launcher (bwrap) would die of SIGINT and end the sandbox, and
           the kernel runs in a session of its own: signal the launcher's
           descendants */
        const char *launcher = strrchr (self->wrap_argv[0], '/');
        launcher = launcher ? launcher + 1 : self->wrap_argv[0];
        return ks_process_signal_tree_except (self->pid, SIGINT, launcher) > 0 ? 0 : -ESRCH;
    }
    if (!self->spec->interrupt_by_message)
        return ks_process_signal_group (self->pid, SIGINT);
    jp_msg_t *msg = ks_kernel_msg_new (self, "interrupt_request");
    int rc = ks_kernel_send (self, JP_CHANNEL_CONTROL, msg);
    jp_msg_destroy (&msg);
    return rc;
}

int
ks_kernel_shutdown (ks_kernel_t *self)
{
    if (self->state == KS_KERNEL_DEAD || self->state == KS_KERNEL_STOPPING)
        return 0;
    if (self->state == KS_KERNEL_NEW) {
        s_set_state (self, KS_KERNEL_DEAD);
        return 0;
    }
    jp_msg_t *msg = ks_kernel_msg_new (self, "shutdown_request");
    if (msg) {
        jp_msg_set_content (msg, json_pack ("{s:b}", "restart", 0));
        ks_kernel_send (self, JP_CHANNEL_CONTROL, msg);
    }
    jp_msg_destroy (&msg);
    self->stop_since = jp_time_now_ms ();
    self->stop_stage = 0;
    s_set_state (self, KS_KERNEL_STOPPING);
    return 0;
}

void
ks_kernel_kill (ks_kernel_t *self)
{
    s_kill_and_reap (self);
    s_set_state (self, KS_KERNEL_DEAD);
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
