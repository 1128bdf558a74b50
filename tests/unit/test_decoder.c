/* test_decoder: large kernel messages decoded off the caller's thread.
 * A fake kernel (a PUB socket bound on an ipc endpoint of a connection)
 * publishes signed messages to jp_channels (its SUB connection served by
 * jp_poll, as the gateway's loop does); jp_channels_recv_or_defer
 * hands those over the bound back undecoded, ks_decoder's worker verifies
 * and decodes them, and the inbox gives them back in the order they went;
 * a wrong signature comes back refused; an inbox let go while its
 * message is away is freed by the worker (LeakSanitizer checks). */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zmq.h>

#include "jp_channels.h"
#include "jp_connection.h"
#include "jp_poll.h"
#include "ks_decoder.h"
#include "suites.h"

typedef struct {
    void *ctx, *pub;
    jp_connection_t conn;
    jp_channels_t *channels;
    char dir[64];
} s_fake_t;

/* Serves iopub's connection for up to ms (jp_poll); true if a message waits. */
static bool
s_poll (s_fake_t *f, int ms)
{
    zmq_pollitem_t item = {.socket = jp_channels_socket (f->channels, JP_CHANNEL_IOPUB),
                           .events = ZMQ_POLLIN | JP_POLL_ZMTP};
    struct pollfd pfd;
    return jp_poll (&item, &pfd, 1, ms) > 0;
}

static void
s_fake_start (s_fake_t *f)
{
    snprintf (f->dir, sizeof f->dir, "/tmp/codebox-decoder-XXXXXX");
    ck_assert_ptr_nonnull (mkdtemp (f->dir));
    char prefix[128];
    snprintf (prefix, sizeof prefix, "%s/k", f->dir);
    ck_assert_int_eq (jp_connection_init_ipc (&f->conn, prefix), 0);
    f->ctx = zmq_ctx_new ();
    f->pub = zmq_socket (f->ctx, ZMQ_PUB);
    char endpoint[256];
    ck_assert_int_eq (jp_connection_endpoint (&f->conn, JP_CHANNEL_IOPUB, endpoint,
                                              sizeof endpoint), 0);
    ck_assert_int_eq (zmq_bind (f->pub, endpoint), 0);
    f->channels = jp_channels_new (&f->conn);
    ck_assert_ptr_nonnull (f->channels);
    for (int i = 0; i < 20; i++)    /* the handshake, then the SUB's subscription */
        s_poll (f, 10);
}

static void
s_fake_stop (s_fake_t *f)
{
    jp_channels_destroy (&f->channels);
    int zero = 0;
    zmq_setsockopt (f->pub, ZMQ_LINGER, &zero, sizeof zero);
    zmq_close (f->pub);
    zmq_ctx_term (f->ctx);
    char cmd[128];
    snprintf (cmd, sizeof cmd, "rm -rf %s", f->dir);
    ck_assert_int_eq (system (cmd), 0);
}

/* Publishes a stream message of text bytes of 'x', signed with key. */
static void
s_publish (s_fake_t *f, size_t bytes, const char *key)
{
    jp_msg_t *msg = jp_msg_new ("stream", "fake-session", "kernel");
    char *text = malloc (bytes + 1);
    memset (text, 'x', bytes);
    text[bytes] = '\0';
    json_object_set_new (msg->content, "name", json_string ("stdout"));
    json_object_set_new (msg->content, "text", json_string (text));
    free (text);
    jp_frame_t *frames;
    size_t n;
    ck_assert_int_eq (jp_msg_encode (msg, (const uint8_t *) key, strlen (key), &frames, &n), 0);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_ge (zmq_send (f->pub, frames[i].data, frames[i].size,
                                    i + 1 < n ? ZMQ_SNDMORE : 0), 0);
    jp_frames_free (frames, n);
    jp_msg_destroy (&msg);
}

/* Receives the next message of iopub, waiting up to 5 s for it. */
static int
s_recv (s_fake_t *f, jp_msg_t **msg_p, jp_raw_t **raw_p)
{
    for (int i = 0; i < 500; i++) {
        int rc = jp_channels_recv_or_defer (f->channels, JP_CHANNEL_IOPUB, KS_DECODER_MIN_BYTES,
                                            msg_p, raw_p);
        if (rc != -EAGAIN)
            return rc;
        s_poll (f, 10);
    }
    return -ETIMEDOUT;
}

static size_t
s_text_len (const jp_msg_t *msg)
{
    return strlen (json_string_value (json_object_get (msg->content, "text")));
}

