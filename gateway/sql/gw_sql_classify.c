/* gw_sql_classify: the statement check of exec_sql; see gw_sql_classify.h.
 * One pass (s_pass) lexes the query under one set of dialect rules and
 * checks its head (the statement kind) and every token; gw_sql_classify
 * runs it for each combination of the rules the query's characters could
 * trigger. Pure code; any thread. */
#include "gw_sql_classify.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gw_sql_lex.h"

/* Words refused wherever they appear outside strings, names and comments. */
static const struct {
    const char *word;
    const char *why;
} s_words[] = {
    {"INSERT", "changes data"},
    {"UPDATE", "changes data (or locks rows, as in FOR UPDATE)"},
    {"DELETE", "changes data"},
    {"MERGE", "changes data"},
    {"UPSERT", "changes data"},
    {"INTO", "writes a result into a table, a variable or a file (SELECT ... INTO)"},
    {"ATTACH", "attaches another database"},
    {"DETACH", "detaches a database"},
    {"PRAGMA", "can change the database or the connection"},
    {"VACUUM", "rewrites the database or writes a copy of it (VACUUM INTO)"},
    {"COPY", "copies data to or from files or programs"},
    {"LOCK", "takes locks"},
    {"NEXTVAL", "advances a sequence"},
};

/* Functions refused when called (followed by '('); prefix entries match
 * every name that starts with them; package entries match also before a
 * '.' (Oracle's dbms_pipe.send_message). */
enum { S_EXACT = 0, S_PREFIX = 1, S_PACKAGE = 2 };
static const struct {
    const char *name;
    int match;
    const char *why;
} s_functions[] = {
    /* PostgreSQL */
    {"pg_terminate_backend", S_EXACT, "ends another connection"},
    {"pg_cancel_backend", S_EXACT, "cancels another connection's query"},
    {"pg_reload_conf", S_EXACT, "reloads the server configuration"},
    {"pg_rotate_logfile", S_EXACT, "rotates the server log"},
    {"pg_promote", S_EXACT, "promotes a standby server"},
    {"pg_switch_wal", S_EXACT, "switches the write-ahead log"},
    {"pg_create_restore_point", S_EXACT, "writes to the write-ahead log"},
    {"pg_start_backup", S_EXACT, "starts a backup"},
    {"pg_stop_backup", S_EXACT, "stops a backup"},
    {"pg_backup_start", S_EXACT, "starts a backup"},
    {"pg_backup_stop", S_EXACT, "stops a backup"},
    {"pg_notify", S_EXACT, "sends a notification"},
    {"pg_import_system_collations", S_EXACT, "creates collations"},
    {"pg_log_backend_memory_contexts", S_EXACT, "writes to the server log"},
    {"pg_replication_slot_advance", S_EXACT, "moves a replication slot"},
    {"pg_extension_config_dump", S_EXACT, "changes an extension's configuration"},
    {"pg_read_file", S_EXACT, "reads files on the database server"},
    {"pg_read_binary_file", S_EXACT, "reads files on the database server"},
    {"pg_stat_file", S_EXACT, "reads file information on the database server"},
    {"set_config", S_EXACT, "changes a setting"},
    {"nextval", S_EXACT, "advances a sequence"},
    {"setval", S_EXACT, "sets a sequence"},
    {"ts_stat", S_EXACT, "runs a query given as text"},
    {"pg_write_", S_PREFIX, "writes files on the database server"},
    {"pg_file_", S_PREFIX, "changes files on the database server"},
    {"pg_ls_", S_PREFIX, "lists folders on the database server"},
    {"pg_advisory_", S_PREFIX, "takes or releases locks"},
    {"pg_try_advisory_", S_PREFIX, "takes locks"},
    {"pg_create_", S_PREFIX, "creates server objects"},
    {"pg_drop_", S_PREFIX, "drops server objects"},
    {"pg_copy_", S_PREFIX, "copies replication slots"},
    {"pg_logical_", S_PREFIX, "consumes or writes logical replication data"},
    {"pg_replication_origin_", S_PREFIX, "changes replication state"},
    {"pg_stat_reset", S_PREFIX, "resets statistics"},
    {"pg_wal_replay_", S_PREFIX, "pauses or resumes recovery"},
    {"binary_upgrade_", S_PREFIX, "changes catalogs"},
    {"lo_", S_PREFIX, "works on large objects, and can read or write server files"},
    {"dblink", S_PREFIX, "runs SQL on another connection"},
    {"query_to_xml", S_PREFIX, "runs a query given as text"},
    {"cursor_to_xml", S_PREFIX, "reads from a cursor"},
    /* SQLite */
    {"load_extension", S_EXACT, "loads native code into the database engine"},
    {"readfile", S_EXACT, "reads files"},
    {"writefile", S_EXACT, "writes files"},
    {"edit", S_EXACT, "starts an editor"},
    {"fts3_tokenizer", S_EXACT, "can register native code"},
    /* MySQL, MariaDB */
    {"load_file", S_EXACT, "reads files on the database server"},
    {"get_lock", S_EXACT, "takes a lock"},
    {"release_lock", S_EXACT, "releases a lock"},
    {"release_all_locks", S_EXACT, "releases locks"},
    {"sys_exec", S_EXACT, "runs a program"},
    {"sys_eval", S_EXACT, "runs a program"},
    {"master_pos_wait", S_EXACT, "waits on replication"},
    {"source_pos_wait", S_EXACT, "waits on replication"},
    /* SQL Server, Oracle */
    {"openrowset", S_EXACT, "reaches another data source"},
    {"opendatasource", S_EXACT, "reaches another data source"},
    {"openquery", S_EXACT, "runs SQL on a linked server"},
    {"xp_", S_PREFIX, "runs an extended stored procedure"},
    {"sp_", S_PREFIX, "runs a stored procedure"},
    {"dbms_", S_PACKAGE, "calls an Oracle package with side effects"},
    {"utl_", S_PACKAGE, "calls an Oracle package that reaches files or the network"},
};

