/* czmq_compare: `make bench`'s measurements of our hand-written pieces
 * against CZMQ's, one table, same process, same run (issue: CZMQ where it
 * replaces code of our own). Each row is the p50 of many rounds; the rows
 * of one comparison are interleaved round by round so that the machine's
 * state falls on both alike.
 *
 *  handoff   a thread hands one pointer to a sleeping loop: gw_mailbox
 *            (mutex FIFO + eventfd) vs an inproc PAIR pipe as zactor uses,
 *            from post to the loop running it
 *  reactor   one ping through a loop that also watches K idle kernels (five
 *            sockets and an fd each): gw_loop vs zloop vs zpoller
 *  base64    1 MiB each way: gw_base64 vs zarmour, and whether each refuses
 *            a character outside the alphabet
 *  uuid      one id: jp_random_uuid vs zuuid
 *  frames    an execute_request's frames through an inproc pair: raw
 *            zmq_msg_t (what jp_channels used before it spoke ZMTP itself)
 *            vs zmsg/zframe
 *
 * Prints one JSON line per row. Threads: main, and one helper thread per
 * handoff or reactor row. */
#include <czmq.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "gw_base64.h"
#include "gw_loop.h"
#include "gw_mailbox.h"
#include "jp_poll.h"
#include "jp_message.h"
#include "jp_random.h"

#define ROUNDS 2000

