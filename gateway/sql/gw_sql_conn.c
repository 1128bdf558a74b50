/* gw_sql_conn: a read-only ODBC connection and the synchronous core of
 * exec_sql; see gw_sql_conn.h. A connection is used by one thread at a
 * time; the watchdog thread of a running statement and
 * gw_sql_conn_cancel only call SQLCancel, under the connection's mutex.
 * The watchdog is a plain thread, not a CZMQ actor: it sleeps on a
 * condition variable until the statement ends or its time is up, and
 * has nothing else to hear. */
#include "gw_sql_conn.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <sql.h>
#include <sqlext.h>

#include "gw_error.h"
#include "gw_sql_result.h"
#include "gw_sql_value.h"

#define S_MAX_SECRETS 4

struct gw_sql_conn {
    SQLHENV env;
    SQLHDBC dbc;
    bool connected;
    bool broken;
    char *dsn;                      /* as given: holds the password */
    char *shown_dsn;                /* redacted */
    char *secrets[S_MAX_SECRETS];   /* passwords, to scrub driver messages */
    size_t n_secrets;
    char dbms[64];
    gw_sql_dialect_t dialect;
    bool own_tx;                    /* layer (c) by BEGIN and ROLLBACK statements, autocommit
                                       left on: SQLite's driver streams rows (StepAPI) only
                                       outside a transaction of its own */
    pthread_mutex_t mutex;          /* guards running */
    SQLHSTMT running;               /* the statement SQLCancel may reach */
    atomic_bool cancelled;          /* gw_sql_conn_cancel was called during this run */
};

json_t *
gw_sql_error (const char *code, const char *fmt, ...)
{
    char message[2048];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (message, sizeof message, fmt, ap);
    va_end (ap);
    /* messages quote drivers, whose text may not be UTF-8 */
    char *fixed = gw_sql_utf8_fix (message, strlen (message), NULL);
    json_t *e = json_pack ("{s:{s:s, s:s}}", "error", "code", code, "message",
                           fixed ? fixed : "(out of memory)");
    free (fixed);
    return e;
}

/* Adds "sqlstate" to an error object when known. */
static json_t *
s_with_state (json_t *error, const char *sqlstate)
{
    if (error && sqlstate && sqlstate[0])
        json_object_set_new (json_object_get (error, "error"), "sqlstate", json_string (sqlstate));
    return error;
}

static void
s_scrub (const gw_sql_conn_t *self, char *text, size_t size)
{
    gw_sql_scrub (text, size, self->secrets, self->n_secrets);
}

/* Runs a guard statement (autocommitted or in the current transaction);
 * returns 0 or -1 with err set. */
static int
s_exec_simple (gw_sql_conn_t *self, const char *sql, char *err, size_t err_len)
{
    SQLHSTMT st = SQL_NULL_HSTMT;
    if (!SQL_SUCCEEDED (SQLAllocHandle (SQL_HANDLE_STMT, self->dbc, &st))) {
        gw_sql_diag (SQL_HANDLE_DBC, self->dbc, err, err_len, NULL);
        return -1;
    }
    SQLRETURN r = SQLExecDirect (st, (SQLCHAR *) sql, SQL_NTS);
    if (!SQL_SUCCEEDED (r) && r != SQL_NO_DATA)
        gw_sql_diag (SQL_HANDLE_STMT, st, err, err_len, NULL);
    SQLFreeHandle (SQL_HANDLE_STMT, st);
    return SQL_SUCCEEDED (r) || r == SQL_NO_DATA ? 0 : -1;
}

/* The session-wide guard of layer (b), run while autocommit is still on. */
static const char *
s_session_guard (gw_sql_dialect_t dialect)
{
    switch (dialect) {
    case GW_SQL_DIALECT_POSTGRESQL: return "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY";
    case GW_SQL_DIALECT_SQLITE: return "PRAGMA query_only=1";
    case GW_SQL_DIALECT_MYSQL: return "SET SESSION TRANSACTION READ ONLY";
    default: return NULL;
    }
}

