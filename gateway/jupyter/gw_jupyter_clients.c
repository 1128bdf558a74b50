/* gw_jupyter_clients: the kernels' websocket clients (RFC 6455 framing
 * by libwslay) on the loop: one loop source polling every client's
 * socket, what a client sends to its kernel, and the routing of kernel
 * messages to clients (see gw_jupyter_clients.h).
 *
 * Bounds: a client's message is at most S_MAX_RECV bytes (1009 past it).
 * A client is *behind* while its unsent output passes S_SOFT_QUEUE (or
 * S_SHARE while all clients' together pass S_TOTAL_SOFT): it misses iopub
 * messages (counted, logged) and is not read (it asks nothing more) until
 * it catches up. Past S_HARD_QUEUE (or S_SHARE while the total passes
 * S_TOTAL_HARD) any message for it closes it (1008): a client that asks
 * and never reads, or a kernel that answers it without end, costs the
 * gateway at most that, and a slow reader costs the others nothing. A
 * kernel is given at most S_IN_FLIGHT requests to answer at a time (its
 * answers then always find room in its queue, which drops what does not
 * fit); what a client sends beyond, or while its kernel cannot take it
 * (starting, or its queue full), waits in the client's gw_waiting_t, and a
 * client whose waiting messages reach their bound is not read until they
 * go: nothing it sends is dropped. At most S_MAX_CLIENTS websockets in all
 * and S_MAX_PER_KERNEL per kernel. A client silent for
 * CODEBOX_WS_PING_INTERVAL is pinged (browsers and websocket libraries
 * answer by themselves); one still silent after as long again is closed
 * (1001), so a connection whose peer is gone does not stay for good.
 *
 *
 * Threads: the loop thread only. */
#include "gw_jupyter_clients.h"
#include "gw_id.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <wslay/wslay.h>

#include "gw_jupyter_asks.h"
#include "gw_jupyter_waiting.h"
#include "gw_jupyter_wire.h"
#include "gw_sessions.h"
#include "jp_log.h"
#include "jp_time.h"

#define S_MAX_RECV (16u << 20)
#define S_SOFT_QUEUE (32u << 20)
#define S_HARD_QUEUE (128u << 20)
#define S_SHARE (4u << 20)              /* a client's part while the total is high */
#define S_TOTAL_SOFT ((size_t) 256 << 20)
#define S_TOTAL_HARD ((size_t) 1024 << 20)
#define S_ROUTE_KEY "codebox_client"
#define S_IN_FLIGHT 512         /* shell requests a kernel has to answer at a time */
#define S_CLOSE_GRACE_MS 2000

struct gw_ws_client {
    gw_jupyter_t *owner;
    gw_ws_client_t *next;
    char session_id[GW_ID_SIZE];
    char tenant[GW_ID_SIZE];
    gw_upgraded_t *conn;
    wslay_event_context_ptr ws;
    char route[24];             /* its mark in the headers it sends (S_ROUTE_KEY) */
    bool v1;
    bool starved;               /* a read was refused while it was held */
    bool dead;                  /* to be freed in tick */
    int64_t close_by_ms;        /* a close was queued: freed by then at the latest */
    int64_t heard_ms;           /* its last frame of any kind (a pong too) */
    bool pinged;                /* a ping went since then */
    size_t extra_at;            /* bytes of conn->extra already read */
    gw_asks_t asks;             /* what it asked lately; the restart it may be owed */
    gw_waiting_t waiting;       /* what its kernel cannot take yet */
    int in_flight;              /* its shell requests the kernel has yet to answer */
    size_t queued;              /* its unsent output, as last counted in the total */
    unsigned long long dropped;
};

/* True when c is a live client of session's kernel. */
static bool
s_of (const gw_ws_client_t *c, const gw_session_t *session)
{
    return !c->dead && strcmp (c->session_id, gw_session_id (session)) == 0
           && strcmp (c->tenant, gw_session_tenant (session)) == 0;
}

/* Counts the client's unsent output again in the owner's total. */
static void
s_account (gw_ws_client_t *c)
{
    size_t now = c->ws ? wslay_event_get_queued_msg_length (c->ws) : 0;
    c->owner->queued_total = c->owner->queued_total - c->queued + now;
    c->queued = now;
}