static const char *s_kind_names[] = {"select", "with", "values", "table", "explain", "show"};

const char *
gw_sql_kind_name (gw_sql_kind_t kind)
{
    return (unsigned) kind < sizeof s_kind_names / sizeof s_kind_names[0] ? s_kind_names[kind]
                                                                           : "unknown";
}

typedef struct {
    gw_sql_lexer_t lex;
    gw_sql_token_t tok;
    char *err;
    size_t err_len;
} s_pass_t;

static void
s_advance (s_pass_t *p)
{
    gw_sql_lex_next (&p->lex, &p->tok);
}

static gw_sql_token_t
s_peek (const s_pass_t *p)
{
    gw_sql_lexer_t copy = p->lex;
    gw_sql_token_t t;
    gw_sql_lex_next (&copy, &t);
    return t;
}

static bool
s_is_punct (const s_pass_t *p, const gw_sql_token_t *t, char c)
{
    return t->kind == GW_SQL_TOK_PUNCT && p->lex.text[t->start] == c;
}

static bool
s_is (const s_pass_t *p, const char *word)
{
    return gw_sql_tok_is (&p->lex, &p->tok, word);
}

static int
s_fail (s_pass_t *p, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    if (p->err_len > 0)
        vsnprintf (p->err, p->err_len, fmt, ap);
    va_end (ap);
    return rc;
}

/* Copies the current word, upper-cased, into out if it is short ASCII;
 * otherwise writes a description. */
