/* gw_cmd_kernel_relay: `codebox kernel-relay FRONT_CONN KERNEL_CONN`, the
 * bounded hop between a sandboxed kernel and the gateway (ks_kernel starts
 * it; see docs/SECURITY.md). It runs outside the sandbox, as the kernel's
 * user, in a network namespace of its own, with an address-space limit and
 * in the kernel's memory cgroup: what a hostile kernel makes it hold is
 * charged to that kernel, and a relay that would hold too much dies (the
 * gateway then stops the kernel) where the gateway would have grown.
 *
 * It binds the gateway's side (FRONT_CONN: ipc sockets in a folder the
 * kernel cannot reach), connects to the kernel's (KERNEL_CONN) and moves
 * whole messages, unchanged, so signatures stay valid:
 *  - from the kernel, a message of more than RELAY_MESSAGE_MAX bytes or
 *    RELAY_PARTS_MAX frames is dropped; on iopub a signed stderr note with
 *    the dropped message's parent takes its place, so its execution says
 *    why. Few messages wait on either side (RELAY_HWM), and while the
 *    gateway's side is full the relay stops reading the kernel: the backlog
 *    stays in the kernel's memory, where its PUB socket drops it.
 *  - from the gateway, a message the kernel does not take is dropped.
 * ROUTER/DEALER pairs keep the routing envelopes (kernels echo them);
 * iopub is an XPUB/XSUB pair that passes the subscription through. Our
 * own loop, not zproxy or zmq_proxy: those forward every message whole,
 * where the relay must weigh each one, drop and replace it, and stop
 * reading a side while the other is full.
 *
 * Threads: one (and libzmq's I/O thread); the main thread polls. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <zmq.h>

#include "gw_cli.h"
#include "jp_connection.h"
#include "jp_message.h"
#include "jp_poll.h"
#include "jp_time.h"

#define RELAY_MESSAGE_MAX (64u << 20)   /* bytes of one message, all frames (an
                                           execution's whole display budget) */
#define RELAY_PARTS_MAX 256             /* frames of one message */
#define RELAY_HWM 4                     /* messages waiting per socket */
#define PARENT_MAX (64u << 10)          /* a parent header we read for the note */

#define RELAY_UNREACHABLE_MS 5000       /* how long a message waits for the gateway's
                                           peer to connect (its stdin socket may
                                           connect after the kernel is ready) */
#define RELAY_STDIN_WAIT_MS 5000        /* how long shell waits for our stdin socket
                                           to be the kernel's peer (below) */

/* One whole message from the kernel that waits for the gateway's side. */
typedef struct {
    zmq_msg_t parts[RELAY_PARTS_MAX];
    int n, sent;
    int64_t unreachable_since_ms;       /* the peer was not connected yet, or 0 */
} s_held_t;

typedef struct {
    void *front[JP_CHANNEL_COUNT];
    void *back[JP_CHANNEL_COUNT];
    void *monitor[JP_CHANNEL_COUNT];    /* events of the kernel's side */
    s_held_t held[JP_CHANNEL_COUNT];
    jp_connection_t front_conn;
    char session[JP_UUID_LEN + 1];
    /* The kernel sends an input_request to the routing id of the shell
       request's sender on its stdin socket, and drops it when no peer of
       that id is connected there yet. Our stdin socket connects in
       parallel with shell (and retries every 100 ms while the kernel
       starts), so a first cell calling input() could hang: the gateway's
       shell messages wait until the stdin handshake is done. */
    bool stdin_up;
    int64_t started_ms;
} s_relay_t;

static void
s_held_clear (s_held_t *held)
{
    for (int i = 0; i < held->n; i++)
        zmq_msg_close (&held->parts[i]);
    held->n = held->sent = 0;
}

/* Holds a signed stderr stream message, child of parent (stolen), that says
 * a message of `bytes` was dropped. */
static void
s_hold_note (s_relay_t *self, json_t *parent, size_t bytes, int frames)
{
    jp_msg_t *note = jp_msg_new ("stream", self->session, "codebox");
    if (!note) {
        json_decref (parent);
        return;
    }
    json_decref (note->parent_header);
    note->parent_header = parent;
    char text[256];
    snprintf (text, sizeof text,
              "[codebox: the kernel sent a message of %.1f MiB in %d frames, over the bound "
              "of %u MiB and %d frames per message; it was dropped]\n",
              (double) bytes / (1 << 20), frames, RELAY_MESSAGE_MAX >> 20, RELAY_PARTS_MAX);
    jp_msg_set_content (note, json_pack ("{s:s, s:s}", "name", "stderr", "text", text));
    jp_frame_t *frames_out = NULL;
    size_t n = 0;
    const char *key = self->front_conn.key;
    s_held_t *held = &self->held[JP_CHANNEL_IOPUB];
    if (jp_msg_encode (note, (const uint8_t *) key, strlen (key), &frames_out, &n) == 0)
        for (size_t i = 0; i < n && held->n < RELAY_PARTS_MAX; i++) {
            zmq_msg_init_size (&held->parts[held->n], frames_out[i].size);
            memcpy (zmq_msg_data (&held->parts[held->n]), frames_out[i].data,
                    frames_out[i].size);
            held->n++;
        }
    jp_frames_free (frames_out, n);
    jp_msg_destroy (&note);
}

