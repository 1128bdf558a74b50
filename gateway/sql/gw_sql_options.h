/* gw_sql_options: the options and limits of one exec_sql run (inline
 * rows, rows fetched, bytes per cell and in all, the timeout, the CSV's
 * folder, owner and bound), shared by the connection (gw_sql_conn) and the
 * result reader (gw_sql_result), which need nothing else of each other.
 *
 * Threads: plain data; any thread. */
#ifndef GW_SQL_OPTIONS_H
#define GW_SQL_OPTIONS_H

#include <stdbool.h>

#define GW_SQL_MAX_ROWS 100000          /* rows fetched at most */
#define GW_SQL_MAX_CELL_BYTES 65536     /* bytes kept per cell */
#define GW_SQL_MAX_RESULT_BYTES (64L << 20) /* bytes of values the inline rows keep in all */

typedef struct {
    long max_inline_rows;       /* rows returned in "rows" (0 or more) */
    long max_rows;              /* rows fetched at most; 0 means GW_SQL_MAX_ROWS */
    long max_cell_bytes;        /* bytes kept per cell; 0 means GW_SQL_MAX_CELL_BYTES */
    long timeout_s;             /* seconds the statement may run; 0 means no limit */
    const char *csv_dir;        /* folder for the CSV of a larger result; NULL: no CSV */
    const char *csv_shown_dir;  /* csv_dir as the client sees it (NULL: csv_dir) */
    int csv_uid, csv_gid;       /* owner given to the CSV file; -1 leaves it */
    long long csv_max_bytes;    /* the CSV stops before passing this (the session's disk
                                   quota); 0: no bound */
    long long max_result_bytes; /* bytes of values the inline rows keep; 0 means
                                   GW_SQL_MAX_RESULT_BYTES */
    bool client_dsn;            /* the DSN came from the client (its failures are bad_request) */
    bool unsafe_skip_classifier; /* TESTS ONLY: skip layer (a) to show (b) and (c) hold alone */
    bool sqlite_step;           /* set by gw_sql_conn: SQLite's driver steps through rows and
                                   calls every column without a declared type "varchar"; such a
                                   value's kind is read from the value (gw_sql_result) */
} gw_sql_options_t;

/* Options with the defaults: 30 inline rows, the row and cell limits, no
 * timeout, no CSV, no owner change. */
gw_sql_options_t gw_sql_options_default (void);

#endif
