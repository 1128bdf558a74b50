/* fuzz_json: libFuzzer target for jp_json (the gateway's compact JSON
 * writer), checked against jansson's own.
 *
 * Input format: the whole input is JSON text (any value), parsed by
 * jansson with JSON_DECODE_ANY | JSON_ALLOW_NUL; inputs it refuses are
 * skipped.
 *
 * Checked properties (a failure aborts): jp_json_dump's text is byte for
 * byte json_dumps (JSON_COMPACT | JSON_ENCODE_ANY)'s, its length is the
 * one it reports, and jp_json_size says the same length. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jp_json.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
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
