/* test_zmtp_filter: jp_zmtp_filter, the ZMTP 3 reader of the kernel relay,
 * fed a stream as it could arrive (in one call, a byte per call, chunks of
 * random sizes): it passes the greeting, whole commands and whole messages
 * within the bounds byte for byte and only at message boundaries; it skips
 * a message over message_max bytes or frames_max frames without holding
 * it, and tells on_drop its size and Jupyter parent header (on_drop may
 * put a message in its place); the errors that end a connection stick;
 * big buffers are freed once written out. Pure code, no threads. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jp_zmtp_filter.h"
#include "suites.h"

/* A growable byte string: a stream to feed, or the output expected. */
typedef struct {
    uint8_t *data;
    size_t len, cap;
} s_bytes_t;

static void
s_add (s_bytes_t *b, const void *data, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2;
        b->data = realloc (b->data, b->cap);
        ck_assert_ptr_nonnull (b->data);
    }
    for (size_t i = 0; i < n; i++)  /* no data: a pattern that shows shifts */
        b->data[b->len + i] = data ? ((const uint8_t *) data)[i] : (uint8_t) (i * 7 + 1);
    b->len += n;
}

/* A frame header: flags and size, LONG when size > 255 or long_form. */
static void
s_head (s_bytes_t *b, uint8_t flags, uint64_t size, bool long_form)
{
    uint8_t head[9] = {flags};
    if (size > 255 || long_form) {
        head[0] |= 0x02;
        for (int k = 0; k < 8; k++)
            head[1 + k] = (uint8_t) (size >> (56 - 8 * k));
        s_add (b, head, 9);
    } else {
        head[1] = (uint8_t) size;
        s_add (b, head, 2);
    }
}

static void
s_frame (s_bytes_t *b, uint8_t flags, const void *body, size_t size)
{
    s_head (b, flags, size, false);
    s_add (b, body, size);
}

/* n text frames ("" is an empty frame), the last with MORE if more. */
static void
s_text (s_bytes_t *b, bool more, size_t n, const char *const *frames)
{
    for (size_t i = 0; i < n; i++)
        s_frame (b, i + 1 < n || more ? 0x01 : 0, frames[i], strlen (frames[i]));
}

static const uint8_t s_greeting_bytes[64] = {0xFF, [9] = 0x7F, [10] = 3, [11] = 1,
                                             [12] = 'N', 'U', 'L', 'L'};
static const char s_ready[] = "\x05READY\x0bSocket-Type\0\0\0\x06ROUTER";

/* The greeting and the READY command: what starts every stream. */
static void
s_start (s_bytes_t *b)
{
    s_add (b, s_greeting_bytes, 64);
    s_frame (b, 0x04, s_ready, sizeof s_ready - 1);
}

/* What on_drop saw (the last call); with reply set, it puts a message. */
typedef struct {
    jp_zmtp_filter_t *filter;
    int calls, parents;         /* parents: calls with a parent */
    uint64_t bytes, frames;
    uint8_t parent[256];
    size_t parent_len;
    bool reply;
} s_drops_t;

static void
s_on_drop (void *arg, uint64_t bytes, uint64_t frames, const uint8_t *parent, size_t parent_len)
{
    s_drops_t *d = arg;
    d->calls++;
    d->bytes = bytes;
    d->frames = frames;
    d->parents += parent != NULL;
    d->parent_len = parent ? parent_len : 0;
    ck_assert_uint_le (parent_len, sizeof d->parent);
    if (parent)
        memcpy (d->parent, parent, parent_len);
    if (d->reply) {
        static uint8_t big[300];
        const jp_frame_t f[] = {{(uint8_t *) "dropped", 7}, {d->parent, d->parent_len},
                                {big, sizeof big}};
        ck_assert_int_eq (jp_zmtp_filter_put_message (d->filter, f, 3), 0);
    }
}

/* Appends the filter's pending output to out and marks it written. */
static void
s_drain (jp_zmtp_filter_t *f, s_bytes_t *out)
{
    size_t n = jp_zmtp_filter_pending (f);
    if (n)
        s_add (out, f->out.data + f->out.sent, n);
    jp_zmtp_filter_wrote (f, n);
}

/* Feeds in chunks of 1..max bytes drawn from seed (max 0: one call),
 * draining the output after each feed when drain. Returns all output. */
