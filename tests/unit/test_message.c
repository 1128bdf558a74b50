/* test_message: jp_msg_new's header, encode/decode round trips, and every
 * way jp_msg_decode refuses a message, with the exact jp_error_t. Also
 * decodes frames packed and signed by the real jupyter_client (from
 * fixtures/sign_vectors.json). And jp_json's text, byte for byte jansson's. */
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jp_json.h"
#include "jp_log.h"
#include "jp_message.h"
#include "jp_random.h"
#include "suites.h"
#include "testutil.h"

static const uint8_t KEY[] = "a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1";
#define KEY_LEN (sizeof KEY - 1)

/* Borrowed parts over frames, for jp_msg_decode. */
static jp_part_t *
s_parts (const jp_frame_t *frames, size_t n)
{
    jp_part_t *parts = calloc (n ? n : 1, sizeof *parts);
    ck_assert_ptr_nonnull (parts);
    for (size_t i = 0; i < n; i++)
        parts[i] = (jp_part_t) {frames[i].data, frames[i].size};
    return parts;
}

/* A message with the given strings as its four JSON frames, correctly
 * signed with KEY, after the delimiter: parts[0] "<IDS|MSG>", parts[1] the
 * signature, parts[2..5] the frames. sig must hold 65 bytes. */
static void
s_signed (jp_part_t parts[6], char *sig, const char *header, const char *parent,
          const char *metadata, const char *content)
{
    parts[0] = (jp_part_t) {JP_DELIMITER, strlen (JP_DELIMITER)};
    const char *texts[4] = {header, parent, metadata, content};
    for (int i = 0; i < 4; i++)
        parts[2 + i] = (jp_part_t) {texts[i], strlen (texts[i])};
    ck_assert_int_eq (jp_sign (KEY, KEY_LEN, parts + 2, sig), 0);
    parts[1] = (jp_part_t) {sig, strlen (sig)};
}

#define GOOD_HEADER "{\"msg_id\":\"m1\",\"msg_type\":\"status\",\"session\":\"s\"}"

/* Decodes and checks the error; *msg_p must stay NULL. */
static void
s_expect_error (const jp_part_t *parts, size_t n, const uint8_t *key, size_t key_len,
                int expected)
{
    jp_msg_t *msg = (jp_msg_t *) &msg;      /* not NULL, to see it cleared */
    int rc = jp_msg_decode (parts, n, key, key_len, &msg);
    ck_assert_msg (rc == expected, "decode gave %d (%s), expected %d (%s)", rc,
                   jp_strerror (rc), expected, jp_strerror (expected));
    ck_assert_ptr_null (msg);
}

static bool
s_is_uuid4 (const char *s)
{
    if (strlen (s) != 36)
        return false;
    for (int i = 0; i < 36; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? s[i] != '-' : !strchr ("0123456789abcdef", s[i]))
            return false;
    }
    return s[14] == '4' && strchr ("89ab", s[19]);
}

/* The header has every field the protocol asks for, with the right shapes. */
START_TEST (test_new_header)
{
    time_t before = time (NULL);
    jp_msg_t *msg = jp_msg_new ("execute_request", "sess-1", "alice");
    time_t after = time (NULL);
    ck_assert_ptr_nonnull (msg);
    const char *id = json_string_value (json_object_get (msg->header, "msg_id"));
    ck_assert_ptr_nonnull (id);
    ck_assert_msg (s_is_uuid4 (id), "msg_id %s is not a version 4 UUID", id);
    ck_assert_str_eq (jp_msg_id (msg), id);
    ck_assert_str_eq (json_string_value (json_object_get (msg->header, "version")), "5.3");
    ck_assert_str_eq (json_string_value (json_object_get (msg->header, "session")), "sess-1");
    ck_assert_str_eq (json_string_value (json_object_get (msg->header, "username")), "alice");
    ck_assert_str_eq (json_string_value (json_object_get (msg->header, "msg_type")),
                      "execute_request");
    ck_assert_str_eq (jp_msg_type (msg), "execute_request");

    /* 2026-11-22T09:30:00.123456Z, in UTC, now */
    const char *date = json_string_value (json_object_get (msg->header, "date"));
    ck_assert_ptr_nonnull (date);
    ck_assert_uint_eq (strlen (date), 27);
    for (int i = 0; i < 27; i++) {
        char want = i == 4 || i == 7 ? '-' : i == 10 ? 'T' : i == 13 || i == 16 ? ':'
                  : i == 19 ? '.' : i == 26 ? 'Z' : '0';
        if (want == '0')
            ck_assert_msg (isdigit ((unsigned char) date[i]), "date %s: char %d", date, i);
        else
            ck_assert_msg (date[i] == want, "date %s: char %d", date, i);
    }
    struct tm tm = {0};
    ck_assert_ptr_nonnull (strptime (date, "%Y-%m-%dT%H:%M:%S", &tm));
    time_t t = timegm (&tm);
    ck_assert_int_ge (t, before - 1);
    ck_assert_int_le (t, after + 1);

    ck_assert (json_is_object (msg->parent_header) && json_object_size (msg->parent_header) == 0);
    ck_assert (json_is_object (msg->metadata) && json_object_size (msg->metadata) == 0);
    ck_assert (json_is_object (msg->content) && json_object_size (msg->content) == 0);
    ck_assert_uint_eq (msg->n_ids, 0);
    ck_assert_uint_eq (msg->n_buffers, 0);
    ck_assert_str_eq (jp_msg_parent_id (msg), "");
    jp_msg_destroy (&msg);
    ck_assert_ptr_null (msg);
    jp_msg_destroy (&msg);      /* safe on NULL */
    jp_msg_destroy (NULL);
}
END_TEST

/* Every message gets a fresh msg_id; defaults fill session and username. */
START_TEST (test_new_defaults_and_fresh_ids)
{
    jp_msg_t *a = jp_msg_new ("status", NULL, NULL);
    jp_msg_t *b = jp_msg_new ("status", NULL, NULL);
    ck_assert_ptr_nonnull (a);
    ck_assert_ptr_nonnull (b);
    ck_assert_str_ne (jp_msg_id (a), jp_msg_id (b));
    ck_assert_str_eq (json_string_value (json_object_get (a->header, "session")), "");
    ck_assert_str_eq (json_string_value (json_object_get (a->header, "username")), "codebox");
    jp_msg_destroy (&a);
    jp_msg_destroy (&b);
}
END_TEST