/* True while the client's unsent output is too much to add iopub to or to
 * read more requests from it (see the header). */
static bool
s_behind (const gw_ws_client_t *c)
{
    return c->queued > S_SOFT_QUEUE
           || (c->owner->queued_total > S_TOTAL_SOFT && c->queued > S_SHARE);
}

static bool
s_too_far (const gw_ws_client_t *c)
{
    return c->queued > S_HARD_QUEUE
           || (c->owner->queued_total > S_TOTAL_HARD && c->queued > S_SHARE);
}

/* True while the client is not read: it is behind, or what it sent waits
 * for its kernel. */
static bool
s_held (const gw_ws_client_t *c)
{
    return gw_waiting_full (&c->waiting) || s_behind (c);
}

/* ---- one client's socket ---- */

static ssize_t
s_recv_cb (wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags, void *user)
{
    (void) flags;
    gw_ws_client_t *c = user;
    if (s_held (c)) {
        /* libwslay may keep bytes of frames it read: s_tick reads on once
           the client is not held, whether or not its socket wakes */
        c->starved = true;
        wslay_event_set_error (ctx, WSLAY_ERR_WOULDBLOCK);
        return -1;
    }
    if (c->conn->extra && c->extra_at < c->conn->extra_len) {
        size_t n = c->conn->extra_len - c->extra_at;
        n = n < len ? n : len;
        memcpy (buf, c->conn->extra + c->extra_at, n);
        c->extra_at += n;
        return (ssize_t) n;
    }
    ssize_t n = recv (c->conn->fd, buf, len, 0);
    if (n > 0)
        return n;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        wslay_event_set_error (ctx, WSLAY_ERR_WOULDBLOCK);
    else
        wslay_event_set_error (ctx, WSLAY_ERR_CALLBACK_FAILURE);
    return -1;
}

static ssize_t
s_send_cb (wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags, void *user)
{
    gw_ws_client_t *c = user;
    ssize_t n = send (c->conn->fd, data, len,
                      MSG_NOSIGNAL | (flags & WSLAY_MSG_MORE ? MSG_MORE : 0));
    if (n >= 0)
        return n;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        wslay_event_set_error (ctx, WSLAY_ERR_WOULDBLOCK);
    else
        wslay_event_set_error (ctx, WSLAY_ERR_CALLBACK_FAILURE);
    return -1;
}

/* Queues a close frame; the client is freed once it is sent. */
static void
s_close (gw_ws_client_t *c, uint16_t code, const char *reason)
{
    if (c->close_by_ms || c->dead)
        return;
    jp_log_info ("websocket event=closing session=%s code=%u why=%s", c->session_id,
                 (unsigned) code, reason);
    c->close_by_ms = jp_time_now_ms () + S_CLOSE_GRACE_MS;
    wslay_event_queue_close (c->ws, code, (const uint8_t *) reason, strlen (reason));
    wslay_event_shutdown_read (c->ws);
    s_account (c);
}

static void
s_queue (gw_ws_client_t *c, const uint8_t *data, size_t len, bool binary)
{
    struct wslay_event_msg m = {binary ? WSLAY_BINARY_FRAME : WSLAY_TEXT_FRAME, data, len};
    if (wslay_event_queue_msg (c->ws, &m))
        c->dead = true;
    s_account (c);
}

static gw_session_t *
s_session (gw_ws_client_t *c)
{
    return gw_sessions_find (c->owner->server, c->tenant, c->session_id);
}

/* True for a shell request every kernel answers with a reply on shell
 * (counted in S_IN_FLIGHT); type ends with suffix ("_request" or "_reply"). */
static bool
s_answered (const char *type, const char *suffix)
{
    static const char *const names[] = {"execute", "inspect", "complete", "history",
                                        "is_complete", "comm_info", "kernel_info"};
    size_t n = strlen (type), k = strlen (suffix);
    if (n <= k || strcmp (type + n - k, suffix) != 0)
        return false;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen (names[i]) == n - k && strncmp (type, names[i], n - k) == 0)
            return true;
    return false;
}

/* The requests session's kernel has yet to answer, of every client. */
static int
s_kernel_in_flight (gw_jupyter_t *self, const gw_session_t *session)
{
    int n = 0;
    for (gw_ws_client_t *c = self->clients; c; c = c->next)
        if (s_of (c, session))
            n += c->in_flight;
    return n;
}

