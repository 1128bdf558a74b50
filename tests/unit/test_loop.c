/* test_loop: gw_loop's poll, which sleeps on each socket's ZMQ_FD and asks
 * ZMQ_EVENTS only of sockets whose fd woke or that were used since their
 * last poll (JP_POLL_USED). Real libzmq sockets over inproc, a real loop;
 * a source's deadline stops a loop that would otherwise sleep, so a
 * missed wake-up fails the test instead of hanging it. */
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <zmq.h>

#include "gw_loop.h"
#include "gw_mailbox.h"
#include "jp_poll.h"
#include "jp_time.h"
#include "suites.h"

typedef struct {
    gw_loop_t *loop;
    void *sock;                 /* polled for ZMQ_POLLIN */
    int fd;                     /* polled too when >= 0 */
    bool used;                  /* next poll says JP_POLL_USED */
    int per_turn;               /* messages read per turn (a budget) */
    int want;                   /* stop after this many */
    int got;
    int fd_seen;
    int64_t give_up;            /* jp_time_now_ms clock */
} s_fixture_t;

static int
s_count (void *arg)
{
    (void) arg;
    return 2;
}

static int
s_items (void *arg, zmq_pollitem_t *items, int max)
{
    s_fixture_t *f = arg;
    (void) max;
    int n = 0;
    items[n++] = (zmq_pollitem_t) {.socket = f->sock,
                                   .events = ZMQ_POLLIN | (f->used ? JP_POLL_USED : 0)};
    f->used = false;
    if (f->fd >= 0)
        items[n++] = (zmq_pollitem_t) {.fd = f->fd, .events = ZMQ_POLLIN};
    return n;
}

static void
s_dispatch (void *arg, const zmq_pollitem_t *items, int n)
{
    s_fixture_t *f = arg;
    if (n > 1 && (items[1].revents & ZMQ_POLLIN)) {
        uint64_t v;
        ck_assert_int_eq (read (f->fd, &v, sizeof v), sizeof v);
        f->fd_seen++;
    }
    if (!(items[0].revents & ZMQ_POLLIN))
        return;
    char buf[16];
    for (int i = 0; i < f->per_turn; i++) {
        if (zmq_recv (f->sock, buf, sizeof buf, ZMQ_DONTWAIT) < 0)
            break;
        f->got++;
    }
    f->used = true;             /* read: as jp_channels says */
    if (f->got >= f->want)
        gw_loop_stop (f->loop);
}

static int64_t
s_deadline (void *arg, int64_t now)
{
    (void) now;
    return ((s_fixture_t *) arg)->give_up;
}

static void
s_tick (void *arg, int64_t now)
{
    s_fixture_t *f = arg;
    if (now >= f->give_up)
        gw_loop_stop (f->loop);
}

static const gw_loop_source_t s_source = {
    .poll_count = s_count, .poll_items = s_items, .dispatch = s_dispatch,
    .deadline = s_deadline, .tick = s_tick,
};

static void *s_ctx, *s_a, *s_b;

static void
s_pair (const char *name)
{
    s_ctx = zmq_ctx_new ();
    s_a = zmq_socket (s_ctx, ZMQ_PAIR);
    s_b = zmq_socket (s_ctx, ZMQ_PAIR);
    ck_assert_int_eq (zmq_bind (s_a, name), 0);
    ck_assert_int_eq (zmq_connect (s_b, name), 0);
}

static void
s_unpair (void)
{
    zmq_close (s_a);
    zmq_close (s_b);
    zmq_ctx_term (s_ctx);
}

static void
s_run (s_fixture_t *f, int64_t ms)
{
    char err[128];
    f->loop = gw_loop_new (err, sizeof err);
    ck_assert_ptr_nonnull (f->loop);
    f->give_up = jp_time_now_ms () + ms;
    ck_assert_int_eq (gw_loop_add_source (f->loop, &s_source, f), 0);
    gw_loop_run (f->loop);
    gw_loop_destroy (&f->loop);
}

static void *
s_send_later (void *arg)
{
    usleep (50 * 1000);
    zmq_send (arg, "late", 4, 0);
    return NULL;
}

/* A message that arrives while the loop sleeps wakes it through the fd. */
START_TEST (test_wakes_for_a_message_on_an_idle_socket)
{
    s_pair ("inproc://idle");
    s_fixture_t f = {.sock = s_a, .fd = -1, .per_turn = 16, .want = 1};
    pthread_t t;
    pthread_create (&t, NULL, s_send_later, s_b);
    int64_t t0 = jp_time_now_ms ();
    s_run (&f, 3000);
    pthread_join (t, NULL);
    ck_assert_int_eq (f.got, 1);
    ck_assert_int_lt (jp_time_now_ms () - t0, 2000);
    s_unpair ();
}
END_TEST

/* A message whose fd wake-up another call on the socket took (here
 * ZMQ_EVENTS, as a send can) is still seen, because the socket says it
 * was used. */
