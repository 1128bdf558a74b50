/* gw_sql_lex: a SQL lexer for the read-only check of exec_sql. It splits
 * a query into words, quoted identifiers, strings, numbers, parameters
 * and punctuation, and skips white space and comments.
 *
 * SQL dialects disagree on a few lexical rules, and a query that one
 * dialect reads as a string or a comment may be code to another. Each of
 * those rules is a flag (GW_SQL_LEX_*), so the classifier can lex a query
 * under every combination that matters and accept it only when every
 * reading is a read. The rules without a flag are common to all:
 * '...' strings with '' for a quote, "..." quoted identifiers with "",
 * "--" and block comments, words of [A-Za-z_] or any byte >= 0x80,
 * followed by those, digits and '$'.
 *
 * Pure code, no allocation; any thread. */
#ifndef GW_SQL_LEX_H
#define GW_SQL_LEX_H

#include <stdbool.h>
#include <stddef.h>

/* Lexical rules that differ between dialects. */
enum {
    GW_SQL_LEX_BACKSLASH = 1 << 0,  /* MySQL: \ escapes the next character in '...' and "..." */
    GW_SQL_LEX_NESTED = 1 << 1,     /* PostgreSQL, SQL Server: block comments nest */
    GW_SQL_LEX_HASH = 1 << 2,       /* MySQL: # starts a line comment */
    GW_SQL_LEX_BRACKET = 1 << 3,    /* SQLite, SQL Server: [identifier] (]] for ]) */
    GW_SQL_LEX_BACKTICK = 1 << 4,   /* MySQL, SQLite: `identifier` (`` for `) */
    GW_SQL_LEX_DOLLAR = 1 << 5,     /* PostgreSQL: $$...$$ and $tag$...$tag$ strings */
    GW_SQL_LEX_ESTRING = 1 << 6,    /* PostgreSQL: E'...' strings with backslash escapes */
    GW_SQL_LEX_DASH_SPACE = 1 << 7, /* MySQL: "--" starts a comment only before a space or control character */
    GW_SQL_LEX_QQUOTE = 1 << 8,     /* Oracle: q'[...]' strings with a chosen delimiter */
    GW_SQL_LEX_FLAG_COUNT = 9
};

typedef enum {
    GW_SQL_TOK_END = 0,     /* end of input */
    GW_SQL_TOK_WORD,        /* keyword or unquoted identifier */
    GW_SQL_TOK_QIDENT,      /* "x", `x` or [x] */
    GW_SQL_TOK_STRING,      /* any string literal, dollar-quoted included */
    GW_SQL_TOK_NUMBER,      /* 12, 1.5, .5, 1e-3 */
    GW_SQL_TOK_PARAM,       /* $1, ?, :name, @name */
    GW_SQL_TOK_PUNCT,       /* one character: ; ( ) , . { } and operators */
    GW_SQL_TOK_ERROR        /* unterminated string, identifier or comment */
} gw_sql_tok_kind_t;

typedef struct {
    gw_sql_tok_kind_t kind;
    size_t start;           /* byte offset of the token in the input */
    size_t len;             /* its length in bytes (with quotes) */
    const char *error;      /* for GW_SQL_TOK_ERROR: a static sentence */
} gw_sql_token_t;

typedef struct {
    const char *text;
    size_t len;
    size_t pos;
    unsigned flags;
    bool failed;
} gw_sql_lexer_t;

/* Starts lexing len bytes of text (not NUL-terminated) under flags. */
void gw_sql_lex_init (gw_sql_lexer_t *self, const char *text, size_t len, unsigned flags);

/* Fills tok with the next token and returns its kind. After an END or an
 * ERROR token every later call returns the same kind again. Tokens come
 * in order, do not overlap, and lie within the input. */
gw_sql_tok_kind_t gw_sql_lex_next (gw_sql_lexer_t *self, gw_sql_token_t *tok);

/* The flags whose rules could change how text is lexed: a flag is left
 * out when the characters it is about do not occur (no backslash, no '#',
 * and so on). The classifier tries every subset of these. */
unsigned gw_sql_lex_relevant_flags (const char *text, size_t len);

/* True when the word token equals word (ASCII, case-insensitive). */
bool gw_sql_tok_is (const gw_sql_lexer_t *self, const gw_sql_token_t *tok, const char *word);

#endif
