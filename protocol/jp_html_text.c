/* jp_html_text: HTML as readable text (see jp_html_text.h). One pass over
 * the markup: text is written as it comes, with the white space and line
 * breaks the elements around it ask for held back until the next visible
 * character, so nothing dangles at the end of a line or of the text.
 *
 * Pure code, any thread. */
#include "jp_html_text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define S_NAME_MAX 16

typedef struct {
    char *buf;
    size_t len, cap, max;
    bool cut;               /* max reached: the rest is not read */
    int newlines;           /* line breaks waiting for the next text (at most 2) */
    bool space;             /* a space waiting for the next text */
    const char *prefix;     /* waiting too: "- " of a list item */
    int pre;                /* inside <pre>: white space as written */
    int cells;              /* cells opened in the current table row */
} s_out_t;

/* Appends n bytes, cutting at max on a character boundary. */
static void
s_put (s_out_t *o, const char *s, size_t n)
{
    if (o->cut)
        return;
    if (o->len + n > o->max) {
        n = o->max - o->len;
        while (n > 0 && ((unsigned char) s[n] & 0xC0) == 0x80)
            n--;    /* s[n] continues a character: keep none of it */
        o->cut = true;
    }
    if (o->len + n + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 256;
        while (cap < o->len + n + 1)
            cap *= 2;
        char *grown = realloc (o->buf, cap);
        if (!grown) {
            o->cut = true;
            return;
        }
        o->buf = grown;
        o->cap = cap;
    }
    memcpy (o->buf + o->len, s, n);
    o->len += n;
}

/* Writes what waits before visible text: line breaks (none at the start),
 * else a space (none at a line's start), then a list item's prefix. */
static void
s_flush (s_out_t *o)
{
    if (o->len && o->newlines) {
        /* trailing spaces of the line end here */
        while (o->len && o->buf[o->len - 1] == ' ')
            o->len--;
        s_put (o, "\n\n", (size_t) o->newlines);
    } else if (o->space && o->len && o->buf[o->len - 1] != '\n' && o->buf[o->len - 1] != ' ')
        s_put (o, " ", 1);
    o->newlines = 0;
    o->space = false;
    if (o->prefix) {
        s_put (o, o->prefix, strlen (o->prefix));
        o->prefix = NULL;
    }
}

static void
s_break (s_out_t *o, int count)
{
    if (o->newlines < count)
        o->newlines = count;
    o->space = false;
}

/* Visible text (decoded): white space folds unless inside <pre>. */
static void
s_text (s_out_t *o, const char *s, size_t n)
{
    for (size_t i = 0; i < n && !o->cut; i++) {
        char c = s[i];
        if (o->pre && c == '\0')
            continue;
        if (o->pre) {
            if (c == '\n') {
                s_flush (o);
                s_put (o, "\n", 1);
            } else {
                s_flush (o);
                s_put (o, &c, 1);
            }
            continue;
        }
        if (c == '\0')
            continue;       /* a NUL would end the text for C readers */
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
            o->space = true;
            continue;
        }
        size_t run = 1;     /* a run of ordinary bytes goes in one copy */
        while (i + run < n && s[i + run] && !strchr (" \t\n\r\f", s[i + run]))
            run++;
        s_flush (o);
        s_put (o, s + i, run);
        i += run - 1;
    }
}

/* The UTF-8 encoding of code point cp (U+FFFD for what is not a
 * character) into out (4 bytes); returns its length. */
static size_t
s_utf8 (uint32_t cp, char *out)
{
    if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        cp = 0xFFFD;
    if (cp < 0x80) {
        out[0] = (char) cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char) (0xC0 | (cp >> 6));
        out[1] = (char) (0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char) (0xE0 | (cp >> 12));
        out[1] = (char) (0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char) (0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char) (0xF0 | (cp >> 18));
    out[1] = (char) (0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char) (0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char) (0x80 | (cp & 0x3F));
    return 4;
}