START_TEST (test_large_messages_come_back_decoded_in_order)
{
    s_fake_t f;
    s_fake_start (&f);
    ks_decoder_inbox_t *inbox = ks_decoder_inbox_new ();
    ck_assert_ptr_nonnull (inbox);
    size_t sizes[] = {3u << 20, 2u << 20, 5u << 20};
    for (int i = 0; i < 3; i++)
        s_publish (&f, sizes[i], f.conn.key);
    s_publish (&f, 10, f.conn.key);
    for (int i = 0; i < 3; i++) {
        jp_msg_t *msg = NULL;
        jp_raw_t *raw = NULL;
        ck_assert_int_eq (s_recv (&f, &msg, &raw), JP_CHANNELS_DEFERRED);
        ck_assert_ptr_null (msg);
        ck_assert_ptr_nonnull (raw);
        ck_assert_int_eq (ks_decoder_submit (inbox, JP_CHANNEL_IOPUB, &raw), 0);
        ck_assert_ptr_null (raw);
    }
    /* a small one is decoded at once */
    jp_msg_t *small = NULL;
    jp_raw_t *raw = NULL;
    ck_assert_int_eq (s_recv (&f, &small, &raw), 0);
    ck_assert_ptr_null (raw);
    ck_assert_uint_eq (s_text_len (small), 10);
    jp_msg_destroy (&small);
    for (int i = 0; i < 3;) {
        struct pollfd pfd = {.fd = ks_decoder_inbox_fd (inbox), .events = POLLIN};
        ck_assert_int_eq (poll (&pfd, 1, 10000), 1);
        int channel, rc;
        jp_msg_t *msg;
        while (ks_decoder_take (inbox, &channel, &msg, &rc)) {
            ck_assert_int_eq (rc, 0);
            ck_assert_int_eq (channel, JP_CHANNEL_IOPUB);
            ck_assert_str_eq (jp_msg_type (msg), "stream");
            ck_assert_uint_eq (s_text_len (msg), sizes[i]);
            jp_msg_destroy (&msg);
            i++;
        }
    }
    /* nothing more: the descriptor is quiet again */
    int channel, rc;
    jp_msg_t *msg;
    ck_assert (!ks_decoder_take (inbox, &channel, &msg, &rc));
    struct pollfd pfd = {.fd = ks_decoder_inbox_fd (inbox), .events = POLLIN};
    ck_assert_int_eq (poll (&pfd, 1, 0), 0);
    ks_decoder_inbox_destroy (&inbox);
    ck_assert_ptr_null (inbox);
    s_fake_stop (&f);
}
END_TEST

START_TEST (test_a_forged_large_message_is_refused)
{
    s_fake_t f;
    s_fake_start (&f);
    ks_decoder_inbox_t *inbox = ks_decoder_inbox_new ();
    s_publish (&f, 2u << 20, "not-the-key");
    jp_msg_t *msg = NULL;
    jp_raw_t *raw = NULL;
    ck_assert_int_eq (s_recv (&f, &msg, &raw), JP_CHANNELS_DEFERRED);
    ck_assert_int_eq (ks_decoder_submit (inbox, JP_CHANNEL_IOPUB, &raw), 0);
    struct pollfd pfd = {.fd = ks_decoder_inbox_fd (inbox), .events = POLLIN};
    ck_assert_int_eq (poll (&pfd, 1, 10000), 1);
    int channel, rc;
    ck_assert (ks_decoder_take (inbox, &channel, &msg, &rc));
    ck_assert_int_eq (rc, JP_ERR_SIGNATURE);
    ck_assert_ptr_null (msg);
    ks_decoder_inbox_destroy (&inbox);
    s_fake_stop (&f);
}
END_TEST

START_TEST (test_an_inbox_let_go_while_its_message_is_away)
{
    s_fake_t f;
    s_fake_start (&f);
    ks_decoder_inbox_t *inbox = ks_decoder_inbox_new ();
    for (int i = 0; i < 4; i++) {
        s_publish (&f, 4u << 20, f.conn.key);
        jp_msg_t *msg = NULL;
        jp_raw_t *raw = NULL;
        ck_assert_int_eq (s_recv (&f, &msg, &raw), JP_CHANNELS_DEFERRED);
        ck_assert_int_eq (ks_decoder_submit (inbox, JP_CHANNEL_IOPUB, &raw), 0);
    }
    ks_decoder_inbox_destroy (&inbox);     /* the worker frees what it decodes */
    /* a raw message never handed over is freed by its taker */
    s_publish (&f, 2u << 20, f.conn.key);
    jp_msg_t *msg = NULL;
    jp_raw_t *raw = NULL;
    ck_assert_int_eq (s_recv (&f, &msg, &raw), JP_CHANNELS_DEFERRED);
    jp_raw_destroy (&raw);
    ck_assert_ptr_null (raw);
    /* and the worker still serves a new inbox after the old one's jobs */
    inbox = ks_decoder_inbox_new ();
    s_publish (&f, 2u << 20, f.conn.key);
    ck_assert_int_eq (s_recv (&f, &msg, &raw), JP_CHANNELS_DEFERRED);
    ck_assert_int_eq (ks_decoder_submit (inbox, JP_CHANNEL_IOPUB, &raw), 0);
    struct pollfd pfd = {.fd = ks_decoder_inbox_fd (inbox), .events = POLLIN};
    ck_assert_int_eq (poll (&pfd, 1, 20000), 1);
    int channel, rc;
    ck_assert (ks_decoder_take (inbox, &channel, &msg, &rc));
    ck_assert_int_eq (rc, 0);
    jp_msg_destroy (&msg);
    ks_decoder_inbox_destroy (&inbox);
    s_fake_stop (&f);
}
END_TEST

Suite *
decoder_suite (void)
{
    Suite *s = suite_create ("decoder");
    TCase *tc = tcase_create ("worker");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_large_messages_come_back_decoded_in_order);
    tcase_add_test (tc, test_a_forged_large_message_is_refused);
    tcase_add_test (tc, test_an_inbox_let_go_while_its_message_is_away);
    suite_add_tcase (s, tc);
    return s;
}
