/* test_zmtp_client: jp_zmtp_client, the gateway's own ZMTP 3.0 client,
 * against libzmq's sockets as a kernel has them (ROUTER, PUB) over Unix
 * sockets: a DEALER connects before its peer binds and its message waits
 * for the connection, with its routing id; a ROUTER's reply comes back; a
 * SUB is subscribed to everything and reads a message bigger than one
 * read; a message of too many frames is skipped and the next comes whole;
 * a REQ's delimiter goes and comes back unseen; a peer that goes and comes
 * back is connected again; what a peer said before it closed is still
 * read; a peer's ZMTP PINGs get PONGs, so it keeps the connection; a peer that does not speak ZMTP 3 NULL is hung up on (and tried
 * again later, as libzmq does). Each client is
 * served by jp_poll, as the gateway's loop does. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <zmq.h>

#include "jp_poll.h"
#include "jp_time.h"
#include "jp_zmtp_client.h"
#include "suites.h"

typedef struct {
    char dir[64];
    char path[128];
    char endpoint[160];
    struct sockaddr_storage addr;
    socklen_t len;
    void *ctx;
} s_fix_t;

static void
s_fix_start (s_fix_t *f)
{
    snprintf (f->dir, sizeof f->dir, "/tmp/codebox-zmtp-XXXXXX");
    ck_assert_ptr_nonnull (mkdtemp (f->dir));
    snprintf (f->path, sizeof f->path, "%s/k", f->dir);
    snprintf (f->endpoint, sizeof f->endpoint, "ipc://%s", f->path);
    struct sockaddr_un *un = (struct sockaddr_un *) &f->addr;
    memset (&f->addr, 0, sizeof f->addr);
    un->sun_family = AF_UNIX;
    strcpy (un->sun_path, f->path);
    f->len = sizeof *un;
    f->ctx = zmq_ctx_new ();
}

static void
s_fix_stop (s_fix_t *f)
{
    zmq_ctx_term (f->ctx);
    unlink (f->path);
    rmdir (f->dir);
}

static void *
s_bind (s_fix_t *f, int type)
{
    void *sock = zmq_socket (f->ctx, type);
    int zero = 0;
    zmq_setsockopt (sock, ZMQ_LINGER, &zero, sizeof zero);
    ck_assert_int_eq (zmq_bind (sock, f->endpoint), 0);
    return sock;
}

/* Serves the client (jp_poll, then its timers) for up to ms, or until a
 * message waits when until_readable. */
static void
s_serve (jp_zmtp_client_t *c, int ms, bool until_readable)
{
    int64_t end = jp_time_now_ms () + ms;
    while (jp_time_now_ms () < end && !(until_readable && jp_zmtp_client_readable (c))) {
        zmq_pollitem_t item = {.socket = c, .events = ZMQ_POLLIN | JP_POLL_ZMTP};
        struct pollfd pfd;
        jp_poll (&item, &pfd, 1, 5);
        jp_zmtp_client_tick (c, jp_time_now_ms ());
    }
}

/* Receives a message of the peer's socket: its frames' bodies joined by
 * '|' into out. Returns the frame count, -1 after 2 s. */
static int
s_peer_recv (void *sock, char *out, size_t size)
{
    zmq_pollitem_t item = {.socket = sock, .events = ZMQ_POLLIN};
    if (zmq_poll (&item, 1, 2000) != 1)
        return -1;
    int n = 0, more = 1;
    size_t at = 0;
    out[0] = '\0';
    while (more) {
        zmq_msg_t part;
        zmq_msg_init (&part);
        ck_assert_int_ge (zmq_msg_recv (&part, sock, 0), 0);
        at += (size_t) snprintf (out + at, size - at, "%s%.*s", n ? "|" : "",
                                 (int) zmq_msg_size (&part), (char *) zmq_msg_data (&part));
        more = zmq_msg_more (&part);
        zmq_msg_close (&part);
        n++;
    }
    return n;
}

static void
s_peer_send (void *sock, const char **frames, int n)
{
    for (int i = 0; i < n; i++)
        ck_assert_int_ge (zmq_send (sock, frames[i], strlen (frames[i]),
                                    i + 1 < n ? ZMQ_SNDMORE : 0), 0);
}

static void
s_send (jp_zmtp_client_t *c, const char **frames, int n)
{
    jp_frame_t f[8];
    for (int i = 0; i < n; i++)
        f[i] = (jp_frame_t) {(uint8_t *) frames[i], strlen (frames[i])};
    ck_assert_int_eq (jp_zmtp_client_send (c, f, (size_t) n), 0);
}

/* The next message of the client, its frames joined by '|'. */
static int
s_recv (jp_zmtp_client_t *c, char *out, size_t size)
{
    s_serve (c, 2000, true);
    jp_part_t parts[JP_ZMTP_PARTS_MAX];
    size_t bytes;
    int n = jp_zmtp_client_recv (c, parts, &bytes);
    size_t at = 0;
    out[0] = '\0';
    for (int i = 0; i < n; i++)
        at += (size_t) snprintf (out + at, size - at, "%s%.*s", i ? "|" : "",
                                 (int) parts[i].size, (const char *) parts[i].data);
    return n;
}