/* Takes one whole message from the kernel's side of channel into the held
 * slot (empty before), or drops it when it is over the bounds. */
static void
s_take_from_kernel (s_relay_t *self, int ch)
{
    s_held_t *held = &self->held[ch];
    size_t bytes = 0;
    int frames = 0, delimiter = -1, more = 1;
    bool over = false;
    json_t *parent = NULL;
    while (more) {
        zmq_msg_t part;
        zmq_msg_init (&part);
        /* the frames of a message arrive together: only the first can be
           missing */
        if (zmq_msg_recv (&part, self->back[ch], frames == 0 ? ZMQ_DONTWAIT : 0) < 0) {
            zmq_msg_close (&part);
            if (frames)
                s_held_clear (held);
            json_decref (parent);
            return;
        }
        more = zmq_msg_more (&part);
        size_t size = zmq_msg_size (&part);
        const void *data = zmq_msg_data (&part);
        bytes += size;
        if (delimiter < 0 && size == 9 && memcmp (data, "<IDS|MSG>", 9) == 0)
            delimiter = frames;
        else if (delimiter >= 0 && frames == delimiter + 3 && size <= PARENT_MAX && !parent)
            parent = json_loadb (data, size, 0, NULL);
        frames++;
        if (!over && (held->n >= RELAY_PARTS_MAX || bytes > RELAY_MESSAGE_MAX)) {
            over = true;
            s_held_clear (held);
        }
        if (over)
            zmq_msg_close (&part);
        else
            held->parts[held->n++] = part;
    }
    if (over) {
        fprintf (stderr, "kernel-relay: dropped a message of %zu bytes in %d frames on %s\n",
                 bytes, frames, jp_channel_name ((jp_channel_t) ch));
        if (ch == JP_CHANNEL_IOPUB && json_is_object (parent)) {
            s_hold_note (self, parent, bytes, frames);
            return;
        }
    }
    json_decref (parent);
}

/* Passes the held message of channel to the gateway's side. Returns false
 * while that side is full (the message stays held). */
static bool
s_give_to_gateway (s_relay_t *self, int ch)
{
    s_held_t *held = &self->held[ch];
    while (held->sent < held->n) {
        int flags = ZMQ_DONTWAIT | (held->sent + 1 < held->n ? ZMQ_SNDMORE : 0);
        if (zmq_msg_send (&held->parts[held->sent], self->front[ch], flags) < 0) {
            if (errno == EAGAIN && held->sent == 0)
                return false;
            /* not connected yet (ROUTER_MANDATORY): wait a little for it */
            if (errno == EHOSTUNREACH && held->sent == 0) {
                int64_t now = jp_time_now_ms ();
                if (!held->unreachable_since_ms)
                    held->unreachable_since_ms = now;
                if (now - held->unreachable_since_ms < RELAY_UNREACHABLE_MS)
                    return false;
            }
            break;      /* the gateway's peer is gone: drop it */
        }
        held->sent++;
    }
    for (int i = held->sent; i < held->n; i++)
        zmq_msg_close (&held->parts[i]);
    held->n = held->sent = 0;
    held->unreachable_since_ms = 0;
    return true;
}

/* Moves one whole message from the gateway's side to the kernel's; when
 * the kernel does not take it, it is dropped. */
static void
s_pass_to_kernel (s_relay_t *self, int ch)
{
    bool dropping = false;
    for (int more = 1, first = 1; more; first = 0) {
        zmq_msg_t part;
        zmq_msg_init (&part);
        if (zmq_msg_recv (&part, self->front[ch], first ? ZMQ_DONTWAIT : 0) < 0) {
            zmq_msg_close (&part);
            return;
        }
        more = zmq_msg_more (&part);
        if (!dropping
            && zmq_msg_send (&part, self->back[ch], ZMQ_DONTWAIT | (more ? ZMQ_SNDMORE : 0)) < 0)
            dropping = true;
        zmq_msg_close (&part);
    }
}