static void
s_word_text (const s_pass_t *p, const gw_sql_token_t *t, char *out, size_t out_len)
{
    const char *w = p->lex.text + t->start;
    bool ascii = t->kind == GW_SQL_TOK_WORD && t->len < 32;
    for (size_t i = 0; ascii && i < t->len; i++)
        if ((unsigned char) w[i] >= 0x80)
            ascii = false;
    if (!ascii) {
        snprintf (out, out_len, "%s",
                  t->kind == GW_SQL_TOK_WORD ? "an unknown" : t->kind == GW_SQL_TOK_QIDENT
                  ? "a quoted name" : t->kind == GW_SQL_TOK_STRING ? "a string" : "an unknown");
        return;
    }
    size_t n = t->len < out_len - 1 ? t->len : out_len - 1;
    for (size_t i = 0; i < n; i++)
        out[i] = (char) (w[i] >= 'a' && w[i] <= 'z' ? w[i] - 'a' + 'A' : w[i]);
    out[n] = '\0';
}

static const char s_allowed[] =
    "exec_sql runs reads only: one SELECT, WITH ... SELECT, VALUES, TABLE, EXPLAIN of a read, or SHOW";

/* Names the statement that starts at the current token and refuses it. */
static int
s_refuse_head (s_pass_t *p, bool in_explain)
{
    char kind[96] = "";
    if (p->tok.kind == GW_SQL_TOK_WORD) {
        s_word_text (p, &p->tok, kind, 40);
        if (strcmp (kind, "CREATE") == 0 || strcmp (kind, "DROP") == 0
            || strcmp (kind, "ALTER") == 0) {
            s_advance (p);
            while (s_is (p, "OR") || s_is (p, "REPLACE") || s_is (p, "TEMP")
                   || s_is (p, "TEMPORARY") || s_is (p, "UNIQUE"))
                s_advance (p);
            if (p->tok.kind == GW_SQL_TOK_WORD) {
                size_t n = strlen (kind);
                kind[n] = ' ';
                s_word_text (p, &p->tok, kind + n + 1, 40);
            }
        }
        if (in_explain)
            return s_fail (p, -EPERM, "%s; EXPLAIN is allowed of a read only, and this explains "
                           "%s %s statement.", s_allowed,
                           strchr ("AEIOU", kind[0]) && kind[0] ? "an" : "a", kind);
        return s_fail (p, -EPERM, "%s; this is %s %s statement.", s_allowed,
                       strchr ("AEIOU", kind[0]) && kind[0] ? "an" : "a", kind);
    }
    if (p->tok.kind == GW_SQL_TOK_END)
        return s_fail (p, in_explain ? -EPERM : -EINVAL, in_explain
                       ? "EXPLAIN needs a statement to explain." : "The query is empty.");
    const char *what = p->tok.kind == GW_SQL_TOK_STRING ? "a string"
        : p->tok.kind == GW_SQL_TOK_QIDENT ? "a quoted name"
        : p->tok.kind == GW_SQL_TOK_NUMBER ? "a number" : NULL;
    if (what)
        return s_fail (p, -EPERM, "%s; this statement starts with %s.", s_allowed, what);
    char c = p->lex.text[p->tok.start];
    if (c >= 0x21 && c <= 0x7e)
        return s_fail (p, -EPERM, "%s; this statement starts with '%c'.", s_allowed, c);
    return s_fail (p, -EPERM, "%s; this statement starts with an unknown character.", s_allowed);
}

/* Reads the statement head from the current token: the kind, after
 * leading '(' and EXPLAIN's options. */
