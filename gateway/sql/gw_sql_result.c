/* gw_sql_result: a result set over ODBC as the exec_sql result, with the
 * larger part in a CSV file; see gw_sql_result.h. Runs in the thread that
 * ran the statement. */
#include "gw_sql_result.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gw_sql_value.h"

typedef struct {
    gw_sql_cat_t cat;
} s_col_t;

typedef struct {
    FILE *file;
    int dirfd;
    char name[64];
    char shown[1200];
} s_csv_t;

void
gw_sql_diag (SQLSMALLINT type, SQLHANDLE handle, char *out, size_t out_len, char *sqlstate)
{
    size_t n = 0;
    out[0] = '\0';
    if (sqlstate)
        sqlstate[0] = '\0';
    for (SQLSMALLINT i = 1; i <= 3; i++) {
        SQLCHAR state[6], msg[1024];
        SQLINTEGER native;
        SQLSMALLINT len;
        SQLRETURN r = SQLGetDiagRec (type, handle, i, state, &native, msg, sizeof msg, &len);
        if (!SQL_SUCCEEDED (r))
            break;
        if (sqlstate && i == 1)
            memcpy (sqlstate, state, 6);
        const char *m = (const char *) msg;
        while (*m == '[') {                 /* "[unixODBC][Driver Manager]" */
            const char *close = strchr (m, ']');
            if (!close)
                break;
            m = close + 1;
        }
        while (*m == ' ')
            m++;
        if (strstr (out, m))
            continue;                       /* drivers repeat themselves */
        int w = snprintf (out + n, out_len - n, "%s%s", n ? " " : "", m);
        if (w < 0 || (size_t) w >= out_len - n)
            break;
        n += (size_t) w;
    }
    for (char *c = out; *c; c++)
        if (*c == '\n' || *c == '\r' || *c == '\t')
            *c = ' ';
    while (n > 0 && (out[n - 1] == ' ' || out[n - 1] == ';'))
        out[--n] = '\0';
}

/* Drops an incomplete UTF-8 sequence from the end of data. */
static size_t
s_trim_partial (const char *data, size_t len)
{
    for (size_t back = 1; back <= 4 && back <= len; back++) {
        unsigned char c = (unsigned char) data[len - back];
        if ((c & 0xc0) == 0x80)
            continue;
        size_t need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
        return need > back ? len - back : len;
    }
    return len;
}

/* Reads one cell (at most cap bytes) into buf; *value gets its JSON.
 * Returns 0, 1 when the cell was cut, or -1 with err set. */
static int
s_cell (SQLHSTMT stmt, SQLUSMALLINT col, gw_sql_cat_t cat, char *buf, size_t cap,
        json_t **value, char *err, size_t err_len, char *sqlstate)
{
    SQLSMALLINT ctype = cat == GW_SQL_CAT_BINARY ? SQL_C_BINARY : SQL_C_CHAR;
    size_t have = 0, nul = ctype == SQL_C_CHAR ? 1 : 0;
    long long total = -1;
    bool cut = false;
    for (;;) {
        if (have >= cap) {
            cut = true;
            break;
        }
        SQLLEN ind = 0, size = (SQLLEN) (cap - have + nul);
        SQLRETURN r = SQLGetData (stmt, col, ctype, buf + have, size, &ind);
        if (r == SQL_NO_DATA)
            break;
        if (!SQL_SUCCEEDED (r)) {
            gw_sql_diag (SQL_HANDLE_STMT, stmt, err, err_len, sqlstate);
            return -1;
        }
        if (ind == SQL_NULL_DATA) {
            *value = json_null ();
            return 0;
        }
        /* with 01004 (data truncated) the buffer is full and more follows */
        bool partial = r == SQL_SUCCESS_WITH_INFO
            && (ind == SQL_NO_TOTAL || ind > size - (SQLLEN) nul);
        if (total < 0 && ind != SQL_NO_TOTAL)
            total = (long long) have + ind;
        have += partial ? (size_t) size - nul : (size_t) ind;
        if (!partial)
            break;
    }
    char marker[64] = "";
    if (cut) {
        if (cat != GW_SQL_CAT_BINARY)
            have = s_trim_partial (buf, have);
        if (total > (long long) cap)
            snprintf (marker, sizeof marker, "\xe2\x80\xa6[cut: %zu of %lld bytes]", cap, total);
        else
            snprintf (marker, sizeof marker, "\xe2\x80\xa6[cut at %zu bytes]", cap);
    }
    *value = gw_sql_value_json (cat, buf, have, cut ? marker : NULL);
    if (!*value) {
        snprintf (err, err_len, "Out of memory while reading a value.");
        return -1;
    }
    return cut ? 1 : 0;
}