/* Makes and binds or connects the ten sockets. Returns 0 or -1. */
static int
s_open (s_relay_t *self, void *ctx, const jp_connection_t *kernel_conn)
{
    static const int front_types[] = {ZMQ_ROUTER, ZMQ_XPUB, ZMQ_ROUTER, ZMQ_ROUTER, ZMQ_ROUTER};
    static const int back_types[] = {ZMQ_DEALER, ZMQ_XSUB, ZMQ_DEALER, ZMQ_DEALER, ZMQ_DEALER};
    int zero = 0, one = 1, hwm = RELAY_HWM;
    int64_t frame_max = RELAY_MESSAGE_MAX;
    for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++) {
        void *front = self->front[ch] = zmq_socket (ctx, front_types[ch]);
        void *back = self->back[ch] = zmq_socket (ctx, back_types[ch]);
        if (!front || !back)
            return -1;
        zmq_setsockopt (front, ZMQ_LINGER, &zero, sizeof zero);
        zmq_setsockopt (back, ZMQ_LINGER, &zero, sizeof zero);
        zmq_setsockopt (front, ZMQ_SNDHWM, &hwm, sizeof hwm);
        zmq_setsockopt (back, ZMQ_RCVHWM, &hwm, sizeof hwm);
        /* one frame over the bound: libzmq drops the connection at its
           header, before holding it */
        zmq_setsockopt (back, ZMQ_MAXMSGSIZE, &frame_max, sizeof frame_max);
        if (ch == JP_CHANNEL_IOPUB)
            zmq_setsockopt (front, ZMQ_XPUB_NODROP, &one, sizeof one);
        else
            zmq_setsockopt (front, ZMQ_ROUTER_MANDATORY, &one, sizeof one);
        /* the kernel answers input requests to the shell peer's routing id:
           both of ours must share it */
        if (ch == JP_CHANNEL_SHELL || ch == JP_CHANNEL_STDIN)
            zmq_setsockopt (back, ZMQ_ROUTING_ID, "codebox-relay", 13);
        char endpoint[JP_IPC_PATH_MAX + 32];
        jp_connection_endpoint (&self->front_conn, (jp_channel_t) ch, endpoint, sizeof endpoint);
        if (zmq_bind (front, endpoint) != 0) {
            fprintf (stderr, "kernel-relay: bind %s: %s\n", endpoint, zmq_strerror (errno));
            return -1;
        }
        /* libzmq ends a connection that broke its rules (a frame over the
           bound, more than it could allocate) for good: we learn of it */
        char monitor[64];
        snprintf (monitor, sizeof monitor, "inproc://relay-monitor-%d", ch);
        int events = ZMQ_EVENT_DISCONNECTED
                     | (ch == JP_CHANNEL_STDIN ? ZMQ_EVENT_HANDSHAKE_SUCCEEDED : 0);
        if (zmq_socket_monitor (back, monitor, events) != 0
            || !(self->monitor[ch] = zmq_socket (ctx, ZMQ_PAIR))
            || zmq_connect (self->monitor[ch], monitor) != 0)
            return -1;
        jp_connection_endpoint (kernel_conn, (jp_channel_t) ch, endpoint, sizeof endpoint);
        if (zmq_connect (back, endpoint) != 0) {
            fprintf (stderr, "kernel-relay: connect %s: %s\n", endpoint, zmq_strerror (errno));
            return -1;
        }
    }
    return 0;
}

/* Reads one monitor event of channel ch: true when it says the kernel's
 * connection broke, false for our stdin handshake being done. */
static bool
s_broke (s_relay_t *self, int ch)
{
    uint16_t event = 0;
    zmq_msg_t part;
    for (int more = 1, first = 1; more; first = 0) {
        zmq_msg_init (&part);
        if (zmq_msg_recv (&part, self->monitor[ch], 0) < 0) {
            zmq_msg_close (&part);
            return true;
        }
        if (first && zmq_msg_size (&part) >= sizeof event)
            memcpy (&event, zmq_msg_data (&part), sizeof event);
        more = zmq_msg_more (&part);
        zmq_msg_close (&part);
    }
    if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
        self->stdin_up = true;
        return false;
    }
    return true;
}

/* Polls and moves messages until polling fails or a connection with the
 * kernel breaks (then says which). */
