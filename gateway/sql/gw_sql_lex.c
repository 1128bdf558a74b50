/* gw_sql_lex: a SQL lexer whose dialect-dependent rules are flags; see
 * gw_sql_lex.h. Where dialects disagree and no flag covers it, the lexer
 * takes the reading that shows more code, never less: line comments end
 * at \r as well as \n, and Unicode spaces separate words. Pure code; any
 * thread. */
#include "gw_sql_lex.h"

#include <string.h>

void
gw_sql_lex_init (gw_sql_lexer_t *self, const char *text, size_t len, unsigned flags)
{
    self->text = text;
    self->len = len;
    self->pos = 0;
    self->flags = flags;
    self->failed = false;
}

static int
s_at (const gw_sql_lexer_t *self, size_t i)
{
    return i < self->len ? (unsigned char) self->text[i] : -1;
}

/* The length of a Unicode space character (as UTF-8) at i, or 0. Some
 * engines take these for white space, so the lexer ends words there. */
static size_t
s_unicode_space (const gw_sql_lexer_t *self, size_t i)
{
    int a = s_at (self, i), b = s_at (self, i + 1), c = s_at (self, i + 2);
    if (a == 0xc2 && (b == 0xa0 || b == 0x85))
        return 2;                       /* U+00A0, U+0085 */
    if (a == 0xe1 && b == 0x9a && c == 0x80)
        return 3;                       /* U+1680 */
    if (a == 0xe2 && b == 0x80 && ((c >= 0x80 && c <= 0x8b) || c == 0xa8 || c == 0xa9 || c == 0xaf))
        return 3;                       /* U+2000-200B, U+2028, U+2029, U+202F */
    if (a == 0xe2 && b == 0x81 && c == 0x9f)
        return 3;                       /* U+205F */
    if (a == 0xe3 && b == 0x80 && c == 0x80)
        return 3;                       /* U+3000 */
    if (a == 0xef && b == 0xbb && c == 0xbf)
        return 3;                       /* U+FEFF */
    return 0;
}

