/* gw_sql_value: database cells as JSON and CSV, and password redaction in
 * connection strings; see gw_sql_value.h. Pure code; any thread. */
#include "gw_sql_value.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sql.h>
#include <sqlext.h>

#include "gw_base64.h"
#include "jp_utf8.h"

const char *
gw_sql_cat_name (gw_sql_cat_t cat, int sql_type)
{
    switch (cat) {
    case GW_SQL_CAT_INTEGER: return "integer";
    case GW_SQL_CAT_FLOAT:
    case GW_SQL_CAT_DECIMAL: return "number";
    case GW_SQL_CAT_BOOLEAN: return "boolean";
    case GW_SQL_CAT_BINARY: return "binary";
    case GW_SQL_CAT_TEXT: break;
    }
    switch (sql_type) {
    case SQL_TYPE_DATE: case SQL_DATE: return "date";
    case SQL_TYPE_TIME: case SQL_TIME: return "time";
    case SQL_TYPE_TIMESTAMP: case SQL_TIMESTAMP: return "timestamp";
    default: return "text";
    }
}

gw_sql_cat_t
gw_sql_cat_for (int sql_type, const char *type_name)
{
    if (type_name && (strcasecmp (type_name, "bool") == 0 || strcasecmp (type_name, "boolean") == 0))
        return GW_SQL_CAT_BOOLEAN;
    switch (sql_type) {
    case SQL_BIT: return GW_SQL_CAT_BOOLEAN;
    case SQL_TINYINT: case SQL_SMALLINT: case SQL_INTEGER: case SQL_BIGINT:
        return GW_SQL_CAT_INTEGER;
    case SQL_REAL: case SQL_FLOAT: case SQL_DOUBLE: return GW_SQL_CAT_FLOAT;
    case SQL_DECIMAL: case SQL_NUMERIC: return GW_SQL_CAT_DECIMAL;
    case SQL_BINARY: case SQL_VARBINARY: case SQL_LONGVARBINARY: return GW_SQL_CAT_BINARY;
    default: return GW_SQL_CAT_TEXT;
    }
}

