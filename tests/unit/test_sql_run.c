/* test_sql_run: exec_sql's synchronous core (gw_sql_run_sync) against
 * real databases through unixODBC: the SQLite sample database (built from
 * gateway/sql/sample.sql into a scratch folder with the sqlite3 tool) and
 * a PostgreSQL server that the suite starts itself (initdb and pg_ctl of
 * Debian's postgresql, run as the postgres user when the tests run as
 * root, on a free loopback port with its socket in a scratch folder,
 * password login over TCP; stopped at the end).
 *
 * For each: reads come back with their columns and JSON values; a large
 * result goes to a CSV file with every row; the row, cell and time limits
 * hold; every write is refused by the classifier (layer a); and, with the
 * classifier bypassed by the test-only flag, the database's read-only
 * transaction and the rollback (layers b and c) still stop every write:
 * the SQLite file is byte-identical afterwards with no new file beside it,
 * and PostgreSQL's data, tables and sequence are unchanged. Connection
 * errors name the DSN without its password.
 *
 * The PostgreSQL tests are skipped, saying so, only when no PostgreSQL
 * server binaries are installed. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <pthread.h>
#include <stdint.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <dirent.h>

#include <signal.h>

#include <sql.h>
#include <sqlext.h>

#include "gw_config.h"
#include "gw_server.h"
#include "gw_sql.h"
#include "gw_sql_conn.h"
#include "gw_sql_value.h"
#include "suites.h"
#include "testutil.h"

/* ---- helpers ----------------------------------------------------------- */

static int
s_system (const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (cmd, sizeof cmd, fmt, ap);
    va_end (ap);
    int rc = system (cmd);
    return rc == -1 ? -1 : WIFEXITED (rc) ? WEXITSTATUS (rc) : -1;
}

static char *
s_read_file (const char *path, size_t *len_p)
{
    FILE *f = fopen (path, "rb");
    if (!f)
        return NULL;
    fseek (f, 0, SEEK_END);
    long n = ftell (f);
    fseek (f, 0, SEEK_SET);
    char *data = malloc ((size_t) n + 1);
    if (data && fread (data, 1, (size_t) n, f) != (size_t) n) {
        free (data);
        data = NULL;
    }
    fclose (f);
    if (data) {
        data[n] = '\0';
        if (len_p)
            *len_p = (size_t) n;
    }
    return data;
}

static size_t
s_count_entries (const char *dir)
{
    DIR *d = opendir (dir);
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir (d)))
        n += e->d_name[0] != '.';
    if (d)
        closedir (d);
    return n;
}

static const char *
s_error_code (const json_t *result)
{
    return json_string_value (json_object_get (json_object_get (result, "error"), "code"));
}

static const char *
s_error_message (const json_t *result)
{
    return json_string_value (json_object_get (json_object_get (result, "error"), "message"));
}

/* Runs query and fails the test unless it succeeded; returns the result. */
static json_t *
s_ok (gw_sql_conn_t **conn, const char *dsn, const char *query, const gw_sql_options_t *opts)
{
    json_t *r = gw_sql_run_sync (conn, dsn, query, opts);
    ck_assert_ptr_nonnull (r);
    ck_assert_msg (!json_object_get (r, "error"), "query \"%s\" failed: %s", query,
                   s_error_message (r));
    return r;
}

/* The single value of a one-row, one-column result (borrowed from r). */
static json_t *
s_cell (json_t *r, size_t row, size_t col)
{
    return json_array_get (json_array_get (json_object_get (r, "rows"), row), col);
}

static json_int_t
s_scalar_int (gw_sql_conn_t **conn, const char *dsn, const char *query)
{
    gw_sql_options_t o = gw_sql_options_default ();
    json_t *r = s_ok (conn, dsn, query, &o);
    json_t *v = s_cell (r, 0, 0);
    ck_assert_msg (json_is_integer (v), "\"%s\" gave no integer", query);
    json_int_t n = json_integer_value (v);
    json_decref (r);
    return n;
}

/* Writes that layer (a) refuses and that layers (b) and (c) must stop
 * alone (when the classifier is skipped). */
static const char *s_sqlite_writes[] = {
    "DELETE FROM customers",
    "UPDATE products SET unit_price = 0.01",
    "INSERT INTO categories (category_id, name, description) VALUES (99, 'x', 'y')",
    "DROP TABLE order_items",
    "CREATE TABLE evil (a)",
    "WITH x AS (SELECT 1) DELETE FROM orders",
    "REPLACE INTO categories VALUES (1, 'Coffee', 'changed')",
    "ALTER TABLE customers ADD COLUMN hacked TEXT",
    "CREATE INDEX evil_idx ON customers (email)",
    "PRAGMA user_version = 42",
    "VACUUM",
};

/* ---- values, CSV, redaction (no database) -------------------------------- */

START_TEST (test_values)
{
    json_t *v = gw_sql_value_json (GW_SQL_CAT_INTEGER, "42", 2, NULL);
    ck_assert (json_is_integer (v) && json_integer_value (v) == 42);
    json_decref (v);
    v = gw_sql_value_json (GW_SQL_CAT_INTEGER, "-9223372036854775808", 20, NULL);
    ck_assert (json_is_integer (v));
    json_decref (v);
    v = gw_sql_value_json (GW_SQL_CAT_INTEGER, "abc", 3, NULL);   /* SQLite: anything goes */
    ck_assert_str_eq (json_string_value (v), "abc");
    json_decref (v);
    v = gw_sql_value_json (GW_SQL_CAT_FLOAT, "1.5", 3, NULL);
    ck_assert (json_is_real (v) && json_real_value (v) == 1.5);
    json_decref (v);
    v = gw_sql_value_json (GW_SQL_CAT_FLOAT, "NaN", 3, NULL);
    ck_assert_str_eq (json_string_value (v), "NaN");
    json_decref (v);
    v = gw_sql_value_json (GW_SQL_CAT_DECIMAL, "12.34", 5, NULL);
    ck_assert (json_is_real (v));
    json_decref (v);
    v = gw_sql_value_json (GW_SQL_CAT_DECIMAL, "1000", 4, NULL);
    ck_assert (json_is_integer (v));
    json_decref (v);
    /* more digits than a double holds: kept exact, as a string */
    v = gw_sql_value_json (GW_SQL_CAT_DECIMAL, "12345678901234567.89", 20, NULL);
    ck_assert_str_eq (json_string_value (v), "12345678901234567.89");
    json_decref (v);
    v = gw_sql_value_json (GW_SQL_CAT_BOOLEAN, "t", 1, NULL);
    ck_assert (json_is_true (v));
    json_decref (v);
    v = gw_sql_value_json (GW_SQL_CAT_BINARY, "\x00\xff", 2, NULL);
    ck_assert_str_eq (json_string_value (v), "AP8=");
    json_decref (v);
    v = gw_sql_value_json (GW_SQL_CAT_TEXT, "a\xc3(b\0c\xf0\x9f\x98\x80", 10, NULL);
    ck_assert_str_eq (json_string_value (v), "a\xef\xbf\xbd(bc\xf0\x9f\x98\x80");
    json_decref (v);
    v = gw_sql_value_json (GW_SQL_CAT_INTEGER, "12", 2, "...[cut]");
    ck_assert_str_eq (json_string_value (v), "12...[cut]");
    json_decref (v);
    ck_assert_str_eq (gw_sql_cat_name (GW_SQL_CAT_TEXT, SQL_TYPE_TIMESTAMP), "timestamp");
    ck_assert_int_eq (gw_sql_cat_for (SQL_VARCHAR, "bool"), GW_SQL_CAT_BOOLEAN);
    ck_assert_int_eq (gw_sql_cat_for (SQL_BIGINT, "int8"), GW_SQL_CAT_INTEGER);
}
END_TEST