static s_bytes_t
s_run (jp_zmtp_filter_t *f, const s_bytes_t *in, size_t max, uint32_t seed, bool drain)
{
    s_bytes_t out = {0};
    for (size_t at = 0; at < in->len;) {
        seed = seed * 1103515245u + 12345u;
        size_t n = max ? 1 + (seed >> 8) % max : in->len;
        n = n < in->len - at ? n : in->len - at;
        ck_assert_int_eq (jp_zmtp_filter_feed (f, in->data + at, n), 0);
        at += n;
        if (drain)
            s_drain (f, &out);
    }
    s_drain (f, &out);
    return out;
}

/* Feeds in every way (one call, a byte per call, random chunks, drained
 * or not): the output must be expect, with `commands` commands seen and
 * on_drop (d, may be NULL) called `drops` times. */
static void
s_check_all_ways (uint64_t message_max, uint64_t frames_max, const s_bytes_t *in,
                  const s_bytes_t *expect, uint64_t commands, s_drops_t *d, int drops)
{
    static const size_t maxes[] = {0, 1, 3, 17, 64, 1000};
    for (size_t m = 0; m < sizeof maxes / sizeof *maxes; m++)
        for (uint32_t seed = 1; seed <= 4; seed++) {
            jp_zmtp_filter_t f;
            jp_zmtp_filter_init (&f, message_max, frames_max, d ? s_on_drop : NULL, d);
            if (d)
                *d = (s_drops_t) {.filter = &f, .reply = d->reply};
            s_bytes_t out = s_run (&f, in, maxes[m], seed, seed % 2);
            ck_assert_uint_eq (out.len, expect->len);
            ck_assert_mem_eq (out.data, expect->data, expect->len);
            ck_assert_ptr_null (f.error);
            ck_assert_uint_eq (f.commands, commands);
            ck_assert_int_eq (d ? d->calls : 0, drops);
            jp_zmtp_filter_release (&f);
            free (out.data);
        }
}

START_TEST (test_passes_a_stream_unchanged)
{
    s_bytes_t in = {0};
    s_start (&in);
    s_text (&in, false, 1, (const char *[]) {"hello"});
    s_head (&in, 0, 4, true);   /* a LONG frame of a few bytes */
    s_add (&in, "long", 4);
    s_frame (&in, 0, NULL, 300);
    s_text (&in, false, 1, (const char *[]) {""});
    s_text (&in, true, 4, (const char *[]) {"topic", "<IDS|MSG>", "", "end"});
    s_frame (&in, 0x01, NULL, 300);
    s_frame (&in, 0x01, "", 0);
    s_frame (&in, 0, NULL, 70000);
    s_frame (&in, 0x04, "\x04PING\0\x0a", 7);
    s_text (&in, false, 1, (const char *[]) {"after a PING"});
    s_check_all_ways (1 << 20, 100, &in, &in, 2, NULL, 0);
    free (in.data);
}
END_TEST

START_TEST (test_output_only_at_message_boundaries)
{
    s_bytes_t in = {0};
    s_start (&in);
    s_text (&in, false, 2, (const char *[]) {"first", "message"});
    size_t before = in.len;
    s_frame (&in, 0x01, "a", 1);
    s_frame (&in, 0x01, NULL, 300);
    s_frame (&in, 0, "bc", 2);
    jp_zmtp_filter_t f;
    jp_zmtp_filter_init (&f, 1 << 20, 100, NULL, NULL);
    ck_assert_int_eq (jp_zmtp_filter_feed (&f, in.data, before), 0);
    for (size_t at = before; at + 1 < in.len; at++) {
        ck_assert_int_eq (jp_zmtp_filter_feed (&f, in.data + at, 1), 0);
        ck_assert_uint_eq (jp_zmtp_filter_pending (&f), before);
    }
    ck_assert_mem_eq (f.out.data, in.data, before);
    ck_assert_int_eq (jp_zmtp_filter_feed (&f, in.data + in.len - 1, 1), 0);
    ck_assert_uint_eq (jp_zmtp_filter_pending (&f), in.len);
    ck_assert_mem_eq (f.out.data, in.data, in.len);
    jp_zmtp_filter_release (&f);
    free (in.data);
}
END_TEST

/* A command between the frames of a message (libzmq may send a PING
 * there) passes at once, ahead of the message. */
START_TEST (test_a_command_inside_a_message_passes_first)
{
    s_bytes_t in = {0}, expect = {0};
    s_start (&in);
    size_t start = in.len;
    s_frame (&in, 0x01, NULL, 300);
    size_t ping = in.len;
    s_frame (&in, 0x04, "\x04PING\0\x0a", 7);
    size_t rest = in.len;
    s_frame (&in, 0, "bc", 2);
    s_add (&expect, in.data, start);
    s_add (&expect, in.data + ping, rest - ping);       /* the PING */
    s_add (&expect, in.data + start, ping - start);     /* then the message */
    s_add (&expect, in.data + rest, in.len - rest);
    s_check_all_ways (1 << 20, 100, &in, &expect, 2, NULL, 0);
    free (in.data);
    free (expect.data);
}
END_TEST