static const struct {
    const char *name;
    uint32_t cp;
} s_entities[] = {
    {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''},
    {"nbsp", ' '}, {"hellip", 0x2026}, {"mdash", 0x2014}, {"ndash", 0x2013},
    {"minus", 0x2212}, {"times", 0xD7}, {"middot", 0xB7}, {"deg", 0xB0},
    {"plusmn", 0xB1}, {"copy", 0xA9}, {"reg", 0xAE}, {"euro", 0x20AC},
    {"laquo", 0xAB}, {"raquo", 0xBB}, {"lsquo", 0x2018}, {"rsquo", 0x2019},
    {"ldquo", 0x201C}, {"rdquo", 0x201D}, {"bull", 0x2022}, {"larr", 0x2190},
    {"rarr", 0x2192}, {"le", 0x2264}, {"ge", 0x2265}, {"ne", 0x2260},
};

/* Decodes the entity at s[0] == '&' into out (4 bytes). Returns the bytes
 * of s it takes (0 when it is no entity: the '&' is then text). */
static size_t
s_entity (const char *s, size_t n, char *out, size_t *out_len)
{
    size_t end = 1;
    while (end < n && end < 40 && s[end] != ';' && s[end] != '&' && s[end] != '<')
        end++;
    if (end >= n || s[end] != ';' || end < 2)
        return 0;
    uint32_t cp = 0;
    if (s[1] == '#') {
        bool hex = end > 2 && (s[2] == 'x' || s[2] == 'X');
        size_t i = hex ? 3 : 2;
        if (i >= end)
            return 0;
        for (; i < end; i++) {
            char c = s[i];
            int digit = c >= '0' && c <= '9' ? c - '0'
                        : hex && c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : hex && c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (digit < 0)
                return 0;
            if (cp <= 0x10FFFF)
                cp = cp * (hex ? 16 : 10) + (uint32_t) digit;
        }
    } else {
        size_t k = 0, count = sizeof s_entities / sizeof s_entities[0];
        while (k < count && !(strlen (s_entities[k].name) == end - 1
                              && strncmp (s + 1, s_entities[k].name, end - 1) == 0))
            k++;
        if (k == count)
            return 0;
        cp = s_entities[k].cp;
    }
    *out_len = s_utf8 (cp, out);
    return end + 1;
}

/* Elements whose content is not shown. */
static bool
s_hidden (const char *name)
{
    static const char *const names[] = {"script", "style", "head", "template", "svg",
                                        "noscript", "title", NULL};
    for (int i = 0; names[i]; i++)
        if (strcmp (name, names[i]) == 0)
            return true;
    return false;
}

/* Elements that stand on lines of their own: 2 for a blank line around. */
static int
s_block (const char *name)
{
    static const char *const paragraphs[] = {"p", "table", "pre", "ul", "ol", "dl",
                                             "blockquote", "h1", "h2", "h3", "h4", "h5",
                                             "h6", "figure", "hr", "details", NULL};
    static const char *const lines[] = {"div", "tr", "li", "dt", "dd", "thead", "tbody",
                                        "tfoot", "caption", "section", "article", "header",
                                        "footer", "nav", "main", "aside", "form",
                                        "figcaption", "summary", "address", NULL};
    for (int i = 0; paragraphs[i]; i++)
        if (strcmp (name, paragraphs[i]) == 0)
            return 2;
    for (int i = 0; lines[i]; i++)
        if (strcmp (name, lines[i]) == 0)
            return 1;
    return 0;
}

/* The end of the tag that starts at s[0] == '<': past its '>' (quoted
 * values may hold one), or n. */
static size_t
s_tag_end (const char *s, size_t n)
{
    char quote = 0;
    for (size_t i = 1; i < n; i++) {
        if (quote) {
            if (s[i] == quote)
                quote = 0;
        } else if (s[i] == '"' || s[i] == '\'')
            quote = s[i];
        else if (s[i] == '>')
            return i + 1;
    }
    return n;
}

/* Where "</name" starts at or after from (case-insensitive), or n. */
static size_t
s_find_close (const char *s, size_t n, size_t from, const char *name)
{
    size_t name_len = strlen (name);
    for (size_t i = from; i + 2 + name_len <= n; i++) {
        const char *hit = memchr (s + i, '<', n - i);
        if (!hit)
            return n;
        i = (size_t) (hit - s);
        if (i + 2 + name_len <= n && s[i + 1] == '/'
            && strncasecmp (s + i + 2, name, name_len) == 0)
            return i;
    }
    return n;
}

