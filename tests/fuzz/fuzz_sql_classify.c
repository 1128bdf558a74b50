/* fuzz_sql_classify: libFuzzer target for exec_sql's statement check
 * (gw_sql_classify, in every dialect) and its lexer (gw_sql_lex).
 *
 * Input format: the whole input is the query text (not NUL-terminated).
 *
 * Checked properties (a failure aborts):
 *   - the classifier returns 0, -EPERM, -EINVAL or -E2BIG; on 0 the kind
 *     has a name; otherwise the message is non-empty printable ASCII and
 *     fits its buffer, also a tiny one;
 *   - safety: a query admitted in a dialect is refused once a second
 *     statement or a data-modifying word follows it on a new line, so no
 *     admitted query leaves a string, quoted name or comment open that
 *     could hide what follows;
 *   - the lexer's tokens, under a rule set taken from the input's length,
 *     come in order, lie within the input, do not overlap, and end in one
 *     END or ERROR that repeats. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_sql_classify.h"
#include "gw_sql_lex.h"

static void
s_fail (const char *what, const char *dialect)
{
    fprintf (stderr, "fuzz_sql_classify: %s (dialect %s)\n", what, dialect);
    abort ();
}

static const char *s_names[] = {"any", "postgresql", "sqlite", "mysql"};

static void
s_check_message (const char *err, size_t size, const char *dialect)
{
    if (!memchr (err, '\0', size))
        s_fail ("message not terminated", dialect);
    if (size > 1 && err[0] == '\0')
        s_fail ("refusal without a message", dialect);
    for (const char *c = err; *c; c++)
        if (*c < 0x20 || *c > 0x7e)
            s_fail ("message is not printable ASCII", dialect);
}

static void
s_lexer (const char *text, size_t size)
{
    unsigned flags = (unsigned) (size * 7919u) & ((1u << GW_SQL_LEX_FLAG_COUNT) - 1);
    gw_sql_lexer_t lex;
    gw_sql_token_t tok;
    gw_sql_lex_init (&lex, text, size, flags);
    size_t end = 0;
    for (;;) {
        gw_sql_tok_kind_t k = gw_sql_lex_next (&lex, &tok);
        if (k == GW_SQL_TOK_END || k == GW_SQL_TOK_ERROR) {
            if (k == GW_SQL_TOK_ERROR && !tok.error)
                s_fail ("lexer error without a message", "lexer");
            if (gw_sql_lex_next (&lex, &tok) != k)
                s_fail ("END or ERROR does not repeat", "lexer");
            return;
        }
        if (tok.start < end || tok.len == 0 || tok.start + tok.len > size)
            s_fail ("token out of order or out of bounds", "lexer");
        end = tok.start + tok.len;
    }
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;               /* every rule set is tried: keep runs fast */
    const char *text = (const char *) data;
    s_lexer (text, size);
    static const char *tails[] = {"\n; DELETE FROM t", "\n INSERT INTO t VALUES (1)"};
    char *longer = malloc (size + 32);
    if (!longer)
        return 0;
    for (int d = GW_SQL_DIALECT_ANY; d <= GW_SQL_DIALECT_MYSQL; d++) {
        char err[512];
        memset (err, 'X', sizeof err);
        gw_sql_kind_t kind = (gw_sql_kind_t) 99;
        int rc = gw_sql_classify (text, size, (gw_sql_dialect_t) d, &kind, err, sizeof err);
        if (rc == 0) {
            if (strcmp (gw_sql_kind_name (kind), "unknown") == 0)
                s_fail ("admitted with no kind", s_names[d]);
            for (size_t t = 0; t < sizeof tails / sizeof tails[0]; t++) {
                size_t n = strlen (tails[t]);
                memcpy (longer, text, size);
                memcpy (longer + size, tails[t], n);
                if (gw_sql_classify (longer, size + n, (gw_sql_dialect_t) d, NULL, err,
                                     sizeof err) == 0)
                    s_fail ("a write after an admitted query was admitted", s_names[d]);
            }
        } else if (rc == -EPERM || rc == -EINVAL || rc == -E2BIG)
            s_check_message (err, sizeof err, s_names[d]);
        else
            s_fail ("unexpected return code", s_names[d]);
        char small[6];
        memset (small, 'X', sizeof small);
        rc = gw_sql_classify (text, size, (gw_sql_dialect_t) d, NULL, small, sizeof small);
        if (rc != 0 && !memchr (small, '\0', sizeof small))
            s_fail ("message overran a small buffer", s_names[d]);
    }
    free (longer);
    return 0;
}