START_TEST (test_skips_messages_over_the_bounds)
{
    s_bytes_t in = {0}, expect = {0};
    s_drops_t d = {0};
    s_start (&in);
    s_text (&in, false, 1, (const char *[]) {"before"});
    s_add (&expect, in.data, in.len);
    s_frame (&in, 0x01, NULL, 600);     /* 1200 bytes > 1000 */
    s_frame (&in, 0, NULL, 600);
    size_t at = in.len;
    s_text (&in, false, 1, (const char *[]) {"after"});
    s_add (&expect, in.data + at, in.len - at);
    s_check_all_ways (1000, 4, &in, &expect, 1, &d, 1);
    ck_assert_uint_eq (d.bytes, 1200);
    ck_assert_uint_eq (d.frames, 2);
    ck_assert_int_eq (d.parents, 0);
    /* five frames of 4 at most: skipped; four frames, 1000 bytes: passes */
    s_text (&in, false, 5, (const char *[]) {"1", "2", "3", "4", "5"});
    size_t skipped = in.len;
    s_frame (&in, 0x01, NULL, 400);
    s_frame (&in, 0x01, NULL, 600);
    s_text (&in, false, 2, (const char *[]) {"", ""});
    s_frame (&in, 0, NULL, 1000);
    s_add (&expect, in.data + skipped, in.len - skipped);
    s_check_all_ways (1000, 4, &in, &expect, 1, &d, 2);
    ck_assert_uint_eq (d.bytes, 5);
    ck_assert_uint_eq (d.frames, 5);
    free (in.data);
    free (expect.data);
}
END_TEST

START_TEST (test_skips_a_huge_frame_without_holding_it)
{
    s_bytes_t in = {0};
    s_drops_t d = {0};
    s_start (&in);
    s_text (&in, false, 1, (const char *[]) {"before"});
    size_t passed = in.len;
    s_frame (&in, 0x01, NULL, 1000000);         /* held until... */
    s_head (&in, 0, (uint64_t) 1 << 40, true);  /* ...this is announced */
    jp_zmtp_filter_t f;
    jp_zmtp_filter_init (&f, 1 << 20, 4, s_on_drop, &d);
    ck_assert_int_eq (jp_zmtp_filter_feed (&f, in.data, in.len), 0);
    static uint8_t chunk[64 << 10];
    memset (chunk, 0x5A, sizeof chunk);
    for (int i = 0; i < 160; i++) {     /* 10 MiB of the body */
        ck_assert_int_eq (jp_zmtp_filter_feed (&f, chunk, sizeof chunk - i), 0);
        ck_assert_uint_lt (f.message.cap, 64 << 10);
        ck_assert_uint_lt (f.frame.cap, 64 << 10);
        ck_assert_uint_lt (f.out.cap, 64 << 10);
    }
    ck_assert_uint_eq (jp_zmtp_filter_pending (&f), passed);
    ck_assert_mem_eq (f.out.data, in.data, passed);
    ck_assert_int_eq (d.calls, 0);
    ck_assert_ptr_null (f.error);
    jp_zmtp_filter_release (&f);
    free (in.data);
}
END_TEST

/* A Jupyter message whose buffers put it over a bound of 1000 bytes. */
static void
s_jupyter (s_bytes_t *b, const char *delimiter, size_t parent_size)
{
    s_text (b, true, 4, (const char *[]) {"topic", delimiter, "sig", "{header}"});
    if (parent_size)
        s_frame (b, 0x01, NULL, parent_size);
    else
        s_frame (b, 0x01, "{\"msg_id\":\"p\"}", 14);
    s_text (b, true, 2, (const char *[]) {"{}", "{}"});
    s_frame (b, 0x01, NULL, 700);
    s_frame (b, 0, NULL, 700);
}