START_TEST (test_dealer_waits_for_its_peer_and_names_itself)
{
    s_fix_t f;
    s_fix_start (&f);
    jp_zmtp_client_t *c = jp_zmtp_client_new (JP_ZMTP_DEALER, "me-1", &f.addr, f.len);
    ck_assert_ptr_nonnull (c);
    ck_assert_int_eq (jp_zmtp_client_fd (c), -1);       /* nobody listens yet */
    ck_assert_int_ge (jp_zmtp_client_deadline (c), 0);
    s_send (c, (const char *[]) {"hello", "world"}, 2);  /* waits */
    s_serve (c, 50, false);
    void *router = s_bind (&f, ZMQ_ROUTER);
    s_serve (c, 300, false);
    char got[512];
    ck_assert_int_eq (s_peer_recv (router, got, sizeof got), 3);
    ck_assert_str_eq (got, "me-1|hello|world");
    s_peer_send (router, (const char *[]) {"me-1", "", "back"}, 3);
    ck_assert_int_eq (s_recv (c, got, sizeof got), 2);
    ck_assert_str_eq (got, "|back");
    ck_assert_int_eq (s_recv (c, got, sizeof got), -EAGAIN);
    jp_zmtp_client_destroy (&c);
    zmq_close (router);
    s_fix_stop (&f);
}
END_TEST

START_TEST (test_sub_reads_big_messages_and_skips_hostile_ones)
{
    s_fix_t f;
    s_fix_start (&f);
    void *pub = s_bind (&f, ZMQ_PUB);
    jp_zmtp_client_t *c = jp_zmtp_client_new (JP_ZMTP_SUB, NULL, &f.addr, f.len);
    s_serve (c, 300, false);    /* the subscription reaches the PUB */
    size_t big = 300000;
    char *body = malloc (big);
    memset (body, 'y', big);
    zmq_send (pub, "topic", 5, ZMQ_SNDMORE);
    zmq_send (pub, body, big, 0);
    for (int i = 0; i <= JP_ZMTP_PARTS_MAX; i++)    /* one frame too many */
        zmq_send (pub, "z", 1, i < JP_ZMTP_PARTS_MAX ? ZMQ_SNDMORE : 0);
    zmq_send (pub, "after", 5, 0);
    s_serve (c, 2000, true);
    jp_part_t parts[JP_ZMTP_PARTS_MAX];
    size_t bytes;
    ck_assert_int_eq (jp_zmtp_client_recv (c, parts, &bytes), 2);
    ck_assert_uint_eq (bytes, 5 + big);
    ck_assert_uint_eq (parts[1].size, big);
    ck_assert_int_eq (memcmp (parts[1].data, body, big), 0);
    void *block = jp_zmtp_client_detach (c);    /* views outlive the client's next call */
    ck_assert_ptr_nonnull (block);
    s_serve (c, 2000, true);
    ck_assert_int_eq (memcmp (parts[1].data, body, big), 0);
    free (block);
    ck_assert_int_eq (jp_zmtp_client_recv (c, parts, &bytes), JP_ERR_TRUNCATED);
    ck_assert_uint_eq (bytes, JP_ZMTP_PARTS_MAX + 1);
    char got[64];
    ck_assert_int_eq (s_recv (c, got, sizeof got), 1);
    ck_assert_str_eq (got, "after");
    free (body);
    jp_zmtp_client_destroy (&c);
    zmq_close (pub);
    s_fix_stop (&f);
}
END_TEST

START_TEST (test_req_delimiter_is_unseen)
{
    s_fix_t f;
    s_fix_start (&f);
    void *router = s_bind (&f, ZMQ_ROUTER);
    jp_zmtp_client_t *c = jp_zmtp_client_new (JP_ZMTP_REQ, NULL, &f.addr, f.len);
    s_send (c, (const char *[]) {"ping"}, 1);
    s_serve (c, 200, false);
    zmq_msg_t id;
    zmq_msg_init (&id);
    zmq_pollitem_t item = {.socket = router, .events = ZMQ_POLLIN};
    ck_assert_int_eq (zmq_poll (&item, 1, 2000), 1);
    ck_assert_int_ge (zmq_msg_recv (&id, router, 0), 0);
    char rest[64];
    ck_assert_int_eq (s_peer_recv (router, rest, sizeof rest), 2);
    ck_assert_str_eq (rest, "|ping");
    zmq_msg_send (&id, router, ZMQ_SNDMORE);
    s_peer_send (router, (const char *[]) {"", "ping"}, 2);
    char got[64];
    ck_assert_int_eq (s_recv (c, got, sizeof got), 1);
    ck_assert_str_eq (got, "ping");
    jp_zmtp_client_destroy (&c);
    zmq_close (router);
    s_fix_stop (&f);
}
END_TEST