START_TEST (test_sees_a_message_whose_wakeup_was_taken)
{
    s_pair ("inproc://taken");
    zmq_send (s_b, "x", 1, 0);
    int fd;
    size_t size = sizeof fd;
    ck_assert_int_eq (zmq_getsockopt (s_a, ZMQ_FD, &fd, &size), 0);
    int events;
    size = sizeof events;
    for (int i = 0; i < 100; i++) {     /* until the command is taken */
        ck_assert_int_eq (zmq_getsockopt (s_a, ZMQ_EVENTS, &events, &size), 0);
        if (events & ZMQ_POLLIN)
            break;
        usleep (1000);
    }
    ck_assert (events & ZMQ_POLLIN);
    /* the precondition: the message waits and the fd is quiet */
    struct pollfd p = {.fd = fd, .events = POLLIN};
    ck_assert_int_eq (poll (&p, 1, 0), 0);
    s_fixture_t f = {.sock = s_a, .fd = -1, .used = true, .per_turn = 16, .want = 1};
    s_run (&f, 1000);
    ck_assert_int_eq (f.got, 1);
    s_unpair ();
}
END_TEST

/* A source that reads one message a turn gets them all, turn by turn,
 * with no new message to wake the fd. */
START_TEST (test_budgeted_reads_continue_next_turn)
{
    s_pair ("inproc://budget");
    for (int i = 0; i < 5; i++)
        zmq_send (s_b, "m", 1, 0);
    s_fixture_t f = {.sock = s_a, .fd = -1, .used = true, .per_turn = 1, .want = 5};
    s_run (&f, 2000);
    ck_assert_int_eq (f.got, 5);
    s_unpair ();
}
END_TEST

/* A plain fd beside the socket: its readiness is reported as ZMQ_POLLIN. */
START_TEST (test_plain_fd_beside_a_socket)
{
    s_pair ("inproc://fd");
    int efd = eventfd (0, EFD_NONBLOCK);
    uint64_t one = 1;
    ck_assert_int_eq (write (efd, &one, sizeof one), sizeof one);
    zmq_send (s_b, "m", 1, 0);
    s_fixture_t f = {.sock = s_a, .fd = efd, .used = true, .per_turn = 16, .want = 1};
    s_run (&f, 2000);
    ck_assert_int_eq (f.got, 1);
    ck_assert_int_eq (f.fd_seen, 1);
    close (efd);
    s_unpair ();
}
END_TEST

/* A source that posts an item from its dispatch, as the HTTP edge (run by
 * the loop thread) posts each request: the item runs in the same turn. */
typedef struct {
    gw_loop_t *loop;
    gw_loop_item_t item;
    int turns, ran_in_turn;
} s_poster_t;

static void
s_posted_run (gw_loop_item_t *item, bool stopping)
{
    (void) stopping;
    s_poster_t *p = item->arg;
    p->ran_in_turn = p->turns;
    gw_loop_stop (p->loop);
}

static void
s_poster_dispatch (void *arg, const zmq_pollitem_t *items, int n)
{
    (void) items;
    (void) n;
    s_poster_t *p = arg;
    if (++p->turns == 1)
        gw_loop_post (p->loop, &p->item);
}

static int64_t
s_poster_deadline (void *arg, int64_t now)
{
    s_poster_t *p = arg;
    return p->turns < 3 ? now : -1;   /* wake at once; never sleep for good */
}

static const gw_loop_source_t s_poster_source = {
    .dispatch = s_poster_dispatch,
    .deadline = s_poster_deadline,
};

START_TEST (test_an_item_posted_by_a_dispatch_runs_in_that_turn)
{
    char err[256];
    s_poster_t p = {0};
    p.loop = gw_loop_new (err, sizeof err);
    ck_assert_ptr_nonnull (p.loop);
    p.item.run = s_posted_run;
    p.item.arg = &p;
    ck_assert_int_eq (gw_loop_add_source (p.loop, &s_poster_source, &p), 0);
    gw_loop_run (p.loop);
    ck_assert_int_eq (p.ran_in_turn, 1);
    ck_assert_int_eq (p.turns, 1);
    gw_loop_destroy (&p.loop);
}
END_TEST

/* A source that posts from its tick, as the HTTP edge does when it reads a
 * request in the tick: the item runs in that turn, and the ticks run again
 * after it (so an answer it gave goes out in the same turn). */
typedef struct {
    gw_loop_t *loop;
    gw_loop_item_t item;
    int turns, ticks, ran_in_turn, ticks_after_run;
    bool ran;
} s_ticker_t;

static void
s_ticked_run (gw_loop_item_t *item, bool stopping)
{
    (void) stopping;
    s_ticker_t *t = item->arg;
    t->ran = true;
    t->ran_in_turn = t->turns;
}

static void
s_ticker_dispatch (void *arg, const zmq_pollitem_t *items, int n)
{
    (void) items;
    (void) n;
    ((s_ticker_t *) arg)->turns++;
}

static void
s_ticker_tick (void *arg, int64_t now)
{
    (void) now;
    s_ticker_t *t = arg;
    if (++t->ticks == 1)
        gw_loop_post (t->loop, &t->item);
    else if (t->ran) {
        t->ticks_after_run++;
        gw_loop_stop (t->loop);
    }
}