START_TEST (test_drop_tells_the_parent_and_may_reply)
{
    s_bytes_t in = {0}, expect = {0};
    s_drops_t d = {.reply = true};
    s_start (&in);
    s_text (&in, false, 1, (const char *[]) {"before"});
    s_add (&expect, in.data, in.len);
    s_jupyter (&in, "<IDS|MSG>", 0);
    size_t after = in.len;
    s_text (&in, false, 1, (const char *[]) {"after"});
    /* on_drop's message in its place, encoded as put_message does */
    s_frame (&expect, 0x01, "dropped", 7);
    s_frame (&expect, 0x01, "{\"msg_id\":\"p\"}", 14);
    s_frame (&expect, 0, (uint8_t[300]) {0}, 300);
    s_add (&expect, in.data + after, in.len - after);
    s_check_all_ways (1000, 100, &in, &expect, 1, &d, 1);
    ck_assert_uint_eq (d.frames, 9);
    ck_assert_uint_eq (d.bytes, 5 + 9 + 3 + 8 + 14 + 2 + 2 + 700 + 700);
    ck_assert_int_eq (d.parents, 1);
    ck_assert_uint_eq (d.parent_len, 14);
    ck_assert_mem_eq (d.parent, "{\"msg_id\":\"p\"}", 14);
    /* after one with a parent: none without a delimiter, none over 64 KiB */
    d.reply = false;
    in.len = expect.len = 0;
    s_start (&in);
    s_add (&expect, in.data, in.len);
    s_jupyter (&in, "<IDS|MSG>", 0);
    s_jupyter (&in, "<IDS|MSX>", 0);
    s_jupyter (&in, "<IDS|MSG>", 70000);
    s_check_all_ways (1000, 100, &in, &expect, 1, &d, 3);
    ck_assert_int_eq (d.parents, 1);
    ck_assert_uint_eq (d.parent_len, 0);
    free (in.data);
    free (expect.data);
}
END_TEST

/* Feeding in (in one call if whole, else a byte per call) fails with
 * -EPROTO after `passed` bytes passed, and so does any later feed. */
static void
s_expect_failure (const s_bytes_t *in, size_t passed, bool whole)
{
    jp_zmtp_filter_t f;
    jp_zmtp_filter_init (&f, 1 << 20, 100, NULL, NULL);
    int rc = whole ? jp_zmtp_filter_feed (&f, in->data, in->len) : 0;
    for (size_t at = 0; !whole && !rc && at < in->len; at++)
        rc = jp_zmtp_filter_feed (&f, in->data + at, 1);
    ck_assert_int_eq (rc, -EPROTO);
    ck_assert_ptr_nonnull (f.error);
    ck_assert_uint_eq (jp_zmtp_filter_pending (&f), passed);
    if (passed)
        ck_assert_mem_eq (f.out.data, in->data, passed);
    ck_assert_int_eq (jp_zmtp_filter_feed (&f, s_greeting_bytes, 64), -EPROTO);
    ck_assert_int_eq (jp_zmtp_filter_feed (&f, s_greeting_bytes, 0), -EPROTO);
    ck_assert_uint_eq (jp_zmtp_filter_pending (&f), passed);
    jp_zmtp_filter_release (&f);
}

START_TEST (test_bad_frames_end_the_connection)
{
    static const uint8_t reserved[] = {0x08, 1, 'x'}, more[] = {0x05, 1, 'x'},
                         top[] = {0x02, 0x80, 0, 0, 0, 0, 0, 0, 1};
    static const uint8_t *const bad[] = {reserved, more, top};
    static const size_t sizes[] = {sizeof reserved, sizeof more, sizeof top};
    for (size_t i = 0; i < 4; i++) {
        s_bytes_t in = {0};
        s_start (&in);
        size_t passed = in.len;
        if (i < 3)
            s_add (&in, bad[i], sizes[i]);
        else    /* a command of 70000 bytes */
            s_frame (&in, 0x04, NULL, 70000);
        s_expect_failure (&in, passed, false);
        s_expect_failure (&in, passed, true);
        free (in.data);
    }
}
END_TEST

/* Greetings broken at byte `at`: no signature, no bit 0 in byte 9,
 * version 2, the CURVE mechanism, a mechanism "NULL" padded with 'x'. */
static const struct {
    size_t at;
    const char *bytes;
} s_bad_greetings[] = {{0, "\x7F"}, {9, "\x7E"}, {10, "\x02"}, {12, "CURVE"}, {20, "x"}};

static void
s_bad_greeting (int i, bool whole)
{
    s_bytes_t in = {0};
    s_add (&in, s_greeting_bytes, 64);
    memcpy (in.data + s_bad_greetings[i].at, s_bad_greetings[i].bytes,
            strlen (s_bad_greetings[i].bytes));
    s_expect_failure (&in, s_bad_greetings[i].at, whole);
    free (in.data);
}

/* Fed a byte per call, each fails at its bad byte, the bytes before passed. */
START_TEST (test_bad_greetings_end_the_connection)
{
    s_bad_greeting (_i, false);
}
END_TEST

/* The same fed in one call: still the bytes before the bad one pass. */
START_TEST (test_bad_greeting_in_one_call_passes_its_start)
{
    s_bad_greeting (_i, true);
}
END_TEST