static bool
s_is_space (int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static bool
s_word_start (int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static bool
s_word_cont (int c)
{
    return s_word_start (c) || (c >= '0' && c <= '9') || c == '$';
}

static bool
s_digit (int c)
{
    return c >= '0' && c <= '9';
}

/* Skips white space and comments. Returns false (with error set) on an
 * unterminated block comment. */
static bool
s_skip_blank (gw_sql_lexer_t *self, const char **error)
{
    for (;;) {
        int c = s_at (self, self->pos);
        size_t u;
        if (c < 0)
            return true;
        if (s_is_space (c)) {
            self->pos++;
            continue;
        }
        if ((u = s_unicode_space (self, self->pos)) > 0) {
            self->pos += u;
            continue;
        }
        bool line = false;
        if (c == '-' && s_at (self, self->pos + 1) == '-') {
            int after = s_at (self, self->pos + 2);
            line = !(self->flags & GW_SQL_LEX_DASH_SPACE) || after < 0 || after <= ' ';
        } else if (c == '#' && (self->flags & GW_SQL_LEX_HASH))
            line = true;
        if (line) {
            while (self->pos < self->len && self->text[self->pos] != '\n'
                   && self->text[self->pos] != '\r')
                self->pos++;
            continue;
        }
        if (c == '/' && s_at (self, self->pos + 1) == '*') {
            int x = s_at (self, self->pos + 2);
            if (x == '!' || (x == 'M' && s_at (self, self->pos + 3) == '!')) {
                *error = "MySQL executable comments (/*! ... */) are not accepted.";
                return false;
            }
            size_t depth = 1;
            self->pos += 2;
            while (depth > 0) {
                if (self->pos >= self->len) {
                    *error = "The query has a comment (/* ... */) that is never closed.";
                    return false;
                }
                if (self->text[self->pos] == '*' && s_at (self, self->pos + 1) == '/') {
                    depth--;
                    self->pos += 2;
                } else if ((self->flags & GW_SQL_LEX_NESTED) && self->text[self->pos] == '/'
                           && s_at (self, self->pos + 1) == '*') {
                    depth++;
                    self->pos += 2;
                } else
                    self->pos++;
            }
            continue;
        }
        return true;
    }
}

/* Scans a quoted run from pos (just after the opening quote) to just past
 * the closing quote close; a doubled close stands for itself and, when
 * backslash is set, \ escapes the next byte. False when unterminated. */
static bool
s_scan_quoted (gw_sql_lexer_t *self, char close, bool backslash)
{
    while (self->pos < self->len) {
        char c = self->text[self->pos];
        if (backslash && c == '\\') {
            self->pos += 2;
            continue;
        }
        self->pos++;
        if (c == close) {
            if (s_at (self, self->pos) == (unsigned char) close) {
                self->pos++;
                continue;
            }
            return true;
        }
    }
    self->pos = self->len;
    return false;
}

/* A PostgreSQL dollar quote at pos ("$$" or "$tag$")? Returns the length
 * of the opening delimiter, or 0. */
static size_t
s_dollar_tag (const gw_sql_lexer_t *self, size_t pos)
{
    size_t i = pos + 1;
    if (s_at (self, i) == '$')
        return 2;
    if (!s_word_start (s_at (self, i)))
        return 0;
    while (s_at (self, i) >= 0 && s_word_cont (s_at (self, i)) && s_at (self, i) != '$')
        i++;
    return s_at (self, i) == '$' ? i + 1 - pos : 0;
}

/* Oracle's q'X...X' quote from pos at the opening '. False when
 * unterminated. */
static bool
s_scan_qquote (gw_sql_lexer_t *self)
{
    int open = s_at (self, self->pos + 1);
    if (open < 0 || s_is_space (open)) {
        self->pos = self->len;
        return false;
    }
    char close = open == '[' ? ']' : open == '{' ? '}' : open == '<' ? '>' : open == '(' ? ')'
                                                                                : (char) open;
    for (size_t i = self->pos + 2; i + 1 < self->len; i++)
        if (self->text[i] == close && self->text[i + 1] == '\'') {
            self->pos = i + 2;
            return true;
        }
    self->pos = self->len;
    return false;
}

static gw_sql_tok_kind_t
s_emit (gw_sql_lexer_t *self, gw_sql_token_t *tok, gw_sql_tok_kind_t kind, size_t start)
{
    tok->kind = kind;
    tok->start = start;
    tok->len = self->pos - start;
    tok->error = NULL;
    return kind;
}

static gw_sql_tok_kind_t
s_fail (gw_sql_lexer_t *self, gw_sql_token_t *tok, size_t start, const char *error)
{
    self->failed = true;
    self->pos = self->len;
    tok->kind = GW_SQL_TOK_ERROR;
    tok->start = start;
    tok->len = 0;
    tok->error = error;
    return GW_SQL_TOK_ERROR;
}

gw_sql_tok_kind_t
gw_sql_lex_next (gw_sql_lexer_t *self, gw_sql_token_t *tok)
{
    const char *error = NULL;
    if (self->failed)
        return s_fail (self, tok, self->len, "The query could not be read.");
    if (!s_skip_blank (self, &error))
        return s_fail (self, tok, self->pos, error);
    size_t start = self->pos;
    int c = s_at (self, start);
    if (c < 0)
        return s_emit (self, tok, GW_SQL_TOK_END, start);
    bool bs = (self->flags & GW_SQL_LEX_BACKSLASH) != 0;

    if (c == '\'') {
        self->pos++;
        if (!s_scan_quoted (self, '\'', bs))
            return s_fail (self, tok, start, "The query has a string ('...') that is never closed.");
        return s_emit (self, tok, GW_SQL_TOK_STRING, start);
    }
    if (c == '"') {
        self->pos++;
        if (!s_scan_quoted (self, '"', bs))
            return s_fail (self, tok, start,
                           "The query has a quoted name (\"...\") that is never closed.");
        return s_emit (self, tok, GW_SQL_TOK_QIDENT, start);
    }
    if (c == '`' && (self->flags & GW_SQL_LEX_BACKTICK)) {
        self->pos++;
        if (!s_scan_quoted (self, '`', false))
            return s_fail (self, tok, start,
                           "The query has a quoted name (`...`) that is never closed.");
        return s_emit (self, tok, GW_SQL_TOK_QIDENT, start);
    }
    if (c == '[' && (self->flags & GW_SQL_LEX_BRACKET)) {
        self->pos++;
        if (!s_scan_quoted (self, ']', false))
            return s_fail (self, tok, start,
                           "The query has a quoted name ([...]) that is never closed.");
        return s_emit (self, tok, GW_SQL_TOK_QIDENT, start);
    }
    if (c == '$') {
        if (s_digit (s_at (self, start + 1))) {
            self->pos++;
            while (s_digit (s_at (self, self->pos)))
                self->pos++;
            return s_emit (self, tok, GW_SQL_TOK_PARAM, start);
        }
        size_t tag = (self->flags & GW_SQL_LEX_DOLLAR) ? s_dollar_tag (self, start) : 0;
        if (tag > 0) {
            const char *body = self->text + start + tag;
            size_t left = self->len - start - tag;
            for (size_t i = 0; i + tag <= left; i++)
                if (body[i] == '$' && memcmp (body + i, self->text + start, tag) == 0) {
                    self->pos = start + tag + i + tag;
                    return s_emit (self, tok, GW_SQL_TOK_STRING, start);
                }
            return s_fail (self, tok, start,
                           "The query has a dollar-quoted string ($$...$$) that is never closed.");
        }
    }
    if (s_digit (c) || (c == '.' && s_digit (s_at (self, start + 1)))) {
        while (s_digit (s_at (self, self->pos)))
            self->pos++;
        if (s_at (self, self->pos) == '.') {
            self->pos++;
            while (s_digit (s_at (self, self->pos)))
                self->pos++;
        }
        int e = s_at (self, self->pos);
        if (e == 'e' || e == 'E') {
            size_t k = self->pos + 1;
            if (s_at (self, k) == '+' || s_at (self, k) == '-')
                k++;
            if (s_digit (s_at (self, k))) {
                self->pos = k;
                while (s_digit (s_at (self, self->pos)))
                    self->pos++;
            }
        }
        return s_emit (self, tok, GW_SQL_TOK_NUMBER, start);
    }
    if (s_word_start (c) && s_unicode_space (self, start) == 0) {
        while (self->pos < self->len && s_word_cont (s_at (self, self->pos))
               && s_unicode_space (self, self->pos) == 0)
            self->pos++;
        size_t n = self->pos - start;
        const char *w = self->text + start;
        if (s_at (self, self->pos) == '\'') {
            if ((self->flags & GW_SQL_LEX_ESTRING) && n == 1 && (w[0] == 'e' || w[0] == 'E')) {
                self->pos++;
                if (!s_scan_quoted (self, '\'', true))
                    return s_fail (self, tok, start,
                                   "The query has a string (E'...') that is never closed.");
                return s_emit (self, tok, GW_SQL_TOK_STRING, start);
            }
            if ((self->flags & GW_SQL_LEX_QQUOTE)
                && ((n == 1 && (w[0] == 'q' || w[0] == 'Q'))
                    || (n == 2 && (w[0] == 'n' || w[0] == 'N') && (w[1] == 'q' || w[1] == 'Q')))) {
                if (!s_scan_qquote (self))
                    return s_fail (self, tok, start,
                                   "The query has a string (q'...') that is never closed.");
                return s_emit (self, tok, GW_SQL_TOK_STRING, start);
            }
        }
        return s_emit (self, tok, GW_SQL_TOK_WORD, start);
    }
    self->pos++;
    return s_emit (self, tok, c == '?' ? GW_SQL_TOK_PARAM : GW_SQL_TOK_PUNCT, start);
}

unsigned
gw_sql_lex_relevant_flags (const char *text, size_t len)
{
    unsigned flags = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i], n = i + 1 < len ? text[i + 1] : '\0';
        switch (c) {
        case '\\': flags |= GW_SQL_LEX_BACKSLASH; break;
        case '#': flags |= GW_SQL_LEX_HASH; break;
        case '[': flags |= GW_SQL_LEX_BRACKET; break;
        case '`': flags |= GW_SQL_LEX_BACKTICK; break;
        case '$': flags |= GW_SQL_LEX_DOLLAR; break;
        case '/': if (n == '*') flags |= GW_SQL_LEX_NESTED; break;
        case '-': if (n == '-') flags |= GW_SQL_LEX_DASH_SPACE; break;
        case 'e': case 'E': if (n == '\'') flags |= GW_SQL_LEX_ESTRING; break;
        case 'q': case 'Q': if (n == '\'') flags |= GW_SQL_LEX_QQUOTE; break;
        default: break;
        }
    }
    return flags;
}

bool
gw_sql_tok_is (const gw_sql_lexer_t *self, const gw_sql_token_t *tok, const char *word)
{
    if (tok->kind != GW_SQL_TOK_WORD)
        return false;
    size_t n = strlen (word);
    if (tok->len != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        char a = self->text[tok->start + i], b = word[i];
        if (a >= 'a' && a <= 'z')
            a = (char) (a - 'a' + 'A');
        if (b >= 'a' && b <= 'z')
            b = (char) (b - 'a' + 'A');
        if (a != b)
            return false;
    }
    return true;
}
