/* jp_bundle_text: the text of a MIME bundle (see jp_bundle_text.h).
 *
 * Pure code, any thread. */
#include "jp_bundle_text.h"

#include <stdlib.h>
#include <string.h>

#include "jp_html_text.h"
#include "jp_json.h"

bool
jp_bundle_placeholder (const char *text, size_t len)
{
    while (len && strchr (" \t\r\n", text[len - 1]))
        len--;
    while (len && strchr (" \t\r\n", text[0]))
        text++, len--;
    if (len < 9 || text[0] != '<' || text[len - 1] != '>' || memchr (text, '\n', len))
        return false;
    /* "<NAME object>" or "<NAME object at 0xHEX>" */
    const char *end = text + len - 1;
    const char *at = end;
    while (at > text && ((*(at - 1) >= '0' && *(at - 1) <= '9')
                         || (*(at - 1) >= 'a' && *(at - 1) <= 'f')
                         || (*(at - 1) >= 'A' && *(at - 1) <= 'F')))
        at--;
    if (at < end && at - text >= 8 && memcmp (at - 6, " at 0x", 6) == 0) {
        /* "<NAME at 0xHEX>" (pandas' Styler) or "<NAME object at 0xHEX>" */
        end = at - 6;
        return !memchr (text, ' ', (size_t) (end - text))
               || (end - text >= 8 && memcmp (end - 7, " object", 7) == 0);
    }
    return end - text >= 8 && memcmp (end - 7, " object", 7) == 0;
}

/* A string value of data[mime] (Jupyter also allows a list of lines,
 * joined), malloc'd, or NULL when absent. */
static char *
s_string (const json_t *data, const char *mime, size_t *len_p)
{
    const json_t *value = json_object_get (data, mime);
    if (json_is_string (value)) {
        *len_p = json_string_length (value);
        char *copy = malloc (*len_p + 1);
        if (copy)
            memcpy (copy, json_string_value (value), *len_p + 1);
        return copy;
    }
    if (!json_is_array (value))
        return NULL;
    size_t total = 0, i;
    const json_t *line;
    json_array_foreach (value, i, line)
        total += json_string_length (line);
    char *joined = malloc (total + 1);
    if (!joined)
        return NULL;
    *len_p = 0;
    json_array_foreach (value, i, line) {
        memcpy (joined + *len_p, json_string_value (line) ? json_string_value (line) : "",
                json_string_length (line));
        *len_p += json_string_length (line);
    }
    joined[*len_p] = '\0';
    return joined;
}

char *
jp_bundle_text (const json_t *data, size_t max, size_t *len_p, const char **mime_p)
{
    *len_p = 0;
    *mime_p = NULL;
    size_t plain_len = 0;
    char *plain = s_string (data, "text/plain", &plain_len);
    size_t visible = 0;    /* an empty or blank text/plain says nothing either */
    while (plain && visible < plain_len && strchr (" \t\r\n", plain[visible]))
        visible++;
    if (plain && visible == plain_len) {
        free (plain);
        plain = NULL;
    }
    if (plain && !jp_bundle_placeholder (plain, plain_len)) {
        *mime_p = "text/plain";
        *len_p = plain_len;
        return plain;
    }
    static const char *const written[] = {"text/markdown", "text/latex"};
    for (int i = 0; i < 2; i++) {
        size_t len = 0;
        char *text = s_string (data, written[i], &len);
        if (text && len) {
            free (plain);
            *mime_p = written[i];
            *len_p = len;
            return text;
        }
        free (text);
    }
    size_t html_len = 0;
    char *html = s_string (data, "text/html", &html_len);
    if (html) {
        size_t len = 0;
        char *text = jp_html_text (html, html_len, max, &len, NULL);
        free (html);
        if (!text || len) {
            free (plain);
            *mime_p = "text/html";
            *len_p = len;
            return text;
        }
        free (text);
    }
    const json_t *json = json_object_get (data, "application/json");
    if (json) {
        size_t len = 0;
        char *text = jp_json_dump (json, &len);
        if (text && len > max) {
            while (max && ((unsigned char) text[max] & 0xC0) == 0x80)
                max--;
            text[max] = '\0';
            len = max;
        }
        free (plain);
        *mime_p = "application/json";
        *len_p = len;
        return text;
    }
    if (plain)
        *mime_p = "text/plain";     /* a default repr is still better than nothing */
    *len_p = plain ? plain_len : 0;
    return plain;
}