START_TEST (test_csv)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);
    json_t *row = json_pack ("[s, s, s, s, n, b, I, f, s]", "plain", "a,b", "say \"hi\"",
                             "two\nlines", 1, (json_int_t) -7, 0.1, "");
    ck_assert_int_eq (gw_sql_csv_row (f, row), 0);
    fclose (f);
    ck_assert_str_eq (buf, "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",,true,-7,0.1,\r\n");
    free (buf);
    json_decref (row);
}
END_TEST

START_TEST (test_redact)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"Driver=x;PWD=secret", "Driver=x;PWD=***"},
        {"pwd=secret;Uid=u", "pwd=***;Uid=u"},
        {"Password={se;cr}}et};Server=h", "Password=***;Server=h"},
        {"Server=h; Password = s ;x=1", "Server=h; Password =***;x=1"},
        {"DSN=x", "DSN=x"},
        {"PWD=", "PWD="},
        {"MyPWD=keep;PWD=a;PWD=b", "MyPWD=keep;PWD=***;PWD=***"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *r = gw_sql_redact_dsn (cases[i].in);
        ck_assert_str_eq (r, cases[i].out);
        free (r);
    }
    char *secrets[4];
    size_t n = gw_sql_dsn_secrets ("Uid=u;PWD={p4ss;word};Password=x9", secrets, 4);
    ck_assert_uint_eq (n, 2);
    ck_assert_str_eq (secrets[0], "p4ss;word");
    char msg[128] = "login failed for p4ss;word and x9, p4ss;word";
    gw_sql_scrub (msg, sizeof msg, secrets, n);
    ck_assert_str_eq (msg, "login failed for *** and **, ***");
    for (size_t i = 0; i < n; i++)
        free (secrets[i]);
}
END_TEST

/* ---- SQLite ---------------------------------------------------------------- */

static char *s_dir;             /* scratch folder */
static char s_db[1024], s_dsn[1200], s_input[1100];

static void
s_sqlite_setup (void)
{
    s_dir = tu_mkdtemp ();
    snprintf (s_db, sizeof s_db, "%s/db/sample.sqlite", s_dir);
    snprintf (s_input, sizeof s_input, "%s/input", s_dir);
    ck_assert_int_eq (s_system ("mkdir -p '%s/db' '%s' && sqlite3 -bail '%s' < "
                                "../../gateway/sql/sample.sql", s_dir, s_input, s_db), 0);
    snprintf (s_dsn, sizeof s_dsn, "Driver=SQLite3;Database=%s;NoCreat=1", s_db);
}

static void
s_sqlite_teardown (void)
{
    tu_rmtree (s_dir);
    free (s_dir);
}

START_TEST (test_sqlite_reads)
{
    gw_sql_conn_t *conn = NULL;
    gw_sql_options_t o = gw_sql_options_default ();
    json_t *r = s_ok (&conn, s_dsn, "SELECT count(*) AS n FROM customers", &o);
    ck_assert_str_eq (json_string_value (json_object_get (r, "statement")), "select");
    ck_assert_int_eq (json_integer_value (json_object_get (r, "row_count")), 1);
    ck_assert_int_eq (json_integer_value (s_cell (r, 0, 0)), 120);
    json_t *col = json_array_get (json_object_get (r, "columns"), 0);
    ck_assert_str_eq (json_string_value (json_object_get (col, "name")), "n");
    ck_assert_str_eq (json_string_value (json_object_get (col, "type")), "integer");
    ck_assert_ptr_null (json_object_get (r, "truncated"));
    json_decref (r);

    /* typed columns of a table: integer, text, real, NULL */
    r = s_ok (&conn, s_dsn, "SELECT product_id, name, unit_price, NULL AS empty FROM products "
              "WHERE sku = 'GFT-003'", &o);
    ck_assert_int_eq (json_integer_value (s_cell (r, 0, 0)), 31);
    ck_assert_str_eq (json_string_value (s_cell (r, 0, 1)), "Caf\xc3\xa9 Cr\xc3\xa8me Gift Set");
    ck_assert (json_is_number (s_cell (r, 0, 2)));
    ck_assert_double_eq_tol (json_number_value (s_cell (r, 0, 2)), 44.0, 1e-9);
    ck_assert (json_is_null (s_cell (r, 0, 3)));
    json_decref (r);

    /* a keyword inside a string is no reason to refuse */
    r = s_ok (&conn, s_dsn, "SELECT count(*) FROM customers WHERE notes = 'asked to delete me "
              "from the newsletter'", &o);
    ck_assert_int_gt (json_integer_value (s_cell (r, 0, 0)), 0);
    json_decref (r);

    /* WITH, VALUES, EXPLAIN QUERY PLAN, a join over the view */
    r = s_ok (&conn, s_dsn, "WITH big AS (SELECT * FROM order_totals WHERE total > 100) "
              "SELECT c.country, count(*) FROM big JOIN customers c USING (customer_id) "
              "GROUP BY 1 ORDER BY 2 DESC", &o);
    ck_assert_str_eq (json_string_value (json_object_get (r, "statement")), "with");
    ck_assert_int_gt (json_integer_value (json_object_get (r, "row_count")), 3);
    json_decref (r);
    static const char *endings[] = {"SELECT 5;", "SELECT 5 -- five", "SELECT 5; -- five",
                                    "SELECT 5 /* five */", "VALUES (5) -- x", "VALUES (5);"};
    for (size_t i = 0; i < sizeof endings / sizeof endings[0]; i++) {
        r = s_ok (&conn, s_dsn, endings[i], &o);
        ck_assert_msg (json_integer_value (s_cell (r, 0, 0)) == 5, "%s", endings[i]);
        json_decref (r);
    }
    r = s_ok (&conn, s_dsn, "VALUES (1, 'a'), (2, 'b');", &o);
    ck_assert_int_eq (json_integer_value (json_object_get (r, "row_count")), 2);
    json_decref (r);
    r = s_ok (&conn, s_dsn, "EXPLAIN QUERY PLAN SELECT * FROM orders WHERE customer_id = 3", &o);
    ck_assert_str_eq (json_string_value (json_object_get (r, "statement")), "explain");
    json_decref (r);

    /* binary as base64; invalid UTF-8 replaced */
    r = s_ok (&conn, s_dsn, "SELECT CAST(x'00ff41' AS BLOB) AS b, CAST(x'41ff42' AS TEXT) AS t",
              &o);
    json_t *b = s_cell (r, 0, 0), *t = s_cell (r, 0, 1);
    ck_assert_msg (json_is_string (b) && strcmp (json_string_value (b), "AP9B") == 0,
                   "blob came back as %s", json_dumps (b, JSON_ENCODE_ANY));
    ck_assert_str_eq (json_string_value (t), "A\xef\xbf\xbd" "B");
    json_decref (r);
    gw_sql_conn_destroy (&conn);
    ck_assert_ptr_null (conn);
}
END_TEST

