/* test_jupyter_wire: Jupyter messages over a websocket (gw_jupyter_wire):
 * JSON text frames (a missing channel is shell's), the JSON mode's binary
 * frames with buffers, the v1 subprotocol both ways, hostile offsets and
 * counts, RFC 6455's Sec-WebSocket-Accept example, and the FIFO of a
 * client's messages waiting for its kernel (gw_jupyter_waiting). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "gw_jupyter_waiting.h"
#include "gw_jupyter_wire.h"
#include "suites.h"

static jp_msg_t *
s_msg (const char *type, size_t n_buffers)
{
    jp_msg_t *m = jp_msg_new (type, "sess", "user");
    ck_assert_ptr_nonnull (m);
    jp_msg_set_content (m, json_pack ("{s:s, s:i}", "code", "1+1", "n", 7));
    if (n_buffers) {
        m->buffers = calloc (n_buffers, sizeof *m->buffers);
        for (size_t i = 0; i < n_buffers; i++) {
            m->buffers[i].size = 3 + i;
            m->buffers[i].data = malloc (m->buffers[i].size);
            memset (m->buffers[i].data, 'a' + (int) i, m->buffers[i].size);
        }
        m->n_buffers = n_buffers;
    }
    return m;
}

static void
s_same (const jp_msg_t *a, const jp_msg_t *b)
{
    ck_assert (json_equal (a->header, b->header));
    ck_assert (json_equal (a->parent_header, b->parent_header));
    ck_assert (json_equal (a->metadata, b->metadata));
    ck_assert (json_equal (a->content, b->content));
    ck_assert_uint_eq (a->n_buffers, b->n_buffers);
    for (size_t i = 0; i < a->n_buffers; i++) {
        ck_assert_uint_eq (a->buffers[i].size, b->buffers[i].size);
        ck_assert (memcmp (a->buffers[i].data, b->buffers[i].data, a->buffers[i].size) == 0);
    }
}

START_TEST (test_round_trips)
{
    for (int v1 = 0; v1 <= 1; v1++)
        for (size_t nb = 0; nb <= 2; nb++) {
            jp_msg_t *m = s_msg ("comm_msg", nb);
            size_t len;
            bool binary;
            uint8_t *frame = gw_jupyter_encode (m, JP_CHANNEL_IOPUB, v1, &len, &binary);
            ck_assert_ptr_nonnull (frame);
            ck_assert (binary == (v1 || nb > 0));
            jp_channel_t ch = JP_CHANNEL_SHELL;
            char err[200];
            jp_msg_t *back = gw_jupyter_decode (frame, len, binary, v1, &ch, err, sizeof err);
            ck_assert_msg (back != NULL, "%s", err);
            ck_assert_int_eq (ch, JP_CHANNEL_IOPUB);
            s_same (m, back);
            jp_msg_destroy (&back);
            jp_msg_destroy (&m);
            free (frame);
        }
}
END_TEST

START_TEST (test_json_text)
{
    char err[200];
    jp_channel_t ch;
    const char *no_channel = "{\"header\":{\"msg_id\":\"1\",\"msg_type\":\"kernel_info_request\"},"
                             "\"parent_header\":{},\"metadata\":{},\"content\":{}}";
    jp_msg_t *m = gw_jupyter_decode ((const uint8_t *) no_channel, strlen (no_channel), false,
                                     false, &ch, err, sizeof err);
    ck_assert_ptr_nonnull (m);
    ck_assert_int_eq (ch, JP_CHANNEL_SHELL);
    ck_assert_str_eq (jp_msg_type (m), "kernel_info_request");
    jp_msg_destroy (&m);
    const char *bad[] = {
        "", "[]", "{not json", "{\"header\":{\"msg_type\":\"x\"}}",
        "{\"header\":{\"msg_id\":\"1\",\"msg_type\":\"x\"},\"channel\":\"nope\"}",
        "{\"header\":{\"msg_id\":\"1\",\"msg_type\":\"x\"},\"content\":[]}",
        "{\"header\":{\"msg_id\":1,\"msg_type\":\"x\"}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        ck_assert_ptr_null (gw_jupyter_decode ((const uint8_t *) bad[i], strlen (bad[i]), false,
                                               false, &ch, err, sizeof err));
        ck_assert_msg (err[0], "no reason for %s", bad[i]);
    }
}
END_TEST

START_TEST (test_hostile_binary)
{
    char err[200];
    jp_channel_t ch;
    /* JSON mode: counts and offsets out of bounds */
    uint8_t big_count[] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 8};
    uint8_t backwards[] = {0, 0, 0, 2, 0, 0, 0, 12, 0, 0, 0, 0, '{', '}'};
    uint8_t *v1 = calloc (1, 64);
    ck_assert_ptr_null (gw_jupyter_decode (big_count, sizeof big_count, true, false, &ch, err,
                                           sizeof err));
    ck_assert_ptr_null (gw_jupyter_decode (backwards, sizeof backwards, true, false, &ch, err,
                                           sizeof err));
    ck_assert_ptr_null (gw_jupyter_decode (big_count, 3, true, false, &ch, err, sizeof err));
    /* v1: a huge count, offsets past the end, too short */
    v1[0] = 0xff;
    v1[7] = 0x7f;
    ck_assert_ptr_null (gw_jupyter_decode (v1, 64, true, true, &ch, err, sizeof err));
    memset (v1, 0, 64);
    v1[0] = 6;
    for (int i = 1; i <= 6; i++)
        v1[8 * i] = 200;    /* past the frame */
    ck_assert_ptr_null (gw_jupyter_decode (v1, 64, true, true, &ch, err, sizeof err));
    ck_assert_ptr_null (gw_jupyter_decode (v1, 7, true, true, &ch, err, sizeof err));
    free (v1);
}
END_TEST