/* jp_msg_is_idle: a status whose execution_state is "idle", nothing
 * else (busy, another type with that content, no content). */
START_TEST (test_is_idle)
{
    jp_msg_t *m = jp_msg_new ("status", NULL, NULL);
    ck_assert (!jp_msg_is_idle (m));
    jp_msg_set_content (m, json_pack ("{s:s}", "execution_state", "busy"));
    ck_assert (!jp_msg_is_idle (m));
    jp_msg_set_content (m, json_pack ("{s:s}", "execution_state", "idle"));
    ck_assert (jp_msg_is_idle (m));
    jp_msg_set_content (m, json_pack ("{s:i}", "execution_state", 1));
    ck_assert (!jp_msg_is_idle (m));
    jp_msg_destroy (&m);
    m = jp_msg_new ("stream", NULL, NULL);
    jp_msg_set_content (m, json_pack ("{s:s}", "execution_state", "idle"));
    ck_assert (!jp_msg_is_idle (m));
    jp_msg_destroy (&m);
}
END_TEST

/* A message with routing ids, unicode content, metadata, a parent and
 * binary buffers survives encode then decode unchanged. */
START_TEST (test_round_trip)
{
    jp_msg_t *parent = jp_msg_new ("execute_request", "s", "u");
    jp_msg_t *msg = jp_msg_new ("stream", "sess-rt", "bob");
    ck_assert_ptr_nonnull (parent);
    ck_assert_ptr_nonnull (msg);
    jp_msg_set_parent (msg, parent);
    jp_msg_set_content (msg, json_pack ("{s:s, s:s, s:[i,f,b,n], s:{s:s}}", "name", "stdout",
                                        "text", "h\xc3\xa9llo \xe6\x97\xa5\xe6\x9c\xac "
                                        "\xf0\x9f\x8e\x89 \"q\" \\ \n\t\x01",
                                        "list", -42, 2.5, 1, "nested", "k",
                                        "\xe2\x9c\x93"));
    json_object_set_new (msg->metadata, "started", json_string ("2026-11-22T09:30:00Z"));
    const uint8_t id1[] = {0x00, 0x01, 0xff, 0x00, 0x7f};
    ck_assert_int_eq (jp_msg_add_id (msg, id1, sizeof id1), 0);
    ck_assert_int_eq (jp_msg_add_id (msg, "peer-2", 6), 0);
    ck_assert_int_eq (jp_msg_add_id (msg, "", 0), 0);
    /* buffers: binary, empty, and one that looks like the delimiter */
    msg->n_buffers = 3;
    msg->buffers = calloc (3, sizeof *msg->buffers);
    ck_assert_ptr_nonnull (msg->buffers);
    const char *bufs[3] = {"\x00\x10\x20\xff", "", JP_DELIMITER};
    size_t buf_sizes[3] = {4, 0, strlen (JP_DELIMITER)};
    for (int i = 0; i < 3; i++) {
        msg->buffers[i].data = malloc (buf_sizes[i] + 1);
        memcpy (msg->buffers[i].data, bufs[i], buf_sizes[i]);
        msg->buffers[i].size = buf_sizes[i];
    }

    jp_frame_t *frames = NULL;
    size_t n = 0;
    ck_assert_int_eq (jp_msg_encode (msg, KEY, KEY_LEN, &frames, &n), 0);
    ck_assert_uint_eq (n, 3 + 6 + 3);
    ck_assert_uint_eq (frames[3].size, strlen (JP_DELIMITER));
    ck_assert_mem_eq (frames[3].data, JP_DELIMITER, frames[3].size);
    ck_assert_uint_eq (frames[4].size, 64);
    for (size_t k = 0; k < 64; k++)     /* frames are not NUL-terminated */
        ck_assert_ptr_nonnull (memchr ("0123456789abcdef", frames[4].data[k], 16));

    jp_part_t *parts = s_parts (frames, n);
    jp_msg_t *back = NULL;
    ck_assert_int_eq (jp_msg_decode (parts, n, KEY, KEY_LEN, &back), 0);
    ck_assert_ptr_nonnull (back);
    ck_assert (json_equal (back->header, msg->header));
    ck_assert (json_equal (back->parent_header, parent->header));
    ck_assert (json_equal (back->metadata, msg->metadata));
    ck_assert (json_equal (back->content, msg->content));
    ck_assert_str_eq (json_string_value (json_object_get (back->content, "text")),
                      "h\xc3\xa9llo \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x8e\x89 \"q\" \\ \n\t\x01");
    ck_assert_str_eq (jp_msg_parent_id (back), jp_msg_id (parent));
    ck_assert_str_eq (jp_msg_type (back), "stream");
    ck_assert_uint_eq (back->n_ids, 3);
    ck_assert_uint_eq (back->ids[0].size, sizeof id1);
    ck_assert_mem_eq (back->ids[0].data, id1, sizeof id1);
    ck_assert_uint_eq (back->ids[1].size, 6);
    ck_assert_mem_eq (back->ids[1].data, "peer-2", 6);
    ck_assert_uint_eq (back->ids[2].size, 0);
    ck_assert_uint_eq (back->n_buffers, 3);
    for (int i = 0; i < 3; i++) {
        ck_assert_uint_eq (back->buffers[i].size, buf_sizes[i]);
        if (buf_sizes[i])
            ck_assert_mem_eq (back->buffers[i].data, bufs[i], buf_sizes[i]);
    }

    /* Re-encoding the decoded message gives the same bytes. */
    jp_frame_t *again = NULL;
    size_t n_again = 0;
    ck_assert_int_eq (jp_msg_encode (back, KEY, KEY_LEN, &again, &n_again), 0);
    ck_assert_uint_eq (n_again, n);
    for (size_t i = 0; i < n; i++) {
        ck_assert_uint_eq (again[i].size, frames[i].size);
        if (frames[i].size)
            ck_assert_mem_eq (again[i].data, frames[i].data, frames[i].size);
    }
    jp_frames_free (again, n_again);
    free (parts);
    jp_frames_free (frames, n);
    jp_frames_free (NULL, 3);   /* safe on NULL */
    jp_msg_destroy (&back);
    jp_msg_destroy (&msg);
    jp_msg_destroy (&parent);
}
END_TEST