START_TEST (test_peer_that_goes_and_comes_back)
{
    s_fix_t f;
    s_fix_start (&f);
    void *router = s_bind (&f, ZMQ_ROUTER);
    jp_zmtp_client_t *c = jp_zmtp_client_new (JP_ZMTP_DEALER, "again", &f.addr, f.len);
    s_send (c, (const char *[]) {"one"}, 1);
    s_serve (c, 200, false);
    char got[64];
    ck_assert_int_eq (s_peer_recv (router, got, sizeof got), 2);
    /* its last word, then it goes: the word is still read */
    s_peer_send (router, (const char *[]) {"again", "last"}, 2);
    usleep (100 * 1000);
    zmq_close (router);
    unlink (f.path);
    uint64_t changes = jp_zmtp_client_fd_changes (c);
    ck_assert_int_eq (s_recv (c, got, sizeof got), 1);
    ck_assert_str_eq (got, "last");
    s_serve (c, 100, false);
    ck_assert_uint_gt (jp_zmtp_client_fd_changes (c), changes);
    router = s_bind (&f, ZMQ_ROUTER);
    s_serve (c, 300, false);
    ck_assert_int_ge (jp_zmtp_client_fd (c), 0);
    s_send (c, (const char *[]) {"two"}, 1);
    s_serve (c, 100, false);
    ck_assert_int_eq (s_peer_recv (router, got, sizeof got), 2);
    ck_assert_str_eq (got, "again|two");
    jp_zmtp_client_destroy (&c);
    zmq_close (router);
    s_fix_stop (&f);
}
END_TEST

START_TEST (test_pings_get_pongs)
{
    s_fix_t f;
    s_fix_start (&f);
    /* a ROUTER that pings every 10 ms and hangs up after 60 ms without a pong */
    void *router = zmq_socket (f.ctx, ZMQ_ROUTER);
    int zero = 0, ivl = 10, timeout = 60;
    zmq_setsockopt (router, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt (router, ZMQ_HEARTBEAT_IVL, &ivl, sizeof ivl);
    zmq_setsockopt (router, ZMQ_HEARTBEAT_TIMEOUT, &timeout, sizeof timeout);
    ck_assert_int_eq (zmq_bind (router, f.endpoint), 0);
    jp_zmtp_client_t *c = jp_zmtp_client_new (JP_ZMTP_DEALER, "pinged", &f.addr, f.len);
    s_serve (c, 100, false);
    uint64_t changes = jp_zmtp_client_fd_changes (c);
    s_serve (c, 400, false);
    ck_assert_uint_eq (jp_zmtp_client_fd_changes (c), changes);     /* never hung up on */
    s_send (c, (const char *[]) {"still"}, 1);
    s_serve (c, 50, false);
    char got[64];
    ck_assert_int_eq (s_peer_recv (router, got, sizeof got), 2);
    ck_assert_str_eq (got, "pinged|still");
    jp_zmtp_client_destroy (&c);
    zmq_close (router);
    s_fix_stop (&f);
}
END_TEST

START_TEST (test_peer_of_another_mechanism_is_dropped)
{
    s_fix_t f;
    s_fix_start (&f);
    int srv = socket (AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_eq (bind (srv, (struct sockaddr *) &f.addr, f.len), 0);
    ck_assert_int_eq (listen (srv, 4), 0);
    jp_zmtp_client_t *c = jp_zmtp_client_new (JP_ZMTP_DEALER, NULL, &f.addr, f.len);
    int peer = accept (srv, NULL, NULL);
    ck_assert_int_ge (peer, 0);
    uint8_t greeting[64] = {0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0x7F, 3, 0, 'C', 'U', 'R', 'V', 'E'};
    ck_assert_int_eq (write (peer, greeting, sizeof greeting), 64);
    s_serve (c, 100, false);
    char got[128];
    ck_assert_int_eq (s_recv (c, got, sizeof got), -EAGAIN);
    /* it sent its greeting only, and hung up */
    ssize_t n, total = 0;
    while ((n = read (peer, got, sizeof got)) > 0)
        total += n;
    ck_assert_int_eq (n, 0);
    ck_assert_int_eq (total, 64);
    close (peer);
    /* and it tries again, as it does for a peer that goes */
    peer = accept (srv, NULL, NULL);
    ck_assert_int_ge (peer, 0);
    close (peer);
    close (srv);
    jp_zmtp_client_destroy (&c);
    s_fix_stop (&f);
}
END_TEST

Suite *
zmtp_client_suite (void)
{
    Suite *s = suite_create ("zmtp_client");
    TCase *tc = tcase_create ("core");
    tcase_set_timeout (tc, 20);
    tcase_add_test (tc, test_dealer_waits_for_its_peer_and_names_itself);
    tcase_add_test (tc, test_sub_reads_big_messages_and_skips_hostile_ones);
    tcase_add_test (tc, test_req_delimiter_is_unseen);
    tcase_add_test (tc, test_peer_that_goes_and_comes_back);
    tcase_add_test (tc, test_pings_get_pongs);
    tcase_add_test (tc, test_peer_of_another_mechanism_is_dropped);
    suite_add_tcase (s, tc);
    return s;
}
