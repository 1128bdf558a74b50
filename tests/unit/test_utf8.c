/* test_utf8: jp_utf8, the project's one UTF-8 validator: characters of
 * each length with their code points; overlong forms, surrogates, code
 * points above U+10FFFF, stray and missing continuation bytes refused;
 * and the same verdict as Jansson (whose strings must be valid UTF-8) on
 * every sequence of one and two bytes and on three- and four-byte ones
 * around every boundary. Pure code, no threads. */
#include <jansson.h>
#include <string.h>

#include "jp_utf8.h"
#include "suites.h"

static const struct {
    const char *bytes;
    size_t len;         /* 0: not a character */
    uint32_t cp;
} s_chars[] = {
    {"A", 1, 0x41},
    {"\x7F", 1, 0x7F},
    {"\xC2\x80", 2, 0x80},
    {"\xC3\xA9", 2, 0xE9},
    {"\xDF\xBF", 2, 0x7FF},
    {"\xE0\xA0\x80", 3, 0x800},
    {"\xE2\x82\xAC", 3, 0x20AC},
    {"\xED\x9F\xBF", 3, 0xD7FF},
    {"\xEE\x80\x80", 3, 0xE000},
    {"\xEF\xBF\xBF", 3, 0xFFFF},
    {"\xF0\x90\x80\x80", 4, 0x10000},
    {"\xF0\x9F\x98\x80", 4, 0x1F600},
    {"\xF4\x8F\xBF\xBF", 4, 0x10FFFF},
    {"\x80", 0, 0},                     /* a continuation byte alone */
    {"\xBF", 0, 0},
    {"\xC0\x80", 0, 0},                 /* overlong NUL */
    {"\xC1\xBF", 0, 0},
    {"\xE0\x9F\xBF", 0, 0},             /* overlong U+07FF */
    {"\xF0\x8F\xBF\xBF", 0, 0},         /* overlong U+FFFF */
    {"\xED\xA0\x80", 0, 0},             /* U+D800, a surrogate */
    {"\xED\xBF\xBF", 0, 0},             /* U+DFFF */
    {"\xF4\x90\x80\x80", 0, 0},         /* U+110000 */
    {"\xF5\x80\x80\x80", 0, 0},
    {"\xFF", 0, 0},
    {"\xC3\x28", 0, 0},                 /* the continuation is missing */
    {"\xE2\x82\x28", 0, 0},
    {"\xF0\x9F\x98\x28", 0, 0},
};

START_TEST (test_each_character)
{
    const char *b = s_chars[_i].bytes;
    size_t n = strlen (b);
    uint32_t cp = 0xFFFFFFFF;
    ck_assert_uint_eq (jp_utf8_char ((const uint8_t *) b, n, &cp), s_chars[_i].len);
    ck_assert_uint_eq (cp, s_chars[_i].len ? s_chars[_i].cp : 0xFFFFFFFF);
    ck_assert_uint_eq (jp_utf8_char ((const uint8_t *) b, n, NULL), s_chars[_i].len);
    ck_assert (jp_utf8_valid (b, n) == (s_chars[_i].len != 0));
    /* cut short, a character of more than one byte is not one */
    for (size_t k = 0; k < n && s_chars[_i].len > 1; k++)
        ck_assert_uint_eq (jp_utf8_char ((const uint8_t *) b, k, NULL), 0);
}
END_TEST

START_TEST (test_text)
{
    ck_assert (jp_utf8_valid ("", 0));
    ck_assert (jp_utf8_valid (NULL, 0));
    const char *text = "na\xC3\xAFve caf\xC3\xA9 \xE2\x82\xAC 5 \xF0\x9F\x98\x80!";
    ck_assert (jp_utf8_valid (text, strlen (text)));
    ck_assert (jp_utf8_valid ("a\0b", 3));          /* NUL is a character */
    ck_assert (!jp_utf8_valid (text, strlen (text) - 2));   /* the emoji cut */
    ck_assert (!jp_utf8_valid ("ok \xC3", 4));
    ck_assert (!jp_utf8_valid ("ok \xED\xA0\x80 no", 10));
    ck_assert_uint_eq (jp_utf8_char ((const uint8_t *) "x", 0, NULL), 0);
}
END_TEST

/* The verdict Jansson gives the len bytes at s (without NUL). */
static bool
s_jansson_valid (const uint8_t *s, size_t len)
{
    json_t *j = json_stringn ((const char *) s, len);
    json_decref (j);
    return j != NULL;
}

START_TEST (test_as_jansson_on_short_sequences)
{
    uint8_t s[4];
    for (unsigned a = 1; a < 256; a++) {
        s[0] = (uint8_t) a;
        ck_assert (jp_utf8_valid ((char *) s, 1) == s_jansson_valid (s, 1));
        for (unsigned b = 1; b < 256; b++) {
            s[1] = (uint8_t) b;
            ck_assert_msg (jp_utf8_valid ((char *) s, 2) == s_jansson_valid (s, 2),
                           "%02x %02x", a, b);
        }
    }
    /* three and four bytes: every lead and second byte, the rest around
       the continuation range's edges */
    static const uint8_t edges[] = {0x01, 0x7F, 0x80, 0x81, 0xBF, 0xC0, 0xFF};
    for (unsigned a = 0xC0; a < 256; a++)
        for (unsigned b = 1; b < 256; b++)
            for (size_t c = 0; c < sizeof edges; c++)
                for (size_t d = 0; d < sizeof edges; d++) {
                    s[0] = (uint8_t) a, s[1] = (uint8_t) b, s[2] = edges[c], s[3] = edges[d];
                    ck_assert_msg (jp_utf8_valid ((char *) s, 3) == s_jansson_valid (s, 3),
                                   "%02x %02x %02x", a, b, s[2]);
                    ck_assert_msg (jp_utf8_valid ((char *) s, 4) == s_jansson_valid (s, 4),
                                   "%02x %02x %02x %02x", a, b, s[2], s[3]);
                }
}
END_TEST

Suite *
utf8_suite (void)
{
    Suite *s = suite_create ("utf8");
    TCase *tc = tcase_create ("utf8");
    tcase_set_timeout (tc, 60);
    tcase_add_loop_test (tc, test_each_character, 0, (int) (sizeof s_chars / sizeof *s_chars));
    tcase_add_test (tc, test_text);
    tcase_add_test (tc, test_as_jansson_on_short_sequences);
    suite_add_tcase (s, tc);
    return s;
}
