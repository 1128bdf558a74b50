/* jp_html_text: HTML as text a reader (a model) can take in: tags gone,
 * entities decoded, white space folded as a browser folds it, blocks on
 * lines of their own, list items as "- ", and tables as rows whose cells
 * are joined by " | " (a DataFrame's HTML reads as its rows). What a
 * browser would not show is left out: scripts, styles, comments, <head>,
 * <template> and inline SVG. Not an HTML parser for any other purpose:
 * malformed markup gives some text, never an error.
 *
 * Pure code, any thread. */
#ifndef JP_HTML_TEXT_H
#define JP_HTML_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* The text of the len bytes of html (need not be NUL-terminated), at most
 * max bytes of it (cut at a character boundary; *cut_p, when not NULL,
 * says whether it was cut). Returns a malloc'd NUL-terminated string
 * (valid UTF-8 when html is; its length in *out_len when not NULL; NUL
 * bytes of html are left out), or NULL when out of memory. */
char *jp_html_text (const char *html, size_t len, size_t max, size_t *out_len, bool *cut_p);

#endif