typedef struct {
    gw_ws_client_t *client;
    gw_session_t *session;
} s_sending_t;

/* gw_waiting_send_fn: one message of the client to its kernel. */
static int
s_send (void *arg, jp_channel_t channel, const jp_msg_t *msg)
{
    s_sending_t *to = arg;
    gw_ws_client_t *c = to->client;
    bool counted = channel == JP_CHANNEL_SHELL && s_answered (jp_msg_type (msg), "_request");
    if (counted && s_kernel_in_flight (c->owner, to->session) >= S_IN_FLIGHT)
        return -EAGAIN;
    int rc = gw_session_send (to->session, channel, msg);
    if (rc == 0 && counted)
        c->in_flight++;
    else if (rc && rc != -EAGAIN)
        jp_log_info ("websocket event=send-failed session=%s rc=%d", c->session_id, rc);
    return rc;
}

/* Sends what waited, as far as the kernel takes it. */
static void
s_flush_waiting (gw_ws_client_t *c, gw_session_t *session)
{
    s_sending_t to = {c, session};
    gw_waiting_flush (&c->waiting, s_send, &to);
}

/* A whole message from the client. */
static void
s_on_msg (wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *arg,
          void *user)
{
    (void) ctx;
    gw_ws_client_t *c = user;
    c->heard_ms = jp_time_now_ms ();
    c->pinged = false;
    if (arg->opcode != WSLAY_TEXT_FRAME && arg->opcode != WSLAY_BINARY_FRAME)
        return;     /* ping, pong and close are libwslay's */
    char err[200];
    jp_channel_t channel;
    jp_msg_t *msg = gw_jupyter_decode (arg->msg, arg->msg_length,
                                       arg->opcode == WSLAY_BINARY_FRAME, c->v1, &channel, err,
                                       sizeof err);
    if (!msg) {
        jp_log_info ("websocket event=bad-message session=%s why=%s", c->session_id, err);
        return;     /* as Jupyter Server: a bad message is logged and dropped */
    }
    if (channel == JP_CHANNEL_IOPUB || channel == JP_CHANNEL_HB) {
        jp_msg_destroy (&msg);
        return;
    }
    gw_session_t *session = s_session (c);
    if (!session) {
        jp_msg_destroy (&msg);
        s_close (c, 1011, "the kernel is gone");
        return;
    }
    gw_asks_sent (&c->asks, channel, jp_msg_id (msg));
    /* the kernel echoes this header as its answers' parent header: they
       find this client by the mark, however many it has asked for */
    json_object_set_new (msg->header, S_ROUTE_KEY, json_string (c->route));
    gw_session_touch (session);
    if (c->waiting.n)
        s_flush_waiting (c, session);
    s_sending_t to = {c, session};
    int rc = gw_waiting_has (&c->waiting, channel) ? -EAGAIN : s_send (&to, channel, msg);
    if (rc == -EAGAIN) {
        if (gw_waiting_push (&c->waiting, msg, channel, arg->msg_length))
            return;
        /* only a libwslay read that had frames of several messages gets
           here: the client is not read once the bound is reached */
        jp_log_info ("websocket event=dropped session=%s why=\"too many waiting\"",
                     c->session_id);
    }
    jp_msg_destroy (&msg);
}

static void
s_client_free (gw_ws_client_t *c)
{
    gw_waiting_clear (&c->waiting);
    if (c->owner)
        c->owner->queued_total -= c->queued;
    if (c->ws)
        wslay_event_context_free (c->ws);
    gw_upgraded_close (&c->conn);
    free (c);
}

/* Reads and writes what the socket allows. */
static void
s_client_io (gw_ws_client_t *c, bool readable, bool writable)
{
    if (c->dead)
        return;
    if ((readable || c->extra_at < c->conn->extra_len) && wslay_event_want_read (c->ws)
        && wslay_event_recv (c->ws))
        c->dead = true;
    if (!c->dead && (writable || wslay_event_want_write (c->ws)) && wslay_event_send (c->ws))
        c->dead = true;
    s_account (c);
    if (!wslay_event_want_read (c->ws) && !wslay_event_want_write (c->ws))
        c->dead = true;     /* closed both ways */
}

/* ---- the loop source ---- */