/* The guard run first in every transaction. */
static const char *
s_statement_guard (gw_sql_dialect_t dialect)
{
    switch (dialect) {
    case GW_SQL_DIALECT_POSTGRESQL: return "SET TRANSACTION READ ONLY";
    case GW_SQL_DIALECT_SQLITE: return "PRAGMA query_only=1";
    default: return NULL;
    }
}

static void
s_disconnect (gw_sql_conn_t *self)
{
    if (self->connected) {
        SQLEndTran (SQL_HANDLE_DBC, self->dbc, SQL_ROLLBACK);
        SQLDisconnect (self->dbc);
        self->connected = false;
    }
}

/* Where key (case-insensitive) is one of the connection string's keys:
 * just past its name, or NULL. */
static const char *
s_key_find (const char *dsn, const char *key)
{
    size_t n = strlen (key);
    for (const char *p = dsn; *p; p += strcspn (p, ";")) {
        while (*p == ';' || *p == ' ')
            p++;
        if (strncasecmp (p, key, n) == 0 && (p[n] == '=' || p[n] == ' '))
            return p + n;
    }
    return NULL;
}

static bool
s_has_key (const char *dsn, const char *key)
{
    return s_key_find (dsn, key) != NULL;
}

/* The value of key in the connection string (to the next ';', spaces
 * around it dropped) into out; false when the string has no such key or
 * the value does not fit. */
static bool
s_key_value (const char *dsn, const char *key, char *out, size_t out_len)
{
    const char *v = s_key_find (dsn, key);
    if (!v)
        return false;
    v += strspn (v, " ");
    if (*v != '=')
        return false;
    v += 1 + strspn (v + 1, " ");
    size_t len = strcspn (v, ";");
    while (len && v[len - 1] == ' ')
        len--;
    if (len >= out_len)
        return false;
    memcpy (out, v, len);
    out[len] = '\0';
    return true;
}

/* The driver of a data source the string names (DSN=name), as the
 * odbc.ini files say (user's, then system's: SQLDataSources), into
 * driver; false when it names none or no such source is known. The
 * string itself then says nothing of its driver. */
static bool
s_dsn_driver (SQLHENV env, const char *dsn, char *driver, size_t driver_len)
{
    char name[SQL_MAX_DSN_LENGTH + 1];
    if (!s_key_value (dsn, "DSN", name, sizeof name))
        return false;
    SQLCHAR found[SQL_MAX_DSN_LENGTH + 1], about[256];
    SQLSMALLINT found_len, about_len;
    SQLUSMALLINT direction = SQL_FETCH_FIRST;
    while (SQL_SUCCEEDED (SQLDataSources (env, direction, found, sizeof found, &found_len,
                                          about, sizeof about, &about_len))) {
        direction = SQL_FETCH_NEXT;
        if (strcasecmp ((const char *) found, name) == 0) {
            snprintf (driver, driver_len, "%s", (const char *) about);
            return true;
        }
    }
    return false;
}

/* The connection string with the options that make PostgreSQL's driver
 * hand rows over through a cursor, a thousand at a time, and SQLite's
 * step through rows one at a time, instead of loading the whole result
 * set into the gateway's memory (the caller's own value wins). The driver
 * is told by the string, or for DSN=name by the data source's driver.
 * Returns a new string. */