START_TEST (test_sqlite_csv)
{
    gw_sql_conn_t *conn = NULL;
    gw_sql_options_t o = gw_sql_options_default ();
    o.max_inline_rows = 10;
    o.csv_dir = s_input;
    o.csv_shown_dir = "/session/input";
    json_t *r = s_ok (&conn, s_dsn, "SELECT order_id, line_no, product_id, quantity, unit_price, "
                      "'say \"hi\", ok' AS quote FROM order_items ORDER BY order_id, line_no", &o);
    ck_assert_int_eq (json_integer_value (json_object_get (r, "row_count")), 750);
    ck_assert_int_eq (json_array_size (json_object_get (r, "rows")), 10);
    ck_assert (json_is_true (json_object_get (r, "truncated")));
    const char *shown = json_string_value (json_object_get (r, "csv_path"));
    ck_assert_ptr_nonnull (shown);
    ck_assert_msg (strncmp (shown, "/session/input/sql-", 19) == 0, "csv_path %s", shown);
    ck_assert_ptr_nonnull (json_object_get (r, "note"));
    char host[2048];
    snprintf (host, sizeof host, "%s/%s", s_input, shown + strlen ("/session/input/"));
    size_t len = 0;
    char *csv = s_read_file (host, &len);
    ck_assert_ptr_nonnull (csv);
    size_t lines = 0;
    for (size_t i = 0; i + 1 < len; i++)
        lines += csv[i] == '\r' && csv[i + 1] == '\n';
    ck_assert_int_eq (lines, 751);
    ck_assert_msg (strncmp (csv, "order_id,line_no,product_id,quantity,unit_price,quote\r\n1,1,", 59)
                   == 0, "CSV starts %.80s", csv);
    ck_assert_ptr_nonnull (strstr (csv, ",\"say \"\"hi\"\", ok\"\r\n"));
    struct stat st;
    ck_assert_int_eq (stat (host, &st), 0);
    ck_assert_int_eq (st.st_mode & 0777, 0644);
    free (csv);
    json_decref (r);

    /* a result that fits is inline, with no file */
    size_t before = s_count_entries (s_input);
    r = s_ok (&conn, s_dsn, "SELECT * FROM categories", &o);
    ck_assert_int_eq (json_array_size (json_object_get (r, "rows")), 8);
    ck_assert_ptr_null (json_object_get (r, "csv_path"));
    ck_assert_uint_eq (s_count_entries (s_input), before);
    json_decref (r);
    gw_sql_conn_destroy (&conn);
}
END_TEST

START_TEST (test_sqlite_limits)
{
    gw_sql_conn_t *conn = NULL;
    gw_sql_options_t o = gw_sql_options_default ();
    o.max_rows = 50;
    json_t *r = s_ok (&conn, s_dsn, "SELECT * FROM order_items", &o);
    ck_assert_int_eq (json_integer_value (json_object_get (r, "row_count")), 50);
    ck_assert (json_is_true (json_object_get (r, "row_limit_reached")));
    ck_assert (json_is_true (json_object_get (r, "truncated")));
    json_decref (r);

    o = gw_sql_options_default ();
    o.max_cell_bytes = 10;
    r = s_ok (&conn, s_dsn, "SELECT 'abcdefghijklmnopqrstuvwxyz', 'short', "
              "'\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9'", &o);
    const char *cut = json_string_value (s_cell (r, 0, 0));
    ck_assert_msg (strncmp (cut, "abcdefghij\xe2\x80\xa6[cut", 16) == 0, "cut: %s", cut);
    ck_assert_str_eq (json_string_value (s_cell (r, 0, 1)), "short");
    /* a cut never splits a UTF-8 character */
    ck_assert_msg (strncmp (json_string_value (s_cell (r, 0, 2)),
                            "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xe2\x80\xa6", 13) == 0,
                   "cut: %s", json_string_value (s_cell (r, 0, 2)));
    ck_assert_int_eq (json_integer_value (json_object_get (r, "cells_cut")), 2);
    json_decref (r);

    /* a query that would run for a minute is cancelled after its timeout */
    o = gw_sql_options_default ();
    o.timeout_s = 1;
    time_t t0 = time (NULL);
    r = gw_sql_run_sync (&conn, s_dsn, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
                         "FROM c WHERE x < 1000000000) SELECT count(*) FROM c", &o);
    ck_assert_str_eq (s_error_code (r), "bad_request");
    ck_assert_msg (strstr (s_error_message (r), "longer than 1 s"), "%s", s_error_message (r));
    ck_assert_int_le (time (NULL) - t0, 5);
    json_decref (r);
    /* and the connection still works */
    ck_assert_int_eq (s_scalar_int (&conn, s_dsn, "SELECT 7"), 7);
    gw_sql_conn_destroy (&conn);
}
END_TEST

