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
    int sql_type;
    bool dynamic;               /* no declared type (SQLite, stepping): each value says */
    bool typed;                 /* a dynamic column's "type" was set from a value */
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

static int
s_hex (char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10
         : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* True when text is a number as SQLite itself writes one (an integer
 * without leading zeros, or a real as "%!.15g" gives it: "4.5", "1.0",
 * "1.0e+20"): only then is a value of an untyped column a number. Text
 * that merely looks like one ("007", "4.50", "1e5", " 42") stays text. */
static bool
s_canonical_number (const char *text, size_t len)
{
    char copy[64];
    if (len == 0 || len >= sizeof copy)
        return false;
    memcpy (copy, text, len);
    copy[len] = '\0';
    const char *digits = copy[0] == '-' ? copy + 1 : copy;
    if (*digits >= '0' && *digits <= '9' && strspn (digits, "0123456789") == strlen (digits))
        return digits[0] != '0' || digits[1] == '\0';
    char *end;
    double d = strtod (copy, &end);
    if (*end || !strchr (copy, '.'))
        return false;
    char again[64];
    snprintf (again, sizeof again, "%.15g", d);
    if (!strpbrk (again, ".e"))
        strcat (again, ".0");       /* SQLite's '!': a real always shows its point */
    else if (strchr (again, 'e') && !strchr (again, '.')) {
        char *e = strchr (again, 'e');  /* "1e+20" is written "1.0e+20" */
        memmove (e + 2, e, strlen (e) + 1);
        e[0] = '.';
        e[1] = '0';
    }
    return strcmp (again, copy) == 0;
}

/* A value of a column without a declared type, read as text (len bytes
 * in buf, total in all or -1, cut when it did not fit): SQLite's driver
 * gives a BLOB as X'hex', which becomes binary again (decoded in place),
 * and a number as its digits. Sets *cat to what the value is. */
static json_t *
s_dynamic_value (char *buf, size_t len, long long total, bool cut, gw_sql_cat_t *cat)
{
    bool blob = len >= 2 && buf[0] == 'X' && buf[1] == '\'';
    size_t end = len;
    if (blob && !cut) {
        blob = len >= 3 && buf[len - 1] == '\'' && (len - 3) % 2 == 0;
        end = len - 1;
    }
    for (size_t i = 2; blob && i < end; i++)
        blob = s_hex (buf[i]) >= 0;
    if (blob) {
        size_t n = (end - 2) / 2;
        for (size_t i = 0; i < n; i++)
            buf[i] = (char) (s_hex (buf[2 + 2 * i]) << 4 | s_hex (buf[3 + 2 * i]));
        char marker[80] = "";
        if (cut && total > 3)
            snprintf (marker, sizeof marker, "\xe2\x80\xa6[cut: %zu of %lld bytes]", n,
                      (total - 3) / 2);
        else if (cut)
            snprintf (marker, sizeof marker, "\xe2\x80\xa6[cut at %zu bytes]", n);
        *cat = GW_SQL_CAT_BINARY;
        return gw_sql_value_json (GW_SQL_CAT_BINARY, buf, n, cut ? marker : NULL);
    }
    /* a cut value comes back NULL: the caller marks it as cut text */
    json_t *v = cut ? NULL
                    : gw_sql_value_json (s_canonical_number (buf, len) ? GW_SQL_CAT_INTEGER
                                                                       : GW_SQL_CAT_TEXT,
                                         buf, len, NULL);
    *cat = json_is_integer (v) ? GW_SQL_CAT_INTEGER : json_is_real (v) ? GW_SQL_CAT_FLOAT
                                                                        : GW_SQL_CAT_TEXT;
    return v;
}

/* Reads one cell (at most cap bytes) into buf; *value gets its JSON and
 * *cat, for a dynamic column, the kind the value turned out to be.
 * Returns 0, 1 when the cell was cut, or -1 with err set. */
static int
s_cell (SQLHSTMT stmt, SQLUSMALLINT col, gw_sql_cat_t *cat, bool dynamic, char *buf, size_t cap,
        json_t **value, char *err, size_t err_len, char *sqlstate)
{
    SQLSMALLINT ctype = *cat == GW_SQL_CAT_BINARY && !dynamic ? SQL_C_BINARY : SQL_C_CHAR;
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
    if (dynamic) {
        *value = s_dynamic_value (buf, have, total, cut, cat);
        if (*value)
            return cut ? 1 : 0;
        if (cut && *cat == GW_SQL_CAT_TEXT)
            cut = true;                     /* cut text: marked below */
        else {
            snprintf (err, err_len, "Out of memory while reading a value.");
            return -1;
        }
    }
    char marker[64] = "";
    if (cut) {
        if (*cat != GW_SQL_CAT_BINARY)
            have = s_trim_partial (buf, have);
        if (total > (long long) cap)
            snprintf (marker, sizeof marker, "\xe2\x80\xa6[cut: %zu of %lld bytes]", cap, total);
        else
            snprintf (marker, sizeof marker, "\xe2\x80\xa6[cut at %zu bytes]", cap);
    }
    *value = gw_sql_value_json (*cat, buf, have, cut ? marker : NULL);
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
s_describe (SQLHSTMT stmt, SQLSMALLINT ncols, s_col_t *cols, bool sqlite_step, char *err,
            size_t err_len, char *sqlstate)
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
        cols[c - 1].sql_type = type;
        cols[c - 1].dynamic = sqlite_step && type == SQL_VARCHAR
                              && strcmp ((const char *) type_name, "varchar") == 0;
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

/* Bytes a value holds in memory, near enough: a string's length, a
 * small constant for numbers, booleans and null. */
static size_t
s_value_bytes (const json_t *value)
{
    return json_is_string (value) ? json_string_length (value) + 16 : 16;
}

/* Writes the CSV's header and the rows kept so far (the CSV's first
 * write). Returns 0 or -1. */
static int
s_csv_start (s_csv_t *csv, const gw_sql_options_t *opts, json_t *columns, json_t *rows,
             char *err, size_t err_len)
{
    if (s_csv_open (csv, opts, err, err_len) != 0)
        return -1;
    json_t *names = json_array ();
    size_t i;
    json_t *col, *r0;
    json_array_foreach (columns, i, col)
        json_array_append (names, json_object_get (col, "name"));
    int rc = names ? gw_sql_csv_row (csv->file, names) : -1;
    json_decref (names);
    json_array_foreach (rows, i, r0)
        if (rc == 0)
            rc = gw_sql_csv_row (csv->file, r0);
    return rc == 0 ? 0 : -1;
}

/* Appends row to the CSV unless that passes max bytes (0: no bound); a
 * row that would is taken back out. Returns 0, 1 when the row did not
 * fit (the CSV is full), or -1 on a write error. */
static int
s_csv_append (s_csv_t *csv, const json_t *row, long long max)
{
    long before = ftell (csv->file);
    if (gw_sql_csv_row (csv->file, row) != 0)
        return -1;
    long after = ftell (csv->file);
    if (max <= 0 || before < 0 || after <= max)
        return 0;
    /* take the row back: the file ends with the last whole row */
    if (fflush (csv->file) != 0 || ftruncate (fileno (csv->file), before) != 0
        || fseek (csv->file, before, SEEK_SET) != 0)
        return -1;
    return 1;
}

/* The bounds a read keeps to, from the options and their defaults. */
typedef struct {
    long max_rows;              /* rows fetched at most */
    size_t cap;                 /* bytes kept per cell */
    long long budget;           /* bytes of values the inline rows keep in all */
    long inline_rows;           /* rows returned inline at most */
} s_bounds_t;

/* What reading the rows came to. */
typedef struct {
    long row_count, cells_cut, rows_cut;
    long long kept;             /* bytes of values in the inline rows */
    bool limit;                 /* fetching stopped at max_rows */
    bool csv_full;              /* the CSV stopped at csv_max_bytes */
} s_tally_t;

/* Reads the fetched row's cells into a new array, adding their bytes to
 * *row_bytes and the cells cut to *cells_cut; a dynamic column gets its
 * "type" from its first value that is not NULL. NULL with err set on
 * failure. */
static json_t *
s_fetch_row (SQLHSTMT stmt, SQLSMALLINT ncols, s_col_t *cols, json_t *columns, char *buf,
             size_t cap, size_t *row_bytes, long *cells_cut, char *err, size_t err_len,
             char sqlstate[6])
{
    json_t *row = json_array ();
    bool failed = false;
    for (SQLSMALLINT c = 1; row && c <= ncols && !failed; c++) {
        json_t *value = NULL;
        s_col_t *col = &cols[c - 1];
        gw_sql_cat_t cat = col->cat;
        int rc = s_cell (stmt, (SQLUSMALLINT) c, &cat, col->dynamic, buf, cap, &value, err,
                         err_len, sqlstate);
        if (rc < 0)
            failed = true;
        else {
            if (col->dynamic && !col->typed && !json_is_null (value)) {
                /* the column is what its first value is, as the driver
                   says when it reads whole results */
                col->typed = true;
                json_object_set_new (json_array_get (columns, (size_t) c - 1), "type",
                                     json_string (gw_sql_cat_name (cat, col->sql_type)));
            }
            *cells_cut += rc;
            *row_bytes += s_value_bytes (value);
            json_array_append_new (row, value);
        }
    }
    if (!row) {
        snprintf (err, err_len, "Out of memory.");
        return NULL;
    }
    if (failed) {
        json_decref (row);
        return NULL;
    }
    return row;
}

/* Sets the result's flags ("truncated", "csv_path", "rows_cut",
 * "row_limit_reached", "csv_cut", "cells_cut") and the "note" that says
 * them in words. */
static void
s_add_notes (json_t *result, const s_tally_t *t, const s_bounds_t *b,
             const gw_sql_options_t *opts, const char *csv_shown, long shown)
{
    char note[1800] = "";
    size_t n = 0;
    if (t->row_count > shown) {
        json_object_set_new (result, "truncated", json_true ());
        if (csv_shown[0]) {
            json_object_set_new (result, "csv_path", json_string (csv_shown));
            n += (size_t) snprintf (note + n, sizeof note - n, "The first %ld of %ld rows are "
                                    "here; all %ld are in %s (pandas: pd.read_csv(path)).",
                                    shown, t->row_count, t->row_count, csv_shown);
        } else
            n += (size_t) snprintf (note + n, sizeof note - n, "The first %ld of %ld rows are "
                                    "here.", shown, t->row_count);
    }
    if (t->rows_cut > 0 && n < sizeof note) {
        json_object_set_new (result, "rows_cut", json_integer (t->rows_cut));
        n += (size_t) snprintf (note + n, sizeof note - n, "%s%ld of the first %ld rows are "
                                "not shown: their values passed %lld MiB, the most exec_sql "
                                "keeps in memory for a result.", n ? " " : "", t->rows_cut,
                                b->inline_rows, b->budget >> 20);
    }
    if (t->limit && n < sizeof note) {
        json_object_set_new (result, "row_limit_reached", json_true ());
        n += (size_t) snprintf (note + n, sizeof note - n, "%sFetching stopped at %ld rows, the "
                                "most exec_sql reads; the query has more (add a LIMIT or "
                                "aggregate).", n ? " " : "", b->max_rows);
    }
    if (t->csv_full && n < sizeof note) {
        json_object_set_new (result, "csv_cut", json_true ());
        n += (size_t) snprintf (note + n, sizeof note - n, "%sThe CSV stopped at %ld rows: "
                                "the next would pass %lld MiB, the session's disk quota; "
                                "the query has more (add a LIMIT, select fewer columns or "
                                "aggregate).", n ? " " : "", t->row_count,
                                opts->csv_max_bytes >> 20);
    }
    if (t->cells_cut > 0 && n < sizeof note) {
        json_object_set_new (result, "cells_cut", json_integer (t->cells_cut));
        snprintf (note + n, sizeof note - n, "%s%ld values were cut to %zu bytes at most (each "
                  "marked with \xe2\x80\xa6[cut: KEPT of SIZE bytes]).", n ? " " : "",
                  t->cells_cut, b->cap);
    }
    if (note[0])
        json_object_set_new (result, "note", json_string (note));
}

json_t *
gw_sql_result_read (SQLHSTMT stmt, const gw_sql_options_t *opts, atomic_bool *stop,
                    atomic_bool *cancelled, char *err, size_t err_len, char sqlstate[6])
{
    sqlstate[0] = '\0';
    SQLSMALLINT ncols = 0;
    if (!SQL_SUCCEEDED (SQLNumResultCols (stmt, &ncols))) {
        gw_sql_diag (SQL_HANDLE_STMT, stmt, err, err_len, sqlstate);
        return NULL;
    }
    if (opts->sqlite_step && ncols == 0) {
        /* every read has columns; stepping, SQLite's driver may not even
           run a statement without them (WITH ... DELETE) */
        snprintf (err, err_len, "The statement has no result set, so it is not a read; "
                  "nothing was run.");
        return NULL;
    }
    s_bounds_t b = {
        .max_rows = opts->max_rows > 0 ? opts->max_rows : GW_SQL_MAX_ROWS,
        .cap = (size_t) (opts->max_cell_bytes > 0 ? opts->max_cell_bytes
                                                  : GW_SQL_MAX_CELL_BYTES),
        .budget = opts->max_result_bytes > 0 ? opts->max_result_bytes : GW_SQL_MAX_RESULT_BYTES,
        .inline_rows = opts->max_inline_rows > 0 ? opts->max_inline_rows : 0,
    };
    s_col_t *cols = calloc ((size_t) ncols + 1, sizeof *cols);
    char *buf = malloc (b.cap + 1);
    json_t *columns = cols && buf ? s_describe (stmt, ncols, cols, opts->sqlite_step, err, err_len,
                                                   sqlstate) : NULL;
    json_t *rows = json_array ();
    s_csv_t csv = {.dirfd = -1};
    s_tally_t t = {0};
    bool failed = !columns || !rows;
    if (!cols || !buf || !rows)
        snprintf (err, err_len, "Out of memory.");
    while (!failed && ncols > 0) {
        if (atomic_load (stop) || atomic_load (cancelled)) {
            snprintf (err, err_len, atomic_load (stop)
                      ? "The query ran out of time while its rows were read."
                      : "The query was cancelled while its rows were read.");
            memcpy (sqlstate, atomic_load (stop) ? "HYT00" : "HY008", 6);
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
        if (t.row_count == b.max_rows) {
            t.limit = true;
            break;
        }
        size_t row_bytes = 0;
        json_t *row = s_fetch_row (stmt, ncols, cols, columns, buf, b.cap, &row_bytes,
                                   &t.cells_cut, err, err_len, sqlstate);
        if (!row) {
            failed = true;
            break;
        }
        t.row_count++;
        if (t.row_count <= b.inline_rows && t.rows_cut == 0
            && t.kept + (long long) row_bytes <= b.budget) {
            t.kept += (long long) row_bytes;
            json_array_append_new (rows, row);
            continue;
        }
        if (t.row_count <= b.inline_rows)
            t.rows_cut++;               /* past the byte budget: only in the CSV */
        if (!opts->csv_dir) {
            json_decref (row);
            continue;
        }
        if (!csv.file)
            failed = s_csv_start (&csv, opts, columns, rows, err, err_len) != 0;
        int rc = failed ? -1 : s_csv_append (&csv, row, opts->csv_max_bytes);
        json_decref (row);
        if (rc < 0) {
            failed = true;
            if (!err[0])
                snprintf (err, err_len, "Cannot write the CSV file: %s.", strerror (errno));
        } else if (rc > 0) {
            t.csv_full = true;          /* the rows after this one are not read */
            t.row_count--;
            break;
        }
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
    long shown = (long) json_array_size (rows);
    json_t *result = json_pack ("{s:o, s:o, s:I}", "columns", columns, "rows", rows, "row_count",
                                (json_int_t) t.row_count);
    if (!result)
        return NULL;
    s_add_notes (result, &t, &b, opts, csv.shown, shown);
    return result;
}
