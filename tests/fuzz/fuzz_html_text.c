/* fuzz_html_text: libFuzzer target for jp_html_text (HTML as text for a
 * model), the one parser of markup that kernel code controls.
 *
 * Input format: the first byte picks the byte bound (0-255, then scaled:
 * small bounds reach the cutting code), the rest is the HTML.
 *
 * Checked properties (a failure aborts): the text is at most the bound,
 * its reported length is its strlen (no NUL inside: entities never decode
 * to NUL), and when the input is valid UTF-8 so is the text (jansson
 * accepts it as a string). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jp_html_text.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t max = (size_t) data[0] * 7;
    const char *html = (const char *) data + 1;
    size_t len = size - 1;
    size_t out_len = 0;
    bool cut = false;
    char *text = jp_html_text (html, len, max, &out_len, &cut);
    if (!text)
        return 0;
    json_t *in = memchr (html, '\0', len) ? NULL : json_stringn (html, len);
    json_t *out = json_stringn (text, out_len);
    if (out_len > max || strlen (text) != out_len || (in && !out)) {
        fprintf (stderr, "fuzz_html_text: max %zu, got %zu bytes, strlen %zu, utf-8 %s\n", max,
                 out_len, strlen (text), out ? "yes" : "no");
        abort ();
    }
    json_decref (in);
    json_decref (out);
    free (text);
    return 0;
}
