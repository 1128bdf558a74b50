/* test_sign: jp_sign and jp_sign_verify against signatures that the real
 * jupyter_client (Session.sign) computed for known keys and frames, in
 * fixtures/sign_vectors.json (made by make_sign_vectors.py), and the ways a
 * signature must be refused: a changed digit, a wrong length, upper case,
 * another key, changed frames; and that the keyed contexts each thread
 * keeps sign as fresh ones do. */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "jp_sign.h"
#include "suites.h"
#include "testutil.h"

#define VECTORS "fixtures/sign_vectors.json"

static int s_vector_count (void);

/* One vector of the fixture, with its frames borrowed from json. */
typedef struct {
    json_t *json;           /* the whole fixture, owned */
    const char *name;
    uint8_t *key;
    size_t key_len;
    jp_part_t parts[4];
    const char *signature;
} s_vector_t;

static void
s_vector_load (s_vector_t *v, size_t index)
{
    v->json = tu_load_json (VECTORS);
    json_t *item = json_array_get (json_object_get (v->json, "vectors"), index);
    ck_assert_ptr_nonnull (item);
    v->name = json_string_value (json_object_get (item, "name"));
    v->key = tu_hex_decode (json_string_value (json_object_get (item, "key_hex")), &v->key_len);
    static const char *fields[4] = {"header", "parent_header", "metadata", "content"};
    for (int i = 0; i < 4; i++) {
        json_t *s = json_object_get (item, fields[i]);
        ck_assert_msg (json_is_string (s), "%s: %s is not a string", v->name, fields[i]);
        v->parts[i] = (jp_part_t) {json_string_value (s), json_string_length (s)};
    }
    v->signature = json_string_value (json_object_get (item, "signature"));
    ck_assert_ptr_nonnull (v->name);
    ck_assert_ptr_nonnull (v->signature);
}

static void
s_vector_free (s_vector_t *v)
{
    free (v->key);
    json_decref (v->json);
}

/* Finds the vector called name; fails the test when there is none. */
static size_t
s_vector_index (const char *name)
{
    json_t *json = tu_load_json (VECTORS);
    json_t *vectors = json_object_get (json, "vectors");
    size_t i;
    json_t *item;
    json_array_foreach (vectors, i, item)
        if (strcmp (json_string_value (json_object_get (item, "name")), name) == 0) {
            json_decref (json);
            return i;
        }
    json_decref (json);
    ck_abort_msg ("no vector %s", name);
    return 0;
}

/* Every vector: jp_sign gives jupyter_client's signature, and it verifies. */
START_TEST (test_sign_matches_jupyter_client)
{
    s_vector_t v;
    s_vector_load (&v, (size_t) _i);
    char sig[JP_SIGNATURE_HEX_LEN + 1];
    memset (sig, 'X', sizeof sig);
    ck_assert_int_eq (jp_sign (v.key, v.key_len, v.parts, sig), 0);
    ck_assert_msg (strcmp (sig, v.signature) == 0, "%s: got %s, jupyter_client says %s",
                   v.name, sig, v.signature);
    ck_assert_int_eq (jp_sign_verify (v.key, v.key_len, v.parts, v.signature,
                                      strlen (v.signature)), 0);
    s_vector_free (&v);
}
END_TEST

/* The fixture is not empty and covers both signed and unsigned vectors, so
 * the loop test above cannot pass by running nothing. */
START_TEST (test_fixture_covers_keys)
{
    json_t *json = tu_load_json (VECTORS);
    json_t *vectors = json_object_get (json, "vectors");
    size_t i, n_signed = 0, n_empty = 0, n_binary = 0;
    json_t *item;
    json_array_foreach (vectors, i, item) {
        const char *sig = json_string_value (json_object_get (item, "signature"));
        const char *key = json_string_value (json_object_get (item, "key_hex"));
        if (*sig) {
            n_signed++;
            ck_assert_uint_eq (strlen (sig), JP_SIGNATURE_HEX_LEN);
        } else {
            n_empty++;
            ck_assert_str_eq (key, "");
        }
        if (strstr (key, "ff") || strstr (key, "00"))
            n_binary++;
    }
    ck_assert_uint_ge (n_signed, 25);
    ck_assert_uint_ge (n_empty, 1);
    ck_assert_uint_ge (n_binary, 1);
    json_decref (json);
}
END_TEST