/* With an empty key the signature frame is empty, and decoding with the
 * empty key accepts it while a keyed receiver refuses it. */
START_TEST (test_round_trip_unsigned)
{
    jp_msg_t *msg = jp_msg_new ("kernel_info_request", "s", NULL);
    jp_frame_t *frames = NULL;
    size_t n = 0;
    ck_assert_int_eq (jp_msg_encode (msg, NULL, 0, &frames, &n), 0);
    ck_assert_uint_eq (n, 6);
    ck_assert_uint_eq (frames[1].size, 0);
    jp_part_t *parts = s_parts (frames, n);
    jp_msg_t *back = NULL;
    ck_assert_int_eq (jp_msg_decode (parts, n, NULL, 0, &back), 0);
    ck_assert_str_eq (jp_msg_id (back), jp_msg_id (msg));
    ck_assert_uint_eq (back->n_ids, 0);
    ck_assert_uint_eq (back->n_buffers, 0);
    s_expect_error (parts, n, KEY, KEY_LEN, JP_ERR_SIGNATURE);
    jp_msg_destroy (&back);
    free (parts);
    jp_frames_free (frames, n);
    jp_msg_destroy (&msg);
}
END_TEST

/* Frames packed and signed by jupyter_client decode, with their parent. */
START_TEST (test_decode_jupyter_client_frames)
{
    json_t *json = tu_load_json ("fixtures/sign_vectors.json");
    json_t *vectors = json_object_get (json, "vectors");
    size_t i, decoded = 0;
    json_t *item;
    json_array_foreach (vectors, i, item) {
        size_t key_len;
        uint8_t *key = tu_hex_decode (json_string_value (json_object_get (item, "key_hex")),
                                      &key_len);
        const char *sig = json_string_value (json_object_get (item, "signature"));
        jp_part_t parts[7] = {{"routing", 7}, {JP_DELIMITER, 9}, {sig, strlen (sig)}};
        static const char *fields[4] = {"header", "parent_header", "metadata", "content"};
        for (int f = 0; f < 4; f++) {
            json_t *s = json_object_get (item, fields[f]);
            parts[3 + f] = (jp_part_t) {json_string_value (s), json_string_length (s)};
        }
        jp_msg_t *msg = NULL;
        const char *name = json_string_value (json_object_get (item, "name"));
        int rc = jp_msg_decode (parts, 7, key, key_len, &msg);
        ck_assert_msg (rc == 0, "%s: %s", name, jp_strerror (rc));
        if (strstr (name, "execute_reply_with_parent")) {
            ck_assert_str_eq (jp_msg_type (msg), "execute_reply");
            ck_assert_str_eq (jp_msg_parent_id (msg), "11111111-2222-4333-8444-555555555555");
            ck_assert_int_eq (json_integer_value (json_object_get (msg->content,
                                                                   "execution_count")), 7);
        }
        if (strstr (name, "stream_unicode"))
            ck_assert_ptr_nonnull (strstr (json_string_value (json_object_get (msg->content, "text")),
                                           "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e"));
        ck_assert_uint_eq (msg->n_ids, 1);
        jp_msg_destroy (&msg);
        free (key);
        decoded++;
    }
    ck_assert_uint_ge (decoded, 30);
    json_decref (json);
}
END_TEST

/* No "<IDS|MSG>" frame at all, or no frames. */
START_TEST (test_decode_no_delimiter)
{
    jp_part_t parts[6];
    char sig[65];
    s_signed (parts, sig, GOOD_HEADER, "{}", "{}", "{}");
    s_expect_error (parts + 1, 5, KEY, KEY_LEN, JP_ERR_NO_DELIMITER);
    s_expect_error (parts, 0, KEY, KEY_LEN, JP_ERR_NO_DELIMITER);
    /* a near-miss: the delimiter without its last byte */
    parts[0].size = 8;
    s_expect_error (parts, 6, KEY, KEY_LEN, JP_ERR_NO_DELIMITER);
    parts[0].size = 9;
    jp_msg_t *msg = NULL;
    ck_assert_int_eq (jp_msg_decode (parts, 6, KEY, KEY_LEN, &msg), 0);
    jp_msg_destroy (&msg);
}
END_TEST

/* Fewer than five frames after the delimiter. */
START_TEST (test_decode_truncated)
{
    jp_part_t parts[6];
    char sig[65];
    s_signed (parts, sig, GOOD_HEADER, "{}", "{}", "{}");
    for (size_t n = 1; n < 6; n++)
        s_expect_error (parts, n, KEY, KEY_LEN, JP_ERR_TRUNCATED);
}
END_TEST

/* A wrong digit, a wrong length, an empty signature, another key, a frame
 * changed after signing: each is JP_ERR_SIGNATURE. */
START_TEST (test_decode_bad_signature)
{
    jp_part_t parts[6];
    char sig[65];
    s_signed (parts, sig, GOOD_HEADER, "{}", "{}", "{\"code\":\"1+1\"}");
    char bad[66];
    strcpy (bad, sig);
    bad[10] = bad[10] == 'a' ? 'b' : 'a';
    parts[1] = (jp_part_t) {bad, 64};
    s_expect_error (parts, 6, KEY, KEY_LEN, JP_ERR_SIGNATURE);
    strcpy (bad, sig);
    parts[1] = (jp_part_t) {bad, 63};
    s_expect_error (parts, 6, KEY, KEY_LEN, JP_ERR_SIGNATURE);
    bad[64] = '0', bad[65] = '\0';
    parts[1] = (jp_part_t) {bad, 65};
    s_expect_error (parts, 6, KEY, KEY_LEN, JP_ERR_SIGNATURE);
    parts[1] = (jp_part_t) {"", 0};
    s_expect_error (parts, 6, KEY, KEY_LEN, JP_ERR_SIGNATURE);
    parts[1] = (jp_part_t) {sig, 64};
    const uint8_t other[] = "another-key";
    s_expect_error (parts, 6, other, sizeof other - 1, JP_ERR_SIGNATURE);
    parts[5] = (jp_part_t) {"{\"code\":\"1+2\"}", 14};
    s_expect_error (parts, 6, KEY, KEY_LEN, JP_ERR_SIGNATURE);
}
END_TEST

