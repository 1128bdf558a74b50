/* gw_cmd_kernel_relay: `codebox kernel-relay FRONT_CONN KERNEL_CONN
 * [--net SOCKET [--net-private]]`, the bounded hop between a sandboxed
 * kernel and the gateway (ks_kernel starts it; see docs/SECURITY.md). It
 * runs outside the sandbox, as the kernel's user, with an address-space
 * limit and in the kernel's memory cgroup: what a hostile kernel makes it
 * hold is charged to that kernel. It runs in a network namespace of its
 * own, except with --net (CODEBOX_NETWORK=on), where it forks the kernel's
 * network proxy on SOCKET first (gw_cmd_kernel_net.c), which needs the
 * host's network.
 *
 * It listens on the gateway's side (FRONT_CONN: Unix sockets in a folder
 * the kernel cannot reach) and, for each connection the gateway makes
 * there, makes one to the kernel's socket of that channel (KERNEL_CONN)
 * and passes the ZMTP byte streams between the two: the gateway's socket
 * talks to the kernel's, as without a sandbox (routing ids, subscriptions
 * and signatures pass unchanged), with one thread and no copy of libzmq
 * in between (each message used to cross the relay's libzmq I/O thread
 * and main thread both ways, about 0.35 ms a cell).
 *  - From the kernel, the stream is read by a jp_zmtp_filter: a message
 *    passes once it is whole; one of more than RELAY_MESSAGE_MAX bytes or
 *    RELAY_PARTS_MAX frames is skipped as it comes, never held, and on
 *    iopub a signed stderr note with its parent takes its place, so its
 *    execution says why. A stream that breaks ZMTP (another mechanism,
 *    bad flags) ends the relay, and the gateway then stops the kernel.
 *    While more than UP_READ_BELOW bytes wait for the gateway, the relay
 *    stops reading the kernel: the backlog stays in the kernel's memory,
 *    where its PUB socket drops it.
 *  - From the gateway (trusted), bytes pass as they come, CHUNK at a time.
 *  - The kernel sends an input_request to the routing id of the shell
 *    request's sender on its stdin socket, and drops it when no peer of
 *    that id is connected there yet: a shell connection is passed on only
 *    once the kernel's stdin socket has greeted the gateway's (or after
 *    RELAY_STDIN_WAIT_MS), so a first cell calling input() cannot hang.
 *  - A kernel not listening yet (it starts) is tried every RETRY_MS; a
 *    connection with the kernel that ends ends the relay.
 *
 * Threads: one; the main thread polls every socket. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>

#include "gw_cli.h"
#include "gw_kernel_child.h"
#include "gw_cmd_kernel_net.h"
#include "jp_connection.h"
#include "jp_message.h"
#include "jp_random.h"
#include "jp_time.h"
#include "jp_zmtp_filter.h"

#define RELAY_MESSAGE_MAX (64u << 20)   /* bytes of one message, all frames (an
                                           execution's whole display budget) */
#define RELAY_PARTS_MAX 256             /* frames of one message */
#define PAIRS_MAX 8                     /* the gateway's connections per channel */
#define CHUNK (64u << 10)               /* bytes read at once */
#define UP_READ_BELOW (256u << 10)      /* the kernel is read while fewer bytes than
                                           this wait for the gateway */
#define RETRY_MS 20                     /* between tries to reach a starting kernel */
#define RELAY_STDIN_WAIT_MS 5000        /* how long shell waits for stdin (above) */

typedef struct s_relay s_relay_t;

/* One connection of the gateway and the relay's connection to the kernel
 * for it. */
typedef struct {
    s_relay_t *relay;
    int ch;
    int front, back;            /* -1 when not open */
    bool up;                    /* back connected (back >= 0 and not up: a
                                   connect under way) */
    int64_t retry_at_ms;        /* when to try the kernel again */
    uint8_t *down;              /* from the gateway, for the kernel: CHUNK
                                   bytes, malloc'd (untouched until used) */
    size_t down_len, down_sent;
    jp_zmtp_filter_t filter;    /* from the kernel, for the gateway */
} s_pair_t;

struct s_relay {
    jp_connection_t front_conn;
    int listener[JP_CHANNEL_COUNT];
    char front_path[JP_CHANNEL_COUNT][sizeof ((struct sockaddr_un *) 0)->sun_path];
    struct sockaddr_storage kernel_addr[JP_CHANNEL_COUNT];
    socklen_t kernel_len[JP_CHANNEL_COUNT];
    s_pair_t *pairs[JP_CHANNEL_COUNT][PAIRS_MAX];
    char session[JP_UUID_LEN + 1];
    bool stdin_up;
    int64_t started_ms;
    char broke[256];            /* why the relay ends, once it must */
};

static uint8_t s_chunk[CHUNK];