/* Changing any one digit of a good signature makes it fail. */
START_TEST (test_flipped_digit_fails)
{
    s_vector_t v;
    s_vector_load (&v, s_vector_index ("hex64/execute_request"));
    char sig[JP_SIGNATURE_HEX_LEN + 1];
    for (size_t pos = 0; pos < JP_SIGNATURE_HEX_LEN; pos++) {
        strcpy (sig, v.signature);
        sig[pos] = sig[pos] == '0' ? '1' : '0';
        ck_assert_msg (jp_sign_verify (v.key, v.key_len, v.parts, sig, JP_SIGNATURE_HEX_LEN)
                       == -EBADMSG, "digit %zu changed and still accepted", pos);
    }
    strcpy (sig, v.signature);
    ck_assert_int_eq (jp_sign_verify (v.key, v.key_len, v.parts, sig, JP_SIGNATURE_HEX_LEN), 0);
    s_vector_free (&v);
}
END_TEST

/* A good signature cut to 63 digits, extended to 65, or empty fails. */
START_TEST (test_wrong_length_fails)
{
    s_vector_t v;
    s_vector_load (&v, s_vector_index ("short/stream_unicode"));
    char sig[JP_SIGNATURE_HEX_LEN + 2];
    strcpy (sig, v.signature);
    ck_assert_int_eq (jp_sign_verify (v.key, v.key_len, v.parts, sig, 63), -EBADMSG);
    sig[64] = sig[0];       /* 65 digits whose first 64 are right */
    sig[65] = '\0';
    ck_assert_int_eq (jp_sign_verify (v.key, v.key_len, v.parts, sig, 65), -EBADMSG);
    ck_assert_int_eq (jp_sign_verify (v.key, v.key_len, v.parts, "", 0), -EBADMSG);
    ck_assert_int_eq (jp_sign_verify (v.key, v.key_len, v.parts, sig, 64), 0);
    s_vector_free (&v);
}
END_TEST

/* Upper-case hex is not the signature Jupyter sends, and fails. */
START_TEST (test_uppercase_fails)
{
    s_vector_t v;
    s_vector_load (&v, s_vector_index ("utf8/execute_reply_with_parent"));
    char sig[JP_SIGNATURE_HEX_LEN + 1];
    strcpy (sig, v.signature);
    int letters = 0;
    for (char *p = sig; *p; p++)
        if (isalpha ((unsigned char) *p))
            *p = (char) toupper ((unsigned char) *p), letters++;
    ck_assert_int_gt (letters, 0);
    ck_assert_int_eq (jp_sign_verify (v.key, v.key_len, v.parts, sig, 64), -EBADMSG);
    s_vector_free (&v);
}
END_TEST

/* An empty key means unsigned: jp_sign writes "", and only "" verifies. */
START_TEST (test_empty_key_empty_signature)
{
    s_vector_t v;
    s_vector_load (&v, s_vector_index ("empty/execute_request"));
    ck_assert_uint_eq (v.key_len, 0);
    char sig[JP_SIGNATURE_HEX_LEN + 1];
    memset (sig, 'X', sizeof sig);
    ck_assert_int_eq (jp_sign (v.key, 0, v.parts, sig), 0);
    ck_assert_str_eq (sig, "");
    ck_assert_int_eq (jp_sign_verify (v.key, 0, v.parts, "", 0), 0);
    ck_assert_int_eq (jp_sign_verify (NULL, 0, v.parts, "", 0), 0);
    /* A signature from a keyed sender is refused by an unkeyed receiver. */
    size_t other = s_vector_index ("hex64/execute_request");
    s_vector_t k;
    s_vector_load (&k, other);
    ck_assert_int_eq (jp_sign_verify (NULL, 0, v.parts, k.signature, 64), -EBADMSG);
    s_vector_free (&k);
    s_vector_free (&v);
}
END_TEST