static int64_t
s_ticker_deadline (void *arg, int64_t now)
{
    s_ticker_t *t = arg;
    return t->turns < 3 ? now : -1;
}

static const gw_loop_source_t s_ticker_source = {
    .dispatch = s_ticker_dispatch,
    .deadline = s_ticker_deadline,
    .tick = s_ticker_tick,
};

START_TEST (test_an_item_posted_by_a_tick_runs_in_that_turn)
{
    char err[256];
    s_ticker_t t = {0};
    t.loop = gw_loop_new (err, sizeof err);
    ck_assert_ptr_nonnull (t.loop);
    t.item.run = s_ticked_run;
    t.item.arg = &t;
    ck_assert_int_eq (gw_loop_add_source (t.loop, &s_ticker_source, &t), 0);
    gw_loop_run (t.loop);
    ck_assert (t.ran);
    ck_assert_int_eq (t.ran_in_turn, 1);
    ck_assert_int_eq (t.turns, 1);
    ck_assert_int_eq (t.ticks_after_run, 1);
    gw_loop_destroy (&t.loop);
}
END_TEST

static void *
s_post_from_elsewhere (void *arg)
{
    void **args = arg;
    gw_mailbox_post (args[0], args[1]);
    return NULL;
}

START_TEST (test_the_owner_posts_without_waking_itself)
{
    gw_mailbox_t *box = gw_mailbox_new ();
    ck_assert_ptr_nonnull (box);
    gw_loop_item_t items[2] = {{.run = NULL}, {.run = NULL}};
    gw_mailbox_set_owner (box);
    struct pollfd pfd = {.fd = gw_mailbox_fd (box), .events = POLLIN};
    gw_mailbox_post (box, &items[0].link);
    ck_assert (gw_mailbox_pending (box));
    ck_assert_int_eq (poll (&pfd, 1, 0), 0);          /* no eventfd write */
    ck_assert_ptr_eq (gw_mailbox_take_posted (box), &items[0].link);
    /* another thread's post into the empty FIFO wakes the owner */
    void *args[2] = {box, &items[1].link};
    pthread_t other;
    ck_assert_int_eq (pthread_create (&other, NULL, s_post_from_elsewhere, args), 0);
    pthread_join (other, NULL);
    ck_assert_int_eq (poll (&pfd, 1, 0), 1);
    ck_assert_ptr_eq (gw_mailbox_take_all (box), &items[1].link);
    ck_assert_int_eq (poll (&pfd, 1, 0), 0);          /* take_all read it */
    gw_mailbox_destroy (&box);
}
END_TEST

static void
s_nothing (gw_loop_item_t *item, bool stopping)
{
    (void) item;
    (void) stopping;
}

START_TEST (test_the_mailbox_wakes_once_for_a_batch)
{
    gw_mailbox_t *box = gw_mailbox_new ();
    ck_assert_ptr_nonnull (box);
    gw_loop_item_t items[3] = {{.run = s_nothing}, {.run = s_nothing}, {.run = s_nothing}};
    ck_assert (!gw_mailbox_pending (box));
    for (int i = 0; i < 3; i++)
        gw_mailbox_post (box, &items[i].link);
    ck_assert (gw_mailbox_pending (box));
    /* one write to the eventfd for the three */
    uint64_t count = 0;
    ck_assert_int_eq (read (gw_mailbox_fd (box), &count, sizeof count), sizeof count);
    ck_assert_uint_eq (count, 1);
    gw_mailbox_item_t *list = gw_mailbox_take_all (box);
    int n = 0;
    for (; list; list = list->next)
        n++;
    ck_assert_int_eq (n, 3);
    ck_assert (!gw_mailbox_pending (box));
    /* the next post after the take wakes again */
    gw_mailbox_post (box, &items[0].link);
    struct pollfd pfd = {.fd = gw_mailbox_fd (box), .events = POLLIN};
    ck_assert_int_eq (poll (&pfd, 1, 0), 1);
    ck_assert_ptr_eq (gw_mailbox_take_all (box), &items[0].link);
    gw_mailbox_destroy (&box);
}
END_TEST

Suite *
loop_suite (void)
{
    Suite *s = suite_create ("loop");
    TCase *tc = tcase_create ("poll");
    tcase_set_timeout (tc, 20);
    tcase_add_test (tc, test_wakes_for_a_message_on_an_idle_socket);
    tcase_add_test (tc, test_sees_a_message_whose_wakeup_was_taken);
    tcase_add_test (tc, test_budgeted_reads_continue_next_turn);
    tcase_add_test (tc, test_plain_fd_beside_a_socket);
    tcase_add_test (tc, test_an_item_posted_by_a_dispatch_runs_in_that_turn);
    tcase_add_test (tc, test_the_mailbox_wakes_once_for_a_batch);
    tcase_add_test (tc, test_an_item_posted_by_a_tick_runs_in_that_turn);
    tcase_add_test (tc, test_the_owner_posts_without_waking_itself);
    suite_add_tcase (s, tc);
    return s;
}