static void
s_break (s_relay_t *self, int ch, const char *why)
{
    if (!self->broke[0])
        snprintf (self->broke, sizeof self->broke, "the kernel's %s connection broke (%s)",
                  jp_channel_name ((jp_channel_t) ch), why);
}

/* A message of the kernel over the bounds was skipped: said on stderr (the
 * relay's log) and, on iopub, to the execution it belongs to. */
static void
s_dropped_cb (void *arg, uint64_t bytes, uint64_t frames, const uint8_t *parent,
              size_t parent_len)
{
    s_pair_t *pair = arg;
    fprintf (stderr, "kernel-relay: dropped a message of %llu bytes in %llu frames on %s\n",
             (unsigned long long) bytes, (unsigned long long) frames,
             jp_channel_name ((jp_channel_t) pair->ch));
    json_t *parent_header = parent ? json_loadb ((const char *) parent, parent_len, 0, NULL)
                                   : NULL;
    if (pair->ch != JP_CHANNEL_IOPUB || !json_is_object (parent_header)) {
        json_decref (parent_header);
        return;
    }
    jp_msg_t *note = jp_msg_new ("stream", pair->relay->session, "codebox");
    if (!note) {
        json_decref (parent_header);
        return;
    }
    json_decref (note->parent_header);
    note->parent_header = parent_header;
    char text[256];
    snprintf (text, sizeof text,
              "[codebox: the kernel sent a message of %.1f MiB in %llu frames, over the bound "
              "of %u MiB and %d frames per message; it was dropped]\n",
              (double) bytes / (1 << 20), (unsigned long long) frames, RELAY_MESSAGE_MAX >> 20,
              RELAY_PARTS_MAX);
    jp_msg_set_content (note, json_pack ("{s:s, s:s}", "name", "stderr", "text", text));
    jp_frame_t *out = NULL;
    size_t n = 0;
    const char *key = pair->relay->front_conn.key;
    if (jp_msg_encode (note, (const uint8_t *) key, strlen (key), &out, &n) == 0)
        jp_zmtp_filter_put_message (&pair->filter, out, n);
    jp_frames_free (out, n);
    jp_msg_destroy (&note);
}

static void
s_pair_close (s_pair_t **pair_p)
{
    s_pair_t *pair = *pair_p;
    if (!pair)
        return;
    if (pair->front >= 0)
        close (pair->front);
    if (pair->back >= 0)
        close (pair->back);
    jp_zmtp_filter_release (&pair->filter);
    free (pair->down);
    free (pair);
    *pair_p = NULL;
}

/* The kernel is not listening yet (it starts): try again in RETRY_MS. */
static void
s_retry_later (s_pair_t *pair)
{
    close (pair->back);
    pair->back = -1;
    pair->retry_at_ms = jp_time_now_ms () + RETRY_MS;
}