/* Does what an element's start (closing false) or end asks of the text. */
static void
s_element (s_out_t *o, const char *name, bool closing)
{
    if (strcmp (name, "br") == 0) {
        if (!closing && o->newlines < 2)
            o->newlines++, o->space = false;
        return;
    }
    if (strcmp (name, "pre") == 0)
        o->pre += closing ? (o->pre > 0 ? -1 : 0) : 1;
    if (strcmp (name, "tr") == 0)
        o->cells = 0;
    if (!closing && (strcmp (name, "td") == 0 || strcmp (name, "th") == 0)) {
        if (o->cells++ > 0) {
            o->space = false;   /* the separator is the space between cells */
            s_flush (o);
            while (o->len && o->buf[o->len - 1] == ' ')
                o->len--;
            bool line_start = o->len == 0 || o->buf[o->len - 1] == '\n';
            s_put (o, line_start ? "| " : " | ", line_start ? 2 : 3);
        }
        return;
    }
    int block = s_block (name);
    if (block)
        s_break (o, block);
    if (!closing && strcmp (name, "li") == 0)
        o->prefix = "- ";
}

char *
jp_html_text (const char *html, size_t len, size_t max, size_t *out_len, bool *cut_p)
{
    s_out_t o = {.max = max};
    size_t i = 0;
    while (i < len && !o.cut) {
        char c = html[i];
        if (c == '&') {
            char utf8[4];
            size_t n = 0, used = s_entity (html + i, len - i, utf8, &n);
            if (used) {
                s_text (&o, utf8, n);
                i += used;
            } else {
                s_text (&o, "&", 1);
                i++;
            }
            continue;
        }
        if (c != '<') {
            size_t run = 1;
            while (i + run < len && html[i + run] != '<' && html[i + run] != '&')
                run++;
            s_text (&o, html + i, run);
            i += run;
            continue;
        }
        const char *rest = html + i;
        size_t left = len - i;
        if (left >= 4 && memcmp (rest, "<!--", 4) == 0) {
            size_t k = 4;
            while (k + 3 <= left && memcmp (rest + k, "-->", 3) != 0)
                k++;
            i += k + 3 <= left ? k + 3 : left;
            continue;
        }
        bool closing = left > 1 && rest[1] == '/';
        size_t start = closing ? 2 : 1;
        if (left > 1 && (rest[1] == '!' || rest[1] == '?')) {
            i += s_tag_end (rest, left);    /* a doctype or processing instruction */
            continue;
        }
        char name[S_NAME_MAX + 1];
        size_t k = 0;
        while (start + k < left && k < S_NAME_MAX
               && ((rest[start + k] >= 'a' && rest[start + k] <= 'z')
                   || (rest[start + k] >= 'A' && rest[start + k] <= 'Z')
                   || (k > 0 && rest[start + k] >= '0' && rest[start + k] <= '9'))) {
            char ch = rest[start + k];
            name[k++] = ch >= 'A' && ch <= 'Z' ? (char) (ch - 'A' + 'a') : ch;
        }
        name[k] = '\0';
        if (k == 0) {       /* "<" that opens no tag is text */
            s_text (&o, "<", 1);
            i++;
            continue;
        }
        size_t end = s_tag_end (rest, left);
        bool self_closing = end >= 2 && end <= left && rest[end - 1] == '>' && rest[end - 2] == '/';
        i += end;
        if (!closing && !self_closing && s_hidden (name)) {
            /* skip to its end tag, and past it */
            size_t close = s_find_close (html, len, i, name);
            i = close < len ? close + s_tag_end (html + close, len - close) : len;
            continue;
        }
        s_element (&o, name, closing);
        if (self_closing && !closing)
            s_element (&o, name, true);
    }
    if (!o.buf && !(o.buf = malloc (1)))
        return NULL;
    /* no white space at the very end */
    while (!o.cut && o.len && (o.buf[o.len - 1] == ' ' || o.buf[o.len - 1] == '\n'))
        o.len--;
    o.buf[o.len] = '\0';
    if (out_len)
        *out_len = o.len;
    if (cut_p)
        *cut_p = o.cut;
    return o.buf;
}
