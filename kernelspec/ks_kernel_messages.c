/* ks_kernel_messages: the kernel's messages: the poll items and
 * descriptors its owner watches, dispatch (reading each channel up to a
 * fair bound, large messages decoded on ks_decoder's worker, the pidfds,
 * heartbeat replies, then the timers), running one kernel alone, sending,
 * interrupting and asking for shutdown.
 * Threads: everything runs in the thread that created the kernel. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "jp_log.h"
#include "jp_time.h"
#include "ks_kernel_internal.h"
#include "ks_process.h"

#define MAX_MSGS_PER_DISPATCH 512
#define MAX_BYTES_PER_DISPATCH (4u << 20)

int
ks_kernel_poll_items (ks_kernel_t *self, zmq_pollitem_t *items, int max)
{
    int n = 0;
    if (self->channels)
        for (int ch = 0; ch < JP_CHANNEL_COUNT && n < max; ch++) {
            if (self->away[ch] || (ch == JP_CHANNEL_IOPUB && self->iopub_rest_until))
                continue;   /* not read until its message is back, or resting: not polled */
            items[n++] = (zmq_pollitem_t) {
                .socket = jp_channels_socket (self->channels, (jp_channel_t) ch),
                .events = ZMQ_POLLIN | JP_POLL_ZMTP};
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
            if (self->away[ch] || (ch == JP_CHANNEL_IOPUB && self->iopub_rest_until))
                continue;   /* its descriptor would wake every turn meanwhile */
            fds[n] = jp_channels_fd (self->channels, (jp_channel_t) ch);
            n += fds[n] >= 0;   /* -1: it waits to connect again (a deadline) */
        }
    if (self->pidfd >= 0 && n < max)
        fds[n++] = self->pidfd;
    if (self->relay_pidfd >= 0 && n < max)
        fds[n++] = self->relay_pidfd;
    if (self->inbox && n < max)
        fds[n++] = ks_decoder_inbox_fd (self->inbox);
    return n;
}

int
ks_kernel_resting_fd (const ks_kernel_t *self)
{
    if (!self->iopub_rest_until || !self->channels || self->away[JP_CHANNEL_IOPUB])
        return -1;
    return jp_channels_fd (self->channels, JP_CHANNEL_IOPUB);
}

int64_t
ks_iopub_rest_after_read (int64_t until, int got, size_t bytes, bool ready, int64_t now)
{
    if (got > KS_IOPUB_REST_MAX_MSGS || bytes > KS_IOPUB_REST_MAX_BYTES || (got > 0 && !ready))
        return 0;
    if (got > 0)
        return now + KS_IOPUB_REST_MS;
    return until && now >= until ? 0 : until;
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
    return self->channels && jp_channels_any_busy (self->channels);
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
        ks_kernel_fds_changed (self);
    }
    if (ks_decoder_submit (self->inbox, (int) channel, raw_p) != 0)
        return false;
    self->away[channel] = true;
    ks_kernel_fds_changed (self);
    return true;
}

/* Reads the waiting messages of one channel up to a fair bound, in count
 * and in bytes: a kernel that floods waits for the next turn of the loop,
 * and every other kernel is served in between. A message over
 * KS_DECODER_MIN_BYTES is verified and decoded by ks_decoder's worker:
 * the channel is then not read until it is back (s_take_decoded). */
static int
s_drain (ks_kernel_t *self, jp_channel_t channel, size_t *bytes_p)
{
    size_t bytes = 0;
    int got = 0;
    if (bytes_p)
        *bytes_p = 0;
    for (int i = 0; i < MAX_MSGS_PER_DISPATCH && bytes < MAX_BYTES_PER_DISPATCH
                    && self->channels && !self->away[channel]; i++) {
        jp_msg_t *msg = NULL;
        jp_raw_t *raw = NULL;
        int rc = jp_channels_recv_or_defer (self->channels, channel, KS_DECODER_MIN_BYTES, &msg,
                                            &raw);
        if (rc == -EAGAIN)
            return got;
        got++;
        bytes += jp_channels_last_bytes (self->channels);
        if (bytes_p)
            *bytes_p = bytes;
        if (rc == JP_CHANNELS_DEFERRED) {
            if (s_send_away (self, channel, &raw))
                return got;
            rc = jp_raw_decode (&raw, &msg);    /* no worker: decode here */
        }
        if (rc) {
            jp_log_warn ("kernel=%s channel=%s dropped a message: %s",
                     self->id, jp_channel_name (channel), jp_strerror (rc));
            continue;
        }
        ks_kernel_handle (self, channel, &msg);
    }
    return got;
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
        ks_kernel_fds_changed (self);
        if (rc)
            jp_log_warn ("kernel=%s channel=%s dropped a message: %s", self->id,
                         jp_channel_name ((jp_channel_t) channel), jp_strerror (rc));
        else
            ks_kernel_handle (self, (jp_channel_t) channel, &msg);
        if (self->state == KS_KERNEL_DEAD)
            return;
        /* what came meanwhile woke the socket's descriptor already */
        if (self->channels)
            s_drain (self, (jp_channel_t) channel, NULL);
    }
}

