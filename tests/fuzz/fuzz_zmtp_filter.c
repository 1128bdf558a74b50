/* fuzz_zmtp_filter: the kernel relay's ZMTP reader (jp_zmtp_filter), fed
 * a hostile kernel's byte stream. The input's first byte picks the chunk
 * sizes; the rest is the stream. Properties: never crashes or leaks; what
 * passes and whether the stream fails do not depend on how the bytes were
 * split; a message being read never holds more than the bounds allow. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jp_zmtp_filter.h"

#define MESSAGE_MAX 4096
#define FRAMES_MAX 8

static void
s_drop_cb (void *arg, uint64_t bytes, uint64_t frames, const uint8_t *parent, size_t len)
{
    (void) bytes;
    (void) frames;
    /* a reply in the dropped message's place, as the relay puts on iopub */
    jp_zmtp_filter_t *f = arg;
    const jp_frame_t note[2] = {{(uint8_t *) "note", 4},
                                {(uint8_t *) (parent ? parent : (const uint8_t *) ""),
                                 parent ? len : 0}};
    jp_zmtp_filter_put_message (f, note, 2);
}

/* Feeds data whole (step 0) or in chunks of 1 + (step * k) % 97 bytes for
 * the k-th chunk; returns the last feed's code (the output stays in f). */
static int
s_run (jp_zmtp_filter_t *f, const uint8_t *data, size_t n, unsigned step)
{
    jp_zmtp_filter_init (f, MESSAGE_MAX, FRAMES_MAX, s_drop_cb, f);
    int rc = 0;
    for (size_t at = 0, k = 0; at < n && rc == 0; k++) {
        size_t take = step ? 1 + (step * (k + 1)) % 97 : n;
        if (take > n - at)
            take = n - at;
        rc = jp_zmtp_filter_feed (f, data + at, take);
        at += take;
        if (f->message.len > MESSAGE_MAX + 9 * (FRAMES_MAX + 1))
            abort ();
    }
    return rc;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned step = data[0];
    jp_zmtp_filter_t whole, chunked;
    int rc_whole = s_run (&whole, data + 1, size - 1, 0);
    int rc_chunked = s_run (&chunked, data + 1, size - 1, step);
    if (rc_whole != rc_chunked)
        abort ();
    /* the chunked run may stop earlier at the same error; otherwise the
       same bytes passed */
    if (rc_whole == 0 && (whole.out.len != chunked.out.len
                          || (whole.out.len
                              && memcmp (whole.out.data, chunked.out.data, whole.out.len) != 0)))
        abort ();
    if (rc_whole == 0 && (whole.commands != chunked.commands))
        abort ();
    jp_zmtp_filter_release (&whole);
    jp_zmtp_filter_release (&chunked);
    return 0;
}