/* A message encoded with one key is refused by a receiver with another. */
START_TEST (test_decode_other_key)
{
    jp_msg_t *msg = jp_msg_new ("execute_request", "s", NULL);
    jp_frame_t *frames = NULL;
    size_t n = 0;
    const uint8_t other[] = "0000000000000000000000000000000000000000000000000000000000000000";
    ck_assert_int_eq (jp_msg_encode (msg, other, sizeof other - 1, &frames, &n), 0);
    jp_part_t *parts = s_parts (frames, n);
    s_expect_error (parts, n, KEY, KEY_LEN, JP_ERR_SIGNATURE);
    jp_msg_t *back = NULL;
    ck_assert_int_eq (jp_msg_decode (parts, n, other, sizeof other - 1, &back), 0);
    jp_msg_destroy (&back);
    free (parts);
    jp_frames_free (frames, n);
    jp_msg_destroy (&msg);
}
END_TEST

/* A correctly signed frame that is not JSON, or JSON but not an object, in
 * each of the four positions (_i), is JP_ERR_JSON. */
START_TEST (test_decode_bad_json)
{
    static const char *bad[] = {"{\"msg_id\":", "not json", "[1,2,3]", "\"text\"", "42", "",
                                "{} {}", "{\"a\":1}x"};
    for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
        const char *texts[4] = {GOOD_HEADER, "{}", "{}", "{}"};
        texts[_i] = bad[b];
        jp_part_t parts[6];
        char sig[65];
        s_signed (parts, sig, texts[0], texts[1], texts[2], texts[3]);
        jp_msg_t *msg = (jp_msg_t *) &msg;
        int rc = jp_msg_decode (parts, 6, KEY, KEY_LEN, &msg);
        ck_assert_msg (rc == JP_ERR_JSON, "frame %d = '%s': got %d (%s)", _i, bad[b], rc,
                       jp_strerror (rc));
        ck_assert_ptr_null (msg);
    }
}
END_TEST

/* A memo of the parent_header: the same bytes again give the same value
 * (shared), other bytes are parsed and remembered, a bad parent is still
 * refused, and a parent over JP_MSG_MEMO_MAX is parsed each time. */
START_TEST (test_decode_memo_shares_the_parent)
{
    const char *p1 = "{\"msg_id\": \"r1\", \"msg_type\": \"execute_request\"}";
    const char *p2 = "{\"msg_id\": \"r2\", \"msg_type\": \"execute_request\"}";
    jp_msg_memo_t memo = {0};
    jp_part_t parts[6];
    char sig[65];
    jp_msg_t *a, *b, *c, *d;
    s_signed (parts, sig, GOOD_HEADER, p1, "{}", "{}");
    ck_assert_int_eq (jp_msg_decode_memo (parts, 6, KEY, KEY_LEN, &memo, &a), 0);
    ck_assert_int_eq (jp_msg_decode_memo (parts, 6, KEY, KEY_LEN, &memo, &b), 0);
    ck_assert_ptr_eq (a->parent_header, b->parent_header);
    ck_assert_str_eq (jp_msg_parent_id (b), "r1");
    s_signed (parts, sig, GOOD_HEADER, p2, "{}", "{}");
    ck_assert_int_eq (jp_msg_decode_memo (parts, 6, KEY, KEY_LEN, &memo, &c), 0);
    ck_assert_ptr_ne (c->parent_header, a->parent_header);
    ck_assert_str_eq (jp_msg_parent_id (c), "r2");
    ck_assert_str_eq (jp_msg_parent_id (a), "r1");
    ck_assert_ptr_eq (memo.value, c->parent_header);
    s_signed (parts, sig, GOOD_HEADER, "{\"msg_id\": ", "{}", "{}");
    jp_msg_t *bad = NULL;
    ck_assert_int_eq (jp_msg_decode_memo (parts, 6, KEY, KEY_LEN, &memo, &bad), JP_ERR_JSON);
    ck_assert_ptr_null (bad);
    ck_assert_ptr_eq (memo.value, c->parent_header);     /* kept */
    size_t big = JP_MSG_MEMO_MAX + 100;
    char *long_parent = malloc (big + 32);
    int at = snprintf (long_parent, big + 32, "{\"msg_id\": \"r3\", \"pad\": \"");
    memset (long_parent + at, 'x', big);
    strcpy (long_parent + at + big, "\"}");
    s_signed (parts, sig, GOOD_HEADER, long_parent, "{}", "{}");
    ck_assert_int_eq (jp_msg_decode_memo (parts, 6, KEY, KEY_LEN, &memo, &d), 0);
    ck_assert_str_eq (jp_msg_parent_id (d), "r3");
    ck_assert_ptr_eq (memo.value, c->parent_header);     /* not kept */
    free (long_parent);
    jp_msg_destroy (&a);
    jp_msg_destroy (&b);
    jp_msg_destroy (&c);
    jp_msg_destroy (&d);
    jp_msg_memo_release (&memo);
    ck_assert_ptr_null (memo.value);
}
END_TEST

/* jp_json_load_flat: what it takes is what jansson gives (the same keys
 * in the same order, the same strings); anything else is left to jansson. */