static int64_t
s_ns (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int
s_cmp (const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return (x > y) - (x < y);
}

static void
s_row (const char *group, const char *what, int64_t *ns, int n, const char *note)
{
    qsort (ns, (size_t) n, sizeof *ns, s_cmp);
    printf ("{\"group\":\"%s\",\"what\":\"%s\",\"p50_us\":%.2f,\"p99_us\":%.2f,\"n\":%d%s%s%s}\n",
            group, what, ns[n / 2] / 1e3, ns[n * 99 / 100] / 1e3, n,
            note ? ",\"note\":\"" : "", note ? note : "", note ? "\"" : "");
    fflush (stdout);
}

/* ---- handoff ------------------------------------------------------------- */

typedef struct {
    gw_loop_item_t item;
    int64_t posted;
} s_stamp_t;

static int64_t s_seen;
static atomic_int s_done;

static void
s_stamp_run (gw_loop_item_t *item, bool stopping)
{
    (void) stopping;
    s_stamp_t *st = item->arg;
    s_seen = s_ns () - st->posted;
    atomic_store (&s_done, 1);
}

typedef struct {
    gw_loop_t *loop;
    zsock_t *push;
    s_stamp_t stamp;
    int64_t *out;
    int n;
} s_handoff_t;

static void
s_wait_done (void)
{
    while (!atomic_load (&s_done))
        usleep (50);
    atomic_store (&s_done, 0);
}

static void *
s_mailbox_poster (void *arg)
{
    s_handoff_t *h = arg;
    for (int i = 0; i < h->n; i++) {
        usleep (200);           /* the loop is asleep when the item comes */
        h->stamp.item = (gw_loop_item_t) {.run = s_stamp_run, .arg = &h->stamp};
        h->stamp.posted = s_ns ();
        gw_loop_post (h->loop, &h->stamp.item);
        s_wait_done ();
        h->out[i] = s_seen;
    }
    gw_loop_stop (h->loop);
    return NULL;
}

static void *
s_pipe_poster (void *arg)
{
    s_handoff_t *h = arg;
    for (int i = 0; i < h->n; i++) {
        usleep (200);
        h->stamp.posted = s_ns ();
        zsock_send (h->push, "p", &h->stamp);
        s_wait_done ();
        h->out[i] = s_seen;
    }
    zsock_send (h->push, "p", NULL);
    return NULL;
}

static void
s_handoff (void)
{
    int n = ROUNDS / 4;
    int64_t *a = calloc ((size_t) n, sizeof *a), *b = calloc ((size_t) n, sizeof *b);
    char err[128];
    /* ours: the real gw_loop and its mailbox */
    s_handoff_t h = {.loop = gw_loop_new (err, sizeof err), .out = a, .n = n};
    pthread_t t;
    pthread_create (&t, NULL, s_mailbox_poster, &h);
    gw_loop_run (h.loop);
    pthread_join (t, NULL);
    gw_loop_destroy (&h.loop);
    /* CZMQ's: the pipe a zactor talks over, polled as a loop polls it */
    zsock_t *pull = zsock_new_pair ("@inproc://handoff");
    s_handoff_t p = {.push = zsock_new_pair (">inproc://handoff"), .out = b, .n = n};
    pthread_create (&t, NULL, s_pipe_poster, &p);
    zpoller_t *poller = zpoller_new (pull, NULL);
    for (;;) {
        if (!zpoller_wait (poller, -1))
            break;
        s_stamp_t *st;
        zsock_recv (pull, "p", &st);
        if (!st)
            break;
        s_seen = s_ns () - st->posted;
        atomic_store (&s_done, 1);
    }
    pthread_join (t, NULL);
    zpoller_destroy (&poller);
    zsock_destroy (&p.push);
    zsock_destroy (&pull);
    s_row ("handoff", "gw_mailbox (mutex FIFO + eventfd)", a, n, NULL);
    s_row ("handoff", "inproc PAIR pipe (zactor's)", b, n, NULL);
    free (a);
    free (b);
}

/* ---- reactor ------------------------------------------------------------- */

#define SOCKS_PER_KERNEL 5

typedef struct {
    int kernels;
    void *idle[64 * SOCKS_PER_KERNEL]; /* bound, never written to */
    void *idle_peer[64 * SOCKS_PER_KERNEL];
    int fds[64];                /* stand-ins for each kernel's pidfd */
    void *active, *active_peer;
} s_field_t;

static void
s_field_open (s_field_t *f, void *ctx, int kernels)
{
    memset (f, 0, sizeof *f);
    f->kernels = kernels;
    for (int i = 0; i < kernels * SOCKS_PER_KERNEL; i++) {
        char ep[64];
        snprintf (ep, sizeof ep, "inproc://idle-%d-%d", kernels, i);
        f->idle[i] = zmq_socket (ctx, ZMQ_PAIR);
        zmq_bind (f->idle[i], ep);
        f->idle_peer[i] = zmq_socket (ctx, ZMQ_PAIR);
        zmq_connect (f->idle_peer[i], ep);
    }
    for (int i = 0; i < kernels; i++)
        f->fds[i] = eventfd (0, EFD_NONBLOCK);
    char ep[64];
    snprintf (ep, sizeof ep, "inproc://active-%d", kernels);
    f->active = zmq_socket (ctx, ZMQ_PAIR);
    zmq_bind (f->active, ep);
    f->active_peer = zmq_socket (ctx, ZMQ_PAIR);
    zmq_connect (f->active_peer, ep);
}

static void
s_field_close (s_field_t *f)
{
    for (int i = 0; i < f->kernels * SOCKS_PER_KERNEL; i++) {
        zmq_close (f->idle[i]);
        zmq_close (f->idle_peer[i]);
    }
    for (int i = 0; i < f->kernels; i++)
        close (f->fds[i]);
    zmq_close (f->active);
    zmq_close (f->active_peer);
}

/* The peer: pings the loop's active socket, times the pong. */
typedef struct {
    s_field_t *field;
    int64_t *out;
    int n;
} s_pinger_t;

static void *
s_pinger (void *arg)
{
    s_pinger_t *p = arg;
    char buf[8];
    for (int i = 0; i < p->n; i++) {
        usleep (100);
        int64_t t0 = s_ns ();
        zmq_send (p->field->active_peer, "ping", 4, 0);
        zmq_recv (p->field->active_peer, buf, sizeof buf, 0);
        p->out[i] = s_ns () - t0;
    }
    zmq_send (p->field->active_peer, "stop", 4, 0);
    return NULL;
}

/* ours: a gw_loop source with every socket and fd, as gw_server's is */
static int
s_src_count (void *arg)
{
    s_field_t *f = arg;
    return f->kernels * (SOCKS_PER_KERNEL + 1) + 1;
}

static int
s_src_items (void *arg, zmq_pollitem_t *items, int max)
{
    s_field_t *f = arg;
    int n = 0;
    for (int k = 0; k < f->kernels && n < max; k++) {
        for (int s = 0; s < SOCKS_PER_KERNEL; s++)
            items[n++] = (zmq_pollitem_t) {.socket = f->idle[k * SOCKS_PER_KERNEL + s],
                                           .events = ZMQ_POLLIN};
        items[n++] = (zmq_pollitem_t) {.fd = f->fds[k], .events = ZMQ_POLLIN};
    }
    /* the socket was read and written last turn, as a kernel's shell is:
       say so, as ks_kernel does (gw_loop then asks its ZMQ_EVENTS) */
    items[n++] = (zmq_pollitem_t) {.socket = f->active, .events = ZMQ_POLLIN | JP_POLL_USED};
    return n;
}

static gw_loop_t *s_reactor_loop;

static void
s_src_dispatch (void *arg, const zmq_pollitem_t *items, int n)
{
    s_field_t *f = arg;
    if (!(items[n - 1].revents & ZMQ_POLLIN))
        return;
    char buf[8];
    while (zmq_recv (f->active, buf, sizeof buf, ZMQ_DONTWAIT) == 4) {
        if (memcmp (buf, "stop", 4) == 0) {
            gw_loop_stop (s_reactor_loop);
            return;
        }
        zmq_send (f->active, "pong", 4, 0);
    }
}

static const gw_loop_source_t s_source = {
    .poll_count = s_src_count, .poll_items = s_src_items, .dispatch = s_src_dispatch,
};

static int
s_zloop_on_active (zloop_t *loop, zmq_pollitem_t *item, void *arg)
{
    (void) loop;
    (void) arg;
    char buf[8];
    if (zmq_recv (item->socket, buf, sizeof buf, ZMQ_DONTWAIT) != 4)
        return 0;
    if (memcmp (buf, "stop", 4) == 0)
        return -1;
    zmq_send (item->socket, "pong", 4, 0);
    return 0;
}

static int
s_zloop_on_idle (zloop_t *loop, zmq_pollitem_t *item, void *arg)
{
    (void) loop;
    (void) item;
    (void) arg;
    return 0;
}

static void
s_reactor (void *ctx, int kernels)
{
    int n = ROUNDS;
    int64_t *ours = calloc ((size_t) n, sizeof (int64_t));
    int64_t *zl = calloc ((size_t) n, sizeof (int64_t));
    int64_t *zp = calloc ((size_t) n, sizeof (int64_t));
    s_field_t *f = malloc (sizeof *f);
    s_field_open (f, ctx, kernels);
    char err[128];
    pthread_t t;

    s_reactor_loop = gw_loop_new (err, sizeof err);
    gw_loop_add_source (s_reactor_loop, &s_source, f);
    s_pinger_t p = {f, ours, n};
    pthread_create (&t, NULL, s_pinger, &p);
    gw_loop_run (s_reactor_loop);
    pthread_join (t, NULL);
    gw_loop_destroy (&s_reactor_loop);

    zloop_t *zloop = zloop_new ();
    for (int k = 0; k < kernels; k++) {
        for (int s = 0; s < SOCKS_PER_KERNEL; s++) {
            zmq_pollitem_t it = {.socket = f->idle[k * SOCKS_PER_KERNEL + s], .events = ZMQ_POLLIN};
            zloop_poller (zloop, &it, s_zloop_on_idle, NULL);
        }
        zmq_pollitem_t it = {.fd = f->fds[k], .events = ZMQ_POLLIN};
        zloop_poller (zloop, &it, s_zloop_on_idle, NULL);
    }
    zmq_pollitem_t act = {.socket = f->active, .events = ZMQ_POLLIN};
    zloop_poller (zloop, &act, s_zloop_on_active, NULL);
    zloop_set_nonstop (zloop, true);
    p = (s_pinger_t) {f, zl, n};
    pthread_create (&t, NULL, s_pinger, &p);
    zloop_start (zloop);
    pthread_join (t, NULL);
    zloop_destroy (&zloop);

    /* zpoller takes sockets only (no fds): the kernels' sockets */
    zpoller_t *zpoller = zpoller_new (NULL);
    for (int i = 0; i < kernels * SOCKS_PER_KERNEL; i++)
        zpoller_add (zpoller, f->idle[i]);
    zpoller_add (zpoller, f->active);
    zpoller_set_nonstop (zpoller, true);
    p = (s_pinger_t) {f, zp, n};
    pthread_create (&t, NULL, s_pinger, &p);
    for (;;) {
        void *which = zpoller_wait (zpoller, -1);
        if (which != f->active)
            continue;
        char buf[8];
        if (zmq_recv (f->active, buf, sizeof buf, ZMQ_DONTWAIT) != 4)
            continue;
        if (memcmp (buf, "stop", 4) == 0)
            break;
        zmq_send (f->active, "pong", 4, 0);
    }
    pthread_join (t, NULL);
    zpoller_destroy (&zpoller);

    s_field_close (f);
    free (f);
    char what[96];
    snprintf (what, sizeof what, "gw_loop, %d idle kernels", kernels);
    s_row ("reactor", what, ours, n, "ping-pong round trip");
    snprintf (what, sizeof what, "zloop, %d idle kernels", kernels);
    s_row ("reactor", what, zl, n, "ping-pong round trip");
    snprintf (what, sizeof what, "zpoller, %d idle kernels (sockets only)", kernels);
    s_row ("reactor", what, zp, n, "ping-pong round trip");
    free (ours);
    free (zl);
    free (zp);
}

/* ---- base64, uuid -------------------------------------------------------- */

static void
s_base64 (void)
{
    size_t len = 1 << 20;
    uint8_t *data = malloc (len);
    for (size_t i = 0; i < len; i++)
        data[i] = (uint8_t) (i * 131 + 7);
    int n = 60;
    int64_t *ours = calloc ((size_t) n, sizeof (int64_t));
    int64_t *theirs = calloc ((size_t) n, sizeof (int64_t));
    zarmour_t *armour = zarmour_new ();
    for (int i = 0; i < n; i++) {
        int64_t t0 = s_ns ();
        char *text = gw_base64_encode (data, len);
        uint8_t *back;
        size_t back_len;
        gw_base64_decode (text, strlen (text), &back, &back_len);
        ours[i] = s_ns () - t0;
        if (back_len != len || memcmp (back, data, len) != 0)
            fprintf (stderr, "gw_base64: round trip differs\n");
        free (text);
        free (back);
        t0 = s_ns ();
        text = zarmour_encode (armour, data, len);
        zchunk_t *chunk = zarmour_decode (armour, text);
        theirs[i] = s_ns () - t0;
        /* its chunk carries the decoder's terminating NUL as one more byte */
        if (zchunk_size (chunk) != len + 1 || memcmp (zchunk_data (chunk), data, len) != 0)
            fprintf (stderr, "zarmour: round trip differs\n");
        zstr_free (&text);
        zchunk_destroy (&chunk);
    }
    uint8_t *out;
    size_t out_len;
    bool ours_refuses = gw_base64_decode ("QU*JD!", 6, &out, &out_len) == -EINVAL;
    zchunk_t *chunk = zarmour_decode (armour, "QU*JD!");
    bool theirs_refuses = chunk == NULL;
    char note[160];
    snprintf (note, sizeof note, "1 MiB encode+decode; \\\"QU*JD!\\\" refused: %s", ours_refuses ? "yes" : "no");
    s_row ("base64", "gw_base64", ours, n, note);
    snprintf (note, sizeof note, "1 MiB encode+decode (one byte too many back); \\\"QU*JD!\\\" refused: %s%s",
              theirs_refuses ? "yes" : "no",
              theirs_refuses ? "" : " (decoded, skipping what is not base64)");
    s_row ("base64", "zarmour", theirs, n, note);
    zchunk_destroy (&chunk);
    zarmour_destroy (&armour);
    free (data);
    free (ours);
    free (theirs);
}

static void
s_uuid (void)
{
    int n = ROUNDS * 10;
    int64_t *ours = calloc ((size_t) n, sizeof (int64_t));
    int64_t *theirs = calloc ((size_t) n, sizeof (int64_t));
    char id[JP_UUID_LEN + 1];
    for (int i = 0; i < n; i++) {
        int64_t t0 = s_ns ();
        jp_random_uuid (id);
        ours[i] = s_ns () - t0;
        t0 = s_ns ();
        zuuid_t *u = zuuid_new ();
        memcpy (id, zuuid_str_canonical (u), sizeof id);
        zuuid_destroy (&u);
        theirs[i] = s_ns () - t0;
    }
    s_row ("uuid", "jp_random_uuid (getrandom)", ours, n, NULL);
    s_row ("uuid", "zuuid (libuuid)", theirs, n, NULL);
    free (ours);
    free (theirs);
}

/* ---- frames -------------------------------------------------------------- */

static void
s_frames (void *ctx)
{
    const char *key = "0123456789abcdef0123456789abcdef";
    void *a = zmq_socket (ctx, ZMQ_PAIR), *b = zmq_socket (ctx, ZMQ_PAIR);
    zmq_bind (a, "inproc://frames");
    zmq_connect (b, "inproc://frames");
    jp_msg_t *msg = jp_msg_new ("execute_request", "bench", "codebox");
    jp_msg_set_content (msg, json_pack ("{s:s,s:b,s:b,s:{},s:b,s:b}", "code", "1+1", "silent", 0,
                                        "store_history", 1, "user_expressions",
                                        "allow_stdin", 0, "stop_on_error", 1));
    int n = ROUNDS * 5;
    int64_t *ours = calloc ((size_t) n, sizeof (int64_t));
    int64_t *theirs = calloc ((size_t) n, sizeof (int64_t));
    for (int i = 0; i < n; i++) {
        /* ours: zmq_send of each frame; zmq_msg_t on the stack to receive */
        int64_t t0 = s_ns ();
        jp_frame_t *frames;
        size_t nf;
        jp_msg_encode (msg, (const uint8_t *) key, strlen (key), &frames, &nf);
        for (size_t j = 0; j < nf; j++)
            zmq_send (a, frames[j].data, frames[j].size, j + 1 < nf ? ZMQ_SNDMORE : 0);
        jp_frames_free (frames, nf);
        zmq_msg_t parts[16];
        jp_part_t views[16];
        size_t np = 0;
        int more = 1;
        while (more && np < 16) {
            zmq_msg_init (&parts[np]);
            zmq_msg_recv (&parts[np], b, 0);
            more = zmq_msg_more (&parts[np]);
            views[np] = (jp_part_t) {zmq_msg_data (&parts[np]), zmq_msg_size (&parts[np])};
            np++;
        }
        jp_msg_t *got = NULL;
        jp_msg_decode (views, np, (const uint8_t *) key, strlen (key), &got);
        for (size_t j = 0; j < np; j++)
            zmq_msg_close (&parts[j]);
        jp_msg_destroy (&got);
        ours[i] = s_ns () - t0;

        /* CZMQ's: a zmsg of zframes each way */
        t0 = s_ns ();
        jp_msg_encode (msg, (const uint8_t *) key, strlen (key), &frames, &nf);
        zmsg_t *zm = zmsg_new ();
        for (size_t j = 0; j < nf; j++)
            zmsg_addmem (zm, frames[j].data, frames[j].size);
        jp_frames_free (frames, nf);
        zmsg_send (&zm, a);
        zm = zmsg_recv (b);
        np = 0;
        for (zframe_t *fr = zmsg_first (zm); fr && np < 16; fr = zmsg_next (zm))
            views[np++] = (jp_part_t) {zframe_data (fr), zframe_size (fr)};
        jp_msg_decode (views, np, (const uint8_t *) key, strlen (key), &got);
        zmsg_destroy (&zm);
        jp_msg_destroy (&got);
        theirs[i] = s_ns () - t0;
    }
    s_row ("frames", "raw zmq_msg_t", ours, n, "encode+sign, send, receive, verify+decode");
    s_row ("frames", "zmsg/zframe", theirs, n, "encode+sign, send, receive, verify+decode");
    jp_msg_destroy (&msg);
    zmq_close (a);
    zmq_close (b);
    free (ours);
    free (theirs);
}

int
main (void)
{
    zsys_handler_set (NULL);
    void *ctx = zsys_init ();
    s_handoff ();
    s_reactor (ctx, 1);
    s_reactor (ctx, 16);
    s_reactor (ctx, 64);
    s_base64 ();
    s_uuid ();
    s_frames (ctx);
    return 0;
}
