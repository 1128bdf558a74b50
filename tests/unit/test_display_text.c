/* test_display_text: jp_html_text (HTML as readable text: a pandas
 * DataFrame's table as rows, entities, white space, hidden elements, the
 * byte bound on a character boundary, markup that is not well formed) and
 * jp_bundle_text (which MIME type of a bundle a model reads). */
#include <stdlib.h>
#include <string.h>

#include "jp_bundle_text.h"
#include "jp_html_text.h"
#include "suites.h"

/* What pandas 1.5 writes for DataFrame({'a': [1, 2], 'b': ['x', 'y & z']}). */
static const char s_frame_html[] =
    "<div>\n<style scoped>\n    .dataframe tbody tr th:only-of-type {\n        vertical-align: "
    "middle;\n    }\n\n    .dataframe thead th {\n        text-align: right;\n    }\n</style>\n"
    "<table border=\"1\" class=\"dataframe\">\n  <thead>\n    <tr style=\"text-align: right;\">\n"
    "      <th></th>\n      <th>a</th>\n      <th>b</th>\n    </tr>\n  </thead>\n  <tbody>\n"
    "    <tr>\n      <th>0</th>\n      <td>1</td>\n      <td>x</td>\n    </tr>\n    <tr>\n"
    "      <th>1</th>\n      <td>2</td>\n      <td>y &amp; z</td>\n    </tr>\n  </tbody>\n"
    "</table>\n</div>";

static char *
s_text (const char *html, size_t max)
{
    size_t len = 0;
    char *text = jp_html_text (html, strlen (html), max, &len, NULL);
    ck_assert_ptr_nonnull (text);
    ck_assert_uint_eq (len, strlen (text));
    return text;
}

#define ASSERT_HTML(html, expected) \
    do { \
        char *got_ = s_text (html, 1 << 20); \
        ck_assert_str_eq (got_, expected); \
        free (got_); \
    } while (0)

START_TEST (test_dataframe_reads_as_rows)
{
    ASSERT_HTML (s_frame_html, "| a | b\n0 | 1 | x\n1 | 2 | y & z");
}
END_TEST

START_TEST (test_blocks_lists_and_white_space)
{
    ASSERT_HTML ("<h1>Title</h1><p>one   two\n three</p><p>four</p>",
                 "Title\n\none two three\n\nfour");
    ASSERT_HTML ("<ul><li>a</li><li>b <b>bold</b></li></ul>after", "- a\n- b bold\n\nafter");
    ASSERT_HTML ("a<br>b<br><br>c", "a\nb\n\nc");
    ASSERT_HTML ("<pre>x  = 1\n  y</pre>", "x  = 1\n  y");
    ASSERT_HTML ("  <b>Hi</b> there  ", "Hi there");
    ASSERT_HTML ("", "");
}
END_TEST

START_TEST (test_hidden_parts_are_left_out)
{
    ASSERT_HTML ("<html><head><title>t</title><style>p{}</style></head><body>"
                 "<script>var a = '<p>no</p>';</script>seen<!-- not <b>this</b> -->"
                 "<svg><text>chart</text></svg>!</body></html>",
                 "seen!");
    ASSERT_HTML ("<!DOCTYPE html><p>x</p><?php no ?>", "x");
    /* what plotly's notebook output holds: a div and a script */
    ASSERT_HTML ("<div id=\"x\" class=\"plotly-graph-div\"></div><script type=\"text/javascript\">"
                 "Plotly.newPlot('x', [])</script>", "");
}
END_TEST

START_TEST (test_entities)
{
    ASSERT_HTML ("&lt;a&gt; &amp; &quot;q&quot; &#65;&#x42;&#X43; &hellip;&nbsp;x",
                 "<a> & \"q\" ABC \xe2\x80\xa6 x");
    /* not entities, or no characters: kept as text, or U+FFFD */
    ASSERT_HTML ("a & b &unknown; &#; &#0; &#xD800; &#99999999;",
                 "a & b &unknown; &#; \xef\xbf\xbd \xef\xbf\xbd \xef\xbf\xbd");
}
END_TEST

START_TEST (test_malformed_markup_gives_text)
{
    ASSERT_HTML ("1 < 2 and 3 > 2", "1 < 2 and 3 > 2");
    ASSERT_HTML ("<b title='a>b'>x</b>", "x");
    ASSERT_HTML ("<p unclosed", "");
    ASSERT_HTML ("<script>never closed", "");
    ASSERT_HTML ("<!-- never closed", "");
    ASSERT_HTML ("<td>a<td>b", "a | b");
    ASSERT_HTML ("<tr><td> a </td><td> b </td></tr>", "a | b");
}
END_TEST

START_TEST (test_bound_cuts_on_a_character)
{
    /* "é" is two bytes: a bound of 4 after "abc" keeps no half of it */
    bool cut = false;
    size_t len = 0;
    char *text = jp_html_text ("abc\xc3\xa9z", 6, 4, &len, &cut);
    ck_assert (cut);
    ck_assert_str_eq (text, "abc");
    free (text);
    text = jp_html_text ("abc", 3, 3, &len, &cut);
    ck_assert (!cut);
    ck_assert_str_eq (text, "abc");
    free (text);
    /* a long table stops at the bound: the walk is not over the whole input */
    size_t big = 4 << 20;
    char *html = malloc (big + 1);
    for (size_t i = 0; i < big; i += 8)
        memcpy (html + i, "<td>x</td>", big - i < 8 ? big - i : 8);
    html[big] = '\0';
    text = jp_html_text (html, big, 1000, &len, &cut);
    ck_assert (cut);
    ck_assert_uint_le (len, 1000);
    free (text);
    free (html);
}
END_TEST