static int
s_head (s_pass_t *p, gw_sql_kind_t *kind, bool in_explain)
{
    while (s_is_punct (p, &p->tok, '('))
        s_advance (p);
    if (p->tok.kind == GW_SQL_TOK_ERROR)
        return s_fail (p, -EINVAL, "%s", p->tok.error);
    if (s_is (p, "SELECT"))
        *kind = GW_SQL_KIND_SELECT;
    else if (s_is (p, "WITH"))
        *kind = GW_SQL_KIND_WITH;
    else if (s_is (p, "VALUES"))
        *kind = GW_SQL_KIND_VALUES;
    else if (s_is (p, "TABLE"))
        *kind = GW_SQL_KIND_TABLE;
    else if (s_is (p, "SHOW") && !in_explain)
        *kind = GW_SQL_KIND_SHOW;
    else if (s_is (p, "EXPLAIN") && !in_explain) {
        s_advance (p);
        if (s_is_punct (p, &p->tok, '(')) {
            /* PostgreSQL's option list, unless a parenthesized query */
            gw_sql_token_t next = s_peek (p);
            bool query = next.kind == GW_SQL_TOK_WORD
                && (gw_sql_tok_is (&p->lex, &next, "SELECT") || gw_sql_tok_is (&p->lex, &next, "WITH")
                    || gw_sql_tok_is (&p->lex, &next, "VALUES")
                    || gw_sql_tok_is (&p->lex, &next, "TABLE"));
            if (!query) {
                int depth = 0;
                do {
                    if (s_is_punct (p, &p->tok, '('))
                        depth++;
                    else if (s_is_punct (p, &p->tok, ')'))
                        depth--;
                    else if (p->tok.kind == GW_SQL_TOK_END || p->tok.kind == GW_SQL_TOK_ERROR)
                        break;
                    s_advance (p);
                } while (depth > 0);
            }
        }
        for (;;) {
            if (s_is (p, "ANALYZE") || s_is (p, "ANALYSE") || s_is (p, "VERBOSE")
                || s_is (p, "QUERY") || s_is (p, "PLAN") || s_is (p, "EXTENDED")
                || s_is (p, "PARTITIONS"))
                s_advance (p);
            else if (s_is (p, "FORMAT")) {
                s_advance (p);
                if (s_is_punct (p, &p->tok, '=')) {
                    s_advance (p);
                    s_advance (p);
                }
            } else
                break;
        }
        gw_sql_kind_t inner;
        int rc = s_head (p, &inner, true);
        if (rc != 0)
            return rc;
        *kind = GW_SQL_KIND_EXPLAIN;
        return 0;
    } else
        return s_refuse_head (p, in_explain);
    return 0;
}

/* True when the name (len bytes at name) is denied as a function; with
 * before_dot, only package entries count. */
static int
s_denied_function (const char *name, size_t len, bool before_dot)
{
    for (size_t i = 0; i < sizeof s_functions / sizeof s_functions[0]; i++) {
        size_t n = strlen (s_functions[i].name);
        if (before_dot && s_functions[i].match != S_PACKAGE)
            continue;
        if (s_functions[i].match == S_EXACT ? len != n : len < n)
            continue;
        if (strncasecmp (name, s_functions[i].name, n) == 0)
            return (int) i;
    }
    return -1;
}

