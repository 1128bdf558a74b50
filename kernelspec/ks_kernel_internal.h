/* ks_kernel_internal: what the files of ks_kernel share: the kernel's
 * struct and the functions one file gives the others. Not for other
 * modules. The files are layered, each using only those below it:
 *
 *   ks_kernel_messages.c   polling, reading (and decoding away), dispatch,
 *                          sending, interrupt, shutdown
 *   ks_kernel_machine.c    the states: start, handshake, heartbeat, the
 *                          process's and the relay's exits, timers, kill
 *   ks_kernel.c            making, launching (connection files, proxy,
 *                          relay, process), killing and destroying
 *
 * Threads: everything runs in the thread that created the kernel. */
#ifndef KS_KERNEL_INTERNAL_H
#define KS_KERNEL_INTERNAL_H

#include "ks_decoder.h"
#include "ks_kernel.h"

#define KS_KERNEL_RESEND_MS 200     /* kernel_info again while iopub is silent */

struct ks_kernel {
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
    char *relay, *relay_dir, *relay_net;
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
    int64_t iopub_rest_until;   /* iopub is not watched until then; 0: it is
                                   (ks_kernel_resting_fd) */
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

/* ---- ks_kernel.c ---------------------------------------------------------- */

/* A descriptor of the kernel was opened or closed (see s_fds_changed). */
void ks_kernel_fds_changed (ks_kernel_t *self);

/* Closes the channels, and forgets the messages away being decoded. */
void ks_kernel_close_channels (ks_kernel_t *self);

/* Removes the connection file and any ipc socket files. */
void ks_kernel_remove_runtime_files (ks_kernel_t *self);

/* Kills the group, reaps the leader, closes the pidfd (and the relay's). */
void ks_kernel_kill_and_reap (ks_kernel_t *self);

/* One launch attempt: connection info, connection file, channels, process;
 * then the first kernel_info_request. Returns 0 or a negative errno with
 * self->error set. */
int ks_kernel_launch (ks_kernel_t *self);

/* Sends a kernel_info_request on shell. */
void ks_kernel_send_kernel_info (ks_kernel_t *self);

/* ---- ks_kernel_machine.c -------------------------------------------------- */

/* Enters a state and tells the owner. DEAD also closes the channels. */
void ks_kernel_set_state (ks_kernel_t *self, ks_kernel_state_t state);

/* Beats at the working pace from now, if it is not beating sooner. */
void ks_kernel_beat_sooner (ks_kernel_t *self, int64_t now);

/* Does what one decoded message of channel asks (msg taken). */
void ks_kernel_handle (ks_kernel_t *self, jp_channel_t channel, jp_msg_t **msg_p);

/* The kernel process ended, or the relay did (its pidfd woke). */
void ks_kernel_on_exit (ks_kernel_t *self);
void ks_kernel_on_relay_exit (ks_kernel_t *self);

/* Runs the timers that are due. */
void ks_kernel_timers (ks_kernel_t *self, int64_t now);

#endif