/* Starts the connection to the kernel's socket of the pair's channel. */
static void
s_connect (s_pair_t *pair)
{
    s_relay_t *self = pair->relay;
    struct sockaddr_storage *addr = &self->kernel_addr[pair->ch];
    pair->back = socket (addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (pair->back < 0) {
        s_break (self, pair->ch, strerror (errno));
        return;
    }
    if (addr->ss_family != AF_UNIX) {
        int one = 1;
        setsockopt (pair->back, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    if (connect (pair->back, (struct sockaddr *) addr, self->kernel_len[pair->ch]) == 0)
        pair->up = true;
    else if (errno != EINPROGRESS)
        s_retry_later (pair);   /* ENOENT, ECONNREFUSED, EAGAIN */
}

/* The connect under way ended. */
static void
s_connected (s_pair_t *pair)
{
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt (pair->back, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0)
        pair->up = true;
    else
        s_retry_later (pair);
}

/* Writes what waits for the gateway. False when the gateway's connection
 * is gone (the pair is to be closed). */
static bool
s_to_gateway (s_pair_t *pair)
{
    jp_zmtp_filter_t *f = &pair->filter;
    while (jp_zmtp_filter_pending (f)) {
        ssize_t n = send (pair->front, f->out.data + f->out.sent, jp_zmtp_filter_pending (f),
                          MSG_NOSIGNAL);
        if (n < 0)
            return errno == EAGAIN || errno == EINTR;
        jp_zmtp_filter_wrote (f, (size_t) n);
    }
    return true;
}

/* Writes what waits for the kernel. */
static void
s_to_kernel (s_pair_t *pair)
{
    while (pair->down_sent < pair->down_len) {
        ssize_t n = send (pair->back, pair->down + pair->down_sent,
                          pair->down_len - pair->down_sent, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno != EAGAIN && errno != EINTR)
                s_break (pair->relay, pair->ch, strerror (errno));
            return;
        }
        pair->down_sent += (size_t) n;
    }
    pair->down_len = pair->down_sent = 0;
}

/* Reads the kernel once and passes on what may pass. False when the
 * gateway's connection is gone. */
static bool
s_from_kernel (s_pair_t *pair)
{
    ssize_t n = recv (pair->back, s_chunk, sizeof s_chunk, 0);
    if (n <= 0) {
        if (n == 0 || (errno != EAGAIN && errno != EINTR))
            s_break (pair->relay, pair->ch, n == 0 ? "it ended" : strerror (errno));
        return true;
    }
    if (jp_zmtp_filter_feed (&pair->filter, s_chunk, (size_t) n) != 0) {
        s_break (pair->relay, pair->ch, pair->filter.error);
        return true;
    }
    if (pair->ch == JP_CHANNEL_STDIN && pair->filter.commands > 0)
        pair->relay->stdin_up = true;
    return s_to_gateway (pair);
}

/* Reads the gateway once and passes it on. False when the gateway's
 * connection is gone. */
static bool
s_from_gateway (s_pair_t *pair)
{
    ssize_t n = recv (pair->front, pair->down, CHUNK, 0);
    if (n <= 0)
        return n < 0 && (errno == EAGAIN || errno == EINTR);
    pair->down_len = (size_t) n;
    pair->down_sent = 0;
    s_to_kernel (pair);
    return true;
}

/* Takes a new connection of the gateway on channel ch. */
static void
s_accept (s_relay_t *self, int ch)
{
    int fd = accept4 (self->listener[ch], NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
        return;
    int slot = 0;
    while (slot < PAIRS_MAX && self->pairs[ch][slot])
        slot++;
    s_pair_t *pair = slot < PAIRS_MAX ? calloc (1, sizeof *pair) : NULL;
    uint8_t *down = pair ? malloc (CHUNK) : NULL;   /* not calloc: what a relay
                                                       never reads costs no page */
    if (!down) {
        free (pair);
        close (fd);
        return;
    }
    *pair = (s_pair_t) {.relay = self, .ch = ch, .front = fd, .back = -1, .down = down};
    jp_zmtp_filter_init (&pair->filter, RELAY_MESSAGE_MAX, RELAY_PARTS_MAX, s_dropped_cb, pair);
    self->pairs[ch][slot] = pair;
}

/* The kernel's addresses, and the gateway's side bound. Returns 0 or -1. */
static int
s_listen (s_relay_t *self, const jp_connection_t *kernel_conn)
{
    for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++)
        if (jp_connection_address (kernel_conn, (jp_channel_t) ch, &self->kernel_addr[ch],
                                   &self->kernel_len[ch]) != 0) {
            char endpoint[JP_IPC_PATH_MAX + 32];
            jp_connection_endpoint (kernel_conn, (jp_channel_t) ch, endpoint, sizeof endpoint);
            fprintf (stderr, "kernel-relay: cannot reach %s\n", endpoint);
            return -1;
        }
    return gw_kernel_listen (&self->front_conn, "kernel-relay", self->listener, self->front_path);
}

/* Serves one pair after a poll (pf: its front's and back's pollfds).
 * Returns false when the pair is to go. */
static bool
s_serve (s_pair_t *pair, const struct pollfd *pf, bool shell_open, int64_t now)
{
    short front = pf[0].revents, back = pf[1].revents;
    if (pair->back < 0) {
        if (now >= pair->retry_at_ms && (pair->ch != JP_CHANNEL_SHELL || shell_open))
            s_connect (pair);
    } else if (!pair->up && back)
        s_connected (pair);
    else if (pair->up && (back & (POLLIN | POLLHUP | POLLERR))) {
        if (!s_from_kernel (pair))
            return false;
    }
    if (pair->up && (back & POLLOUT))
        s_to_kernel (pair);
    if ((front & POLLOUT) && !s_to_gateway (pair))
        return false;
    if (front & (POLLIN | POLLHUP | POLLERR)) {
        /* gone before the kernel was reached, or while what it sent last
           waits for a kernel that does not read (down is not overwritten;
           POLLIN is asked only when it is empty) */
        if (!pair->up || pair->down_sent < pair->down_len)
            return !(front & (POLLHUP | POLLERR));
        if (!s_from_gateway (pair))
            return false;
    }
    return true;
}

/* Polls and passes bytes until a connection with the kernel breaks. */
static void
s_run (s_relay_t *self)
{
    self->started_ms = jp_time_now_ms ();
    struct pollfd pfds[JP_CHANNEL_COUNT * (1 + 2 * PAIRS_MAX)];
    s_pair_t *polled[JP_CHANNEL_COUNT * PAIRS_MAX];
    int at[JP_CHANNEL_COUNT * PAIRS_MAX], listened[JP_CHANNEL_COUNT];
    while (!self->broke[0]) {
        int64_t now = jp_time_now_ms ();
        bool shell_open = self->stdin_up || now - self->started_ms >= RELAY_STDIN_WAIT_MS;
        int n = 0, np = 0;
        long timeout = -1;
        for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++) {
            listened[ch] = n;
            pfds[n++] = (struct pollfd) {.fd = self->listener[ch], .events = POLLIN};
            for (int i = 0; i < PAIRS_MAX; i++) {
                s_pair_t *pair = self->pairs[ch][i];
                if (!pair)
                    continue;
                if (pair->back < 0) {
                    /* waits to try the kernel (or for stdin) */
                    long wait = pair->ch == JP_CHANNEL_SHELL && !shell_open
                                    ? RETRY_MS : (long) (pair->retry_at_ms - now);
                    wait = wait < 0 ? 0 : wait;
                    timeout = timeout < 0 || wait < timeout ? wait : timeout;
                }
                bool out_waits = jp_zmtp_filter_pending (&pair->filter) > 0;
                bool down_waits = pair->down_sent < pair->down_len;
                polled[np] = pair;
                at[np++] = n;
                pfds[n++] = (struct pollfd) {
                    .fd = pair->front,
                    .events = (short) ((pair->up && !down_waits ? POLLIN : 0)
                                       | (out_waits ? POLLOUT : 0))};
                short back = 0;
                if (!pair->up)
                    back = POLLOUT;     /* the connect's end (ignored while back < 0) */
                else
                    back = (short) ((jp_zmtp_filter_pending (&pair->filter) < UP_READ_BELOW
                                     ? POLLIN : 0) | (down_waits ? POLLOUT : 0));
                pfds[n++] = (struct pollfd) {.fd = pair->back, .events = back};
            }
        }
        if (poll (pfds, (nfds_t) n, (int) timeout) < 0 && errno != EINTR) {
            s_break (self, JP_CHANNEL_SHELL, strerror (errno));
            return;
        }
        now = jp_time_now_ms ();
        shell_open = self->stdin_up || now - self->started_ms >= RELAY_STDIN_WAIT_MS;
        for (int k = 0; k < np && !self->broke[0]; k++) {
            s_pair_t *pair = polled[k];
            if (s_serve (pair, &pfds[at[k]], shell_open, now))
                continue;
            s_pair_t **slots = self->pairs[pair->ch];
            for (int i = 0; i < PAIRS_MAX; i++)
                if (slots[i] == pair) {
                    s_pair_close (&slots[i]);
                    break;
                }
        }
        for (int ch = 0; ch < JP_CHANNEL_COUNT && !self->broke[0]; ch++)
            if (pfds[listened[ch]].revents & POLLIN)
                s_accept (self, ch);
    }
}

int
gw_cmd_kernel_relay (int argc, char **argv)
{
    /* --net SOCKET [--net-private]: also the kernel's network proxy */
    const char *net = NULL;
    bool net_private = false;
    if (argc >= 5 && strcmp (argv[3], "--net") == 0) {
        net = argv[4];
        net_private = argc == 6 && strcmp (argv[5], "--net-private") == 0;
    }
    if (argc != 3 && !(net && argc == (net_private ? 6 : 5))) {
        fprintf (stderr, "usage: codebox kernel-relay FRONT_CONN KERNEL_CONN "
                 "[--net SOCKET [--net-private]]\n");
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
    signal (SIGPIPE, SIG_IGN);
    if (net) {
        /* the proxy: a process of its own, on the host's network (the
           relay keeps it then: see gw_cmd_kernel_net.c), gone with us */
        signal (SIGCHLD, SIG_IGN);      /* the relay never waits for it */
        pid_t pid = fork ();
        if (pid == 0) {
            signal (SIGCHLD, SIG_DFL);  /* it waits for its own children */
            _exit (gw_kernel_net_serve (net, net_private) < 0 ? 1 : 0);
        }
        if (pid < 0)
            fprintf (stderr, "kernel-relay: cannot start the network proxy: %s\n",
                     strerror (errno));
    }
    /* not kept on one CPU: one thread has no hand-over to keep local, and
       pinned it waited for a busy CPU (about 0.19 ms a cell,
       docs/PERFORMANCE.md) */
    for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++)
        self->listener[ch] = -1;
    if (s_listen (self, &kernel_conn) == 0) {
        s_run (self);
        fprintf (stderr, "kernel-relay: %s\n", self->broke);
    }
    for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++) {
        for (int i = 0; i < PAIRS_MAX; i++)
            s_pair_close (&self->pairs[ch][i]);
        if (self->listener[ch] >= 0) {
            close (self->listener[ch]);
            unlink (self->front_path[ch]);
        }
    }
    free (self);
    return GW_EXIT_KERNEL;
}