/* A channel's descriptor changed (it connected, ended, connected again):
 * the owner's epoll set is made again. */
static void
s_sync_fds (ks_kernel_t *self)
{
    if (self->channels && jp_channels_take_fds_changed (self->channels))
        ks_kernel_fds_changed (self);
}

/* Reads iopub (first pulling what came if it rested: nothing watched its
 * descriptor); then it rests again if a little came, is watched if much
 * did (a kernel that floods is read as it comes, as fast as the gateway
 * can: the sockets between hold only so much, and its PUB drops past its
 * queue's bound) or if a rest ended with nothing. */
static void
s_read_iopub (ks_kernel_t *self, int64_t now)
{
    if (!self->channels || self->away[JP_CHANNEL_IOPUB])
        return;
    if (self->iopub_rest_until)
        jp_channels_pull (self->channels, JP_CHANNEL_IOPUB);
    size_t bytes;
    int got = s_drain (self, JP_CHANNEL_IOPUB, &bytes);
    if (self->channels)     /* (a message may have ended the kernel) */
        self->iopub_rest_until = ks_iopub_rest_after_read (
            self->iopub_rest_until, got, bytes, self->state == KS_KERNEL_READY, now);
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
    int64_t now = jp_time_now_ms ();
    if (!readable && (due < 0 || due > now))
        return;
    /* a reply (or a prompt) comes after the output of its request: iopub
       is read first, resting or not */
    bool replies = false, iopub = false;
    for (int i = 0; i < n && self->channels; i++)
        if ((items[i].revents & ZMQ_POLLIN) && items[i].socket) {
            if (items[i].socket == jp_channels_socket (self->channels, JP_CHANNEL_IOPUB))
                iopub = true;
            else if (items[i].socket != jp_channels_socket (self->channels, JP_CHANNEL_HB))
                replies = true;
        }
    if (replies || iopub || (self->iopub_rest_until && now >= self->iopub_rest_until))
        s_read_iopub (self, now);
    for (int i = 0; i < n && self->state != KS_KERNEL_DEAD; i++) {
        if (!(items[i].revents & ZMQ_POLLIN))
            continue;
        if (!items[i].socket) {
            if (items[i].fd == self->pidfd)
                ks_kernel_on_exit (self);
            else if (items[i].fd == self->relay_pidfd)
                ks_kernel_on_relay_exit (self);
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
            if (ch != JP_CHANNEL_IOPUB
                && items[i].socket == jp_channels_socket (self->channels, (jp_channel_t) ch))
                s_drain (self, (jp_channel_t) ch, NULL);
    }
    /* a request answered but not yet said idle to: its idle is waited for */
    if (replies && self->asked)
        self->iopub_rest_until = 0;
    now = jp_time_now_ms ();
    if (self->channels && self->state != KS_KERNEL_DEAD)
        jp_channels_tick (self->channels, now);
    if (self->state != KS_KERNEL_DEAD)
        ks_kernel_timers (self, now);
    s_sync_fds (self);
}

bool
ks_kernel_run_until (ks_kernel_t *self, bool (*done) (void *arg), void *arg,
                     int timeout_ms)
{
    int64_t end = timeout_ms < 0 ? -1 : jp_time_now_ms () + timeout_ms;
    while (!done (arg) && self->state != KS_KERNEL_DEAD) {
        zmq_pollitem_t items[KS_KERNEL_POLL_ITEMS];
        struct pollfd pfds[KS_KERNEL_POLL_ITEMS];
        int n = ks_kernel_poll_items (self, items, KS_KERNEL_POLL_ITEMS);
        int64_t now = jp_time_now_ms ();
        int64_t wake = ks_kernel_deadline (self);
        if (end >= 0 && (wake < 0 || end < wake))
            wake = end;
        if (end >= 0 && now >= end)
            break;
        long wait = wake < 0 ? -1 : (long) (wake > now ? wake - now : 0);
        if (jp_poll (items, pfds, n, wait) < 0)
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
    s_sync_fds (self);
    if (rc == 0 && (channel == JP_CHANNEL_SHELL || channel == JP_CHANNEL_CONTROL)) {
        /* it has work: beat until it says idle to this request */
        snprintf (self->last_request, sizeof self->last_request, "%s", jp_msg_id (msg));
        self->asked = true;
        ks_kernel_beat_sooner (self, jp_time_now_ms ());
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
        ks_kernel_set_state (self, KS_KERNEL_DEAD);
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
    ks_kernel_set_state (self, KS_KERNEL_STOPPING);
    return 0;
}