/* Writes: refused by the classifier; with it skipped, still stopped by
 * query_only and the rollback; the file is the same, byte for byte, and
 * nothing new appears beside it. */
START_TEST (test_sqlite_writes)
{
    size_t len0 = 0, len1 = 0;
    char *before = s_read_file (s_db, &len0);
    ck_assert_ptr_nonnull (before);
    char dbdir[1100];
    snprintf (dbdir, sizeof dbdir, "%s/db", s_dir);
    gw_sql_conn_t *conn = NULL;
    gw_sql_options_t o = gw_sql_options_default ();
    for (size_t i = 0; i < sizeof s_sqlite_writes / sizeof s_sqlite_writes[0]; i++) {
        json_t *r = gw_sql_run_sync (&conn, s_dsn, s_sqlite_writes[i], &o);
        ck_assert_msg (s_error_code (r) && strcmp (s_error_code (r), "forbidden") == 0,
                       "\"%s\" was not refused by the classifier", s_sqlite_writes[i]);
        json_decref (r);
    }
    static const char *more[] = {"ATTACH DATABASE '/tmp/codebox-evil.db' AS evil",
                                 "SELECT 1; DELETE FROM customers",
                                 "SELECT load_extension('/tmp/x.so')"};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) {
        json_t *r = gw_sql_run_sync (&conn, s_dsn, more[i], &o);
        ck_assert_str_eq (s_error_code (r), "forbidden");
        json_decref (r);
    }
    o.unsafe_skip_classifier = true;
    for (size_t i = 0; i < sizeof s_sqlite_writes / sizeof s_sqlite_writes[0]; i++) {
        json_t *r = gw_sql_run_sync (&conn, s_dsn, s_sqlite_writes[i], &o);
        ck_assert_msg (json_object_get (r, "error") != NULL, "\"%s\" went through layers b and c",
                       s_sqlite_writes[i]);
        json_decref (r);
    }
    gw_sql_conn_destroy (&conn);
    char *after = s_read_file (s_db, &len1);
    ck_assert_ptr_nonnull (after);
    ck_assert_uint_eq (len0, len1);
    ck_assert_msg (memcmp (before, after, len0) == 0, "the database file changed");
    ck_assert_uint_eq (s_count_entries (dbdir), 1);
    ck_assert_int_ne (access ("/tmp/codebox-evil.db", F_OK), 0);
    free (before);
    free (after);
}
END_TEST

START_TEST (test_connect_errors)
{
    gw_sql_conn_t *conn = NULL;
    gw_sql_options_t o = gw_sql_options_default ();
    static const char *dsns[] = {
        "Driver=SQLite3;Database=/nonexistent/codebox/x.db;NoCreat=1;PWD=hunter2-secret",
        "Driver=NoSuchDriver;Server=x;UID=u;Password={hunter2-secret}",
        "DSN=no-such-dsn;pwd=hunter2-secret",
    };
    for (size_t i = 0; i < sizeof dsns / sizeof dsns[0]; i++) {
        json_t *r = gw_sql_run_sync (&conn, dsns[i], "SELECT 1", &o);
        ck_assert_ptr_null (conn);
        ck_assert_str_eq (s_error_code (r), "internal_error");
        const char *m = s_error_message (r);
        ck_assert_msg (strstr (m, "Cannot connect") && strstr (m, "***"), "message: %s", m);
        ck_assert_msg (!strstr (m, "hunter2"), "the password shows: %s", m);
        json_decref (r);
    }
    o.client_dsn = true;
    json_t *r = gw_sql_run_sync (&conn, dsns[0], "SELECT 1", &o);
    ck_assert_str_eq (s_error_code (r), "bad_request");
    json_decref (r);
    ck_assert_int_ne (access ("/nonexistent/codebox/x.db", F_OK), 0);
}
END_TEST

START_TEST (test_redact_and_default_dsn)
{
    char *s = gw_sql_redact_dsn ("Driver={PostgreSQL Unicode};Server=h;PWD=abc;Uid=u;"
                                 "password={x;y}};z};Port=5");
    ck_assert_str_eq (s, "Driver={PostgreSQL Unicode};Server=h;PWD=***;Uid=u;password=***;Port=5");
    free (s);
    char out[1200];
    int rc = gw_sql_default_dsn (out, sizeof out);
    if (rc == 0) {
        ck_assert_ptr_nonnull (strstr (out, "Driver=SQLite3;Database="));
        ck_assert_ptr_nonnull (strstr (out, "/sample.sqlite;NoCreat=1"));
        /* and it works: the bundled sample answers */
        gw_sql_conn_t *conn = NULL;
        ck_assert_int_eq (s_scalar_int (&conn, out, "SELECT count(*) FROM products"), 40);
        gw_sql_conn_destroy (&conn);
    } else {
        ck_assert_int_eq (rc, -ENOENT);
        ck_assert_ptr_nonnull (strstr (out, "sample.sqlite"));
    }
}
END_TEST

/* ---- PostgreSQL ---------------------------------------------------------- */

static char s_pg_dir[256];
static char s_pg_bin[512];
static char s_pg_dsn[1024];
static int s_pg_port;
static bool s_pg_up;
static char s_pg_broken[1400];   /* why the installed server would not serve */
static const char s_pg_password[] = "Pg-test-S3cret";

static int
s_free_port (void)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (fd < 0 || bind (fd, (struct sockaddr *) &a, sizeof a) < 0
        || getsockname (fd, (struct sockaddr *) &a, &len) < 0) {
        if (fd >= 0)
            close (fd);
        return -1;
    }
    close (fd);
    return ntohs (a.sin_port);
}

/* Runs a command as the postgres user when root (initdb refuses root). */
static int
s_pg_sh (const char *fmt, ...)
{
    char cmd[3000], full[3400];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (cmd, sizeof cmd, fmt, ap);
    va_end (ap);
    if (geteuid () == 0)
        snprintf (full, sizeof full, "runuser -u postgres -- sh -c \"%s\"", cmd);
    else
        snprintf (full, sizeof full, "sh -c \"%s\"", cmd);
    return s_system ("%s", full);
}

