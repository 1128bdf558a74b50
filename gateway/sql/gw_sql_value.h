/* gw_sql_value: turning database values into JSON and CSV for exec_sql:
 * the JSON value for a cell's text by its column category (integers as
 * integers, floats and decimals as numbers where that loses nothing,
 * booleans, text with invalid UTF-8 replaced, binary as base64), RFC 4180
 * CSV rows, and the redaction of passwords in ODBC connection strings.
 * Pure code (CSV writes go to a stdio stream); any thread. */
#ifndef GW_SQL_VALUE_H
#define GW_SQL_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

/* How a column's values are shown. */
typedef enum {
    GW_SQL_CAT_TEXT,        /* strings; also dates, times, GUIDs and anything unknown */
    GW_SQL_CAT_INTEGER,     /* JSON integers */
    GW_SQL_CAT_FLOAT,       /* JSON numbers (non-finite values as strings) */
    GW_SQL_CAT_DECIMAL,     /* JSON numbers when exact enough, else strings */
    GW_SQL_CAT_BOOLEAN,     /* true / false */
    GW_SQL_CAT_BINARY       /* base64 strings */
} gw_sql_cat_t;

/* The name shown in "columns": "text", "integer", "number", "boolean",
 * "binary", or, for text, a finer "date", "time", "timestamp" when
 * sql_type (an ODBC SQL_* data type) says so. */
const char *gw_sql_cat_name (gw_sql_cat_t cat, int sql_type);

/* The category for an ODBC SQL data type and the database's type name
 * (PostgreSQL's driver reports booleans as text typed "bool"). */
gw_sql_cat_t gw_sql_cat_for (int sql_type, const char *type_name);

/* The JSON value (new) of len bytes of a cell of category cat. Text that
 * does not parse as its category stays a string (SQLite columns may hold
 * anything). Binary data is base64-encoded. When cut, marker (a short
 * string) is appended to the text or the base64. NULL on OOM. */
json_t *gw_sql_value_json (gw_sql_cat_t cat, const char *data, size_t len, const char *marker);

/* A new NUL-terminated copy of len bytes with each invalid UTF-8 sequence
 * replaced by U+FFFD; *out_len gets its length. NULL on OOM. */
char *gw_sql_utf8_fix (const char *data, size_t len, size_t *out_len);

/* Writes one CSV field for a JSON value (null: empty; strings quoted when
 * they hold , " CR or LF, quotes doubled; numbers as JSON writes them;
 * booleans as true/false). Returns 0 or -EIO. */
int gw_sql_csv_field (FILE *out, const json_t *value);

/* Writes a row of values (a JSON array) ending in CRLF. Returns 0 or -EIO. */
int gw_sql_csv_row (FILE *out, const json_t *row);

/* A new copy of an ODBC connection string with the value of every PWD=
 * and Password= attribute (any case, {braced} or not) replaced by "***".
 * NULL on OOM. */
char *gw_sql_redact_dsn (const char *dsn);

/* The passwords of dsn (values of PWD= and Password=), for scrubbing
 * driver messages: at most max, each a new string; returns the count. */
size_t gw_sql_dsn_secrets (const char *dsn, char **out, size_t max);

/* Replaces every occurrence of each secret in text (a NUL-terminated
 * string of text_size bytes at most; edited in place, never longer) with
 * "***", or with as many '*' when the secret is shorter than that. */
void gw_sql_scrub (char *text, size_t text_size, char *const *secrets, size_t n);

#endif