static char *
s_streaming_dsn (SQLHENV env, const char *dsn)
{
    char driver[256] = "";
    s_dsn_driver (env, dsn, driver, sizeof driver);
    const char *extra = "";
    if ((strcasestr (dsn, "postgres") || strcasestr (dsn, "psqlodbc")
         || strcasestr (driver, "postgres") || strcasestr (driver, "psqlodbc"))
        && !s_has_key (dsn, "UseDeclareFetch"))
        extra = ";UseDeclareFetch=1;Fetch=1000";
    /* SQLite's driver reads a whole result set into memory (BLOBs as hex,
       twice their size) unless it may step through it row by row */
    else if ((strcasestr (dsn, "sqlite") || strcasestr (driver, "sqlite"))
             && !s_has_key (dsn, "StepAPI"))
        extra = ";StepAPI=1";
    size_t len = strlen (dsn);
    while (len && (dsn[len - 1] == ';' || dsn[len - 1] == ' '))
        len--;
    char *out = NULL;
    if (asprintf (&out, "%.*s%s", (int) len, dsn, extra) < 0)
        return NULL;
    return out;
}

/* Connects dsn on self->dbc. Returns 0 or -1 with err set (scrubbed). */
static int
s_connect (gw_sql_conn_t *self, const char *dsn, long login_timeout_s, char *err, size_t err_len)
{
    if (login_timeout_s > 0)
        SQLSetConnectAttr (self->dbc, SQL_ATTR_LOGIN_TIMEOUT,
                           (SQLPOINTER) (intptr_t) login_timeout_s, 0);
    char *streaming = s_streaming_dsn (self->env, dsn);
    SQLRETURN r = SQLDriverConnect (self->dbc, NULL, (SQLCHAR *) (streaming ? streaming : dsn),
                                    SQL_NTS, NULL, 0, NULL, SQL_DRIVER_NOPROMPT);
    free (streaming);
    if (!SQL_SUCCEEDED (r)) {
        gw_sql_diag (SQL_HANDLE_DBC, self->dbc, err, err_len, NULL);
        s_scrub (self, err, err_len);
        return -1;
    }
    self->connected = true;
    return 0;
}