static int
s_poll_count (void *arg)
{
    return ((gw_jupyter_t *) arg)->n_clients;
}

static int
s_poll_items (void *arg, zmq_pollitem_t *items, int max)
{
    gw_jupyter_t *self = arg;
    int n = 0;
    for (gw_ws_client_t *c = self->clients; c && n < max && n < self->polled_cap; c = c->next) {
        if (c->dead)
            continue;
        short events = 0;
        if (wslay_event_want_read (c->ws) && !s_held (c))
            events |= ZMQ_POLLIN;
        if (wslay_event_want_write (c->ws))
            events |= ZMQ_POLLOUT;
        items[n] = (zmq_pollitem_t) {.socket = NULL, .fd = c->conn->fd, .events = events};
        self->polled[n++] = c;
    }
    return n;
}

static void
s_dispatch (void *arg, const zmq_pollitem_t *items, int n)
{
    gw_jupyter_t *self = arg;
    for (int i = 0; i < n; i++) {
        if (items[i].revents & (ZMQ_POLLERR))
            self->polled[i]->dead = true;
        else if (items[i].revents)
            s_client_io (self->polled[i], items[i].revents & ZMQ_POLLIN,
                         items[i].revents & ZMQ_POLLOUT);
    }
}

/* When a client's silence is next looked at: its ping, or its close. */
static int64_t
s_silence_due (const gw_jupyter_t *self, const gw_ws_client_t *c)
{
    return c->heard_ms + (c->pinged ? 2 : 1) * self->ping_ms;
}

/* Pings a client silent for ping_ms, closes one that did not answer. A
 * client held (not read while it is behind) cannot be heard: its silence
 * does not count. */
static void
s_check_silence (gw_jupyter_t *self, gw_ws_client_t *c, int64_t now)
{
    if (c->dead || c->close_by_ms)
        return;
    if (s_held (c)) {
        c->heard_ms = now;
        c->pinged = false;
        return;
    }
    if (now < s_silence_due (self, c))
        return;
    if (c->pinged) {
        s_close (c, 1001, "no answer to a ping");
        return;
    }
    struct wslay_event_msg ping = {WSLAY_PING, (const uint8_t *) "", 0};
    if (wslay_event_queue_msg (c->ws, &ping))
        c->dead = true;
    c->pinged = true;
}

static int64_t
s_deadline (void *arg, int64_t now)
{
    gw_jupyter_t *self = arg;
    int64_t d = -1;
    for (gw_ws_client_t *c = self->clients; c; c = c->next) {
        if (c->dead)
            return 0;   /* freed in this turn's tick */
        /* waiting messages retried every 100 ms (at once after an answer);
           a closing client's last moment */
        if (c->waiting.n && self->answered)
            return 0;
        int64_t t = c->waiting.n ? now + 100 : c->close_by_ms;
        if (t && (d < 0 || t < d))
            d = t;
        int64_t silent = c->close_by_ms ? -1 : s_silence_due (self, c);
        if (silent >= 0 && (d < 0 || silent < d))
            d = silent;
    }
    return d;
}

static void
s_tick (void *arg, int64_t now)
{
    gw_jupyter_t *self = arg;
    self->answered = false;
    for (gw_ws_client_t **link = &self->clients; *link;) {
        gw_ws_client_t *c = *link;
        if (!c->dead && c->waiting.n) {
            gw_session_t *session = s_session (c);
            if (session)
                s_flush_waiting (c, session);
        }
        s_check_silence (self, c, now);
        bool resume = c->starved && !s_held (c);
        if (resume)
            c->starved = false;
        if (!c->dead && (resume || wslay_event_want_write (c->ws)))
            s_client_io (c, resume, true);
        if (c->dead || (c->close_by_ms && now >= c->close_by_ms)) {
            *link = c->next;
            self->n_clients--;
            jp_log_info ("websocket event=closed session=%s dropped=%llu", c->session_id,
                         c->dropped);
            gw_session_t *session = s_session (c);
            if (session)
                gw_session_touch (session);     /* idle from the moment it left */
            s_client_free (c);
            continue;
        }
        link = &c->next;
    }
}

const gw_loop_source_t gw_jupyter_clients_source = {
    .poll_count = s_poll_count,
    .poll_items = s_poll_items,
    .dispatch = s_dispatch,
    .deadline = s_deadline,
    .tick = s_tick,
};