START_TEST (test_big_buffers_are_freed_once_written)
{
    s_bytes_t in = {0};
    s_start (&in);
    s_frame (&in, 0x01, "big", 3);
    s_frame (&in, 0, NULL, 5 << 20);
    for (int drain_first = 0; drain_first <= 1; drain_first++) {
        jp_zmtp_filter_t f;
        jp_zmtp_filter_init (&f, 8 << 20, 4, NULL, NULL);
        size_t at = 0, start = 0;
        if (drain_first) {  /* the message then becomes the output whole */
            ck_assert_int_eq (jp_zmtp_filter_feed (&f, in.data, at = 100), 0);
            start = jp_zmtp_filter_pending (&f);    /* greeting and READY */
            jp_zmtp_filter_wrote (&f, start);
        }
        for (size_t n; at < in.len; at += n) {
            n = in.len - at < 65000 ? in.len - at : 65000;
            ck_assert_int_eq (jp_zmtp_filter_feed (&f, in.data + at, n), 0);
        }
        ck_assert_uint_eq (jp_zmtp_filter_pending (&f), in.len - start);
        ck_assert_mem_eq (f.out.data + f.out.sent, in.data + start, in.len - start);
        ck_assert_uint_le (f.message.cap, 1 << 20);
        jp_zmtp_filter_wrote (&f, 1000);
        ck_assert_uint_eq (jp_zmtp_filter_pending (&f), in.len - start - 1000);
        ck_assert_uint_gt (f.out.cap, 1 << 20);
        jp_zmtp_filter_wrote (&f, in.len - start - 1000);
        ck_assert_uint_eq (jp_zmtp_filter_pending (&f), 0);
        ck_assert_uint_eq (f.out.cap, 0);
        ck_assert_ptr_null (f.out.data);
        /* and the filter goes on */
        ck_assert_int_eq (jp_zmtp_filter_feed (&f, (const uint8_t *) "\0\2ok", 4), 0);
        ck_assert_uint_eq (jp_zmtp_filter_pending (&f), 4);
        ck_assert_mem_eq (f.out.data, "\0\2ok", 4);
        jp_zmtp_filter_release (&f);
    }
    free (in.data);
}
END_TEST

START_TEST (test_release_frees_everything)
{
    /* output held, mid-message, with a parent header kept */
    s_bytes_t in = {0};
    s_start (&in);
    s_text (&in, true, 5, (const char *[]) {"topic", "<IDS|MSG>", "sig", "{}", "{\"p\":1}"});
    s_head (&in, 0x01, 3000, false);
    s_add (&in, NULL, 1000);
    jp_zmtp_filter_t f;
    jp_zmtp_filter_init (&f, 1 << 20, 100, NULL, NULL);
    ck_assert_int_eq (jp_zmtp_filter_feed (&f, in.data, in.len), 0);
    ck_assert_ptr_nonnull (f.out.data);
    ck_assert_ptr_nonnull (f.message.data);
    ck_assert_ptr_nonnull (f.parent.data);
    ck_assert_ptr_nonnull (f.frame.data);
    jp_zmtp_filter_release (&f);
    ck_assert_ptr_null (f.out.data);
    ck_assert_ptr_null (f.message.data);
    ck_assert_ptr_null (f.frame.data);
    ck_assert_ptr_null (f.parent.data);
    free (in.data);
}
END_TEST

Suite *
zmtp_filter_suite (void)
{
    Suite *s = suite_create ("zmtp_filter");
    TCase *tc = tcase_create ("filter");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_passes_a_stream_unchanged);
    tcase_add_test (tc, test_output_only_at_message_boundaries);
    tcase_add_test (tc, test_a_command_inside_a_message_passes_first);
    tcase_add_test (tc, test_skips_messages_over_the_bounds);
    tcase_add_test (tc, test_skips_a_huge_frame_without_holding_it);
    tcase_add_test (tc, test_drop_tells_the_parent_and_may_reply);
    tcase_add_test (tc, test_bad_frames_end_the_connection);
    size_t greetings = sizeof s_bad_greetings / sizeof *s_bad_greetings;
    tcase_add_loop_test (tc, test_bad_greetings_end_the_connection, 0, (int) greetings);
    tcase_add_loop_test (tc, test_bad_greeting_in_one_call_passes_its_start, 0,
                         (int) greetings);
    tcase_add_test (tc, test_big_buffers_are_freed_once_written);
    tcase_add_test (tc, test_release_frees_everything);
    suite_add_tcase (s, tc);
    return s;
}