/* A signature made with one key does not verify with another, nor with a
 * key that is a prefix of it. */
START_TEST (test_other_key_fails)
{
    s_vector_t v;
    s_vector_load (&v, s_vector_index ("hex64/kernel_info_request_empty"));
    ck_assert_int_eq (jp_sign_verify (v.key, v.key_len, v.parts, v.signature, 64), 0);
    ck_assert_int_eq (jp_sign_verify (v.key, v.key_len - 1, v.parts, v.signature, 64), -EBADMSG);
    const uint8_t other[] = "not the key";
    ck_assert_int_eq (jp_sign_verify (other, sizeof other - 1, v.parts, v.signature, 64),
                      -EBADMSG);
    s_vector_free (&v);
}
END_TEST

/* Changing one byte of any frame, or swapping two frames, changes the
 * signature. */
START_TEST (test_changed_frames_fail)
{
    s_vector_t v;
    s_vector_load (&v, s_vector_index ("uuid/execute_reply_with_parent"));
    for (int f = 0; f < 4; f++) {
        jp_part_t parts[4];
        memcpy (parts, v.parts, sizeof parts);
        char *copy = malloc (parts[f].size);
        ck_assert_ptr_nonnull (copy);
        memcpy (copy, parts[f].data, parts[f].size);
        copy[parts[f].size - 1] ^= 1;
        parts[f].data = copy;
        ck_assert_msg (jp_sign_verify (v.key, v.key_len, parts, v.signature, 64) == -EBADMSG,
                       "frame %d changed and still accepted", f);
        free (copy);
    }
    jp_part_t swapped[4] = {v.parts[1], v.parts[0], v.parts[2], v.parts[3]};
    ck_assert_int_eq (jp_sign_verify (v.key, v.key_len, swapped, v.signature, 64), -EBADMSG);
    s_vector_free (&v);
}
END_TEST

/* The output is 64 lowercase hex digits and a NUL, and signing twice gives
 * the same digits. */
START_TEST (test_output_format)
{
    const uint8_t key[] = "k";
    jp_part_t parts[4] = {{"{}", 2}, {"{}", 2}, {"{}", 2}, {"", 0}};
    char a[JP_SIGNATURE_HEX_LEN + 1], b[JP_SIGNATURE_HEX_LEN + 1];
    memset (a, 'X', sizeof a);
    ck_assert_int_eq (jp_sign (key, 1, parts, a), 0);
    ck_assert_uint_eq (strlen (a), JP_SIGNATURE_HEX_LEN);
    ck_assert_uint_eq (strspn (a, "0123456789abcdef"), JP_SIGNATURE_HEX_LEN);
    ck_assert_int_eq (jp_sign (key, 1, parts, b), 0);
    ck_assert_str_eq (a, b);
}
END_TEST

/* Signs every vector of the fixture in turn, rounds times, forwards and
 * backwards: more keys than a thread keeps contexts for, so kept contexts
 * are reused and replaced; each signature must stay jupyter_client's.
 * Returns the number of mismatches. */
static int
s_sign_all_rounds (int rounds)
{
    int n = s_vector_count (), bad = 0;
    s_vector_t *v = calloc ((size_t) n, sizeof *v);
    for (int i = 0; i < n; i++)
        s_vector_load (&v[i], (size_t) i);
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < n; k++) {
            int i = r % 2 ? n - 1 - k : k;
            char sig[JP_SIGNATURE_HEX_LEN + 1];
            if (jp_sign (v[i].key, v[i].key_len, v[i].parts, sig) != 0
                || strcmp (sig, v[i].signature) != 0)
                bad++;
        }
    for (int i = 0; i < n; i++)
        s_vector_free (&v[i]);
    free (v);
    return bad;
}

static void *
s_sign_thread (void *arg)
{
    *(int *) arg = s_sign_all_rounds (20);
    return NULL;
}

