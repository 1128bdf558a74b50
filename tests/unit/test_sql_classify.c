/* test_sql_classify: the read-only statement check of exec_sql
 * (gw_sql_classify) on a table of statements: reads that must pass, with
 * keywords inside strings, quoted names and comments, in several
 * dialects; writes that must be refused with the statement or the word
 * named, including data-modifying WITH, stacked statements, SELECT ...
 * INTO, EXPLAIN ANALYZE of a write, side-effect functions, and the
 * evasions that hide a second statement in what one dialect reads as a
 * string or comment and another does not; malformed input (unterminated
 * strings and comments, NUL bytes, empty queries, too long). Also the
 * lexer's token invariants. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gw_sql_classify.h"
#include "gw_sql_lex.h"
#include "suites.h"

#define A GW_SQL_DIALECT_ANY
#define P GW_SQL_DIALECT_POSTGRESQL
#define S GW_SQL_DIALECT_SQLITE
#define M GW_SQL_DIALECT_MYSQL

#define OK 0
#define NO (-EPERM)
#define BAD (-EINVAL)

/* Each case: dialect, query, expected return, and for 0 the kind's name,
 * otherwise a piece of the message (case-sensitive). */
static const struct {
    gw_sql_dialect_t dialect;
    const char *sql;
    int rc;
    const char *expect;
} s_cases[] = {
    /* plain reads */
    {A, "SELECT 1", OK, "select"},
    {A, "select * from customers", OK, "select"},
    {A, "SELECT 1;", OK, "select"},
    {A, "  \n\tSELECT 1 ;  -- done\n", OK, "select"},
    {A, "VALUES (1),(2)", OK, "values"},
    {A, "SHOW search_path", OK, "show"},
    {M, "SHOW TABLES", OK, "show"},
    {P, "TABLE customers", OK, "table"},
    {A, "(SELECT 1) UNION (SELECT 2)", OK, "select"},
    {A, "((SELECT 1))", OK, "select"},
    {A, "WITH t AS (SELECT 1 AS x) SELECT x FROM t", OK, "with"},
    {A, "WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k+1 FROM n WHERE k<5) SELECT * FROM n",
     OK, "with"},
    {A, "with a as (select 1), b as (select 2) select * from a, b", OK, "with"},
    {A, "EXPLAIN SELECT 1", OK, "explain"},
    {S, "EXPLAIN QUERY PLAN SELECT * FROM orders", OK, "explain"},
    {P, "EXPLAIN ANALYZE SELECT * FROM t", OK, "explain"},
    {P, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT 1", OK, "explain"},
    {P, "EXPLAIN (ANALYZE) WITH x AS (SELECT 1) SELECT * FROM x", OK, "explain"},
    {M, "EXPLAIN FORMAT=JSON SELECT 1", OK, "explain"},
    {A, "EXPLAIN (SELECT 1)", OK, "explain"},
    {A, "SELECT count(*), max(total) FROM order_totals GROUP BY status HAVING count(*) > 1",
     OK, "select"},
    {A, "SELECT replace(name, 'a', 'b') FROM t", OK, "select"},
    {P, "SELECT x::int, y::text FROM t WHERE z ~ '^a' AND j->>'k' = 'v'", OK, "select"},
    {P, "SELECT (ARRAY[1,2,3])[2]", OK, "select"},
    {A, "SELECT 1.5e3, .5, 0x1F, $1, ?", OK, "select"},
    {P, "SELECT pg_sleep(0.1)", OK, "select"},
    {S, "SELECT * FROM pragma_table_info('orders')", OK, "select"},
    {A, "SELECT * FROM t FOR SYSTEM_TIME AS OF '2020-01-01'", OK, "select"},
    {A, "SELECT share FROM market", OK, "select"},
    {M, "SELECT TRUNCATE(1.234, 1)", OK, "select"},
    {A, "SELECT last_update, updated_at, inserted_by FROM t", OK, "select"},
    /* keywords inside strings, quoted names and comments */
    {A, "select * from t where note = 'insert into'", OK, "select"},
    {A, "SELECT * FROM customers WHERE name = 'delete me'", OK, "select"},
    {A, "SELECT 'a;b'", OK, "select"},
    {A, "SELECT 'it''s; DROP TABLE t'", OK, "select"},
    {A, "/* ; */ SELECT 1", OK, "select"},
    {A, "/* DELETE FROM t; */ SELECT 1 -- ; UPDATE t SET x=1", OK, "select"},
    {A, "SELECT \"delete\", \"update\", \"into\" FROM \"insert\"", OK, "select"},
    {A, "SELECT \"a\"\"b;c\" FROM t", OK, "select"},
    {S, "SELECT [delete], `update` FROM [drop table]", OK, "select"},
    {M, "SELECT `insert` FROM `delete`", OK, "select"},
    {P, "SELECT $$;DROP$$", OK, "select"},
    {P, "SELECT $tag$ DELETE FROM t; $$ $tag$", OK, "select"},
    {P, "SELECT E'it\\'s; DROP TABLE t'", OK, "select"},
    {P, "/* outer /* inner */ still comment; DROP */ SELECT 1", OK, "select"},
    {A, "SELECT 'café ✓ 日本語' AS \"naïve\"", OK, "select"},
    {A, "SELECT nom FROM clientes WHERE ciudad = 'Málaga' -- comentario ñ", OK, "select"},
    {A, "SELECT 1 -- trailing comment without newline", OK, "select"},
    {A, "SELECT '#' || '--' || '/*' FROM t", OK, "select"},
    {S, "SELECT [a]]b] FROM t", OK, "select"},
    {P, "SELECT \"pg_terminate_backend\" FROM t", OK, "select"},
    {A, "SELECT 'pg_terminate_backend(1)'", OK, "select"},

    /* other statement kinds, named */
    {A, "INSERT INTO t VALUES (1)", NO, "INSERT statement"},
    {A, "update t set x = 1", NO, "UPDATE statement"},
    {A, "DELETE FROM t", NO, "DELETE statement"},
    {A, "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE", NO, "MERGE statement"},
    {A, "DROP TABLE t", NO, "DROP TABLE statement"},
    {A, "create or replace view v as select 1", NO, "CREATE VIEW statement"},
    {A, "CREATE TEMP TABLE x AS SELECT 1", NO, "CREATE TABLE statement"},
    {A, "ALTER TABLE t ADD COLUMN c int", NO, "ALTER TABLE statement"},
    {A, "TRUNCATE t", NO, "TRUNCATE statement"},
    {A, "GRANT ALL ON t TO public", NO, "GRANT statement"},
    {A, "BEGIN", NO, "BEGIN statement"},
    {A, "COMMIT", NO, "COMMIT statement"},
    {A, "SET default_transaction_read_only = off", NO, "SET statement"},
    {P, "SET TRANSACTION READ WRITE", NO, "SET statement"},
    {A, "CALL do_things()", NO, "CALL statement"},
    {P, "DO $$ BEGIN DELETE FROM t; END $$", NO, "DO statement"},
    {P, "COPY t TO '/tmp/x'", NO, "COPY statement"},
    {P, "COPY (SELECT 1) TO PROGRAM 'id'", NO, "COPY statement"},
    {S, "ATTACH 'x' AS y", NO, "ATTACH statement"},
    {S, "ATTACH DATABASE '/tmp/evil.db' AS evil", NO, "ATTACH statement"},
    {S, "PRAGMA writable_schema=1", NO, "PRAGMA statement"},
    {S, "PRAGMA query_only=0", NO, "PRAGMA statement"},
    {S, "VACUUM INTO '/tmp/copy.db'", NO, "VACUUM statement"},
    {S, "REPLACE INTO t VALUES (1)", NO, "REPLACE statement"},
    {P, "LISTEN chan", NO, "LISTEN statement"},
    {P, "PREPARE p AS DELETE FROM t", NO, "PREPARE statement"},
    {A, "LOCK TABLE t", NO, "LOCK statement"},
    {M, "LOAD DATA INFILE '/etc/passwd' INTO TABLE t", NO, "LOAD statement"},
    {A, "{call evil()}", NO, "starts with '{'"},
    {A, "'just a string'", NO, "starts with a string"},
    {A, "EXPLAIN ANALYZE DELETE FROM t", NO, "explains a DELETE statement"},
    {P, "EXPLAIN (ANALYZE) INSERT INTO t VALUES (1)", NO, "explains an INSERT statement"},
    {A, "EXPLAIN EXPLAIN SELECT 1", NO, "explains an EXPLAIN statement"},
    {A, "EXPLAIN", NO, "EXPLAIN needs a statement"},
    {A, "EXPLAIN SHOW x", NO, "explains a SHOW statement"},

    /* writes inside an admitted statement */
    {A, "WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x", NO, "DELETE changes data"},
    {A, "WITH x AS (INSERT INTO t VALUES (1) RETURNING id) SELECT * FROM x", NO, "INSERT"},
    {A, "WITH x AS (SELECT 1) UPDATE t SET a = 1", NO, "UPDATE"},
    {A, "with x as (select 1) delete from t", NO, "DELETE"},
    {P, "WITH a AS (SELECT 1), b AS (MERGE INTO t USING s ON true WHEN MATCHED THEN DELETE) "
        "SELECT 1", NO, "MERGE"},
    {S, "WITH x AS (SELECT 1) REPLACE INTO t SELECT * FROM x", NO, "REPLACE INTO"},
    {A, "SELECT * INTO new FROM t", NO, "INTO writes"},
    {M, "SELECT * FROM t INTO OUTFILE '/tmp/x'", NO, "INTO"},
    {M, "SELECT 1 INTO @v", NO, "INTO"},
    {P, "SELECT * FROM t FOR UPDATE", NO, "UPDATE"},
    {P, "SELECT * FROM t FOR SHARE", NO, "FOR SHARE"},
    {P, "SELECT * FROM t FOR KEY SHARE", NO, "FOR SHARE"},
    {M, "SELECT * FROM t LOCK IN SHARE MODE", NO, "LOCK"},
    {A, "SELECT NEXT VALUE FOR seq", NO, "NEXT VALUE FOR"},
    {A, "SELECT seq.NEXTVAL FROM dual", NO, "NEXTVAL"},
    {A, "SELECT 1 FROM t WHERE x IN (SELECT 1 FROM (DELETE FROM u RETURNING 1) d)", NO, "DELETE"},
    {A, "SELECT 1.INTO x", NO, "INTO"},
    {A, "SELECT 1 INTO\xc2\xa0x", NO, "INTO"},
    {A, "SELECT 1\xc2\xa0INTO x", NO, "INTO"},
    {A, "SELECT 1 {fn something()}", NO, "ODBC escape"},
    {P, "SELECT U&\"set_config\"('a', 'b', false)", NO, "U&"},

    /* functions with side effects */
    {P, "SELECT pg_terminate_backend(1)", NO, "pg_terminate_backend() ends"},
    {P, "SELECT pg_cancel_backend(pid) FROM pg_stat_activity", NO, "pg_cancel_backend"},
    {P, "select PG_RELOAD_CONF()", NO, "pg_reload_conf"},
    {P, "SELECT pg_catalog.set_config('search_path', 'x', false)", NO, "set_config"},
    {P, "SELECT \"set_config\"('a', 'b', false)", NO, "set_config"},
    {P, "SELECT nextval('s')", NO, "nextval"},
    {P, "SELECT setval('s', 1)", NO, "setval"},
    {P, "SELECT lo_import('/etc/passwd')", NO, "lo_"},
    {P, "SELECT lo_export(1, '/tmp/x')", NO, "lo_"},
    {P, "SELECT pg_write_file('x', 'y')", NO, "pg_write_"},
    {P, "SELECT pg_read_file('/etc/passwd')", NO, "pg_read_file"},
    {P, "SELECT * FROM dblink('host=x', 'DELETE FROM t') AS r(x int)", NO, "dblink"},
    {P, "SELECT dblink_exec('DELETE FROM t')", NO, "dblink"},
    {P, "SELECT query_to_xml('DELETE FROM t RETURNING 1', true, false, '')", NO, "query_to_xml"},
    {P, "SELECT pg_advisory_lock(1)", NO, "pg_advisory_"},
    {P, "SELECT pg_promote()", NO, "pg_promote"},
    {P, "SELECT pg_rotate_logfile ( )", NO, "pg_rotate_logfile"},
    {P, "SELECT pg_terminate_backend /* c */ (1)", NO, "pg_terminate_backend"},
    {S, "SELECT load_extension('/tmp/evil.so')", NO, "load_extension"},
    {M, "SELECT LOAD_FILE('/etc/passwd')", NO, "load_file"},
    {A, "SELECT * FROM OPENROWSET('SQLNCLI', 'x', 'SELECT 1')", NO, "openrowset"},
    {A, "SELECT dbms_pipe.send_message('x') FROM dual", NO, "dbms_"},

    /* stacked statements and dialect evasions */
    {A, "SELECT 1; DROP TABLE t", NO, "one statement at a time"},
    {A, "SELECT 1; SELECT 2", NO, "one statement at a time"},
    {A, "SELECT 1;;", NO, "one statement at a time"},
    {A, ";", NO, "starts with ';'"},
    {A, "SELECT $$;DROP$$", NO, "one statement at a time"},
    {S, "SELECT $$;DROP$$", NO, "one statement at a time"},
    {A, "SELECT 'a\\' ; DROP TABLE t; -- '", NO, "one statement at a time"},
    {M, "SELECT 'a\\'' ; DROP TABLE t; -- '", NO, "one statement at a time"},
    {P, "SELECT 'a\\'' ; DROP TABLE t; -- '", NO, "standard_conforming_strings"},
    {A, "SELECT E'\\'; DROP TABLE t; --'", NO, "one statement at a time"},
    {A, "SELECT 1 /* /* */ ; DROP TABLE t; -- */", NO, "one statement at a time"},
    {P, "SELECT 1 /* /* */ */ ; DROP TABLE t", NO, "one statement at a time"},
    {P, "SELECT 1 /* /* */ ; DROP TABLE t; /* */", BAD, "never closed"},
    {A, "SELECT 1 /* /* */ ; DROP TABLE t; /* */ */", NO, "one statement at a time"},
    {A, "SELECT 1 # '\n; DROP TABLE t; -- '", NO, "one statement"},
    {M, "SELECT 1 --x; DROP TABLE t\n", NO, "one statement at a time"},
    {A, "SELECT [a;] FROM t; DROP TABLE u", NO, "one statement at a time"},
    {A, "SELECT a[1 ; DROP TABLE t; --]", NO, "one statement at a time"},
    {A, "SELECT `x ; DROP TABLE t; --`", NO, "one statement at a time"},
    {A, "SELECT q'<'>' ; DROP TABLE t; --'", NO, "one statement at a time"},
    {A, "SELECT 1 -- x\r; DROP TABLE t", NO, "one statement at a time"},
    {A, "SELECT 1 /*! ; DROP TABLE t */", BAD, "executable comments"},

    /* malformed */
    {A, "", BAD, "empty"},
    {A, "   -- only a comment\n", BAD, "empty"},
    {A, "SELECT 'unterminated", BAD, "never closed"},
    {A, "SELECT \"unterminated", BAD, "never closed"},
    {A, "SELECT 1 /* unterminated", BAD, "never closed"},
    {P, "SELECT $$unterminated", BAD, "never closed"},
    {S, "SELECT [unterminated", BAD, "never closed"},
    {A, "SELECT 'C:\\'", BAD, "backslash"},
};

START_TEST (test_classify_table)
{
    char err[1024];
    gw_sql_kind_t kind = GW_SQL_KIND_SHOW;
    int rc = gw_sql_classify (s_cases[_i].sql, strlen (s_cases[_i].sql), s_cases[_i].dialect,
                              &kind, err, sizeof err);
    ck_assert_msg (rc == s_cases[_i].rc, "case %d \"%s\" (dialect %d): rc %d, want %d (%s)", _i,
                   s_cases[_i].sql, s_cases[_i].dialect, rc, s_cases[_i].rc, err);
    if (rc == 0)
        ck_assert_str_eq (gw_sql_kind_name (kind), s_cases[_i].expect);
    else {
        ck_assert_msg (strstr (err, s_cases[_i].expect), "case %d \"%s\": message \"%s\" lacks "
                       "\"%s\"", _i, s_cases[_i].sql, err, s_cases[_i].expect);
        for (const char *c = err; *c; c++)
            ck_assert_msg (*c >= 0x20 && *c < 0x7f, "case %d: message is not printable ASCII", _i);
    }
}
END_TEST

/* A read admitted for a dialect is admitted for ANY unless it needs a
 * dialect rule, and nothing refused for ANY becomes an accepted write
 * elsewhere: every refused case stays refused in the other dialects,
 * except where the refusal is about lexing that the dialect rules out. */
START_TEST (test_writes_refused_everywhere)
{
    static const char *writes[] = {
        "DELETE FROM t", "WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x",
        "SELECT 1; DROP TABLE t", "SELECT * INTO n FROM t", "SELECT pg_terminate_backend(1)",
        "EXPLAIN ANALYZE DELETE FROM t", "ATTACH 'x' AS y", "PRAGMA writable_schema=1",
    };
    for (size_t i = 0; i < sizeof writes / sizeof writes[0]; i++)
        for (int d = A; d <= M; d++) {
            char err[512];
            ck_assert_int_eq (gw_sql_classify (writes[i], strlen (writes[i]), (gw_sql_dialect_t) d,
                                               NULL, err, sizeof err), -EPERM);
        }
}
END_TEST

START_TEST (test_nul_and_length)
{
    char err[256];
    ck_assert_int_eq (gw_sql_classify ("SELECT 1\0; DROP TABLE t", 23, A, NULL, err, sizeof err),
                      -EINVAL);
    ck_assert_ptr_nonnull (strstr (err, "NUL"));
    size_t n = GW_SQL_MAX_QUERY_BYTES + 1;
    char *big = malloc (n);
    ck_assert_ptr_nonnull (big);
    memset (big, ' ', n);
    memcpy (big, "SELECT 1", 8);
    ck_assert_int_eq (gw_sql_classify (big, n, A, NULL, err, sizeof err), -E2BIG);
    ck_assert_int_eq (gw_sql_classify (big, n - 1, A, NULL, err, sizeof err), 0);
    free (big);
    ck_assert_int_eq (gw_sql_classify (NULL, 0, A, NULL, err, sizeof err), -EINVAL);
    /* a tiny or empty error buffer is never overrun */
    char small[4] = "xyz";
    ck_assert_int_eq (gw_sql_classify ("DROP TABLE t", 12, A, NULL, small, sizeof small), -EPERM);
    ck_assert_int_eq (small[3], '\0');
    ck_assert_int_eq (gw_sql_classify ("SELECT 'a\\'; x", 14, A, NULL, small, sizeof small),
                      -EPERM);
    ck_assert_int_eq (gw_sql_classify ("DROP TABLE t", 12, A, NULL, NULL, 0), -EPERM);
}
END_TEST

/* Every query runs through the worst case of every lexing rule at once:
 * the classifier stays fast enough for a request. */
START_TEST (test_all_rules_at_once)
{
    static const char q[] = "SELECT '\\', \"#\", [x], `y`, $$z$$, E'w', q'!v!' -- c\n/* d */ FROM t";
    char err[512];
    ck_assert_int_eq (gw_sql_lex_relevant_flags (q, strlen (q)), (1u << GW_SQL_LEX_FLAG_COUNT) - 1);
    int rc = gw_sql_classify (q, strlen (q), A, NULL, err, sizeof err);
    ck_assert_msg (rc == -EINVAL || rc == -EPERM || rc == 0, "rc %d", rc);
}
END_TEST

/* Lexer invariants: tokens in order, within the input, not overlapping,
 * under every rule set, for each table query. */
START_TEST (test_lexer_tokens)
{
    const char *sql = s_cases[_i].sql;
    size_t len = strlen (sql);
    for (unsigned flags = 0; flags < (1u << GW_SQL_LEX_FLAG_COUNT); flags++) {
        gw_sql_lexer_t lex;
        gw_sql_token_t tok;
        gw_sql_lex_init (&lex, sql, len, flags);
        size_t end = 0;
        int guard = 0;
        while (gw_sql_lex_next (&lex, &tok) != GW_SQL_TOK_END && tok.kind != GW_SQL_TOK_ERROR) {
            ck_assert_uint_ge (tok.start, end);
            ck_assert_uint_gt (tok.len, 0);
            ck_assert_uint_le (tok.start + tok.len, len);
            end = tok.start + tok.len;
            ck_assert_int_lt (guard++, 100000);
        }
        if (tok.kind == GW_SQL_TOK_ERROR) {
            ck_assert_ptr_nonnull (tok.error);
            ck_assert_int_eq (gw_sql_lex_next (&lex, &tok), GW_SQL_TOK_ERROR);
        } else
            ck_assert_int_eq (gw_sql_lex_next (&lex, &tok), GW_SQL_TOK_END);
    }
}
END_TEST

START_TEST (test_statement_end)
{
    static const struct {
        const char *sql;
        gw_sql_dialect_t d;
        size_t end;
    } cases[] = {
        {"SELECT 1", A, 8}, {"SELECT 1;", A, 8}, {"SELECT 1 ; -- x\n", A, 8},
        {"SELECT 1 -- x", A, 8}, {"SELECT 1 /* ; */", A, 8}, {"SELECT ';' ", A, 10},
        {"SELECT $$ -- $$ -- x", P, 15}, {"SELECT 1 # x", M, 8}, {"SELECT 1 # x", A, 12},
        {"", A, 0}, {"SELECT 'open", A, 12},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_msg (gw_sql_statement_end (cases[i].sql, strlen (cases[i].sql), cases[i].d)
                       == cases[i].end, "case %zu \"%s\"", i, cases[i].sql);
}
END_TEST

START_TEST (test_dialect_for_dbms)
{
    ck_assert_int_eq (gw_sql_dialect_for_dbms ("PostgreSQL"), P);
    ck_assert_int_eq (gw_sql_dialect_for_dbms ("SQLite"), S);
    ck_assert_int_eq (gw_sql_dialect_for_dbms ("MySQL"), M);
    ck_assert_int_eq (gw_sql_dialect_for_dbms ("MariaDB"), M);
    ck_assert_int_eq (gw_sql_dialect_for_dbms ("Microsoft SQL Server"), A);
    ck_assert_int_eq (gw_sql_dialect_for_dbms (NULL), A);
    ck_assert_str_eq (gw_sql_kind_name (GW_SQL_KIND_WITH), "with");
}
END_TEST

Suite *
sql_classify_suite (void)
{
    Suite *s = suite_create ("sql_classify");
    TCase *tc = tcase_create ("classify");
    tcase_add_loop_test (tc, test_classify_table, 0, (int) (sizeof s_cases / sizeof s_cases[0]));
    tcase_add_test (tc, test_writes_refused_everywhere);
    tcase_add_test (tc, test_nul_and_length);
    tcase_add_test (tc, test_all_rules_at_once);
    tcase_add_test (tc, test_dialect_for_dbms);
    tcase_add_test (tc, test_statement_end);
    suite_add_tcase (s, tc);
    tc = tcase_create ("lexer");
    tcase_add_loop_test (tc, test_lexer_tokens, 0, (int) (sizeof s_cases / sizeof s_cases[0]));
    suite_add_tcase (s, tc);
    return s;
}
