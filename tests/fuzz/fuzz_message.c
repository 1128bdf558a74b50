/* fuzz_message: libFuzzer target for jp_msg_decode (and jp_msg_encode).
 *
 * Input format (see fuzz_message.h): frames separated by 0xFF 0x00.
 *
 * For each input:
 *  1. decode the frames as they are, with the fixed key FUZZ_KEY;
 *  2. if that fails only for the signature, put the right signature in the
 *     signature frame and decode again, so the fuzzer reaches the JSON and
 *     header checks without having to forge HMACs; this second decode must
 *     not fail for the signature;
 *  3. whenever a decode succeeds, check the round trip: encode the message,
 *     decode the frames (must succeed, same ids, JSON and buffers), encode
 *     again (must give the same bytes).
 * Any broken property aborts, which libFuzzer reports as a crash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jp_message.h"
#include "fuzz_message.h"

#define KEY_LEN (sizeof FUZZ_KEY - 1)

static void
s_fail (const char *what)
{
    fprintf (stderr, "fuzz_message: %s\n", what);
    abort ();
}

/* Splits data into frames (borrowed); returns the count. */
static size_t
s_split (const uint8_t *data, size_t size, jp_part_t **parts_p)
{
    size_t n = 1;
    for (size_t i = 0; i + 1 < size; i++)
        if (data[i] == FUZZ_SEP0 && data[i + 1] == FUZZ_SEP1)
            n++, i++;
    jp_part_t *parts = calloc (n, sizeof *parts);
    if (!parts)
        s_fail ("out of memory");
    size_t k = 0, start = 0;
    for (size_t i = 0; i + 1 < size; i++)
        if (data[i] == FUZZ_SEP0 && data[i + 1] == FUZZ_SEP1) {
            parts[k++] = (jp_part_t) {data + start, i - start};
            start = i + 2;
            i++;
        }
    parts[k++] = (jp_part_t) {data + start, size - start};
    *parts_p = parts;
    return k;
}

static jp_part_t *
s_parts_of (const jp_frame_t *frames, size_t n)
{
    jp_part_t *parts = calloc (n, sizeof *parts);
    if (!parts)
        s_fail ("out of memory");
    for (size_t i = 0; i < n; i++)
        parts[i] = (jp_part_t) {frames[i].data, frames[i].size};
    return parts;
}

static int
s_frames_equal (const jp_frame_t *a, size_t na, const jp_frame_t *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (a[i].size != b[i].size || (a[i].size && memcmp (a[i].data, b[i].data, a[i].size)))
            return 0;
    return 1;
}

/* Encode, decode, encode: the message and the bytes must survive. */
static void
s_round_trip (const jp_msg_t *msg)
{
    const uint8_t *key = (const uint8_t *) FUZZ_KEY;
    jp_frame_t *frames = NULL;
    size_t n = 0;
    if (jp_msg_encode (msg, key, KEY_LEN, &frames, &n) != 0)
        s_fail ("encode of a decoded message failed");
    jp_part_t *parts = s_parts_of (frames, n);
    jp_msg_t *back = NULL;
    int rc = jp_msg_decode (parts, n, key, KEY_LEN, &back);
    if (rc != 0) {
        fprintf (stderr, "decode: %s\n", jp_strerror (rc));
        s_fail ("decode of an encoded message failed");
    }
    if (!json_equal (back->header, msg->header) || !json_equal (back->parent_header, msg->parent_header)
        || !json_equal (back->metadata, msg->metadata) || !json_equal (back->content, msg->content))
        s_fail ("JSON changed in the round trip");
    if (!s_frames_equal (back->ids, back->n_ids, msg->ids, msg->n_ids))
        s_fail ("routing ids changed in the round trip");
    if (!s_frames_equal (back->buffers, back->n_buffers, msg->buffers, msg->n_buffers))
        s_fail ("buffers changed in the round trip");
    if (strcmp (jp_msg_id (back), jp_msg_id (msg)) || strcmp (jp_msg_type (back), jp_msg_type (msg)))
        s_fail ("msg_id or msg_type changed in the round trip");
    jp_frame_t *again = NULL;
    size_t n_again = 0;
    if (jp_msg_encode (back, key, KEY_LEN, &again, &n_again) != 0)
        s_fail ("second encode failed");
    if (!s_frames_equal (frames, n, again, n_again))
        s_fail ("encode(decode(encode(m))) differs from encode(m)");
    jp_frames_free (again, n_again);
    jp_msg_destroy (&back);
    free (parts);
    jp_frames_free (frames, n);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    const uint8_t *key = (const uint8_t *) FUZZ_KEY;
    jp_part_t *parts = NULL;
    size_t n = s_split (data, size, &parts);
    jp_msg_t *msg = NULL;
    int rc = jp_msg_decode (parts, n, key, KEY_LEN, &msg);
    if (rc == 0 && !msg)
        s_fail ("decode succeeded without a message");
    if (rc != 0 && msg)
        s_fail ("decode failed but left a message");
    if (rc == JP_ERR_SIGNATURE) {
        /* Re-sign: find the delimiter as jp_msg_decode does. */
        size_t d = 0;
        while (d < n && !(parts[d].size == 9 && memcmp (parts[d].data, JP_DELIMITER, 9) == 0))
            d++;
        if (d + 6 > n)
            s_fail ("signature error without a full message");
        char sig[JP_SIGNATURE_HEX_LEN + 1];
        if (jp_sign (key, KEY_LEN, parts + d + 2, sig) != 0)
            s_fail ("jp_sign failed");
        parts[d + 1] = (jp_part_t) {sig, strlen (sig)};
        rc = jp_msg_decode (parts, n, key, KEY_LEN, &msg);
        if (rc == JP_ERR_SIGNATURE)
            s_fail ("a correctly signed message was refused for its signature");
    }
    if (rc == 0)
        s_round_trip (msg);
    jp_msg_destroy (&msg);
    free (parts);
    return 0;
}