START_TEST (test_ws_accept)
{
    char out[64];
    /* RFC 6455, section 1.3 */
    ck_assert (gw_jupyter_ws_accept ("dGhlIHNhbXBsZSBub25jZQ==", out, sizeof out));
    ck_assert_str_eq (out, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    ck_assert (!gw_jupyter_ws_accept ("short", out, sizeof out));
    ck_assert (!gw_jupyter_ws_accept (NULL, out, sizeof out));
    ck_assert (!gw_jupyter_ws_accept ("dGhlIHNhbXBsZSBub25jZQ!!", out, sizeof out));
    ck_assert_int_eq (gw_jupyter_channel ("control"), JP_CHANNEL_CONTROL);
    ck_assert_int_eq (gw_jupyter_channel ("x"), -1);
    ck_assert_int_eq (gw_jupyter_channel (NULL), -1);
}
END_TEST

/* A send of the waiting tests: refuses shell messages while shell_full,
 * fails the type "bad", and records what went. */
typedef struct {
    bool shell_full;
    char went[16][32];
    int n;
} s_kernel_t;

static int
s_fake_send (void *arg, jp_channel_t channel, const jp_msg_t *msg)
{
    s_kernel_t *k = arg;
    if (strcmp (jp_msg_type (msg), "bad") == 0)
        return -EPIPE;
    if (channel == JP_CHANNEL_SHELL && k->shell_full)
        return -EAGAIN;
    snprintf (k->went[k->n++], sizeof k->went[0], "%s", jp_msg_type (msg));
    return 0;
}

START_TEST (test_waiting_keeps_each_channels_order)
{
    gw_waiting_t w = {0};
    s_kernel_t k = {.shell_full = true};
    const char *types[] = {"shell1", "interrupt", "bad", "shell2", "input"};
    jp_channel_t chans[] = {JP_CHANNEL_SHELL, JP_CHANNEL_CONTROL, JP_CHANNEL_CONTROL,
                            JP_CHANNEL_SHELL, JP_CHANNEL_STDIN};
    for (int i = 0; i < 5; i++)
        ck_assert (gw_waiting_push (&w, jp_msg_new (types[i], "s", "u"), chans[i], 100));
    ck_assert (gw_waiting_has (&w, JP_CHANNEL_SHELL));
    ck_assert_uint_eq (w.bytes, 500);
    gw_waiting_flush (&w, s_fake_send, &k);
    /* control and stdin went past the shell messages that must wait; the
       failed one is gone */
    ck_assert_int_eq (k.n, 2);
    ck_assert_str_eq (k.went[0], "interrupt");
    ck_assert_str_eq (k.went[1], "input");
    ck_assert_int_eq (w.n, 2);
    ck_assert_uint_eq (w.bytes, 200);
    ck_assert (!gw_waiting_has (&w, JP_CHANNEL_CONTROL));
    k.shell_full = false;
    gw_waiting_flush (&w, s_fake_send, &k);
    ck_assert_int_eq (k.n, 4);
    ck_assert_str_eq (k.went[2], "shell1");
    ck_assert_str_eq (k.went[3], "shell2");
    ck_assert_int_eq (w.n, 0);
    ck_assert_uint_eq (w.bytes, 0);
    gw_waiting_clear (&w);
}
END_TEST

START_TEST (test_waiting_bounds)
{
    gw_waiting_t w = {0};
    /* by bytes: the message that reaches the bound is kept, the next refused */
    ck_assert (gw_waiting_push (&w, jp_msg_new ("a", "s", "u"), JP_CHANNEL_SHELL,
                                GW_WAITING_BYTES - 1));
    ck_assert (!gw_waiting_full (&w));
    ck_assert (gw_waiting_push (&w, jp_msg_new ("b", "s", "u"), JP_CHANNEL_SHELL, 1));
    ck_assert (gw_waiting_full (&w));
    jp_msg_t *refused = jp_msg_new ("c", "s", "u");
    ck_assert (!gw_waiting_push (&w, refused, JP_CHANNEL_SHELL, 1));
    jp_msg_destroy (&refused);      /* still the caller's */
    gw_waiting_clear (&w);
    ck_assert_int_eq (w.n, 0);
    ck_assert_ptr_null (w.items);
    /* by count */
    for (int i = 0; i < GW_WAITING_MAX; i++)
        ck_assert (gw_waiting_push (&w, jp_msg_new ("m", "s", "u"), JP_CHANNEL_STDIN, 1));
    ck_assert (gw_waiting_full (&w));
    refused = jp_msg_new ("c", "s", "u");
    ck_assert (!gw_waiting_push (&w, refused, JP_CHANNEL_STDIN, 1));
    jp_msg_destroy (&refused);
    gw_waiting_clear (&w);
}
END_TEST

Suite *
jupyter_wire_suite (void)
{
    Suite *s = suite_create ("jupyter_wire");
    TCase *tc = tcase_create ("all");
    tcase_add_test (tc, test_round_trips);
    tcase_add_test (tc, test_json_text);
    tcase_add_test (tc, test_hostile_binary);
    tcase_add_test (tc, test_ws_accept);
    tcase_add_test (tc, test_waiting_keeps_each_channels_order);
    tcase_add_test (tc, test_waiting_bounds);
    suite_add_tcase (s, tc);
    return s;
}