/* The keyed contexts a thread keeps give the same signatures as fresh
 * ones: keys in rotation (more than are kept), the same key twice in a row,
 * and four threads at once. */
START_TEST (test_kept_contexts_sign_right)
{
    ck_assert_int_gt (s_vector_count (), 4);
    ck_assert_int_eq (s_sign_all_rounds (5), 0);
    pthread_t t[4];
    int bad[4] = {0};
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq (pthread_create (&t[i], NULL, s_sign_thread, &bad[i]), 0);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq (pthread_join (t[i], NULL), 0);
        ck_assert_msg (bad[i] == 0, "thread %d: %d wrong signatures", i, bad[i]);
    }
}
END_TEST

/* A key longer than the kept ones (used once, not kept) and keys that
 * differ only in length or in their last byte sign as OpenSSL's one-shot
 * HMAC does. */
START_TEST (test_long_and_near_keys)
{
    uint8_t key[300];
    for (size_t i = 0; i < sizeof key; i++)
        key[i] = (uint8_t) (i * 7 + 1);
    const char *frames[4] = {"{\"a\":1}", "{}", "{}", "{\"code\":\"1+1\"}"};
    jp_part_t parts[4];
    size_t all = 0;
    char joined[64] = "";
    for (int i = 0; i < 4; i++) {
        parts[i] = (jp_part_t) {frames[i], strlen (frames[i])};
        strcat (joined, frames[i]);
        all += strlen (frames[i]);
    }
    size_t lens[] = {300, 129, 128, 127, 32, 31, 32};
    for (int round = 0; round < 2; round++)
        for (size_t j = 0; j < sizeof lens / sizeof lens[0]; j++) {
            if (j == sizeof lens / sizeof lens[0] - 1)
                key[31] ^= 0x80;        /* same length as before, last byte changed */
            unsigned char mac[32];
            unsigned int mac_len = 0;
            ck_assert_ptr_nonnull (HMAC (EVP_sha256 (), key, (int) lens[j],
                                         (const unsigned char *) joined, all, mac, &mac_len));
            char want[65], got[JP_SIGNATURE_HEX_LEN + 1];
            for (int i = 0; i < 32; i++)
                sprintf (want + 2 * i, "%02x", mac[i]);
            ck_assert_int_eq (jp_sign (key, lens[j], parts, got), 0);
            ck_assert_msg (strcmp (got, want) == 0, "key of %zu bytes (round %d)", lens[j], round);
            if (j == sizeof lens / sizeof lens[0] - 1)
                key[31] ^= 0x80;
        }
}
END_TEST

/* The number of vectors in the fixture, read when the suite is built. */
static int
s_vector_count (void)
{
    json_error_t jerr;
    json_t *json = json_load_file (VECTORS, 0, &jerr);
    int n = (int) json_array_size (json_object_get (json, "vectors"));
    json_decref (json);
    return n;
}

Suite *
sign_suite (void)
{
    Suite *s = suite_create ("sign");
    TCase *tc = tcase_create ("jupyter_client_vectors");
    /* If the fixture is missing the count is 0 and test_fixture_covers_keys
     * fails, so a missing file cannot pass silently. */
    tcase_add_loop_test (tc, test_sign_matches_jupyter_client, 0, s_vector_count ());
    tcase_add_test (tc, test_fixture_covers_keys);
    suite_add_tcase (s, tc);
    tc = tcase_create ("refusals");
    tcase_add_test (tc, test_flipped_digit_fails);
    tcase_add_test (tc, test_wrong_length_fails);
    tcase_add_test (tc, test_uppercase_fails);
    tcase_add_test (tc, test_empty_key_empty_signature);
    tcase_add_test (tc, test_other_key_fails);
    tcase_add_test (tc, test_changed_frames_fail);
    tcase_add_test (tc, test_output_format);
    tcase_add_test (tc, test_kept_contexts_sign_right);
    tcase_add_test (tc, test_long_and_near_keys);
    suite_add_tcase (s, tc);
    return s;
}