START_TEST (test_load_flat_is_janssons_or_declines)
{
    static const char *taken[] = {
        "{}", " { } \n", "{\"a\":\"b\"}",
        "{\"msg_id\": \"x-1\", \"msg_type\": \"status\", \"date\": \"2026-11-29T21:00:00Z\"}",
        "{\"a\": \"1\", \"a\": \"2\", \"b\": \"\"}",    /* the last one wins, as in jansson */
        "{\"\xc3\xa9t\xc3\xa9\": \"\xe2\x82\xac \xf0\x9f\x98\x80\"}", "\t{\"\":\"\"}\r\n",
    };
    for (size_t i = 0; i < sizeof taken / sizeof *taken; i++) {
        json_t *ours = jp_json_load_flat (taken[i], strlen (taken[i]));
        json_t *theirs = json_loadb (taken[i], strlen (taken[i]), 0, NULL);
        ck_assert_msg (ours && theirs && json_equal (ours, theirs), "%s", taken[i]);
        char *a = json_dumps (ours, JSON_COMPACT), *b = json_dumps (theirs, JSON_COMPACT);
        ck_assert_str_eq (a, b);
        free (a);
        free (b);
        json_decref (ours);
        json_decref (theirs);
    }
    static const char *declined[] = {
        "", "{", "}", "[]", "\"a\"", "{\"a\":1}", "{\"a\":\"b\",}", "{\"a\":\"b\"} x",
        "{\"a\":\"b\"}}", "{\"a\" \"b\"}", "{\"a\":\"b\" \"c\":\"d\"}", "{\"a\":\"b\\n\"}",
        "{\"a\\u0000\":\"b\"}", "{\"a\":{}}", "{\"a\":null}", "{\"a\":\"\x01\"}",
        "{\"a\":\"\xff\"}", "{\"a\":\"\xed\xa0\x80\"}", "{,}", "{\"a\":\"b\"", "{\"a\":}",
    };
    for (size_t i = 0; i < sizeof declined / sizeof *declined; i++)
        ck_assert_msg (jp_json_load_flat (declined[i], strlen (declined[i])) == NULL, "%s",
                       declined[i]);
}
END_TEST

/* A header without msg_id or msg_type strings is JP_ERR_HEADER. */
START_TEST (test_decode_bad_header)
{
    static const char *headers[] = {
        "{\"msg_type\":\"status\"}",
        "{\"msg_id\":\"m1\"}",
        "{}",
        "{\"msg_id\":1,\"msg_type\":\"status\"}",
        "{\"msg_id\":\"m1\",\"msg_type\":null}",
    };
    for (size_t h = 0; h < sizeof headers / sizeof *headers; h++) {
        jp_part_t parts[6];
        char sig[65];
        s_signed (parts, sig, headers[h], "{}", "{}", "{}");
        jp_msg_t *msg = (jp_msg_t *) &msg;
        int rc = jp_msg_decode (parts, 6, KEY, KEY_LEN, &msg);
        ck_assert_msg (rc == JP_ERR_HEADER, "header %s: got %d (%s)", headers[h], rc,
                       jp_strerror (rc));
        ck_assert_ptr_null (msg);
    }
    /* and the smallest good header passes */
    jp_part_t parts[6];
    char sig[65];
    s_signed (parts, sig, "{\"msg_id\":\"\",\"msg_type\":\"\"}", "{}", "{}", "{}");
    jp_msg_t *msg = NULL;
    ck_assert_int_eq (jp_msg_decode (parts, 6, KEY, KEY_LEN, &msg), 0);
    jp_msg_destroy (&msg);
}
END_TEST

/* The signature is checked before any JSON is parsed: a bad frame with a
 * bad signature is a signature error, not a JSON error. */
START_TEST (test_decode_signature_before_json)
{
    jp_part_t parts[6];
    char sig[65];
    s_signed (parts, sig, "not json", "{}", "{}", "{}");
    parts[1] = (jp_part_t) {"0000000000000000000000000000000000000000000000000000000000000000", 64};
    s_expect_error (parts, 6, KEY, KEY_LEN, JP_ERR_SIGNATURE);
}
END_TEST

/* Routing ids are everything before the first delimiter; buffers are
 * everything after content. */
START_TEST (test_decode_ids_and_buffers)
{
    jp_part_t sig_parts[6];
    char sig[65];
    s_signed (sig_parts, sig, GOOD_HEADER, "{}", "{}", "{}");
    jp_part_t parts[10] = {{"id-a", 4}, {"id-b", 4}};
    memcpy (parts + 2, sig_parts, sizeof sig_parts);
    parts[8] = (jp_part_t) {"buf-0", 5};
    parts[9] = (jp_part_t) {"\x00\x01", 2};
    jp_msg_t *msg = NULL;
    ck_assert_int_eq (jp_msg_decode (parts, 10, KEY, KEY_LEN, &msg), 0);
    ck_assert_uint_eq (msg->n_ids, 2);
    ck_assert_mem_eq (msg->ids[1].data, "id-b", 4);
    ck_assert_uint_eq (msg->n_buffers, 2);
    ck_assert_uint_eq (msg->buffers[1].size, 2);
    ck_assert_mem_eq (msg->buffers[1].data, "\x00\x01", 2);
    ck_assert_str_eq (jp_msg_id (msg), "m1");
    ck_assert_str_eq (jp_msg_type (msg), "status");
    jp_msg_destroy (&msg);
}
END_TEST

/* set_parent copies the parent's header (a copy, not a shared object), and
 * parent_id reads its msg_id. */
START_TEST (test_set_parent)
{
    jp_msg_t *parent = jp_msg_new ("execute_request", "s1", NULL);
    jp_msg_t *child = jp_msg_new ("execute_reply", "s2", NULL);
    ck_assert_str_eq (jp_msg_parent_id (child), "");
    jp_msg_set_parent (child, parent);
    ck_assert (json_equal (child->parent_header, parent->header));
    ck_assert_ptr_ne (child->parent_header, parent->header);
    ck_assert_str_eq (jp_msg_parent_id (child), jp_msg_id (parent));
    ck_assert_str_ne (jp_msg_parent_id (child), jp_msg_id (child));
    char *id = strdup (jp_msg_id (parent));
    jp_msg_destroy (&parent);       /* the copy outlives the parent */
    ck_assert_str_eq (jp_msg_parent_id (child), id);
    free (id);
    jp_msg_destroy (&child);
}
END_TEST