static int
s_csv_open (s_csv_t *csv, const gw_sql_options_t *opts, char *err, size_t err_len)
{
    csv->dirfd = open (opts->csv_dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (csv->dirfd < 0) {
        snprintf (err, err_len, "Cannot open the session's input folder for the CSV: %s.",
                  strerror (errno));
        return -1;
    }
    char stamp[32];
    time_t now = time (NULL);
    struct tm tm;
    gmtime_r (&now, &tm);
    strftime (stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    int fd = -1;
    for (int i = 0; i < 1000 && fd < 0; i++) {
        if (i == 0)
            snprintf (csv->name, sizeof csv->name, "sql-%s.csv", stamp);
        else
            snprintf (csv->name, sizeof csv->name, "sql-%s-%d.csv", stamp, i);
        fd = openat (csv->dirfd, csv->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                     0644);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        snprintf (err, err_len, "Cannot create the CSV file in the session's input folder: %s.",
                  strerror (errno));
        close (csv->dirfd);
        csv->dirfd = -1;
        return -1;
    }
    if (opts->csv_uid >= 0 || opts->csv_gid >= 0)
        (void) !fchown (fd, (uid_t) opts->csv_uid, (gid_t) opts->csv_gid);
    csv->file = fdopen (fd, "w");
    if (!csv->file) {
        close (fd);
        unlinkat (csv->dirfd, csv->name, 0);
        close (csv->dirfd);
        csv->dirfd = -1;
        snprintf (err, err_len, "Out of memory opening the CSV file.");
        return -1;
    }
    const char *shown = opts->csv_shown_dir ? opts->csv_shown_dir : opts->csv_dir;
    snprintf (csv->shown, sizeof csv->shown, "%s/%s", shown, csv->name);
    return 0;
}

/* Closes the CSV; removes it when failed. Returns 0 or -EIO. */
static int
s_csv_close (s_csv_t *csv, bool failed)
{
    int rc = 0;
    if (csv->file && fclose (csv->file) != 0)
        rc = -EIO;
    csv->file = NULL;
    if (csv->dirfd >= 0) {
        if (failed || rc)
            unlinkat (csv->dirfd, csv->name, 0);
        close (csv->dirfd);
        csv->dirfd = -1;
    }
    return rc;
}

/* Describes the columns: fills cols and returns the "columns" array. */
static json_t *
s_describe (SQLHSTMT stmt, SQLSMALLINT ncols, s_col_t *cols, char *err, size_t err_len,
            char *sqlstate)
{
    json_t *columns = json_array ();
    for (SQLSMALLINT c = 1; columns && c <= ncols; c++) {
        SQLCHAR name[512] = "", type_name[128] = "";
        SQLSMALLINT name_len = 0, type = 0, digits = 0, nullable = 0, tl = 0;
        SQLULEN size = 0;
        SQLRETURN r = SQLDescribeCol (stmt, (SQLUSMALLINT) c, name, sizeof name, &name_len, &type,
                                      &size, &digits, &nullable);
        if (!SQL_SUCCEEDED (r)) {
            gw_sql_diag (SQL_HANDLE_STMT, stmt, err, err_len, sqlstate);
            json_decref (columns);
            return NULL;
        }
        if (!SQL_SUCCEEDED (SQLColAttribute (stmt, (SQLUSMALLINT) c, SQL_DESC_TYPE_NAME,
                                             type_name, sizeof type_name, &tl, NULL)))
            type_name[0] = '\0';
        cols[c - 1].cat = gw_sql_cat_for (type, (const char *) type_name);
        json_t *n = gw_sql_value_json (GW_SQL_CAT_TEXT, (const char *) name,
                                       strnlen ((const char *) name, sizeof name), NULL);
        json_t *t = gw_sql_value_json (GW_SQL_CAT_TEXT, (const char *) type_name,
                                       strnlen ((const char *) type_name, sizeof type_name), NULL);
        json_array_append_new (columns, json_pack ("{s:o?, s:s, s:o?}", "name", n, "type",
                                                   gw_sql_cat_name (cols[c - 1].cat, type),
                                                   "db_type", t));
    }
    if (!columns)
        snprintf (err, err_len, "Out of memory.");
    return columns;
}

json_t *
gw_sql_result_read (SQLHSTMT stmt, const gw_sql_options_t *opts, atomic_bool *stop, char *err,
                    size_t err_len, char sqlstate[6])
{
    sqlstate[0] = '\0';
    SQLSMALLINT ncols = 0;
    if (!SQL_SUCCEEDED (SQLNumResultCols (stmt, &ncols))) {
        gw_sql_diag (SQL_HANDLE_STMT, stmt, err, err_len, sqlstate);
        return NULL;
    }
    long max_rows = opts->max_rows > 0 ? opts->max_rows : GW_SQL_MAX_ROWS;
    size_t cap = (size_t) (opts->max_cell_bytes > 0 ? opts->max_cell_bytes : GW_SQL_MAX_CELL_BYTES);
    long inline_rows = opts->max_inline_rows > 0 ? opts->max_inline_rows : 0;
    s_col_t *cols = calloc ((size_t) ncols + 1, sizeof *cols);
    char *buf = malloc (cap + 1);
    json_t *columns = cols && buf ? s_describe (stmt, ncols, cols, err, err_len, sqlstate) : NULL;
    json_t *rows = json_array ();
    s_csv_t csv = {.dirfd = -1};
    long row_count = 0, cells_cut = 0;
    bool limit = false, failed = !columns || !rows;
    if (!cols || !buf || !rows)
        snprintf (err, err_len, "Out of memory.");
    while (!failed && ncols > 0) {
        if (atomic_load (stop)) {
            snprintf (err, err_len, "The query ran out of time while its rows were read.");
            memcpy (sqlstate, "HYT00", 6);
            failed = true;
            break;
        }
        SQLRETURN r = SQLFetch (stmt);
        if (r == SQL_NO_DATA)
            break;
        if (!SQL_SUCCEEDED (r)) {
            gw_sql_diag (SQL_HANDLE_STMT, stmt, err, err_len, sqlstate);
            failed = true;
            break;
        }
        if (row_count == max_rows) {
            limit = true;
            break;
        }
        json_t *row = json_array ();
        for (SQLSMALLINT c = 1; row && c <= ncols && !failed; c++) {
            json_t *value = NULL;
            int rc = s_cell (stmt, (SQLUSMALLINT) c, cols[c - 1].cat, buf, cap, &value, err,
                             err_len, sqlstate);
            if (rc < 0)
                failed = true;
            else {
                cells_cut += rc;
                json_array_append_new (row, value);
            }
        }
        if (!row) {
            snprintf (err, err_len, "Out of memory.");
            failed = true;
        }
        if (failed) {
            json_decref (row);
            break;
        }
        row_count++;
        if (row_count <= inline_rows) {
            json_array_append_new (rows, row);
            continue;
        }
        if (!opts->csv_dir) {
            json_decref (row);
            continue;
        }
        if (!csv.file) {
            failed = s_csv_open (&csv, opts, err, err_len) != 0;
            json_t *names = json_array ();
            size_t i;
            json_t *col, *r0;
            json_array_foreach (columns, i, col)
                json_array_append (names, json_object_get (col, "name"));
            if (!failed)
                failed = gw_sql_csv_row (csv.file, names) != 0;
            json_decref (names);
            json_array_foreach (rows, i, r0)
                if (!failed)
                    failed = gw_sql_csv_row (csv.file, r0) != 0;
        }
        if (!failed && gw_sql_csv_row (csv.file, row) != 0)
            failed = true;
        if (failed && !err[0])
            snprintf (err, err_len, "Cannot write the CSV file: %s.", strerror (errno));
        json_decref (row);
    }
    if (s_csv_close (&csv, failed) != 0 && !failed) {
        failed = true;
        snprintf (err, err_len, "Cannot write the CSV file (disk full?).");
    }
    free (buf);
    free (cols);
    if (failed) {
        json_decref (columns);
        json_decref (rows);
        return NULL;
    }
    json_t *result = json_pack ("{s:o, s:o, s:I}", "columns", columns, "rows", rows, "row_count",
                                (json_int_t) row_count);
    if (!result)
        return NULL;
    char note[1400] = "";
    size_t n = 0;
    if (row_count > inline_rows) {
        json_object_set_new (result, "truncated", json_true ());
        if (csv.shown[0]) {
            json_object_set_new (result, "csv_path", json_string (csv.shown));
            n += (size_t) snprintf (note + n, sizeof note - n, "The first %ld of %ld rows are "
                                    "here; all %ld are in %s (pandas: pd.read_csv(path)).",
                                    inline_rows, row_count, row_count, csv.shown);
        } else
            n += (size_t) snprintf (note + n, sizeof note - n, "The first %ld of %ld rows are "
                                    "here.", inline_rows, row_count);
    }
    if (limit) {
        json_object_set_new (result, "row_limit_reached", json_true ());
        n += (size_t) snprintf (note + n, sizeof note - n, "%sFetching stopped at %ld rows, the "
                                "most exec_sql reads; the query has more (add a LIMIT or "
                                "aggregate).", n ? " " : "", max_rows);
    }
    if (cells_cut > 0 && n < sizeof note) {
        json_object_set_new (result, "cells_cut", json_integer (cells_cut));
        snprintf (note + n, sizeof note - n, "%s%ld values were longer than %zu bytes and were "
                  "cut (marked with \xe2\x80\xa6[cut...]).", n ? " " : "", cells_cut, cap);
    }
    if (note[0])
        json_object_set_new (result, "note", json_string (note));
    return result;
}
