/* gw_sql_classify: the first of exec_sql's three read-only layers. It
 * admits exactly one statement that reads: SELECT, WITH ... SELECT,
 * VALUES, TABLE, EXPLAIN of one of those (EXPLAIN ANALYZE included, since
 * what it runs is a read), or SHOW; at most one trailing ';'. Everything
 * else is refused with the statement kind named.
 *
 * Within an admitted statement it refuses, outside strings, quoted names
 * and comments: data-modifying words anywhere (INSERT, UPDATE, DELETE,
 * MERGE, UPSERT, REPLACE INTO; so no data-modifying WITH), INTO (SELECT
 * ... INTO, INTO OUTFILE), ATTACH, DETACH, PRAGMA, VACUUM, COPY, LOCK and
 * FOR UPDATE/SHARE, sequence advances (NEXTVAL, NEXT VALUE FOR), ODBC
 * escapes ({call ...}), Unicode-escaped names (U&"..."), and calls of
 * functions with side effects or that reach outside the database
 * (pg_terminate_backend, set_config, setval, lo_*, dblink*, pg_read_file,
 * query_to_xml, load_extension, load_file, xp_*, dbms_*, ...; the table is
 * in gw_sql_classify.c). A keyword inside a string, a quoted name or a
 * comment is never a reason to refuse.
 *
 * Dialects lex differently (backslash escapes, nested comments, # and
 * "-- " comments, [names], `names`, $$ and E'' and q'' strings). A query
 * is admitted only when it is admitted under every combination of the
 * rules its characters could trigger (gw_sql_lex.h) that the database's
 * dialect leaves open, so the database cannot read a second statement or
 * a hidden keyword where the classifier saw a string or a comment. For an
 * unknown database every combination counts: `SELECT $$;x$$` is one
 * string to PostgreSQL but two statements elsewhere.
 *
 * Pure code; any thread. */
#ifndef GW_SQL_CLASSIFY_H
#define GW_SQL_CLASSIFY_H

#include <stddef.h>

/* The longest query classified; longer ones are refused with -E2BIG. */
#define GW_SQL_MAX_QUERY_BYTES (256 * 1024)

/* The database the query goes to, as far as its lexing goes. ANY tries
 * every dialect's rules; the others fix their own and try only the rules
 * a setting can change (PostgreSQL's standard_conforming_strings, MySQL's
 * NO_BACKSLASH_ESCAPES). */
typedef enum {
    GW_SQL_DIALECT_ANY,
    GW_SQL_DIALECT_POSTGRESQL,
    GW_SQL_DIALECT_SQLITE,
    GW_SQL_DIALECT_MYSQL
} gw_sql_dialect_t;

/* The dialect for a DBMS name as ODBC's SQL_DBMS_NAME gives it
 * ("PostgreSQL", "SQLite", "MySQL", "MariaDB"); ANY for others or NULL. */
gw_sql_dialect_t gw_sql_dialect_for_dbms (const char *dbms_name);

typedef enum {
    GW_SQL_KIND_SELECT,
    GW_SQL_KIND_WITH,
    GW_SQL_KIND_VALUES,
    GW_SQL_KIND_TABLE,
    GW_SQL_KIND_EXPLAIN,
    GW_SQL_KIND_SHOW
} gw_sql_kind_t;

/* Classifies len bytes of sql (need not be NUL-terminated) for a
 * database of dialect. Returns 0
 * with *kind_p set when the query is one admitted read; -EPERM when it is
 * refused as not read-only; -EINVAL when it is empty, holds a NUL byte,
 * or has a string, quoted name or comment that is never closed; -E2BIG
 * when longer than GW_SQL_MAX_QUERY_BYTES. On failure err holds one or
 * more sentences for the client (printable ASCII plus the query's own
 * bytes never: no query text is copied into it but ASCII keywords).
 * kind_p may be NULL. */
int gw_sql_classify (const char *sql, size_t len, gw_sql_dialect_t dialect,
                     gw_sql_kind_t *kind_p, char *err, size_t err_len);

/* The length of an admitted query without what follows its last token
 * as the dialect reads it: a trailing ';', comments and blanks. Drivers
 * stumble on those (SQLite's sees a second statement in "SELECT 1; --",
 * PostgreSQL's appends to a query that ends in a line comment). */
size_t gw_sql_statement_end (const char *sql, size_t len, gw_sql_dialect_t dialect);

/* "select", "with", "values", "table", "explain" or "show". */
const char *gw_sql_kind_name (gw_sql_kind_t kind);

#endif