/* set_content steals the new content; NULL means an empty object. */
START_TEST (test_set_content)
{
    jp_msg_t *msg = jp_msg_new ("execute_request", "s", NULL);
    json_t *content = json_pack ("{s:s}", "code", "x = 1");
    jp_msg_set_content (msg, content);
    ck_assert_ptr_eq (msg->content, content);
    ck_assert_int_eq (content->refcount, 1);
    jp_msg_set_content (msg, NULL);
    ck_assert (json_is_object (msg->content));
    ck_assert_uint_eq (json_object_size (msg->content), 0);
    jp_msg_destroy (&msg);
}
END_TEST

/* Each error has its own text. */
START_TEST (test_strerror)
{
    int codes[] = {0, JP_ERR_NOMEM, JP_ERR_NO_DELIMITER, JP_ERR_TRUNCATED, JP_ERR_SIGNATURE,
                   JP_ERR_JSON, JP_ERR_HEADER, JP_ERR_CRYPTO};
    size_t n = sizeof codes / sizeof *codes;
    for (size_t i = 0; i < n; i++) {
        ck_assert_str_ne (jp_strerror (codes[i]), jp_strerror (-99));
        for (size_t j = 0; j < i; j++)
            ck_assert_str_ne (jp_strerror (codes[i]), jp_strerror (codes[j]));
    }
}
END_TEST


/* jp_log_escape: control characters become \xHH, everything else (UTF-8
 * included) passes, and nothing is written past cap, not even half an
 * escape. */
/* A content frame "{\"data\":{\"application/json\":[0,0,...]}}" of n zeros (malloc'd). */
static char *
s_zeros_content (size_t n)
{
    const char *head = "{\"data\":{\"application/json\":[", *tail = "]},\"metadata\":{}}";
    char *text = malloc (strlen (head) + 2 * n + strlen (tail) + 1);
    char *p = stpcpy (text, head);
    for (size_t i = 0; i < n; i++) {
        *p++ = '0';
        *p++ = ',';
    }
    p[-1] = '\0';
    p--;
    strcpy (p, tail);
    return text;
}

START_TEST (test_decode_bounds_the_values_it_keeps)
{
    /* a display over the bound is kept as a note; another message is refused */
    char *content = s_zeros_content (JP_VALUES_MAX + 10);
    jp_part_t parts[6];
    char sig[65];
    s_signed (parts, sig, "{\"msg_id\":\"m1\",\"msg_type\":\"display_data\"}", "{}", "{}",
              content);
    jp_msg_t *msg = NULL;
    ck_assert_int_eq (jp_msg_decode (parts, 6, KEY, KEY_LEN, &msg), 0);
    const char *note = json_string_value (
        json_object_get (json_object_get (msg->content, "data"), "text/plain"));
    ck_assert_ptr_nonnull (note);
    ck_assert_ptr_nonnull (strstr (note, "JSON values was not kept"));
    ck_assert_int_eq (json_object_size (json_object_get (msg->content, "data")), 1);
    jp_msg_destroy (&msg);
    s_signed (parts, sig, "{\"msg_id\":\"m1\",\"msg_type\":\"execute_reply\"}", "{}", "{}",
              content);
    s_expect_error (parts, 6, KEY, KEY_LEN, JP_ERR_TOO_MANY_VALUES);
    s_signed (parts, sig, GOOD_HEADER, "{}", content, "{}");
    s_expect_error (parts, 6, KEY, KEY_LEN, JP_ERR_TOO_MANY_VALUES);
    free (content);
    /* under the bound: kept whole; strings full of commas are one value */
    content = s_zeros_content (JP_VALUES_MAX - 10);
    s_signed (parts, sig, "{\"msg_id\":\"m1\",\"msg_type\":\"display_data\"}", "{}", "{}",
              content);
    ck_assert_int_eq (jp_msg_decode (parts, 6, KEY, KEY_LEN, &msg), 0);
    ck_assert_int_eq (json_array_size (json_object_get (json_object_get (msg->content, "data"),
                                                        "application/json")),
                      JP_VALUES_MAX - 10);
    jp_msg_destroy (&msg);
    free (content);
    size_t big = 3 * JP_VALUES_MAX;
    char *text = malloc (big + 64);
    strcpy (text, "{\"text\":\"");
    memset (text + 9, ',', big);
    strcpy (text + 9 + big, "\\\"\"}");
    s_signed (parts, sig, "{\"msg_id\":\"m1\",\"msg_type\":\"stream\"}", "{}", "{}", text);
    ck_assert_int_eq (jp_msg_decode (parts, 6, KEY, KEY_LEN, &msg), 0);
    ck_assert_uint_eq (strlen (json_string_value (json_object_get (msg->content, "text"))),
                       big + 1);
    jp_msg_destroy (&msg);
    free (text);
}
END_TEST

START_TEST (test_json_weight_counts_what_is_held)
{
    json_t *zeros = json_array ();
    for (int i = 0; i < 1000; i++)
        json_array_append_new (zeros, json_integer (0));
    size_t text = jp_json_size (zeros), weight = jp_json_weight (zeros);
    ck_assert_uint_eq (text, 2000 - 1 + 2);
    ck_assert_uint_ge (weight, 1000 * 50);     /* 25 times its text */
    json_t *s = json_string ("abcdef");
    ck_assert_uint_ge (jp_json_weight (s), 7);
    ck_assert_uint_le (jp_json_weight (s), 7 + 64);
    json_t *obj = json_pack ("{s:o, s:O}", "k", zeros, "s", s);
    ck_assert_uint_gt (jp_json_weight (obj), weight);
    json_decref (obj);
    json_decref (s);
}
END_TEST