static void
s_pg_setup (void)
{
    glob_t g;
    if (glob ("/usr/lib/postgresql/*/bin/initdb", 0, NULL, &g) != 0 || g.gl_pathc == 0) {
        printf ("test_sql_run: PostgreSQL tests SKIPPED: no initdb under /usr/lib/postgresql "
                "(make deps installs Debian's postgresql)\n");
        return;
    }
    snprintf (s_pg_bin, sizeof s_pg_bin, "%s", g.gl_pathv[g.gl_pathc - 1]);
    globfree (&g);
    *strrchr (s_pg_bin, '/') = '\0';
    if (geteuid () == 0 && !getpwnam ("postgres")) {
        printf ("test_sql_run: PostgreSQL tests SKIPPED: running as root and there is no "
                "postgres user to run the server as\n");
        return;
    }
    snprintf (s_pg_dir, sizeof s_pg_dir, "/tmp/codebox-pg-XXXXXX");
    if (!mkdtemp (s_pg_dir)) {
        snprintf (s_pg_broken, sizeof s_pg_broken, "cannot make a folder in /tmp");
        s_pg_dir[0] = '\0';
        return;
    }
    chmod (s_pg_dir, 0755);
    if (geteuid () == 0)
        s_system ("chown postgres: '%s'", s_pg_dir);
    s_pg_port = s_free_port ();
    char pwfile[400];
    snprintf (pwfile, sizeof pwfile, "%s/pw", s_pg_dir);
    int rc = s_pg_sh ("echo '%s' > %s && %s/initdb -D %s/data -U postgres --pwfile=%s "
                      "--auth-local=trust --auth-host=scram-sha-256 > %s/initdb.log 2>&1",
                      s_pg_password, pwfile, s_pg_bin, s_pg_dir, pwfile, s_pg_dir);
    if (rc == 0)
        rc = s_pg_sh ("%s/pg_ctl -D %s/data -l %s/server.log -w -t 60 -o '-p %d -k %s "
                      "-c listen_addresses=127.0.0.1' start > /dev/null", s_pg_bin, s_pg_dir,
                      s_pg_dir, s_pg_port, s_pg_dir);
    if (rc != 0) {
        snprintf (s_pg_broken, sizeof s_pg_broken, "PostgreSQL is installed (%s) but would not "
                  "start; see %s/initdb.log and %s/server.log", s_pg_bin, s_pg_dir, s_pg_dir);
        return;
    }
    s_pg_up = true;
    char sql[400];
    snprintf (sql, sizeof sql, "%s/setup.sql", s_pg_dir);
    FILE *f = fopen (sql, "w");
    if (!f) {
        snprintf (s_pg_broken, sizeof s_pg_broken, "cannot write %s", sql);
        return;
    }
    fputs ("CREATE TABLE t (id int PRIMARY KEY, note text, amount numeric(10,2), ratio float8,\n"
           "    flag boolean, data bytea, day date);\n"
           "INSERT INTO t SELECT i, 'note ' || i, i * 1.25, i / 8.0, i % 2 = 0,\n"
           "    decode(lpad(to_hex(i), 4, '0'), 'hex'), date '2024-01-01' + i\n"
           "    FROM generate_series(1, 40) i;\n"
           "CREATE TABLE big AS SELECT i AS x, md5(i::text) AS h FROM generate_series(1, 2000) i;\n"
           "CREATE SEQUENCE s;\n", f);
    fclose (f);
    chmod (sql, 0644);
    rc = s_pg_sh ("%s/psql -q -h %s -p %d -U postgres -d postgres -v ON_ERROR_STOP=1 -f %s "
                  "> %s/psql.log 2>&1", s_pg_bin, s_pg_dir, s_pg_port, sql, s_pg_dir);
    if (rc != 0)
        snprintf (s_pg_broken, sizeof s_pg_broken, "cannot fill the test database (see "
                  "%s/psql.log)", s_pg_dir);
    snprintf (s_pg_dsn, sizeof s_pg_dsn, "Driver={PostgreSQL Unicode};Server=127.0.0.1;"
              "Port=%d;Database=postgres;Uid=postgres;Pwd=%s;", s_pg_port, s_pg_password);
}

static void
s_pg_teardown (void)
{
    if (s_pg_up)
        s_pg_sh ("%s/pg_ctl -D %s/data -m immediate -w stop > /dev/null 2>&1", s_pg_bin,
                 s_pg_dir);
    if (s_pg_dir[0] && !s_pg_broken[0])      /* kept with its logs when broken */
        s_system ("rm -rf '%s'", s_pg_dir);
}

#define PG_OR_SKIP() \
    do { \
        ck_assert_msg (!s_pg_broken[0], "%s", s_pg_broken); \
        if (!s_pg_up) { \
            printf ("test_sql_run: %s SKIPPED: PostgreSQL is not installed\n", __func__); \
            return; \
        } \
    } while (0)

START_TEST (test_pg_reads)
{
    PG_OR_SKIP ();
    gw_sql_conn_t *conn = NULL;
    gw_sql_options_t o = gw_sql_options_default ();
    json_t *r = s_ok (&conn, s_pg_dsn, "SELECT id, note, amount, ratio, flag, data, day, NULL "
                      "AS nothing FROM t WHERE id = 2", &o);
    ck_assert_str_eq (gw_sql_conn_dbms (conn), "PostgreSQL");
    ck_assert_int_eq (json_integer_value (s_cell (r, 0, 0)), 2);
    ck_assert_str_eq (json_string_value (s_cell (r, 0, 1)), "note 2");
    ck_assert_double_eq_tol (json_number_value (s_cell (r, 0, 2)), 2.5, 1e-9);
    ck_assert_double_eq_tol (json_number_value (s_cell (r, 0, 3)), 0.25, 1e-9);
    ck_assert (json_is_true (s_cell (r, 0, 4)));
    ck_assert_str_eq (json_string_value (s_cell (r, 0, 5)), "AAI=");
    ck_assert_str_eq (json_string_value (s_cell (r, 0, 6)), "2024-01-03");
    ck_assert (json_is_null (s_cell (r, 0, 7)));
    json_t *cols = json_object_get (r, "columns");
    ck_assert_str_eq (json_string_value (json_object_get (json_array_get (cols, 2), "type")),
                      "number");
    ck_assert_str_eq (json_string_value (json_object_get (json_array_get (cols, 4), "type")),
                      "boolean");
    ck_assert_str_eq (json_string_value (json_object_get (json_array_get (cols, 5), "type")),
                      "binary");
    ck_assert_str_eq (json_string_value (json_object_get (json_array_get (cols, 6), "type")),
                      "date");
    json_decref (r);

    /* PostgreSQL syntax the dialect allows */
    r = s_ok (&conn, s_pg_dsn, "SELECT $$;DROP$$ AS s, E'it\\'s' AS e, 'caf\xc3\xa9' AS u", &o);
    ck_assert_str_eq (json_string_value (s_cell (r, 0, 0)), ";DROP");
    ck_assert_str_eq (json_string_value (s_cell (r, 0, 1)), "it's");
    ck_assert_str_eq (json_string_value (s_cell (r, 0, 2)), "caf\xc3\xa9");
    json_decref (r);
    /* a trailing ';' or comment survives the driver's cursor wrapping */
    static const char *endings[] = {"SELECT 5;", "SELECT 5 -- five", "SELECT 5; -- five",
                                    "SELECT 5 /* five */", "(SELECT 5)", "VALUES (5) -- x"};
    for (size_t i = 0; i < sizeof endings / sizeof endings[0]; i++) {
        r = s_ok (&conn, s_pg_dsn, endings[i], &o);
        ck_assert_msg (json_integer_value (s_cell (r, 0, 0)) == 5, "%s", endings[i]);
        json_decref (r);
    }
    r = s_ok (&conn, s_pg_dsn, "SHOW transaction_read_only", &o);
    ck_assert_str_eq (json_string_value (s_cell (r, 0, 0)), "on");
    json_decref (r);
    r = s_ok (&conn, s_pg_dsn, "EXPLAIN ANALYZE SELECT count(*) FROM big", &o);
    ck_assert_str_eq (json_string_value (json_object_get (r, "statement")), "explain");
    json_decref (r);
    r = s_ok (&conn, s_pg_dsn, "WITH RECURSIVE n(k) AS (VALUES (1) UNION ALL SELECT k + 1 FROM n "
              "WHERE k < 5) SELECT sum(k) FROM n", &o);
    ck_assert_int_eq (json_integer_value (s_cell (r, 0, 0)), 15);
    json_decref (r);
    gw_sql_conn_destroy (&conn);
}
END_TEST

