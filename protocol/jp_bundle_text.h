/* jp_bundle_text: the text a reader (a model) should get for one MIME
 * bundle of a display_data or execute_result message: its text/plain,
 * unless that is empty or only a default repr such as "<IPython.core.display.HTML
 * object>" and the bundle says more; else its Markdown or LaTeX as
 * written, else its HTML as text (jp_html_text), else its
 * application/json. Images are not text: a caller shows them itself.
 *
 * Pure code, any thread. */
#ifndef JP_BUNDLE_TEXT_H
#define JP_BUNDLE_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* True when text (len bytes) is a default repr on one line, which says
 * nothing of the value: "<NAME object>", "<NAME object at 0xHEX>" or
 * "<NAME at 0xHEX>" (NAME without spaces). */
bool jp_bundle_placeholder (const char *text, size_t len);

/* The text of bundle data (borrowed; a JSON object of MIME type to value),
 * at most max bytes of it when it comes from HTML or JSON (what is written
 * in text/plain, Markdown or LaTeX is taken whole: its size was bounded
 * when it was kept). Returns a malloc'd string (its length in *len_p), and
 * the MIME type it came from in *mime_p (a static string); NULL with
 * *mime_p NULL when the bundle holds no text (only images, or types with
 * no text form), NULL with *mime_p set when out of memory. */
char *jp_bundle_text (const json_t *data, size_t max, size_t *len_p, const char **mime_p);

#endif