START_TEST (test_log_escape)
{
    char out[64];
    const char text[] = "a\nb\r\x1b[31m\x7f\xc3\xa9z";
    size_t n = jp_log_escape (out, 0, sizeof out, text, sizeof text - 1);
    out[n] = '\0';
    ck_assert_str_eq (out, "a\\x0ab\\x0d\\x1b[31m\\x7f\xc3\xa9z");
    /* a NUL inside the text is escaped too */
    n = jp_log_escape (out, 0, sizeof out, "x\0y", 3);
    out[n] = '\0';
    ck_assert_str_eq (out, "x\\x00y");
    /* at: appends; cap: an escape that does not fit whole is left out */
    memcpy (out, "ab", 2);
    n = jp_log_escape (out, 2, 6, "c\nd", 3);
    ck_assert_uint_eq (n, 3);
    ck_assert_int_eq (memcmp (out, "abc", 3), 0);
    n = jp_log_escape (out, 2, 7, "c\nd", 3);
    ck_assert_uint_eq (n, 7);
    ck_assert_int_eq (memcmp (out, "abc\\x0a", 7), 0);
}
END_TEST

/* jp_log_quote: a value stays as it is unless it is empty or holds a
 * space, '=' or '"'; then it is quoted with \" and \\ inside, and a cut
 * keeps the closing quote. */
START_TEST (test_log_quote)
{
    char out[64];
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"/sessions/a", "/sessions/a"},
        {"", "\"\""},
        {"/a status=200 tenant=bob", "\"/a status=200 tenant=bob\""},
        {"a=b", "\"a=b\""},
        {"say \"hi\"", "\"say \\\"hi\\\"\""},
        {"back\\slash", "back\\slash"},            /* no space: as it is */
        {"back\\ slash", "\"back\\\\ slash\""},
        {"caf\xc3\xa9", "caf\xc3\xa9"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = jp_log_quote (out, 0, sizeof out, cases[i].in, strlen (cases[i].in));
        out[n] = '\0';
        ck_assert_str_eq (out, cases[i].want);
    }
    /* a cut keeps the quotes: "a b c" in 5 bytes is "a b" */
    size_t n = jp_log_quote (out, 0, 5, "a b c", 5);
    out[n] = '\0';
    ck_assert_str_eq (out, "\"a b\"");
    /* an escape that does not fit whole is left out */
    n = jp_log_quote (out, 0, 4, "a \"", 3);
    out[n] = '\0';
    ck_assert_str_eq (out, "\"a \"");
    ck_assert_uint_eq (jp_log_quote (out, 3, 4, "a b", 3), 3);     /* not even "" */
}
END_TEST

/* What the last jp_log call wrote to the pipe on stderr: the text after
 * "codebox: ", without its newline. */
static char *
s_read_log (int fd)
{
    static char buf[9000];
    ssize_t n = read (fd, buf, sizeof buf - 1);
    ck_assert_int_gt (n, 0);
    buf[n] = '\0';
    char *text = strstr (buf, "codebox: ");
    ck_assert_ptr_nonnull (text);
    text += 9;
    ck_assert_int_eq (buf[n - 1], '\n');
    buf[n - 1] = '\0';
    return text;
}

/* jp_log quotes a field's string value (a %s right after '='), whatever
 * file logs it, and formats every other conversion as printf does: a
 * request path cannot forge a status= or tenant= field, nor a line. */
START_TEST (test_log_fields_quoted)
{
    int pipefd[2];
    ck_assert_int_eq (pipe (pipefd), 0);
    int saved = dup (STDERR_FILENO);
    ck_assert_int_ge (saved, 0);
    ck_assert_int_ge (dup2 (pipefd[1], STDERR_FILENO), 0);
    jp_log_set_level (JP_LOG_INFO);

    jp_log_info ("http method=%s path=%s status=%d tenant=%s", "GET",
                 "/a status=200 tenant=bob", 404, "alice");
    const char *line = s_read_log (pipefd[0]);
    ck_assert_str_eq (line, "http method=GET path=\"/a status=200 tenant=bob\" status=404 "
                            "tenant=alice");
    /* empty, quotes, backslashes, a newline (escaped after quoting) */
    jp_log_info ("a=%s b=%s c=%s d=%s", "", "x\"y z", "p\\q r", "1\n2 3");
    line = s_read_log (pipefd[0]);
    ck_assert_str_eq (line, "a=\"\" b=\"x\\\"y z\" c=\"p\\\\q r\" d=\"1\\x0a2 3\"");
    /* precision counts, and a %s not after '=' is text as it is */
    jp_log_info ("k=%.*s v=%.3s text %s", 3, "a b c", "x=yz", "free text");
    line = s_read_log (pipefd[0]);
    ck_assert_str_eq (line, "k=\"a b\" v=\"x=y\" text free text");
    /* every other conversion as printf writes it */
    jp_log_info ("%d %u %ld %lld %zu %x %05.1f %g %c %% %-3s| %5s|%hhu %lu", -7, 8u, -9L,
                 1234567890123LL, (size_t) 42, 255u, 3.14159, 0.5, 'z', "ab", "cd",
                 (unsigned char) 200, 10UL);
    line = s_read_log (pipefd[0]);
    ck_assert_str_eq (line, "-7 8 -9 1234567890123 42 ff 003.1 0.5 z % ab |    cd|200 10");
    jp_log_info ("n=%d s=%s", 5, "");
    line = s_read_log (pipefd[0]);
    ck_assert_str_eq (line, "n=5 s=\"\"");

    dup2 (saved, STDERR_FILENO);
    close (saved);
    close (pipefd[0]);
    close (pipefd[1]);
}
END_TEST

/* jp_json_dump and jp_json_size agree with json_dumps (JSON_COMPACT |
 * JSON_ENCODE_ANY) on text. */