static void
s_run (s_relay_t *self)
{
    self->started_ms = jp_time_now_ms ();
    /* a channel whose sockets were used last turn: jp_poll asks their
       ZMQ_EVENTS before it sleeps (a send or receive may have taken the
       fd's wake-up); all of them at first */
    bool used[JP_CHANNEL_COUNT];
    for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++)
        used[ch] = true;
    for (;;) {
        bool shell_open = self->stdin_up
                          || jp_time_now_ms () - self->started_ms >= RELAY_STDIN_WAIT_MS;
        zmq_pollitem_t items[3 * JP_CHANNEL_COUNT];
        for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++)
            items[2 * JP_CHANNEL_COUNT + ch] = (zmq_pollitem_t) {
                .socket = self->monitor[ch], .events = ZMQ_POLLIN | (used[ch] ? JP_POLL_USED : 0)};
        for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++) {
            bool waiting = self->held[ch].n > 0;
            /* a ROUTER is always writable: an unreachable peer is retried
               on a short timeout instead */
            bool unreachable = waiting && self->held[ch].unreachable_since_ms;
            bool held_back = ch == JP_CHANNEL_SHELL && !shell_open;
            short again = used[ch] ? JP_POLL_USED : 0;
            items[2 * ch] = (zmq_pollitem_t) {
                .socket = self->front[ch],
                .events = (short) ((held_back ? 0 : ZMQ_POLLIN)
                                   | (waiting && !unreachable ? ZMQ_POLLOUT : 0) | again)};
            /* the kernel's side is read only when its last message is gone */
            items[2 * ch + 1] = (zmq_pollitem_t) {
                .socket = self->back[ch], .events = (short) ((waiting ? 0 : ZMQ_POLLIN) | again)};
        }
        long timeout = shell_open ? -1 : 20;
        for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++)
            if (self->held[ch].n && self->held[ch].unreachable_since_ms)
                timeout = 20;
        struct pollfd pfds[3 * JP_CHANNEL_COUNT];
        if (jp_poll (items, pfds, 3 * JP_CHANNEL_COUNT, timeout) < 0)
            return;
        for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++)
            if ((items[2 * JP_CHANNEL_COUNT + ch].revents & ZMQ_POLLIN) && s_broke (self, ch)) {
                fprintf (stderr, "kernel-relay: the kernel's %s connection broke (it ended, "
                         "or sent a frame over %u MiB, or more at once than the relay may "
                         "hold)\n", jp_channel_name ((jp_channel_t) ch), RELAY_MESSAGE_MAX >> 20);
                return;
            }
        for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++) {
            /* a channel is used this turn when any of its sockets is read,
               written or asked ZMQ_EVENTS below */
            bool waiting = self->held[ch].n > 0;
            used[ch] = waiting || items[2 * ch].revents || items[2 * JP_CHANNEL_COUNT + ch].revents
                       || (ch == JP_CHANNEL_SHELL && !shell_open);  /* asked, not read */
            if ((items[2 * ch].revents & ZMQ_POLLIN) && (ch != JP_CHANNEL_SHELL || shell_open))
                s_pass_to_kernel (self, ch);
            if (self->held[ch].n && !s_give_to_gateway (self, ch))
                continue;
            /* the kernel's side: when it is readable, or was not polled
               for reading (a message was waiting) */
            if (!waiting && !(items[2 * ch + 1].revents & ZMQ_POLLIN))
                continue;
            used[ch] = true;
            /* a few messages per turn, so every channel is served */
            for (int i = 0; i < RELAY_HWM && !self->held[ch].n; i++) {
                int events = 0;
                size_t len = sizeof events;
                if (zmq_getsockopt (self->back[ch], ZMQ_EVENTS, &events, &len) != 0
                    || !(events & ZMQ_POLLIN))
                    break;
                s_take_from_kernel (self, ch);
                if (self->held[ch].n && !s_give_to_gateway (self, ch))
                    break;
            }
        }
    }
}

int
gw_cmd_kernel_relay (int argc, char **argv)
{
    if (argc != 3) {
        fprintf (stderr, "usage: codebox kernel-relay FRONT_CONN KERNEL_CONN\n");
        return GW_EXIT_USAGE;
    }
    s_relay_t *self = calloc (1, sizeof *self);
    jp_connection_t kernel_conn;
    int rc = self ? jp_connection_read (&self->front_conn, argv[1]) : -ENOMEM;
    if (!rc)
        rc = jp_connection_read (&kernel_conn, argv[2]);
    if (!rc)
        rc = jp_random_uuid (self->session);
    if (rc) {
        fprintf (stderr, "kernel-relay: %s\n", strerror (-rc));
        free (self);
        return GW_EXIT_USAGE;
    }
    signal (SIGINT, SIG_IGN);   /* interrupts are for the kernel */
    gw_cli_stay_on_this_cpu ();
    void *ctx = zmq_ctx_new ();
    if (ctx && s_open (self, ctx, &kernel_conn) == 0)
        s_run (self);
    for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++) {
        s_held_clear (&self->held[ch]);
        if (self->front[ch])
            zmq_close (self->front[ch]);
        if (self->back[ch])
            zmq_close (self->back[ch]);
        if (self->monitor[ch])
            zmq_close (self->monitor[ch]);
    }
    if (ctx)
        zmq_ctx_term (ctx);
    free (self);
    return GW_EXIT_KERNEL;
}