START_TEST (test_placeholders)
{
    ck_assert (jp_bundle_placeholder ("<IPython.core.display.HTML object>", 34));
    const char *at = "<__main__.Foo object at 0x7f3a2b1c9d00>\n";
    ck_assert (jp_bundle_placeholder (at, strlen (at)));
    const char *figure = "<Figure size 640x480 with 1 Axes>";
    ck_assert (!jp_bundle_placeholder (figure, strlen (figure)));
    ck_assert (!jp_bundle_placeholder ("[1] 3", 5));
    ck_assert (!jp_bundle_placeholder ("<a object>\n<b object>", 21));
    ck_assert (!jp_bundle_placeholder (" object>", 8));
    const char *styler = "<pandas.io.formats.style.Styler at 0x7f1c2b3a4d50>";
    ck_assert (jp_bundle_placeholder (styler, strlen (styler)));
    const char *spaced = "<a Thing at 0x10>";
    ck_assert (!jp_bundle_placeholder (spaced, strlen (spaced)));
}
END_TEST

/* The text and MIME type jp_bundle_text takes from a bundle (JSON text). */
static void
s_assert_bundle (const char *bundle, const char *text, const char *mime)
{
    json_t *data = json_loads (bundle, 0, NULL);
    ck_assert_ptr_nonnull (data);
    size_t len = 0;
    const char *from = NULL;
    char *got = jp_bundle_text (data, 1 << 20, &len, &from);
    json_decref (data);
    if (!text) {
        ck_assert_ptr_null (got);
        ck_assert_ptr_null (from);
        return;
    }
    ck_assert_ptr_nonnull (got);
    ck_assert_str_eq (got, text);
    ck_assert_uint_eq (len, strlen (text));
    ck_assert_str_eq (from, mime);
    free (got);
}

START_TEST (test_bundle_text_rules)
{
    /* a DataFrame: its text/plain, never "no output" */
    s_assert_bundle ("{\"text/plain\": \"   a\\n0  1\", \"text/html\": \"<table></table>\"}",
                     "   a\n0  1", "text/plain");
    /* IRkernel's length(x): four forms, the plain one first */
    s_assert_bundle ("{\"text/plain\": \"[1] 3\", \"text/html\": \"3\", \"text/markdown\": "
                     "\"3\", \"text/latex\": \"3\"}", "[1] 3", "text/plain");
    /* HTML(...), Markdown(...), Latex(...): the repr says nothing */
    s_assert_bundle ("{\"text/plain\": \"<IPython.core.display.HTML object>\", \"text/html\": "
                     "\"<p>Hello <b>world</b></p>\"}", "Hello world", "text/html");
    s_assert_bundle ("{\"text/plain\": \"<IPython.core.display.Markdown object>\", "
                     "\"text/markdown\": \"# Title\\n*it*\"}", "# Title\n*it*", "text/markdown");
    s_assert_bundle ("{\"text/plain\": \"<IPython.core.display.Latex object>\", "
                     "\"text/latex\": \"$x^2$\"}", "$x^2$", "text/latex");
    /* an empty text/plain is none */
    s_assert_bundle ("{\"text/plain\": \" \\n\", \"text/html\": \"<b>x</b>\"}", "x", "text/html");
    /* no text/plain at all */
    s_assert_bundle ("{\"text/html\": \"<i>only</i>\"}", "only", "text/html");
    s_assert_bundle ("{\"application/json\": {\"a\": [1, 2]}}", "{\"a\":[1,2]}",
                     "application/json");
    s_assert_bundle ("{\"text/plain\": [\"line 1\\n\", \"line 2\"]}", "line 1\nline 2",
                     "text/plain");
    /* HTML that shows nothing as text, and a repr: the repr */
    s_assert_bundle ("{\"text/plain\": \"<foo.Chart object>\", \"text/html\": \"<script>x()"
                     "</script>\"}", "<foo.Chart object>", "text/plain");
    /* nothing that is text */
    s_assert_bundle ("{\"image/png\": \"iVBORw0KGgo=\"}", NULL, NULL);
    s_assert_bundle ("{\"application/vnd.plotly.v1+json\": {\"data\": []}, \"text/html\": "
                     "\"<div></div><script>p()</script>\"}", NULL, NULL);
}
END_TEST

Suite *
display_text_suite (void)
{
    Suite *s = suite_create ("display_text");
    TCase *tc = tcase_create ("html");
    tcase_add_test (tc, test_dataframe_reads_as_rows);
    tcase_add_test (tc, test_blocks_lists_and_white_space);
    tcase_add_test (tc, test_hidden_parts_are_left_out);
    tcase_add_test (tc, test_entities);
    tcase_add_test (tc, test_malformed_markup_gives_text);
    tcase_add_test (tc, test_bound_cuts_on_a_character);
    suite_add_tcase (s, tc);
    tc = tcase_create ("bundle");
    tcase_add_test (tc, test_placeholders);
    tcase_add_test (tc, test_bundle_text_rules);
    suite_add_tcase (s, tc);
    return s;
}
