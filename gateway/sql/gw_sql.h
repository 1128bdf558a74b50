/* gw_sql: exec_sql for the gateway. It owns a few worker threads and
 * every session's ODBC connection (opened on the session's first query,
 * closed with the session), runs queries on the workers, one at a time
 * per session and in the order they came, a tenant's on at most its share
 * of the workers at once (its further queries wait while the other
 * tenants' are served), and hands each result back to the loop thread
 * through gw_server_call. The work itself (read-only layers, limits,
 * values, CSV) is gw_sql_conn's.
 *
 * The result handed to done is a new JSON object, either
 *   {"statement": "select"|"with"|"values"|"table"|"explain"|"show",
 *    "columns": [{"name", "type": "integer"|"number"|"text"|"boolean"|
 *                 "binary"|"date"|"time"|"timestamp", "db_type"}...],
 *    "rows": [[value...]...],     the first max_inline_rows rows
 *    "row_count": N,              rows fetched in all
 *    "truncated": true,           when row_count > rows shown
 *    "csv_path": PATH,            then: every row as RFC 4180 CSV with a
 *                                 header line, in the session's input/
 *                                 folder as kernel code sees it
 *    "row_limit_reached": true,   fetching stopped at GW_SQL_MAX_ROWS
 *    "rows_cut": N,               inline rows left out (only in the CSV):
 *                                 their values passed GW_SQL_MAX_RESULT_BYTES
 *    "csv_cut": true,             the CSV stopped before passing the
 *                                 session's disk quota (CODEBOX_DISK_QUOTA_MB)
 *    "cells_cut": N,              values cut at GW_SQL_MAX_CELL_BYTES
 *    "note": TEXT}                a sentence on any of the above
 * with values as JSON: integers, numbers, null, true/false, strings
 * (invalid UTF-8 replaced by U+FFFD), binary as base64; or
 *   {"error": {"code": CODE, "message": TEXT, "sqlstate"?: STATE}}
 * where CODE is a gw_error code string: "forbidden" (not a read: layer
 * (a) refused it), "bad_request" (malformed, refused or failed by the
 * database, timed out, cancelled, a client DSN that cannot connect, a
 * client DSN when CODEBOX_ALLOW_CLIENT_SQL_DSN is 0), "too_large" (query
 * over 256 KiB), "internal_error" (the server's DSN cannot connect or be
 * made read-only), "session_not_found" (the session ended first),
 * "shutting_down". Messages never hold a password.
 *
 * A query whose client leaves is cancelled: a transport gives a probe
 * (gone), which a timer of gw_sql (a loop source) asks every
 * GW_SQL_PROBE_MS, or calls gw_sql_cancel itself (an MCP call's cancel).
 *
 * Threads: every function here is for the loop thread; done and gone run
 * in the loop thread too. */
#ifndef GW_SQL_H
#define GW_SQL_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "gw_config.h"
#include "gw_session.h"

typedef struct gw_server gw_server_t;
typedef struct gw_sql gw_sql_t;

/* Gets the result (a new reference, the callee's to free) in the loop
 * thread. */
typedef void (gw_sql_done_fn) (json_t *result, void *arg);

/* True when whoever waits for the result has left (an HTTP client that
 * closed its connection); asked in the loop thread every
 * GW_SQL_PROBE_MS while the query waits or runs. */
typedef bool (gw_sql_gone_fn) (void *arg);

#define GW_SQL_PROBE_MS 500

typedef struct {
    const char *session_key;    /* the connection's owner, "tenant/session-id": the
                                   tenant (up to the '/') holds at most its share of
                                   the workers at once */
    const char *dsn;            /* a client's ODBC connection string; NULL: the server's */
    const char *query;
    long max_inline_rows;       /* the client's wish; <= 0: the server's; never above it */
    long timeout_s;             /* the client's wish; <= 0: CODEBOX_EXEC_TIMEOUT; never above it */
    const char *input_dir;      /* host path of the session's input/ (NULL: no CSV) */
    const char *shown_input_dir; /* input/ as kernel code sees it (NULL: input_dir) */
    int csv_uid, csv_gid;       /* owner for the CSV file (the kernel user); -1: leave */
    gw_sql_gone_fn *gone;       /* optional: the query is cancelled once it says true */
    void *gone_arg;
    uint64_t *query_id;         /* optional: gets the query's id, for gw_sql_cancel */
} gw_sql_request_t;

/* Starts the workers. The server's DSN is CODEBOX_SQL_DSN, or the bundled
 * sample database (gw_sql_default_dsn); a missing sample is reported on
 * each query, not here. NULL on failure (OOM, no threads). */
gw_sql_t *gw_sql_new (gw_server_t *server, const gw_config_t *config);

/* Answers every queued query with "shutting_down", cancels the running
 * ones, joins the workers and closes every connection. Call it before
 * gw_server_destroy: the answers are delivered through gw_server_call, so they
 * run on a later loop turn or in gw_server_destroy. NULL-safe. */
void gw_sql_destroy (gw_sql_t **self_p);

/* Queues a query (every string is copied). done(result, arg) is called
 * exactly once, later, in the loop thread, also for errors found here.
 * Returns 0, or -ENOMEM (then done is not called). */
int gw_sql_query (gw_sql_t *self, const gw_sql_request_t *req, gw_sql_done_fn *done, void *arg);

/* Cancels one query (its id from gw_sql_request_t.query_id): dropped
 * when still queued, stopped with SQLCancel when it runs, so its worker
 * is free again; done gets a bad_request "cancelled" error. A query
 * that has already answered is left alone. */
void gw_sql_cancel (gw_sql_t *self, uint64_t query_id);

/* The session ended: cancels and drops its queries (answered with
 * "session_not_found") and closes its connection on a worker. */
void gw_sql_close_session (gw_sql_t *self, const char *session_key);

/* The server's DSN redacted for display ("" when none), e.g. for logs. */
const char *gw_sql_server_dsn_shown (const gw_sql_t *self);

/* Fills r for a query in session (its key written into key: the
 * connection is per session): the CSV folder and, when kernels run as
 * another user, its owner. dsn NULL: the server's database. */
void gw_sql_request_for (gw_sql_request_t *r, gw_server_t *server, gw_session_t *session,
                         char *key, size_t key_len, const char *dsn, const char *query,
                         long max_rows, long timeout);

#endif