/* Checks every token of the query for what may not appear anywhere. */
static int
s_scan (s_pass_t *p)
{
    gw_sql_token_t prev = {0}, prev2 = {0};
    for (s_advance (p); p->tok.kind != GW_SQL_TOK_END; prev2 = prev, prev = p->tok, s_advance (p)) {
        const gw_sql_token_t *t = &p->tok;
        if (t->kind == GW_SQL_TOK_ERROR)
            return s_fail (p, -EINVAL, "%s", t->error);
        gw_sql_token_t next = s_peek (p);
        if (s_is_punct (p, t, ';')) {
            if (next.kind == GW_SQL_TOK_END)
                continue;
            if (next.kind == GW_SQL_TOK_ERROR)
                return s_fail (p, -EINVAL, "%s", next.error);
            return s_fail (p, -EPERM, "exec_sql runs one statement at a time; another statement "
                           "follows the ';' at byte %zu.", t->start);
        }
        if (s_is_punct (p, t, '{') || s_is_punct (p, t, '}'))
            return s_fail (p, -EPERM, "ODBC escape sequences ({...}) are not accepted; write the "
                           "SQL of the database itself.");
        if (t->kind == GW_SQL_TOK_QIDENT && prev.kind == GW_SQL_TOK_PUNCT
            && p->lex.text[prev.start] == '&' && prev.start + 1 == t->start
            && gw_sql_tok_is (&p->lex, &prev2, "U") && prev2.start + 1 == prev.start)
            return s_fail (p, -EPERM, "Unicode-escaped names (U&\"...\") are not accepted; write "
                           "the name plainly.");
        bool call = s_is_punct (p, &next, '(');
        bool dot = s_is_punct (p, &next, '.');
        if ((call || dot) && (t->kind == GW_SQL_TOK_WORD || t->kind == GW_SQL_TOK_QIDENT)) {
            const char *name = p->lex.text + t->start;
            size_t len = t->len;
            if (t->kind == GW_SQL_TOK_QIDENT && len >= 2) {
                name++;
                len -= 2;
            }
            int f = s_denied_function (name, len, !call);
            if (f >= 0)
                return s_fail (p, -EPERM, "exec_sql runs reads only, and %s%s %s.",
                               s_functions[f].name, s_functions[f].match == S_EXACT ? "()"
                               : "...()", s_functions[f].why);
        }
        if (t->kind != GW_SQL_TOK_WORD)
            continue;
        for (size_t i = 0; i < sizeof s_words / sizeof s_words[0]; i++)
            if (s_is (p, s_words[i].word))
                return s_fail (p, -EPERM, "exec_sql runs reads only, and %s %s; it is refused "
                               "anywhere in the query (also inside WITH or a subquery).",
                               s_words[i].word, s_words[i].why);
        if (s_is (p, "REPLACE") && !call)
            return s_fail (p, -EPERM, "exec_sql runs reads only, and REPLACE INTO changes data.");
        if (s_is (p, "SHARE") && (gw_sql_tok_is (&p->lex, &prev, "FOR")
                                  || gw_sql_tok_is (&p->lex, &prev, "KEY")))
            return s_fail (p, -EPERM, "exec_sql runs reads only, and FOR SHARE locks rows.");
        if (s_is (p, "NEXT") && gw_sql_tok_is (&p->lex, &next, "VALUE"))
            return s_fail (p, -EPERM, "exec_sql runs reads only, and NEXT VALUE FOR advances a "
                           "sequence.");
    }
    return 0;
}

/* One pass under one set of lexing rules. */
static int
s_pass (const char *sql, size_t len, unsigned flags, gw_sql_kind_t *kind, char *err,
        size_t err_len)
{
    s_pass_t p = {.err = err, .err_len = err_len};
    gw_sql_lex_init (&p.lex, sql, len, flags);
    s_advance (&p);
    int rc = s_head (&p, kind, false);
    if (rc != 0)
        return rc;
    gw_sql_lex_init (&p.lex, sql, len, flags);
    return s_scan (&p);
}

static const char *s_flag_names[GW_SQL_LEX_FLAG_COUNT] = {
    "backslash escapes in strings (MySQL; PostgreSQL with standard_conforming_strings off)",
    "nested comments (PostgreSQL)",
    "# comments (MySQL)", "[names] (SQLite, SQL Server)", "`names` (MySQL, SQLite)",
    "$$ strings (PostgreSQL)", "E'' strings (PostgreSQL)",
    "-- comments only before a space (MySQL)", "q'' strings (Oracle)",
};

/* Per dialect: the rules always on, and those a setting may turn over. */
static const struct {
    unsigned fixed, variable;
} s_dialects[] = {
    [GW_SQL_DIALECT_ANY] = {0, (1u << GW_SQL_LEX_FLAG_COUNT) - 1},
    [GW_SQL_DIALECT_POSTGRESQL] = {GW_SQL_LEX_DOLLAR | GW_SQL_LEX_ESTRING | GW_SQL_LEX_NESTED,
                                   GW_SQL_LEX_BACKSLASH},
    [GW_SQL_DIALECT_SQLITE] = {GW_SQL_LEX_BRACKET | GW_SQL_LEX_BACKTICK, 0},
    [GW_SQL_DIALECT_MYSQL] = {GW_SQL_LEX_BACKSLASH | GW_SQL_LEX_HASH | GW_SQL_LEX_BACKTICK
                              | GW_SQL_LEX_DASH_SPACE, GW_SQL_LEX_BACKSLASH},
};

