/* fuzz_json: libFuzzer target for jp_json (the gateway's compact JSON
 * writer), checked against jansson's own.
 *
 * Input format: the whole input is JSON text (any value), parsed by
 * jansson with JSON_DECODE_ANY | JSON_ALLOW_NUL; inputs it refuses are
 * skipped.
 *
 * Checked properties (a failure aborts): jp_json_dump's text is byte for
 * byte json_dumps (JSON_COMPACT | JSON_ENCODE_ANY)'s, its length is the
 * one it reports, and jp_json_size says the same length. And the reader
 * of headers: whatever jp_json_load_flat takes of the input (any input),
 * jansson's json_loadb takes too, with the same text once dumped. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jp_json.h"

/* jp_json_load_flat against json_loadb (data, size, 0). */
static void
s_check_flat (const uint8_t *data, size_t size)
{
    json_t *flat = jp_json_load_flat ((const char *) data, size);
    if (!flat)
        return;
    json_t *v = json_loadb ((const char *) data, size, 0, NULL);
    char *theirs = v ? json_dumps (v, JSON_COMPACT) : NULL;
    char *ours = json_dumps (flat, JSON_COMPACT);
    if (!theirs || !ours || strcmp (theirs, ours) != 0) {
        fprintf (stderr, "fuzz_json: flat: jansson %s\nfuzz_json: flat: ours    %s\n",
                 theirs ? theirs : "(refused)", ours ? ours : "(null)");
        abort ();
    }
    free (theirs);
    free (ours);
    json_decref (v);
    json_decref (flat);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    s_check_flat (data, size);
    json_t *v = json_loadb ((const char *) data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    if (!v)
        return 0;
    char *theirs = json_dumps (v, JSON_COMPACT | JSON_ENCODE_ANY);
    size_t len = 0;
    char *ours = jp_json_dump (v, &len);
    if (!theirs || !ours || strcmp (theirs, ours) != 0 || len != strlen (theirs)
        || jp_json_size (v) != len) {
        fprintf (stderr, "fuzz_json: jansson %s\nfuzz_json: ours    %s\n",
                 theirs ? theirs : "(null)", ours ? ours : "(null)");
        abort ();
    }
    free (theirs);
    free (ours);
    json_decref (v);
    return 0;
}