char *
gw_sql_utf8_fix (const char *data, size_t len, size_t *out_len)
{
    const unsigned char *s = (const unsigned char *) data;
    char *out = malloc (len * 3 + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        size_t k = jp_utf8_char (s + i, len - i, NULL);
        if (k == 0 || (k == 1 && s[i] == 0)) {
            if (k == 1) {
                i++;                            /* drop NUL bytes: JSON strings hold none */
                continue;
            }
            memcpy (out + o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
            continue;
        }
        memcpy (out + o, s + i, k);
        o += k;
        i += k;
    }
    out[o] = '\0';
    if (out_len)
        *out_len = o;
    return out;
}

/* Parses text as a whole number that fits in 64 bits. */
static bool
s_parse_int (const char *text, json_int_t *out)
{
    if (!*text)
        return false;
    char *end;
    errno = 0;
    long long v = strtoll (text, &end, 10);
    if (errno || *end)
        return false;
    *out = (json_int_t) v;
    return true;
}

static bool
s_parse_double (const char *text, double *out)
{
    if (!*text)
        return false;
    char *end;
    errno = 0;
    double v = strtod (text, &end);
    if (*end || (errno && v != 0))
        return false;
    *out = v;
    return true;
}

/* Significant digits of a decimal text ("-001.2300" has 2): the digits
 * of the integer and fraction parts without leading zeros and without
 * the fraction's trailing zeros. */
static size_t
s_significant_digits (const char *text)
{
    char digits[512];
    size_t n = 0, frac_start = (size_t) -1;
    for (const char *p = text; *p && *p != 'e' && *p != 'E' && n < sizeof digits; p++)
        if (*p >= '0' && *p <= '9')
            digits[n++] = *p;
        else if (*p == '.')
            frac_start = n;
    if (frac_start != (size_t) -1)
        while (n > frac_start && digits[n - 1] == '0')
            n--;
    size_t lead = 0;
    while (lead < n && digits[lead] == '0')
        lead++;
    return n - lead;
}

static json_t *
s_with_marker (const char *text, size_t len, const char *marker)
{
    size_t m = marker ? strlen (marker) : 0;
    char *buf = malloc (len + m + 1);
    if (!buf)
        return NULL;
    memcpy (buf, text, len);
    if (m)
        memcpy (buf + len, marker, m);
    json_t *v = json_stringn (buf, len + m);
    free (buf);
    return v;
}

json_t *
gw_sql_value_json (gw_sql_cat_t cat, const char *data, size_t len, const char *marker)
{
    if (cat == GW_SQL_CAT_BINARY) {
        char *b64 = gw_base64_encode ((const uint8_t *) data, len);
        if (!b64)
            return NULL;
        json_t *v = s_with_marker (b64, strlen (b64), marker);
        free (b64);
        return v;
    }
    size_t fixed_len;
    char *text = gw_sql_utf8_fix (data, len, &fixed_len);
    if (!text)
        return NULL;
    json_t *v = NULL;
    if (!marker) {
        json_int_t i;
        double d;
        switch (cat) {
        case GW_SQL_CAT_BOOLEAN:
            if (strcmp (text, "1") == 0 || strcasecmp (text, "t") == 0 || strcasecmp (text, "true") == 0)
                v = json_true ();
            else if (strcmp (text, "0") == 0 || strcasecmp (text, "f") == 0
                     || strcasecmp (text, "false") == 0)
                v = json_false ();
            break;
        case GW_SQL_CAT_INTEGER:
            if (s_parse_int (text, &i))
                v = json_integer (i);
            else if (s_parse_double (text, &d) && isfinite (d))
                v = json_real (d);
            break;
        case GW_SQL_CAT_FLOAT:
            if (s_parse_double (text, &d) && isfinite (d))
                v = json_real (d);
            break;
        case GW_SQL_CAT_DECIMAL:
            if (s_parse_int (text, &i))
                v = json_integer (i);
            else if (s_significant_digits (text) <= 15 && s_parse_double (text, &d) && isfinite (d))
                v = json_real (d);
            break;
        default:
            break;
        }
    }
    if (!v)
        v = s_with_marker (text, fixed_len, marker);
    free (text);
    return v;
}

int
gw_sql_csv_field (FILE *out, const json_t *value)
{
    int rc = 0;
    if (json_is_null (value) || !value)
        return 0;
    if (json_is_true (value))
        rc = fputs ("true", out);
    else if (json_is_false (value))
        rc = fputs ("false", out);
    else if (json_is_integer (value))
        rc = fprintf (out, "%" JSON_INTEGER_FORMAT, json_integer_value (value));
    else if (json_is_real (value)) {
        /* the shortest of %.15g and %.17g that reads back the same */
        char buf[40];
        double d = json_real_value (value);
        snprintf (buf, sizeof buf, "%.15g", d);
        if (strtod (buf, NULL) != d)
            snprintf (buf, sizeof buf, "%.17g", d);
        rc = fputs (buf, out);
    }
    else if (json_is_string (value)) {
        const char *s = json_string_value (value);
        size_t n = json_string_length (value);
        if (strpbrk (s, ",\"\r\n") == NULL && n == strlen (s))
            rc = fwrite (s, 1, n, out) == n ? 0 : EOF;
        else {
            rc = fputc ('"', out);
            for (size_t i = 0; i < n && rc != EOF; i++)
                rc = s[i] == '"' ? fputs ("\"\"", out) : fputc (s[i], out);
            if (rc != EOF)
                rc = fputc ('"', out);
        }
    }
    return rc == EOF || rc < 0 ? -EIO : 0;
}

int
gw_sql_csv_row (FILE *out, const json_t *row)
{
    size_t i;
    json_t *v;
    json_array_foreach (row, i, v) {
        if (i > 0 && fputc (',', out) == EOF)
            return -EIO;
        if (gw_sql_csv_field (out, v) != 0)
            return -EIO;
    }
    return fputs ("\r\n", out) == EOF ? -EIO : 0;
}

/* Finds the next attribute of a connection string from *p: sets its key
 * and value spans and moves *p past it. False at the end. */
static bool
s_next_attr (const char **p, const char **key, size_t *key_len, const char **val, size_t *val_len)
{
    const char *s = *p;
    while (*s == ';' || *s == ' ')
        s++;
    if (!*s)
        return false;
    *key = s;
    while (*s && *s != '=' && *s != ';')
        s++;
    *key_len = (size_t) (s - *key);
    while (*key_len > 0 && (*key)[*key_len - 1] == ' ')
        (*key_len)--;
    if (*s != '=') {
        *val = s;
        *val_len = 0;
        *p = s;
        return true;
    }
    s++;
    *val = s;
    if (*s == '{') {
        /* braced value: up to the matching '}' ("}}" stands for '}') */
        s++;
        while (*s && !(*s == '}' && s[1] != '}'))
            s += *s == '}' ? 2 : 1;
        if (*s == '}')
            s++;
    } else
        while (*s && *s != ';')
            s++;
    *val_len = (size_t) (s - *val);
    *p = s;
    return true;
}

static bool
s_is_secret_key (const char *key, size_t len)
{
    return (len == 3 && strncasecmp (key, "PWD", 3) == 0)
        || (len == 8 && strncasecmp (key, "Password", 8) == 0);
}

char *
gw_sql_redact_dsn (const char *dsn)
{
    const char *p = dsn, *key, *val;
    size_t key_len, val_len, count = 0;
    while (s_next_attr (&p, &key, &key_len, &val, &val_len))
        count += s_is_secret_key (key, key_len) && val_len > 0;
    char *out = malloc (strlen (dsn) + 3 * count + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    const char *copied = dsn;
    p = dsn;
    while (s_next_attr (&p, &key, &key_len, &val, &val_len)) {
        if (!s_is_secret_key (key, key_len) || val_len == 0)
            continue;
        memcpy (out + o, copied, (size_t) (val - copied));
        o += (size_t) (val - copied);
        memcpy (out + o, "***", 3);
        o += 3;
        copied = val + val_len;
    }
    strcpy (out + o, copied);
    return out;
}

size_t
gw_sql_dsn_secrets (const char *dsn, char **out, size_t max)
{
    size_t n = 0;
    const char *p = dsn, *key, *val;
    size_t key_len, val_len;
    while (n < max && s_next_attr (&p, &key, &key_len, &val, &val_len)) {
        if (!s_is_secret_key (key, key_len) || val_len == 0)
            continue;
        if (val[0] == '{' && val_len >= 2 && val[val_len - 1] == '}') {
            val++;
            val_len -= 2;
        }
        if (val_len == 0)
            continue;
        out[n] = strndup (val, val_len);
        if (out[n])
            n++;
    }
    return n;
}

void
gw_sql_scrub (char *text, size_t text_size, char *const *secrets, size_t n)
{
    (void) text_size;
    for (size_t i = 0; i < n; i++) {
        size_t k = strlen (secrets[i]);
        if (k == 0)
            continue;
        char *from = text, *hit;
        while ((hit = strstr (from, secrets[i])) != NULL) {
            if (k >= 3) {
                memcpy (hit, "***", 3);
                memmove (hit + 3, hit + k, strlen (hit + k) + 1);
                from = hit + 3;
            } else {
                memset (hit, '*', k);
                from = hit + k;
            }
        }
    }
}