size_t
gw_sql_statement_end (const char *sql, size_t len, gw_sql_dialect_t dialect)
{
    if ((unsigned) dialect >= sizeof s_dialects / sizeof s_dialects[0])
        dialect = GW_SQL_DIALECT_ANY;
    gw_sql_lexer_t lex;
    gw_sql_token_t tok;
    size_t end = 0;
    gw_sql_lex_init (&lex, sql, len, s_dialects[dialect].fixed);
    while (gw_sql_lex_next (&lex, &tok) != GW_SQL_TOK_END) {
        if (tok.kind == GW_SQL_TOK_ERROR)
            return len;
        if (!(tok.kind == GW_SQL_TOK_PUNCT && sql[tok.start] == ';'))
            end = tok.start + tok.len;
    }
    return end;
}

gw_sql_dialect_t
gw_sql_dialect_for_dbms (const char *dbms_name)
{
    if (!dbms_name)
        return GW_SQL_DIALECT_ANY;
    if (strncasecmp (dbms_name, "PostgreSQL", 10) == 0)
        return GW_SQL_DIALECT_POSTGRESQL;
    if (strncasecmp (dbms_name, "SQLite", 6) == 0)
        return GW_SQL_DIALECT_SQLITE;
    if (strncasecmp (dbms_name, "MySQL", 5) == 0 || strncasecmp (dbms_name, "MariaDB", 7) == 0)
        return GW_SQL_DIALECT_MYSQL;
    return GW_SQL_DIALECT_ANY;
}

int
gw_sql_classify (const char *sql, size_t len, gw_sql_dialect_t dialect, gw_sql_kind_t *kind_p,
                 char *err, size_t err_len)
{
    gw_sql_kind_t kind = GW_SQL_KIND_SELECT, ignored;
    if (err_len > 0)
        err[0] = '\0';
    if (!sql || len > GW_SQL_MAX_QUERY_BYTES) {
        if (err_len > 0)
            snprintf (err, err_len, "The query is longer than %d bytes.", GW_SQL_MAX_QUERY_BYTES);
        return sql ? -E2BIG : -EINVAL;
    }
    if (memchr (sql, '\0', len)) {
        if (err_len > 0)
            snprintf (err, err_len, "The query holds a NUL byte.");
        return -EINVAL;
    }
    if ((unsigned) dialect >= sizeof s_dialects / sizeof s_dialects[0])
        dialect = GW_SQL_DIALECT_ANY;
    unsigned fixed = s_dialects[dialect].fixed;
    int rc = s_pass (sql, len, fixed, &kind, err, err_len);
    if (rc != 0)
        return rc;
    unsigned open = s_dialects[dialect].variable & gw_sql_lex_relevant_flags (sql, len);
    for (unsigned sub = open; sub != 0; sub = (sub - 1) & open) {
        unsigned flags = fixed ^ sub;
        rc = s_pass (sql, len, flags, &ignored, err, err_len);
        if (rc == 0)
            continue;
        /* say which reading refused it: the rules turned over */
        size_t n = strnlen (err, err_len);
        bool first = true;
        for (int b = 0; b < GW_SQL_LEX_FLAG_COUNT && n + 1 < err_len; b++)
            if (sub & (1u << b)) {
                int w = snprintf (err + n, err_len - n, "%s%s %s",
                                  first ? " (This is how the query reads " : ", ",
                                  flags & (1u << b) ? "with" : "without", s_flag_names[b]);
                n = w < 0 ? err_len : n + (size_t) w;
                first = false;
            }
        if (n + 1 < err_len)
            snprintf (err + n, err_len - n, ", as the database may read it.)");
        return rc;
    }
    if (kind_p)
        *kind_p = kind;
    return 0;
}