/* ---- kernel messages to clients ---- */

/* The client a reply or stdin message of the kernel is for: the one whose
 * mark its parent header carries (S_ROUTE_KEY), or, for a kernel that
 * does not echo a request's whole header, one that sent a request of that
 * msg_id lately (forgotten by its reply). NULL when none of session's. */
static gw_ws_client_t *
s_asker (gw_jupyter_t *self, gw_session_t *session, const jp_msg_t *msg, const char *route,
         bool reply)
{
    const char *parent = jp_msg_parent_id (msg);
    for (gw_ws_client_t *c = self->clients; c; c = c->next) {
        if (!s_of (c, session))
            continue;
        bool forget = reply && strstr (jp_msg_type (msg), "_reply");
        if (route ? strcmp (route, c->route) == 0 : gw_asks_asked (&c->asks, parent, forget))
            return c;
    }
    return NULL;
}

/* A reply to a counted request came: one request fewer in flight, the
 * asker's, or, when the reply names no client we know, some client's of
 * that kernel (kernels answer in turn; counting one too few only lets
 * one more request through). */
static void
s_answer_counted (gw_jupyter_t *self, gw_session_t *session, gw_ws_client_t *asker)
{
    for (gw_ws_client_t *c = asker ? asker : self->clients; c; c = asker ? NULL : c->next)
        if (c->in_flight > 0 && s_of (c, session)) {
            c->in_flight--;
            self->answered = true;  /* what waited for it may go (s_tick) */
            return;
        }
}

/* Encodes msg once per mode (without our mark in its parent header) and
 * queues it to the clients of session that should see it: every one for
 * iopub, else the one that asked. */
void
gw_jupyter_clients_kernel_msg (void *arg, gw_session_t *session, jp_channel_t channel,
                               const jp_msg_t *msg)
{
    gw_jupyter_t *self = arg;
    const char *route = json_string_value (json_object_get (msg->parent_header, S_ROUTE_KEY));
    jp_msg_t unmarked = *msg;
    if (route && (unmarked.parent_header = json_copy (msg->parent_header)))
        json_object_del (unmarked.parent_header, S_ROUTE_KEY);
    else
        unmarked.parent_header = json_incref (msg->parent_header);
    uint8_t *frame[2] = {NULL, NULL};
    size_t len[2] = {0, 0};
    bool binary[2] = {false, false};
    gw_ws_client_t *only = NULL;
    if (channel != JP_CHANNEL_IOPUB) {
        only = s_asker (self, session, msg, route, channel != JP_CHANNEL_STDIN);
        if (!only && channel == JP_CHANNEL_STDIN)
            jp_log_info ("websocket event=unrouted session=%s type=%s", gw_session_id (session),
                         jp_msg_type (msg));
        if (channel == JP_CHANNEL_SHELL && s_answered (jp_msg_type (msg), "_reply"))
            s_answer_counted (self, session, only);
    }
    /* iopub goes to every client; anything else to the one that asked */
    gw_ws_client_t *first = channel == JP_CHANNEL_IOPUB ? self->clients : only;
    for (gw_ws_client_t *c = first; c; c = only ? NULL : c->next) {
        if (!s_of (c, session))
            continue;
        if (s_too_far (c)) {
            s_close (c, 1008, "too far behind the kernel's output");
            continue;
        }
        if (!only && s_behind (c)) {
            if (c->dropped++ == 0)
                jp_log_info ("websocket event=slow-client session=%s", c->session_id);
            continue;   /* iopub it misses; what it asked for it gets */
        }
        int mode = c->v1 ? 1 : 0;
        if (!frame[mode] && !(frame[mode] = gw_jupyter_encode (&unmarked, channel, c->v1,
                                                               &len[mode], &binary[mode])))
            break;
        s_queue (c, frame[mode], len[mode], binary[mode]);
    }
    json_decref (unmarked.parent_header);
    free (frame[0]);
    free (frame[1]);
    for (gw_ws_client_t *c = first; c; c = only ? NULL : c->next)
        if (s_of (c, session) && gw_asks_restart_due (&c->asks, channel, msg)) {
            gw_jupyter_clients_kernel_state (self, session, "restarting");
            break;
        }
}