gw_sql_conn_t *
gw_sql_conn_open (const char *dsn, const gw_sql_options_t *opts, json_t **error_p)
{
    const char *code = opts->client_dsn ? gw_error_code (GW_E_BAD_REQUEST)
                                        : gw_error_code (GW_E_INTERNAL);
    *error_p = NULL;
    gw_sql_conn_t *self = calloc (1, sizeof *self);
    if (self) {
        pthread_mutex_init (&self->mutex, NULL);
        atomic_init (&self->cancelled, false);
    }
    if (!self || !(self->dsn = strdup (dsn)) || !(self->shown_dsn = gw_sql_redact_dsn (dsn))) {
        *error_p = gw_sql_error (gw_error_code (GW_E_INTERNAL), "Out of memory.");
        gw_sql_conn_destroy (&self);
        return NULL;
    }
    self->n_secrets = gw_sql_dsn_secrets (dsn, self->secrets, S_MAX_SECRETS);
    char err[1024] = "";
    long login = opts->timeout_s > 0 && opts->timeout_s < 30 ? opts->timeout_s : 30;
    if (!SQL_SUCCEEDED (SQLAllocHandle (SQL_HANDLE_ENV, SQL_NULL_HANDLE, &self->env))
        || !SQL_SUCCEEDED (SQLSetEnvAttr (self->env, SQL_ATTR_ODBC_VERSION,
                                          (SQLPOINTER) SQL_OV_ODBC3, 0))
        || !SQL_SUCCEEDED (SQLAllocHandle (SQL_HANDLE_DBC, self->env, &self->dbc))) {
        *error_p = gw_sql_error (gw_error_code (GW_E_INTERNAL), "Cannot start ODBC.");
        gw_sql_conn_destroy (&self);
        return NULL;
    }
    if (s_connect (self, dsn, login, err, sizeof err) != 0) {
        *error_p = gw_sql_error (code, "Cannot connect to the database (%s): %s", self->shown_dsn,
                                 err[0] ? err : "no reason given by the driver.");
        gw_sql_conn_destroy (&self);
        return NULL;
    }
    SQLSMALLINT len = 0;
    if (!SQL_SUCCEEDED (SQLGetInfo (self->dbc, SQL_DBMS_NAME, self->dbms, sizeof self->dbms, &len)))
        self->dbms[0] = '\0';
    self->dialect = gw_sql_dialect_for_dbms (self->dbms);

    /* PostgreSQL's driver reads a whole result into memory unless told to
     * use a cursor: reconnect with one, so the row limit bounds memory */
    if (self->dialect == GW_SQL_DIALECT_POSTGRESQL && !strcasestr (dsn, "UseDeclareFetch")) {
        size_t n = strlen (dsn);
        char *with = malloc (n + 64);
        if (with) {
            snprintf (with, n + 64, "%s%sUseDeclareFetch=1;Fetch=1000", dsn,
                      n && dsn[n - 1] != ';' ? ";" : "");
            s_disconnect (self);
            int rc = s_connect (self, with, login, err, sizeof err);
            free (with);
            if (rc != 0) {
                *error_p = gw_sql_error (code, "Cannot connect to the database (%s): %s",
                                         self->shown_dsn, err);
                gw_sql_conn_destroy (&self);
                return NULL;
            }
        }
    }

    /* layer (b): read-only access mode where the driver knows it (many
     * accept and ignore it), and the database's own read-only guard */
    SQLSetConnectAttr (self->dbc, SQL_ATTR_ACCESS_MODE, (SQLPOINTER) SQL_MODE_READ_ONLY, 0);
    const char *guard = s_session_guard (self->dialect);
    if (guard && s_exec_simple (self, guard, err, sizeof err) != 0) {
        s_scrub (self, err, sizeof err);
        *error_p = gw_sql_error (gw_error_code (GW_E_INTERNAL), "Cannot make the connection "
                                 "read-only (%s failed: %s); exec_sql does not use it.", guard, err);
        gw_sql_conn_destroy (&self);
        return NULL;
    }
    /* layer (c): every statement in a transaction that is rolled back;
       SQLite's by statements of ours, since its driver loads whole result
       sets into memory inside a transaction it began itself */
    self->own_tx = self->dialect == GW_SQL_DIALECT_SQLITE;
    if (!self->own_tx && !SQL_SUCCEEDED (SQLSetConnectAttr (self->dbc, SQL_ATTR_AUTOCOMMIT,
                                           (SQLPOINTER) SQL_AUTOCOMMIT_OFF, 0))) {
        gw_sql_diag (SQL_HANDLE_DBC, self->dbc, err, sizeof err, NULL);
        s_scrub (self, err, sizeof err);
        *error_p = gw_sql_error (gw_error_code (GW_E_INTERNAL), "The database driver cannot turn "
                                 "autocommit off (%s); exec_sql needs transactions to roll back "
                                 "every statement, so it does not use this connection.", err);
        gw_sql_conn_destroy (&self);
        return NULL;
    }
    return self;
}

void
gw_sql_conn_destroy (gw_sql_conn_t **self_p)
{
    gw_sql_conn_t *self = *self_p;
    if (!self)
        return;
    s_disconnect (self);
    if (self->dbc)
        SQLFreeHandle (SQL_HANDLE_DBC, self->dbc);
    if (self->env)
        SQLFreeHandle (SQL_HANDLE_ENV, self->env);
    for (size_t i = 0; i < self->n_secrets; i++) {
        explicit_bzero (self->secrets[i], strlen (self->secrets[i]));
        free (self->secrets[i]);
    }
    if (self->dsn) {
        explicit_bzero (self->dsn, strlen (self->dsn));
        free (self->dsn);
    }
    pthread_mutex_destroy (&self->mutex);
    free (self->shown_dsn);
    free (self);
    *self_p = NULL;
}

const char *
gw_sql_conn_dsn (const gw_sql_conn_t *self)
{
    return self->dsn;
}

const char *
gw_sql_conn_dbms (const gw_sql_conn_t *self)
{
    return self->dbms;
}