static void
s_same_as_jansson (const char *text)
{
    json_error_t e;
    json_t *v = json_loads (text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
    ck_assert_msg (v != NULL, "%s: %s", text, e.text);
    char *theirs = json_dumps (v, JSON_COMPACT | JSON_ENCODE_ANY);
    size_t len = 0;
    char *ours = jp_json_dump (v, &len);
    ck_assert_ptr_nonnull (theirs);
    ck_assert_ptr_nonnull (ours);
    ck_assert_str_eq (ours, theirs);
    ck_assert_uint_eq (len, strlen (theirs));
    ck_assert_uint_eq (jp_json_size (v), len);
    free (theirs);
    free (ours);
    json_decref (v);
}

START_TEST (test_json_dump_is_janssons)
{
    const char *cases[] = {
        "{}", "[]", "\"\"", "null", "true", "false", "0", "-9223372036854775808",
        "9223372036854775807", "0.1", "1e300", "-2.5e-8", "3.0", "123456789.123456789",
        "{\"a\":1,\"b\":[1,2,{\"c\":null}],\"\":\"\"}",
        "{\"z\":1,\"a\":2,\"m\":3}",                              /* insertion order */
        "\"quote \\\" backslash \\\\ slash / tab \\t nl \\n cr \\r bs \\b ff \\f\"",
        "\"\\u0000\\u0001\\u001f\\u007f \\u00e9 \\u20ac \\ud83d\\ude00 \\u2028\"",
        "{\"k\\u0001ey\\n\":\"v\",\"\\u00e9\":[[[[[]]]]]}",
        "[1,-1,1.5,\"x\",true,false,null,{},[]]",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        s_same_as_jansson (cases[i]);
    /* every byte a string may hold */
    char all[256];
    for (int c = 1; c < 256; c++)
        all[c - 1] = (char) (c < 128 ? c : 'x');
    all[255] = '\0';
    json_t *v = json_string (all);
    char *theirs = json_dumps (v, JSON_ENCODE_ANY), *ours = jp_json_dump (v, NULL);
    ck_assert_str_eq (ours, theirs);
    free (theirs);
    free (ours);
    json_decref (v);
    /* too deep is refused, not a stack overflow */
    json_t *deep = json_array (), *at = deep;
    for (int i = 0; i < JP_JSON_DEPTH_MAX + 5; i++) {
        json_t *inner = json_array ();
        json_array_append_new (at, inner);
        at = inner;
    }
    ck_assert_ptr_null (jp_json_dump (deep, NULL));
    ck_assert_uint_eq (jp_json_size (deep), (size_t) -1);
    json_decref (deep);
    ck_assert_ptr_null (jp_json_dump (NULL, NULL));
}
END_TEST

/* True if id is a version 4 UUID in lowercase 8-4-4-4-12 form. */
static bool
s_uuid4 (const char *id)
{
    if (strlen (id) != JP_UUID_LEN || id[14] != '4' || !strchr ("89ab", id[19]))
        return false;
    for (int i = 0; i < JP_UUID_LEN; i++)
        if ((i == 8 || i == 13 || i == 18 || i == 23) ? id[i] != '-'
                                                        : !strchr ("0123456789abcdef", id[i]))
            return false;
    return true;
}

/* UUIDs come from a per-thread store of random bytes: well formed, never
 * twice, and a forked child does not give the ids its parent's store
 * still holds (the store is forgotten in the child). */
START_TEST (test_uuids_from_the_store)
{
    enum { N = 1000 };
    static char ids[N][JP_UUID_LEN + 1];
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq (jp_random_uuid (ids[i]), 0);
        ck_assert_msg (s_uuid4 (ids[i]), "%s", ids[i]);
        for (int j = 0; j < i; j++)
            ck_assert_str_ne (ids[i], ids[j]);
    }
    int fds[2];
    ck_assert_int_eq (pipe (fds), 0);
    pid_t pid = fork ();
    ck_assert_int_ge (pid, 0);
    if (pid == 0) {
        char child[JP_UUID_LEN + 1];
        jp_random_uuid (child);
        _exit (write (fds[1], child, JP_UUID_LEN) == JP_UUID_LEN ? 0 : 1);
    }
    char mine[JP_UUID_LEN + 1], child[JP_UUID_LEN + 1] = "";
    ck_assert_int_eq (jp_random_uuid (mine), 0);
    ck_assert_int_eq (read (fds[0], child, JP_UUID_LEN), JP_UUID_LEN);
    int status;
    ck_assert_int_eq (waitpid (pid, &status, 0), pid);
    ck_assert (s_uuid4 (child));
    ck_assert_str_ne (mine, child);
    close (fds[0]);
    close (fds[1]);
}
END_TEST

Suite *
message_suite (void)
{
    Suite *s = suite_create ("message");
    TCase *tc = tcase_create ("build");
    tcase_add_test (tc, test_new_header);
    tcase_add_test (tc, test_new_defaults_and_fresh_ids);
    tcase_add_test (tc, test_uuids_from_the_store);
    tcase_add_test (tc, test_is_idle);
    tcase_add_test (tc, test_set_parent);
    tcase_add_test (tc, test_set_content);
    tcase_add_test (tc, test_strerror);
    suite_add_tcase (s, tc);
    tc = tcase_create ("round_trip");
    tcase_add_test (tc, test_round_trip);
    tcase_add_test (tc, test_round_trip_unsigned);
    tcase_add_test (tc, test_decode_jupyter_client_frames);
    tcase_add_test (tc, test_decode_ids_and_buffers);
    suite_add_tcase (s, tc);
    tc = tcase_create ("refusals");
    tcase_add_test (tc, test_decode_no_delimiter);
    tcase_add_test (tc, test_decode_truncated);
    tcase_add_test (tc, test_decode_bad_signature);
    tcase_add_test (tc, test_decode_other_key);
    tcase_add_loop_test (tc, test_decode_bad_json, 0, 4);
    tcase_add_test (tc, test_decode_bad_header);
    tcase_add_test (tc, test_decode_signature_before_json);
    tcase_add_test (tc, test_log_escape);
    tcase_add_test (tc, test_log_quote);
    tcase_add_test (tc, test_log_fields_quoted);
    tcase_add_test (tc, test_json_dump_is_janssons);
    tcase_add_test (tc, test_decode_bounds_the_values_it_keeps);
    tcase_add_test (tc, test_json_weight_counts_what_is_held);
    tcase_add_test (tc, test_decode_memo_shares_the_parent);
    tcase_add_test (tc, test_load_flat_is_janssons_or_declines);
    suite_add_tcase (s, tc);
    return s;
}