START_TEST (test_pg_csv_and_limits)
{
    PG_OR_SKIP ();
    gw_sql_conn_t *conn = NULL;
    gw_sql_options_t o = gw_sql_options_default ();
    o.max_inline_rows = 5;
    o.csv_dir = s_input;
    json_t *r = s_ok (&conn, s_pg_dsn, "SELECT * FROM big ORDER BY x", &o);
    ck_assert_int_eq (json_integer_value (json_object_get (r, "row_count")), 2000);
    ck_assert_int_eq (json_array_size (json_object_get (r, "rows")), 5);
    const char *path = json_string_value (json_object_get (r, "csv_path"));
    ck_assert_ptr_nonnull (path);
    size_t len = 0;
    char *csv = s_read_file (path, &len);
    ck_assert_ptr_nonnull (csv);
    ck_assert_msg (strncmp (csv, "x,h\r\n1,c4ca4238a0b923820dcc509a6f75849b\r\n", 41) == 0,
                   "CSV starts %.60s", csv);
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += csv[i] == '\n';
    ck_assert_uint_eq (lines, 2001);
    free (csv);
    json_decref (r);

    /* the row limit, without reading the whole result into memory */
    o = gw_sql_options_default ();
    r = s_ok (&conn, s_pg_dsn, "SELECT i FROM generate_series(1, 250000) i", &o);
    ck_assert_int_eq (json_integer_value (json_object_get (r, "row_count")), GW_SQL_MAX_ROWS);
    ck_assert (json_is_true (json_object_get (r, "row_limit_reached")));
    json_decref (r);

    o.timeout_s = 1;
    time_t t0 = time (NULL);
    r = gw_sql_run_sync (&conn, s_pg_dsn, "SELECT pg_sleep(10)", &o);
    ck_assert_str_eq (s_error_code (r), "bad_request");
    ck_assert_msg (strstr (s_error_message (r), "longer than 1 s"), "%s", s_error_message (r));
    ck_assert_int_le (time (NULL) - t0, 5);
    json_decref (r);
    ck_assert_int_eq (s_scalar_int (&conn, s_pg_dsn, "SELECT 7"), 7);
    gw_sql_conn_destroy (&conn);
}
END_TEST

static const char *s_pg_writes[] = {
    "DELETE FROM t",
    "UPDATE t SET note = 'changed'",
    "INSERT INTO t (id) VALUES (1000)",
    "WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x",
    "WITH x AS (UPDATE t SET amount = 0 RETURNING id) SELECT count(*) FROM x",
    "SELECT * INTO t_copy FROM t",
    "CREATE TABLE t_new (a int)",
    "DROP TABLE big",
    "TRUNCATE t",
    "ALTER TABLE t ADD COLUMN hacked text",
    "SELECT nextval('s')",
    "SELECT setval('s', 500)",
    "EXPLAIN ANALYZE DELETE FROM t",
    "COMMIT; DELETE FROM t",
    "SELECT 1; DELETE FROM t",
    "SET TRANSACTION READ WRITE; DELETE FROM t",
};

/* The state of the test data, read through the core itself. */
static void
s_pg_state (gw_sql_conn_t **conn, json_int_t state[5])
{
    state[0] = s_scalar_int (conn, s_pg_dsn, "SELECT count(*) FROM t");
    state[1] = s_scalar_int (conn, s_pg_dsn, "SELECT sum(hashtext(note || amount::text)) FROM t");
    state[2] = s_scalar_int (conn, s_pg_dsn, "SELECT count(*) FROM pg_tables WHERE "
                                             "schemaname = 'public'");
    state[3] = s_scalar_int (conn, s_pg_dsn, "SELECT last_value + (is_called::int) FROM s");
    state[4] = s_scalar_int (conn, s_pg_dsn, "SELECT count(*) FROM big");
}

START_TEST (test_pg_writes)
{
    PG_OR_SKIP ();
    gw_sql_conn_t *conn = NULL;
    json_int_t before[5], after[5];
    s_pg_state (&conn, before);
    ck_assert_int_eq (before[0], 40);
    gw_sql_options_t o = gw_sql_options_default ();
    for (size_t i = 0; i < sizeof s_pg_writes / sizeof s_pg_writes[0]; i++) {
        json_t *r = gw_sql_run_sync (&conn, s_pg_dsn, s_pg_writes[i], &o);
        ck_assert_msg (s_error_code (r) && strcmp (s_error_code (r), "forbidden") == 0,
                       "\"%s\" was not refused by the classifier", s_pg_writes[i]);
        json_decref (r);
    }
    /* layers (b) and (c) alone: every write fails in the database */
    o.unsafe_skip_classifier = true;
    for (size_t i = 0; i < sizeof s_pg_writes / sizeof s_pg_writes[0]; i++) {
        json_t *r = gw_sql_run_sync (&conn, s_pg_dsn, s_pg_writes[i], &o);
        ck_assert_msg (json_object_get (r, "error") != NULL, "\"%s\" went through layers b and c",
                       s_pg_writes[i]);
        json_decref (r);
    }
    gw_sql_conn_destroy (&conn);
    s_pg_state (&conn, after);
    for (int i = 0; i < 5; i++)
        ck_assert_msg (before[i] == after[i], "state %d changed: %lld -> %lld", i,
                       (long long) before[i], (long long) after[i]);
    gw_sql_conn_destroy (&conn);
}
END_TEST

