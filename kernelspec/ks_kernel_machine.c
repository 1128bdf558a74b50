/* ks_kernel_machine: the kernel's states (see ks_kernel.h): the start and
 * its kernel_info handshake, the heartbeat's pace, the process's and the
 * relay's exits, the timers (start deadline, heartbeats, the stages of a
 * shutdown), the kill. What a message means for the state is here; how
 * messages are read is in ks_kernel_messages.c.
 * Threads: everything runs in the thread that created the kernel. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jp_log.h"
#include "jp_time.h"
#include "ks_kernel_internal.h"
#include "ks_process.h"

#define STOP_TERM_MS 2000       /* shutdown_request, then SIGTERM... */
#define STOP_KILL_MS 4000       /* ...then SIGKILL */
#define HB_MISSES_FATAL 4
#define PORT_RACE_RETRIES 3
#define RELAY_GONE_GRACE_MS 500  /* a dying kernel's own exit comes first */

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
void
ks_kernel_beat_sooner (ks_kernel_t *self, int64_t now)
{
    if (self->state != KS_KERNEL_READY)
        return;
    int64_t sooner = s_next_beat (self, now);
    if (sooner >= 0 && (self->next_beat < 0 || sooner < self->next_beat))
        self->next_beat = sooner;
}

/* Enters a state and tells the owner. DEAD also closes the channels. */
void
ks_kernel_set_state (ks_kernel_t *self, ks_kernel_state_t state)
{
    if (self->state == state)
        return;
    self->state = state;
    if (state == KS_KERNEL_DEAD) {
        ks_kernel_close_channels (self);
        ks_kernel_remove_runtime_files (self);
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
    ks_kernel_kill_and_reap (self);
    ks_kernel_set_state (self, KS_KERNEL_DEAD);
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
    int rc = ks_kernel_launch (self);
    if (rc) {
        ks_kernel_kill_and_reap (self);
        ks_kernel_set_state (self, KS_KERNEL_DEAD);
        return rc;
    }
    if (self->on_state)
        self->on_state (self, KS_KERNEL_STARTING, self->arg);
    return 0;
}

void
ks_kernel_kill (ks_kernel_t *self)
{
    ks_kernel_kill_and_reap (self);
    ks_kernel_set_state (self, KS_KERNEL_DEAD);
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
        ks_kernel_set_state (self, KS_KERNEL_READY);
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
        ks_kernel_beat_sooner (self, jp_time_now_ms ());
}

/* Does what one decoded message of channel asks (msg taken). */
void
ks_kernel_handle (ks_kernel_t *self, jp_channel_t channel, jp_msg_t **msg_p)
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

/* The kernel process ended: reap it and decide what that means. */
void
ks_kernel_on_exit (ks_kernel_t *self)
{
    int status = 0;
    if (ks_process_reap (self->pid, &status) == 0)
        return;     /* spurious wake-up */
    pid_t pgid = self->pid;
    self->pid = 0;
    ks_process_signal_group (pgid, SIGKILL);    /* leftovers of the group */
    close (self->pidfd);
    self->pidfd = -1;
    ks_kernel_fds_changed (self);
    char how[128], why[256];
    ks_process_describe (status, how, sizeof how);
    if (self->state == KS_KERNEL_STOPPING) {
        ks_kernel_set_state (self, KS_KERNEL_DEAD);
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
            ks_kernel_close_channels (self);
            ks_kernel_remove_runtime_files (self);
            if (ks_kernel_launch (self) == 0)
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
    ks_kernel_set_state (self, KS_KERNEL_DEAD);
}

/* The relay ended on its own: a connection with the kernel broke (the
 * kernel sent what it may not, or it is dying), or the relay died. A
 * kernel that dies closes its connections before it exits, and its exit
 * says more: the kernel is stopped for the relay only after a grace. */
void
ks_kernel_on_relay_exit (ks_kernel_t *self)
{
    int status = 0;
    if (ks_process_reap (self->relay_pid, &status) == 0)
        return;
    self->relay_pid = 0;
    close (self->relay_pidfd);
    self->relay_pidfd = -1;
    ks_kernel_fds_changed (self);
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

/* Runs the timers that are due. */
void
ks_kernel_timers (ks_kernel_t *self, int64_t now)
{
    if (self->relay_gone_ms && now >= self->relay_gone_ms + RELAY_GONE_GRACE_MS) {
        self->relay_gone_ms = 0;
        ks_kernel_kill_and_reap (self);
        snprintf (self->error, sizeof self->error, "%s", self->relay_why);
        ks_kernel_set_state (self, KS_KERNEL_DEAD);
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
                ks_kernel_send_kernel_info (self);
            self->next_resend = now + (self->got_info_reply ? KS_KERNEL_RESEND_MS : 1000);
        }
    } else if (self->state == KS_KERNEL_READY && self->next_beat >= 0 && now >= self->next_beat) {
        if (self->beat_pending) {
            if (++self->beats_missed >= HB_MISSES_FATAL) {
                s_fail (self, "kernel stopped answering heartbeats");
                return;
            }
            jp_channels_hb_reset (self->channels);   /* a REQ socket is stuck
                                                        until it gets a reply */
            ks_kernel_fds_changed (self);
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

/* When the state machine needs the kernel again, or -1. */
static int64_t
s_state_deadline (const ks_kernel_t *self)
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

int64_t
ks_kernel_deadline (const ks_kernel_t *self)
{
    int64_t due = s_state_deadline (self);
    if (self->iopub_rest_until && self->state != KS_KERNEL_DEAD
        && (due < 0 || self->iopub_rest_until < due))
        due = self->iopub_rest_until;
    int64_t connect = self->channels && self->state != KS_KERNEL_DEAD
                      ? jp_channels_deadline (self->channels) : -1;
    return connect >= 0 && (due < 0 || connect < due) ? connect : due;
}
