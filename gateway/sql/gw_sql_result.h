/* gw_sql_result: reads a statement's result set over ODBC into the
 * exec_sql result: the columns with their types, the first rows inline,
 * and, when there are more, every row as an RFC 4180 CSV file. Also the
 * driver diagnostics as one tidy message. Internal to gw_sql_conn; it
 * needs only the run's options (gw_sql_options), not the connection.
 *
 * Threads: the thread that runs the statement. */
#ifndef GW_SQL_RESULT_H
#define GW_SQL_RESULT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include <sql.h>
#include <sqlext.h>
#include <jansson.h>

#include "gw_sql_options.h"

/* Reads every result row of stmt (executed, with a result set or none):
 * returns a new object {"columns":[{"name","type","db_type"}...],
 * "rows":[[...]], "row_count", and as they apply "truncated", "csv_path",
 * "row_limit_reached", "cells_cut", "rows_cut" (inline rows left out at
 * the byte budget), "csv_cut" (the CSV stopped at csv_max_bytes), "note"}.
 * Rows past the inline ones are written to the CSV as they come, never
 * kept. Stops early when *stop (the watchdog fired) or *cancelled turns
 * true. NULL with a sentence in err (and the SQLSTATE in sqlstate, ""
 * when none) on failure; a partly written CSV is removed. */
json_t *gw_sql_result_read (SQLHSTMT stmt, const gw_sql_options_t *opts, atomic_bool *stop,
                            atomic_bool *cancelled, char *err, size_t err_len,
                            char sqlstate[6]);

/* The diagnostic records of a handle as one line: vendor prefixes such
 * as "[unixODBC][Driver Manager]" dropped, line breaks made spaces, the
 * first SQLSTATE in sqlstate (may be NULL). Writes "" when none. */
void gw_sql_diag (SQLSMALLINT type, SQLHANDLE handle, char *out, size_t out_len, char *sqlstate);

#endif