START_TEST (test_pg_bad_password)
{
    PG_OR_SKIP ();
    char dsn[1024];
    snprintf (dsn, sizeof dsn, "Driver={PostgreSQL Unicode};Server=127.0.0.1;Port=%d;"
              "Database=postgres;Uid=postgres;Pwd=Wrong-Pass-991", s_pg_port);
    gw_sql_conn_t *conn = NULL;
    gw_sql_options_t o = gw_sql_options_default ();
    o.client_dsn = true;
    json_t *r = gw_sql_run_sync (&conn, dsn, "SELECT 1", &o);
    ck_assert_ptr_null (conn);
    ck_assert_str_eq (s_error_code (r), "bad_request");
    const char *m = s_error_message (r);
    ck_assert_msg (strstr (m, "password") || strstr (m, "authentication"), "message: %s", m);
    ck_assert_msg (!strstr (m, "Wrong-Pass-991") && !strstr (m, s_pg_password), "leak: %s", m);
    ck_assert_ptr_nonnull (strstr (m, "Pwd=***"));
    json_decref (r);
}
END_TEST

/* ---- gw_sql: the worker threads and the loop --------------------------------- */

static gw_server_t *s_loop;
static json_t *s_results[8];
static int s_order[8];                  /* the args, in the order delivered */
static int s_delivered, s_expected;
static pthread_t s_loop_thread;
static bool s_wrong_thread;

static void
s_done (json_t *result, void *arg)
{
    if (!pthread_equal (pthread_self (), s_loop_thread))
        s_wrong_thread = true;
    s_results[(intptr_t) arg] = result;
    s_order[s_delivered] = (int) (intptr_t) arg;
    if (++s_delivered == s_expected)
        gw_server_stop (s_loop);
}

static void
s_no_requests (gw_server_t *server, gw_request_t *req, void *arg)
{
    (void) server, (void) req, (void) arg;
    ck_abort_msg ("no request was expected");
}

static gw_config_t *
s_async_config (void)
{
    char err[256], state[1200];
    gw_config_t *c = gw_config_new ();
    snprintf (state, sizeof state, "%s/state", s_dir);
    ck_assert_int_eq (gw_config_set (c, "CODEBOX_STATE_DIR", state, "test", err, sizeof err), 0);
    ck_assert_int_eq (gw_config_set (c, "CODEBOX_SQL_DSN", s_dsn, "test", err, sizeof err), 0);
    ck_assert_int_eq (gw_config_set (c, "CODEBOX_POOL_SIZE", "0", "test", err, sizeof err), 0);
    ck_assert_int_eq (gw_config_set (c, "CODEBOX_SANDBOX", "none", "test", err, sizeof err), 0);
    ck_assert_int_eq (gw_config_set (c, "CODEBOX_SQL_MAX_INLINE_ROWS", "20", "test", err,
                                     sizeof err), 0);
    ck_assert_int_eq (gw_config_set (c, "CODEBOX_EXEC_TIMEOUT", "30", "test", err, sizeof err), 0);
    sigset_t mask;
    sigemptyset (&mask);
    sigaddset (&mask, SIGTERM);
    sigaddset (&mask, SIGINT);
    pthread_sigmask (SIG_BLOCK, &mask, NULL);
    s_loop = gw_server_new (c, err, sizeof err);
    ck_assert_msg (s_loop != NULL, "gw_server_new: %s", err);
    gw_server_set_handler (s_loop, s_no_requests, NULL);
    s_loop_thread = pthread_self ();
    alarm (50);
    return c;
}

/* Queries of two sessions run on the workers; results come back in the
 * loop thread, in each session's order; a client DSN is refused when not
 * allowed; the CSV lands in the session's input folder. */
START_TEST (test_async_queries)
{
    gw_config_t *c = s_async_config ();
    gw_sql_t *sql = gw_sql_new (s_loop, c);
    ck_assert_ptr_nonnull (sql);
    ck_assert_ptr_nonnull (strstr (gw_sql_server_dsn_shown (sql), "sample.sqlite"));
    gw_sql_request_t req = {.session_key = "t/a", .query = "SELECT count(*) FROM customers",
                            .input_dir = s_input, .shown_input_dir = "/session/input",
                            .csv_uid = -1, .csv_gid = -1};
    s_delivered = 0;
    s_expected = 5;
    ck_assert_int_eq (gw_sql_query (sql, &req, s_done, (void *) 0), 0);
    req.query = "DELETE FROM customers";
    ck_assert_int_eq (gw_sql_query (sql, &req, s_done, (void *) 1), 0);
    req.query = "SELECT * FROM orders";
    req.max_inline_rows = 500;          /* more than the server's 20: clamped */
    ck_assert_int_eq (gw_sql_query (sql, &req, s_done, (void *) 2), 0);
    req.session_key = "t/b";
    req.query = "SELECT 1";
    req.dsn = s_dsn;
    ck_assert_int_eq (gw_sql_query (sql, &req, s_done, (void *) 3), 0);
    req.dsn = NULL;
    req.query = "SELECT name FROM products WHERE product_id = 1";
    ck_assert_int_eq (gw_sql_query (sql, &req, s_done, (void *) 4), 0);
    gw_server_run (s_loop);
    ck_assert_int_eq (s_delivered, 5);
    ck_assert (!s_wrong_thread);
    ck_assert_int_eq (json_integer_value (s_cell (s_results[0], 0, 0)), 120);
    ck_assert_str_eq (s_error_code (s_results[1]), "forbidden");
    ck_assert_int_eq (json_array_size (json_object_get (s_results[2], "rows")), 20);
    ck_assert_int_eq (json_integer_value (json_object_get (s_results[2], "row_count")), 300);
    ck_assert_ptr_nonnull (strstr (json_string_value (json_object_get (s_results[2], "csv_path")),
                                   "/session/input/sql-"));
    ck_assert_uint_eq (s_count_entries (s_input), 1);
    ck_assert_str_eq (s_error_code (s_results[3]), "forbidden");
    ck_assert_ptr_nonnull (strstr (s_error_message (s_results[3]), "CODEBOX_ALLOW_CLIENT_SQL_DSN"));
    ck_assert_str_eq (json_string_value (s_cell (s_results[4], 0, 0)),
                      "Ethiopia Yirgacheffe 250 g");
    for (int i = 0; i < 5; i++)
        json_decref (s_results[i]);
    gw_sql_close_session (sql, "t/a");
    gw_sql_close_session (sql, "t/b");
    gw_sql_destroy (&sql);
    ck_assert_ptr_null (sql);
    gw_server_destroy (&s_loop);
    gw_config_destroy (&c);
}
END_TEST