bool
gw_sql_conn_broken (const gw_sql_conn_t *self)
{
    return self->broken;
}

void
gw_sql_conn_cancel (gw_sql_conn_t *self)
{
    atomic_store (&self->cancelled, true);
    pthread_mutex_lock (&self->mutex);
    if (self->running)
        SQLCancel (self->running);
    pthread_mutex_unlock (&self->mutex);
}

/* The watchdog: cancels the statement when the deadline passes first. */
typedef struct {
    gw_sql_conn_t *conn;
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    bool done;
    atomic_bool fired;
    struct timespec deadline;       /* CLOCK_MONOTONIC */
} s_watchdog_t;

static void *
s_watchdog_main (void *arg)
{
    s_watchdog_t *w = arg;
    pthread_mutex_lock (&w->mutex);
    int rc = 0;
    while (!w->done && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait (&w->cond, &w->mutex, &w->deadline);
    bool fire = !w->done;
    pthread_mutex_unlock (&w->mutex);
    if (fire) {
        atomic_store (&w->fired, true);
        pthread_mutex_lock (&w->conn->mutex);
        if (w->conn->running)
            SQLCancel (w->conn->running);
        pthread_mutex_unlock (&w->conn->mutex);
    }
    return NULL;
}

static int
s_watchdog_start (s_watchdog_t *w, pthread_t *thread, gw_sql_conn_t *conn, long timeout_s)
{
    pthread_condattr_t attr;
    w->conn = conn;
    w->done = false;
    atomic_init (&w->fired, false);
    clock_gettime (CLOCK_MONOTONIC, &w->deadline);
    w->deadline.tv_sec += timeout_s;
    pthread_mutex_init (&w->mutex, NULL);
    pthread_condattr_init (&attr);
    pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
    pthread_cond_init (&w->cond, &attr);
    pthread_condattr_destroy (&attr);
    if (pthread_create (thread, NULL, s_watchdog_main, w) != 0) {
        pthread_cond_destroy (&w->cond);
        pthread_mutex_destroy (&w->mutex);
        return -1;
    }
    return 0;
}

static void
s_watchdog_stop (s_watchdog_t *w, pthread_t thread)
{
    pthread_mutex_lock (&w->mutex);
    w->done = true;
    pthread_cond_signal (&w->cond);
    pthread_mutex_unlock (&w->mutex);
    pthread_join (thread, NULL);
    pthread_cond_destroy (&w->cond);
    pthread_mutex_destroy (&w->mutex);
}

/* Runs the statement and reads its result; the caller rolls back. */
static json_t *
s_execute (gw_sql_conn_t *self, const char *query, const gw_sql_options_t *opts,
           atomic_bool *fired)
{
    char err[2048] = "", state[6] = "";
    const char *bad = gw_error_code (GW_E_BAD_REQUEST);
    const char *guard = s_statement_guard (self->dialect);
    if (guard && s_exec_simple (self, guard, err, sizeof err) != 0) {
        s_scrub (self, err, sizeof err);
        return gw_sql_error (gw_error_code (GW_E_INTERNAL), "Cannot make the transaction "
                             "read-only (%s failed: %s); the query was not run.", guard, err);
    }
    SQLHSTMT st = SQL_NULL_HSTMT;
    if (!SQL_SUCCEEDED (SQLAllocHandle (SQL_HANDLE_STMT, self->dbc, &st))) {
        gw_sql_diag (SQL_HANDLE_DBC, self->dbc, err, sizeof err, state);
        self->broken = true;
        return s_with_state (gw_sql_error (gw_error_code (GW_E_INTERNAL), "Cannot make a "
                                           "statement: %s", err), state);
    }
    if (opts->timeout_s > 0)
        SQLSetStmtAttr (st, SQL_ATTR_QUERY_TIMEOUT, (SQLPOINTER) (intptr_t) opts->timeout_s, 0);
    SQLSetStmtAttr (st, SQL_ATTR_NOSCAN, (SQLPOINTER) SQL_NOSCAN_ON, 0);
    /* drivers that read a whole result set first (SQLite's, in a
       transaction) read no more than the rows exec_sql keeps, plus one to
       see that the limit was reached */
    long max_rows = opts->max_rows > 0 ? opts->max_rows : GW_SQL_MAX_ROWS;
    SQLSetStmtAttr (st, SQL_ATTR_MAX_ROWS, (SQLPOINTER) (intptr_t) (max_rows + 1), 0);
    pthread_mutex_lock (&self->mutex);
    self->running = st;
    pthread_mutex_unlock (&self->mutex);

    json_t *result = NULL;
    /* a cancel that came before the statement was published */
    SQLRETURN r = atomic_load (&self->cancelled) ? SQL_ERROR
                                                 : SQLExecDirect (st, (SQLCHAR *) query, SQL_NTS);
    if (SQL_SUCCEEDED (r) || r == SQL_NO_DATA) {
        gw_sql_options_t o = *opts;
        o.sqlite_step = self->dialect == GW_SQL_DIALECT_SQLITE;
        result = gw_sql_result_read (st, &o, fired, &self->cancelled, err, sizeof err, state);
    } else
        gw_sql_diag (SQL_HANDLE_STMT, st, err, sizeof err, state);

    pthread_mutex_lock (&self->mutex);
    self->running = SQL_NULL_HSTMT;
    pthread_mutex_unlock (&self->mutex);
    SQLFreeHandle (SQL_HANDLE_STMT, st);
    if (result)
        return result;
    s_scrub (self, err, sizeof err);
    if (atomic_load (&self->cancelled) || atomic_load (fired))
        self->broken = true;    /* the driver closed the statement under its feet: start over */
    if (atomic_load (&self->cancelled) && !atomic_load (fired))
        return s_with_state (gw_sql_error (bad, "The query was cancelled."), state);
    if (atomic_load (fired) || strcmp (state, "HYT00") == 0 || strcmp (state, "57014") == 0)
        return s_with_state (gw_sql_error (bad, "The query ran longer than %ld s and was "
                                           "cancelled. (%s)", opts->timeout_s, err), state);
    if (strncmp (state, "08", 2) == 0)
        self->broken = true;                /* connection exceptions */
    return s_with_state (gw_sql_error (bad, "The database refused the query: %s",
                                       err[0] ? err : "no reason given by the driver."), state);
}

json_t *
gw_sql_conn_run (gw_sql_conn_t *self, const char *query, const gw_sql_options_t *opts)
{
    char err[1024] = "";
    gw_sql_kind_t kind = GW_SQL_KIND_SELECT;
    /* layer (a) */
    int rc = gw_sql_classify (query, strlen (query), self->dialect, &kind, err, sizeof err);
    if (rc != 0 && !opts->unsafe_skip_classifier)
        return gw_sql_error (rc == -EPERM ? gw_error_code (GW_E_FORBIDDEN) : rc == -E2BIG
                             ? gw_error_code (GW_E_TOO_LARGE) : gw_error_code (GW_E_BAD_REQUEST),
                             "%s", err);
    /* what the driver gets: the statement without a trailing ';' and
     * comments; and as SQLite's driver runs a statement that starts with
     * VALUES without a result set, the same rows through a SELECT */
    char *trimmed = NULL;
    if (rc == 0) {
        size_t end = gw_sql_statement_end (query, strlen (query), self->dialect);
        bool values = kind == GW_SQL_KIND_VALUES && self->dialect == GW_SQL_DIALECT_SQLITE;
        trimmed = malloc (end + 32);
        if (!trimmed)
            return gw_sql_error (gw_error_code (GW_E_INTERNAL), "Out of memory.");
        snprintf (trimmed, end + 32, values ? "SELECT * FROM (%.*s)" : "%.*s", (int) end, query);
        query = trimmed;
    }
    /* a cancel is for good: the connection is replaced (broken) */
    if (atomic_load (&self->cancelled)) {
        self->broken = true;
        free (trimmed);
        return gw_sql_error (gw_error_code (GW_E_BAD_REQUEST), "The query was cancelled.");
    }
    if (self->own_tx && s_exec_simple (self, "BEGIN", err, sizeof err) != 0) {
        s_scrub (self, err, sizeof err);
        self->broken = true;
        free (trimmed);
        return gw_sql_error (gw_error_code (GW_E_INTERNAL), "Cannot begin the transaction the "
                             "query runs in (%s); the query was not run.", err);
    }
    s_watchdog_t watchdog;
    pthread_t thread;
    bool watching = opts->timeout_s > 0
        && s_watchdog_start (&watchdog, &thread, self, opts->timeout_s) == 0;
    atomic_bool never;
    atomic_init (&never, false);
    json_t *result = s_execute (self, query, opts, watching ? &watchdog.fired : &never);
    if (watching)
        s_watchdog_stop (&watchdog, thread);
    /* layer (c): roll back, whatever happened */
    bool rolled_back = self->own_tx ? s_exec_simple (self, "ROLLBACK", err, sizeof err) == 0
                                    : SQL_SUCCEEDED (SQLEndTran (SQL_HANDLE_DBC, self->dbc,
                                                                 SQL_ROLLBACK));
    if (!rolled_back) {
        self->broken = true;
        if (result && !json_object_get (result, "error")) {
            if (!self->own_tx)
                gw_sql_diag (SQL_HANDLE_DBC, self->dbc, err, sizeof err, NULL);
            s_scrub (self, err, sizeof err);
            json_decref (result);
            result = gw_sql_error (gw_error_code (GW_E_INTERNAL), "The rollback after the "
                                   "query failed (%s); the result is withheld and the connection "
                                   "closed.", err);
        }
    }
    free (trimmed);
    if (result && !json_object_get (result, "error"))
        json_object_set_new (result, "statement",
                             json_string (rc == 0 ? gw_sql_kind_name (kind) : "unchecked"));
    return result;
}

json_t *
gw_sql_run_sync (gw_sql_conn_t **conn_p, const char *dsn, const char *query,
                 const gw_sql_options_t *opts)
{
    if (*conn_p && (gw_sql_conn_broken (*conn_p) || strcmp (gw_sql_conn_dsn (*conn_p), dsn) != 0))
        gw_sql_conn_destroy (conn_p);
    if (!*conn_p) {
        json_t *error = NULL;
        *conn_p = gw_sql_conn_open (dsn, opts, &error);
        if (!*conn_p)
            return error;
    }
    return gw_sql_conn_run (*conn_p, query, opts);
}

int
gw_sql_default_dsn (char *out, size_t out_len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf (out, out_len, "(the binary's folder is unknown)");
        return -ENOENT;
    }
    exe[n] = '\0';
    char *slash = strrchr (exe, '/');
    if (slash)
        *slash = '\0';
    char first[PATH_MAX + 32], path[PATH_MAX + 32];
    snprintf (first, sizeof first, "%s/sample.sqlite", exe);
    snprintf (path, sizeof path, "%s", first);
    if (access (path, R_OK) != 0) {
        slash = strrchr (exe, '/');
        if (slash)
            *slash = '\0';
        snprintf (path, sizeof path, "%s/sample.sqlite", exe);
        if (access (path, R_OK) != 0) {
            snprintf (out, out_len, "%s", first);
            return -ENOENT;
        }
    }
    if (strpbrk (path, ";{}"))
        snprintf (out, out_len, "Driver=SQLite3;Database={%s};NoCreat=1", path);
    else
        snprintf (out, out_len, "Driver=SQLite3;Database=%s;NoCreat=1", path);
    return 0;
}
