/* gw_sql_conn: one ODBC connection made read-only, and the synchronous
 * core of exec_sql that the worker threads of gw_sql run (and that the
 * tests call directly).
 *
 * Read-only in three layers:
 *   (a) gw_sql_classify admits one read statement, lexed by the rules of
 *       the connection's database (SQL_DBMS_NAME);
 *   (b) SQL_ATTR_ACCESS_MODE = SQL_MODE_READ_ONLY, and what the database
 *       itself enforces: on PostgreSQL every transaction of the session
 *       is READ ONLY (SET SESSION CHARACTERISTICS at connect, SET
 *       TRANSACTION READ ONLY before each statement); on SQLite PRAGMA
 *       query_only=1 (at connect and before each statement); on MySQL
 *       SET SESSION TRANSACTION READ ONLY;
 *   (c) every statement in a transaction rolled back after it, whether it
 *       succeeded or failed: autocommit off and SQLEndTran, or, on SQLite,
 *       BEGIN and ROLLBACK statements of ours (its driver steps through a
 *       result row by row, StepAPI=1, only outside a transaction it began
 *       itself; inside one it loads the whole result into memory).
 * A connection whose guard cannot be set up is not used. For the
 * strongest setup, give CODEBOX_SQL_DSN a database user that may only
 * read.
 *
 * Limits: a query timeout (SQL_ATTR_QUERY_TIMEOUT, and a watchdog thread
 * that calls SQLCancel, since some drivers ignore the attribute), at most
 * max_rows rows fetched, at most max_cell_bytes bytes kept per cell, at
 * most GW_SQL_MAX_RESULT_BYTES of values kept in memory for the inline
 * rows, at most csv_max_bytes written to the CSV (rows are written as
 * they are fetched, never kept).
 *
 * Results and errors are JSON objects in the exec_sql shape (documented
 * in gw_sql.h). No message ever holds the connection string's password:
 * DSNs are shown redacted and driver messages are scrubbed of it.
 *
 * Threads: a connection is used by one thread at a time;
 * gw_sql_conn_cancel may be called from any thread. */
#ifndef GW_SQL_CONN_H
#define GW_SQL_CONN_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "gw_sql_classify.h"
#include "gw_sql_options.h"

typedef struct gw_sql_conn gw_sql_conn_t;

/* Connects with the ODBC connection string dsn and sets up layers (b)
 * and (c). Returns the connection, or NULL with *error_p set to an
 * {"error":{...}} object (new) that names the DSN redacted. */
gw_sql_conn_t *gw_sql_conn_open (const char *dsn, const gw_sql_options_t *opts, json_t **error_p);

/* Disconnects (rolling back) and frees. NULL-safe; nulls the pointer. */
void gw_sql_conn_destroy (gw_sql_conn_t **self_p);

/* The DSN the connection was made with (holds the password: compare
 * only, never show), and the database's name (SQL_DBMS_NAME). */
const char *gw_sql_conn_dsn (const gw_sql_conn_t *self);
const char *gw_sql_conn_dbms (const gw_sql_conn_t *self);

/* True when the connection failed in a way that needs a new one (a
 * rollback that did not work, a lost link). */
bool gw_sql_conn_broken (const gw_sql_conn_t *self);

/* Runs one query on the connection and returns the exec_sql result or
 * error object (new; NULL only on OOM). */
json_t *gw_sql_conn_run (gw_sql_conn_t *self, const char *query, const gw_sql_options_t *opts);

/* Opens *conn_p when it is NULL, broken, or made with another DSN, then
 * runs query on it. The connection stays in *conn_p for the next call
 * (NULL after a connection failure). */
json_t *gw_sql_run_sync (gw_sql_conn_t **conn_p, const char *dsn, const char *query,
                         const gw_sql_options_t *opts);

/* Cancels the statement the connection is running, if any (any thread),
 * and every later one: a cancelled connection is broken, and is replaced
 * before the next query. */
void gw_sql_conn_cancel (gw_sql_conn_t *self);

/* Writes the default connection string: the bundled SQLite sample
 * database (sample.sqlite next to the binary, or one folder up, as
 * build/sample.sqlite is for build/sanitize/codebox) through the SQLite3
 * ODBC driver. Returns 0, or -ENOENT (with the place looked at in out) when
 * there is no sample database. */
int gw_sql_default_dsn (char *out, size_t out_len);

/* {"error":{"code":code,"message":message}} (new). */
json_t *gw_sql_error (const char *code, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

#endif