/* Tells the clients the kernel restarts or died, as an iopub status. */
void
gw_jupyter_clients_kernel_state (void *arg, gw_session_t *session, const char *state)
{
    gw_jupyter_t *self = arg;
    /* "restarting" or "dead": what the kernel had to answer, it never will */
    for (gw_ws_client_t *c = self->clients; c; c = c->next)
        if (s_of (c, session))
            c->in_flight = 0;
    self->answered = true;
    jp_msg_t *msg = jp_msg_new ("status", "", "codebox");
    if (!msg)
        return;
    jp_msg_set_content (msg, json_pack ("{s:s}", "execution_state", state));
    gw_jupyter_clients_kernel_msg (arg, session, JP_CHANNEL_IOPUB, msg);
    jp_msg_destroy (&msg);
}

int
gw_jupyter_connections (gw_jupyter_t *self, const gw_session_t *session)
{
    int n = 0;
    for (gw_ws_client_t *c = self->clients; c; c = c->next)
        n += s_of (c, session) && !c->close_by_ms;
    return n;
}

/* ---- the clients as a whole ---- */

void
gw_jupyter_clients_end (gw_jupyter_t *self, const gw_session_t *session)
{
    for (gw_ws_client_t *c = self->clients; c; c = c->next)
        if (s_of (c, session))
            s_close (c, 1001, "the kernel was shut down");
}

int
gw_jupyter_clients_of_tenant (gw_jupyter_t *self, const char *tenant)
{
    int mine = 0;
    for (gw_ws_client_t *c = self->clients; c; c = c->next)
        mine += strcmp (c->tenant, tenant) == 0;
    return mine;
}

void
gw_jupyter_clients_attach (gw_jupyter_t *self, gw_upgraded_t *conn, const char *session_id,
                           const char *tenant, bool v1, bool woke)
{
    gw_ws_client_t *c = calloc (1, sizeof *c);
    static const struct wslay_event_callbacks callbacks = {
        .recv_callback = s_recv_cb, .send_callback = s_send_cb, .on_msg_recv_callback = s_on_msg,
    };
    if (!c || self->closed || wslay_event_context_server_init (&c->ws, &callbacks, c)) {
        gw_upgraded_close (&conn);
        if (c)
            s_client_free (c);
        return;
    }
    c->owner = self;
    c->heard_ms = jp_time_now_ms ();
    snprintf (c->route, sizeof c->route, "ws-%llu", ++self->clients_made);
    c->conn = conn;
    c->v1 = v1;
    c->asks.owes_restart = woke;
    snprintf (c->session_id, sizeof c->session_id, "%s", session_id);
    snprintf (c->tenant, sizeof c->tenant, "%s", tenant);
    fcntl (c->conn->fd, F_SETFL, fcntl (c->conn->fd, F_GETFL) | O_NONBLOCK);
    int one = 1;
    setsockopt (c->conn->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    wslay_event_config_set_max_recv_msg_length (c->ws, S_MAX_RECV);
    if (self->n_clients >= self->polled_cap) {
        int cap = self->polled_cap ? self->polled_cap * 2 : 16;
        gw_ws_client_t **grown = realloc (self->polled, (size_t) cap * sizeof *grown);
        if (!grown) {
            s_client_free (c);
            return;
        }
        self->polled = grown;
        self->polled_cap = cap;
    }
    c->next = self->clients;
    self->clients = c;
    self->n_clients++;
    gw_session_t *session = s_session (c);
    if (!session)
        s_close (c, 1011, "the kernel is gone");
    else
        gw_session_touch (session);
    jp_log_info ("websocket event=open session=%s protocol=%s", c->session_id,
                 c->v1 ? GW_JUPYTER_V1_PROTOCOL : "json");
    s_client_io (c, true, true);
}

void
gw_jupyter_clients_close_all (gw_jupyter_t *self)
{
    while (self->clients) {
        gw_ws_client_t *c = self->clients;
        self->clients = c->next;
        s_close (c, 1001, "the server is shutting down");
        s_client_io (c, false, true);
        s_client_free (c);
    }
    self->n_clients = 0;
}

void
gw_jupyter_clients_free_all (gw_jupyter_t *self)
{
    while (self->clients) {
        gw_ws_client_t *c = self->clients;
        self->clients = c->next;
        s_client_free (c);
    }
}