/* One tenant's queries hold at most its share of the workers: with half
 * of the sessions (2 of 4 workers), four runaway queries of tenant a run
 * two at a time, and tenant b's query, queued after them, is answered
 * first. */
START_TEST (test_async_tenant_share)
{
    gw_config_t *c = s_async_config ();
    char err[256];
    ck_assert_int_eq (gw_config_set (c, "CODEBOX_MAX_SESSIONS", "4", "test", err, sizeof err), 0);
    ck_assert_int_eq (gw_config_set (c, "CODEBOX_TENANT_MAX_SESSIONS", "2", "test", err,
                                     sizeof err), 0);
    ck_assert_int_eq (gw_config_resolve (c), 0);
    gw_sql_t *sql = gw_sql_new (s_loop, c);
    ck_assert_ptr_nonnull (sql);
    char keys[4][8];
    gw_sql_request_t req = {.csv_uid = -1, .csv_gid = -1, .timeout_s = 2,
                            .query = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
                                     "FROM c WHERE x < 1000000000) SELECT count(*) FROM c"};
    s_delivered = 0;
    s_expected = 5;
    for (int i = 0; i < 4; i++) {
        snprintf (keys[i], sizeof keys[i], "a/%d", i);
        req.session_key = keys[i];
        ck_assert_int_eq (gw_sql_query (sql, &req, s_done, (void *) (intptr_t) i), 0);
    }
    req.session_key = "b/1";
    req.query = "SELECT 1";
    ck_assert_int_eq (gw_sql_query (sql, &req, s_done, (void *) 4), 0);
    gw_server_run (s_loop);
    ck_assert_int_eq (s_delivered, 5);
    ck_assert_int_eq (s_order[0], 4);
    ck_assert_int_eq (json_integer_value (s_cell (s_results[4], 0, 0)), 1);
    for (int i = 0; i < 4; i++)
        ck_assert_str_eq (s_error_code (s_results[i]), "bad_request");     /* timed out */
    for (int i = 0; i < 5; i++)
        json_decref (s_results[i]);
    gw_sql_destroy (&sql);
    gw_server_destroy (&s_loop);
    gw_config_destroy (&c);
}
END_TEST

/* Shutting down cancels the running query and answers the queued one;
 * closing a session answers its queued queries. */
START_TEST (test_async_shutdown)
{
    gw_config_t *c = s_async_config ();
    gw_sql_t *sql = gw_sql_new (s_loop, c);
    ck_assert_ptr_nonnull (sql);
    gw_sql_request_t req = {.session_key = "t/slow", .csv_uid = -1, .csv_gid = -1,
                            .query = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
                                     "FROM c WHERE x < 1000000000) SELECT count(*) FROM c"};
    s_delivered = 0;
    s_expected = 3;
    ck_assert_int_eq (gw_sql_query (sql, &req, s_done, (void *) 0), 0);
    ck_assert_int_eq (gw_sql_query (sql, &req, s_done, (void *) 1), 0);
    req.session_key = "t/other";
    ck_assert_int_eq (gw_sql_query (sql, &req, s_done, (void *) 2), 0);
    usleep (300 * 1000);                /* let the first ones start */
    gw_sql_close_session (sql, "t/other");
    time_t t0 = time (NULL);
    gw_sql_destroy (&sql);
    ck_assert_int_le (time (NULL) - t0, 5);
    gw_server_run (s_loop);
    ck_assert_int_eq (s_delivered, 3);
    ck_assert_ptr_nonnull (strstr (s_error_message (s_results[0]), "cancelled"));
    ck_assert_str_eq (s_error_code (s_results[1]), "shutting_down");
    ck_assert_msg (strstr (s_error_message (s_results[2]), "cancelled")
                   || strcmp (s_error_code (s_results[2]), "session_not_found") == 0,
                   "%s", s_error_message (s_results[2]));
    for (int i = 0; i < 3; i++)
        json_decref (s_results[i]);
    gw_server_destroy (&s_loop);
    gw_config_destroy (&c);
}
END_TEST

Suite *
sql_run_suite (void)
{
    Suite *s = suite_create ("sql_run");
    TCase *tc = tcase_create ("values");
    tcase_add_test (tc, test_values);
    tcase_add_test (tc, test_csv);
    tcase_add_test (tc, test_redact);
    suite_add_tcase (s, tc);
    tc = tcase_create ("sqlite");
    tcase_add_checked_fixture (tc, s_sqlite_setup, s_sqlite_teardown);
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_sqlite_reads);
    tcase_add_test (tc, test_sqlite_csv);
    tcase_add_test (tc, test_sqlite_limits);
    tcase_add_test (tc, test_sqlite_writes);
    tcase_add_test (tc, test_connect_errors);
    tcase_add_test (tc, test_redact_and_default_dsn);
    suite_add_tcase (s, tc);
    tc = tcase_create ("async");
    tcase_add_checked_fixture (tc, s_sqlite_setup, s_sqlite_teardown);
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_async_queries);
    tcase_add_test (tc, test_async_shutdown);
    tcase_add_test (tc, test_async_tenant_share);
    suite_add_tcase (s, tc);
    tc = tcase_create ("postgresql");
    tcase_add_unchecked_fixture (tc, s_pg_setup, s_pg_teardown);
    tcase_add_checked_fixture (tc, s_sqlite_setup, s_sqlite_teardown);
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_pg_reads);
    tcase_add_test (tc, test_pg_csv_and_limits);
    tcase_add_test (tc, test_pg_writes);
    tcase_add_test (tc, test_pg_bad_password);
    suite_add_tcase (s, tc);
    return s;
}
