/* gw_config: settings table, .env parsing (placeholders skipped), environment,
 * validation, what --help and the docs say of each setting.
 * Threads: written by the main thread at start-up, then read-only. */
#include "gw_config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ENV_FILE_BYTES (1 << 20)

typedef struct {
    const char *name;
    const char *def;
    const char *kind;
    bool http;
    const char *help;
} s_setting_t;

#define STR "STR"
#define INT "INT"
#define UINT "UINT"
#define BOOL "BOOL"
#define AUTO "AUTO"
#define CORES "CORES"
#define ANY false
#define HTTP true
#define GW_SETTING_ROW(id, name, def, kind, scope, help) {name, def, kind, scope, help},
static const s_setting_t s_table[] = {GW_SETTINGS (GW_SETTING_ROW)};
#undef GW_SETTING_ROW
#undef ANY
#undef HTTP

/* Code Box's (CodeBoxMCP's) setting names, read as fallbacks for ours so
 * that its users' .env files keep working. */
static const struct {
    const char *name;
    gw_setting_t id;
} s_aliases[] = {
    {"MCP_HOST", GW_SET_HOST},
    {"MCP_PORT", GW_SET_PORT},
    {"SESSION_TTL", GW_SET_SESSION_TTL},
    {"IDLE_TIMEOUT", GW_SET_IDLE_TIMEOUT},
    {"CLEANUP_INTERVAL", GW_SET_CLEANUP_INTERVAL},
    {"EXEC_TIMEOUT", GW_SET_EXEC_TIMEOUT},
    {"DOWNLOAD_TIMEOUT", GW_SET_DOWNLOAD_TIMEOUT},
    {"MAX_DOWNLOAD_SIZE", GW_SET_MAX_DOWNLOAD_SIZE},
    {"AZURE_BLOB_CONNECTION_STRING", GW_SET_BLOB_CONNECTION_STRING},
    {"AZURE_BLOB_CONTAINER_NAME", GW_SET_BLOB_CONTAINER},
    {"BLOB_SAS_EXPIRY_HOURS", GW_SET_BLOB_SAS_EXPIRY_HOURS},
    {"AZURE_DATABASE_CONNECTION_STRING", GW_SET_SQL_DSN},
    {"SQL_MAX_INLINE_ROWS", GW_SET_SQL_MAX_INLINE_ROWS},
    {"BASE_WORKDIR", GW_SET_STATE_DIR},
};
#define S_N_ALIASES (sizeof s_aliases / sizeof s_aliases[0])

struct gw_config {
    char *values[GW_SETTING_COUNT];
    char aliases[S_N_ALIASES][64];  /* where each alias was read ("" if not) */
    struct {
        const char *written;        /* the name as written (ours or an alias) */
        char source[300];           /* where ("" if no placeholder was met) */
    } placeholders[GW_SETTING_COUNT];
};

/* True for a template's placeholder: "<...>" with something inside. */
static bool
s_placeholder (const char *value)
{
    size_t n = strlen (value);
    return n > 2 && value[0] == '<' && value[n - 1] == '>';
}

/* Notes that source wrote a placeholder for setting id under the name
 * written (which must outlive self: the table's, or the aliases'). */
static void
s_note_placeholder (gw_config_t *self, int id, const char *written, const char *source)
{
    self->placeholders[id].written = written;
    snprintf (self->placeholders[id].source, sizeof self->placeholders[id].source, "%s",
              source);
}

/* The alias index of name, or -1. */
static int
s_alias (const char *name)
{
    for (size_t i = 0; i < S_N_ALIASES; i++)
        if (strcmp (s_aliases[i].name, name) == 0)
            return (int) i;
    return -1;
}

/* Sets the setting an alias stands for, unless source also names it
 * (ours wins), and notes where the alias was read. */
static int
s_set_alias (gw_config_t *self, int alias, const char *value, const char *source,
             bool ours_given, char *err, size_t err_len)
{
    if (ours_given)
        return 0;
    if (s_placeholder (value)) {
        s_note_placeholder (self, s_aliases[alias].id, s_aliases[alias].name, source);
        return 0;
    }
    char where[300];
    snprintf (where, sizeof where, "%s (%s, Code Box's name for %s)", source,
              s_aliases[alias].name, s_table[s_aliases[alias].id].name);
    int rc = gw_config_set (self, s_table[s_aliases[alias].id].name, value, where, err, err_len);
    if (!rc)
        snprintf (self->aliases[alias], sizeof self->aliases[alias], "%s", source);
    return rc;
}

gw_config_t *
gw_config_new (void)
{
    gw_config_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    for (int i = 0; i < GW_SETTING_COUNT; i++)
        if (!(self->values[i] = strdup (s_table[i].def))) {
            gw_config_destroy (&self);
            break;
        }
    return self;
}

void
gw_config_destroy (gw_config_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    for (int i = 0; i < GW_SETTING_COUNT; i++)
        free ((*self_p)->values[i]);
    free (*self_p);
    *self_p = NULL;
}

/* Parses a whole decimal number in [min, LONG_MAX]. */
static bool
s_parse_long (const char *value, long min, long *out)
{
    if (!*value || isspace ((unsigned char) *value) || *value == '+' || *value == '-')
        return false;
    errno = 0;
    char *end;
    long v = strtol (value, &end, 10);
    if (errno || *end || v < min)
        return false;
    *out = v;
    return true;
}

/* True for a positive decimal number of cores, at least a thousandth
 * and at most a million ("1", "0.5", "2.25"). */
static bool
s_cores_ok (const char *value)
{
    if (!value || !isdigit ((unsigned char) value[0]))
        return false;
    char *end;
    errno = 0;
    double v = strtod (value, &end);
    return !errno && *end == '\0' && v >= 0.001 && v <= 1e6;
}

/* True when value is one of the '|'-separated words of kind. */
static bool
s_in_words (const char *kind, const char *value)
{
    size_t n = strlen (value);
    for (const char *p = kind; *p;) {
        size_t len = strcspn (p, "|");
        if (len == n && strncmp (p, value, n) == 0)
            return true;
        p += len + (p[len] == '|');
    }
    return false;
}

/* The setting called name, or -1. */
static int
s_find (const char *name)
{
    for (int i = 0; i < GW_SETTING_COUNT; i++)
        if (strcmp (s_table[i].name, name) == 0)
            return i;
    return -1;
}

int
gw_config_set (gw_config_t *self, const char *name, const char *value,
               const char *source, char *err, size_t err_len)
{
    int id = s_find (name);
    if (id < 0) {
        snprintf (err, err_len, "%s: unknown setting %s", source, name);
        return -ENOENT;
    }
    const char *kind = s_table[id].kind;
    long number;
    const char *problem = NULL;
    if (strcmp (kind, INT) == 0 && !(s_parse_long (value, 1, &number) && number <= INT_MAX))
        problem = "a positive integer";
    else if (strcmp (kind, UINT) == 0 && !(s_parse_long (value, 0, &number) && number <= INT_MAX))
        problem = "a whole number (0 or more)";
    else if (strcmp (kind, AUTO) == 0 && strcmp (value, "auto") != 0
             && !(s_parse_long (value, 1, &number) && number <= INT_MAX))
        problem = "a positive integer or auto";
    else if (strcmp (kind, CORES) == 0 && !s_cores_ok (value))
        problem = "a positive number of CPU cores (such as 1 or 0.5)";
    else if (strcmp (kind, BOOL) == 0 && !s_in_words ("0|1|true|false|on|off|yes|no", value))
        problem = "0 or 1";
    else if (strchr (kind, '|') && !s_in_words (kind, value))
        problem = kind;
    if (problem) {
        /* never echo the value: it may be a secret */
        snprintf (err, err_len, "%s: %s must be %s", source, name, problem);
        return -EINVAL;
    }
    char *copy = strdup (value);
    if (!copy) {
        snprintf (err, err_len, "out of memory");
        return -ENOMEM;
    }
    free (self->values[id]);
    self->values[id] = copy;
    return 0;
}

/* Unquotes the value part of a .env line in place. Returns false on an
 * unterminated quote. */
static bool
s_unquote (char *v)
{
    char quote = *v;
    if (quote != '"' && quote != '\'') {
        /* unquoted: a " #" starts a comment; trailing space goes */
        char *hash = strstr (v, " #");
        if (hash)
            *hash = '\0';
        size_t n = strlen (v);
        while (n && isspace ((unsigned char) v[n - 1]))
            v[--n] = '\0';
        return true;
    }
    char *out = v;
    for (char *p = v + 1; *p; p++) {
        if (*p == quote) {
            *out = '\0';
            return true;
        }
        if (quote == '"' && *p == '\\' && p[1]) {
            p++;
            *out++ = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p;
        } else
            *out++ = *p;
    }
    return false;
}

static int s_load_lines (gw_config_t *self, char *copy, const char *source, bool *given,
                         bool aliases, char *err, size_t err_len);

int
gw_config_load_text (gw_config_t *self, const char *text, const char *source,
                     char *err, size_t err_len)
{
    char *copy = strdup (text);
    if (!copy)
        return -ENOMEM;
    bool given[GW_SETTING_COUNT] = {false};
    int rc = s_load_lines (self, copy, source, given, false, err, err_len);
    free (copy);
    copy = rc ? NULL : strdup (text);
    if (!rc && !copy)
        return -ENOMEM;
    if (!rc)
        rc = s_load_lines (self, copy, source, given, true, err, err_len);
    free (copy);
    return rc;
}

/* One pass over the lines of a .env text (copy, cut up here): ours
 * (CODEBOX_*, marked in given), or, with aliases, Code Box's names for
 * settings not given. */
static int
s_load_lines (gw_config_t *self, char *copy, const char *source, bool *given, bool aliases,
              char *err, size_t err_len)
{
    int rc = 0, line_no = 0;
    /* strtok_r would skip empty lines and miscount them; walk by hand */
    char *line = copy;
    while (line && !rc) {
        char *next = strchr (line, '\n');
        if (next)
            *next++ = '\0';
        line_no++;
        char *p = line;
        while (isspace ((unsigned char) *p))
            p++;
        if (*p && *p != '#') {
            if (strncmp (p, "export ", 7) == 0)
                p += 7;
            char *eq = strchr (p, '=');
            char where[300];
            snprintf (where, sizeof where, "%s line %d", source, line_no);
            if (!eq) {
                snprintf (err, err_len, "%s: expected NAME=VALUE", where);
                rc = -EINVAL;
                break;
            }
            char *name_end = eq;
            while (name_end > p && isspace ((unsigned char) name_end[-1]))
                name_end--;
            *name_end = '\0';
            char *value = eq + 1;
            while (*value == ' ' || *value == '\t')
                value++;
            size_t vlen = strlen (value);
            if (vlen && value[vlen - 1] == '\r')
                value[vlen - 1] = '\0';
            if (!s_unquote (value)) {
                snprintf (err, err_len, "%s: unterminated quote", where);
                rc = -EINVAL;
            } else if (!aliases && strncmp (p, "CODEBOX_", 8) == 0) {
                int id = s_find (p);
                if (id >= 0 && s_placeholder (value))
                    s_note_placeholder (self, id, s_table[id].name, where);
                else
                    rc = gw_config_set (self, p, value, where, err, err_len);
                if (id >= 0 && !s_placeholder (value))
                    given[id] = true;
            } else if (aliases && s_alias (p) >= 0)
                rc = s_set_alias (self, s_alias (p), value, where,
                                  given[s_aliases[s_alias (p)].id], err, err_len);
        }
        line = next;
    }
    return rc;
}

int
gw_config_load_file (gw_config_t *self, const char *path, bool required, char *err,
                     size_t err_len)
{
    FILE *f = fopen (path, "re");
    if (!f) {
        if (!required && errno == ENOENT)
            return 0;
        int e = errno;
        snprintf (err, err_len, "cannot read %s: %s", path, strerror (e));
        return -e;
    }
    char *text = malloc (MAX_ENV_FILE_BYTES + 1);
    size_t n = text ? fread (text, 1, MAX_ENV_FILE_BYTES + 1, f) : 0;
    fclose (f);
    int rc;
    if (!text)
        rc = -ENOMEM;
    else if (n > MAX_ENV_FILE_BYTES) {
        snprintf (err, err_len, "%s is larger than 1 MiB", path);
        rc = -EFBIG;
    } else if (memchr (text, '\0', n)) {
        snprintf (err, err_len, "%s holds a NUL byte", path);
        rc = -EINVAL;
    } else {
        text[n] = '\0';
        rc = gw_config_load_text (self, text, path, err, err_len);
    }
    free (text);
    return rc;
}

int
gw_config_load_env (gw_config_t *self, char *err, size_t err_len)
{
    for (size_t i = 0; i < S_N_ALIASES; i++) {
        const char *v = getenv (s_aliases[i].name);
        const char *ours = getenv (s_table[s_aliases[i].id].name);
        int rc = v ? s_set_alias (self, (int) i, v, "environment",
                                  ours && !s_placeholder (ours), err, err_len)
                   : 0;
        if (rc)
            return rc;
    }
    for (int i = 0; i < GW_SETTING_COUNT; i++) {
        const char *v = getenv (s_table[i].name);
        if (v && s_placeholder (v))
            s_note_placeholder (self, i, s_table[i].name, "environment");
        else if (v) {
            int rc = gw_config_set (self, s_table[i].name, v, "environment", err, err_len);
            if (rc)
                return rc;
        }
    }
    return 0;
}

void
gw_config_each_alias (const gw_config_t *self, gw_config_alias_fn *fn, void *arg)
{
    for (size_t i = 0; i < S_N_ALIASES; i++)
        if (self->aliases[i][0])
            fn (s_aliases[i].name, s_table[s_aliases[i].id].name, self->aliases[i], arg);
}

void
gw_config_each_placeholder (const gw_config_t *self, gw_config_alias_fn *fn, void *arg)
{
    for (int i = 0; i < GW_SETTING_COUNT; i++)
        if (self->placeholders[i].source[0])
            fn (self->placeholders[i].written, s_table[i].name, self->placeholders[i].source,
                arg);
}

const char *
gw_config_alias_name (size_t i, gw_setting_t *id)
{
    if (i >= S_N_ALIASES)
        return NULL;
    *id = s_aliases[i].id;
    return s_aliases[i].name;
}

/* The tenant an entry of a token list (len bytes at p) names, into *name
 * and *n: "tenant:token", or "default" for a bare token. False for a
 * blank entry. */
static bool
s_entry_tenant (const char *p, size_t len, const char **name, size_t *n)
{
    while (len && isspace ((unsigned char) *p))
        p++, len--;
    if (!len)
        return false;
    const char *colon = memchr (p, ':', len);
    *name = colon ? p : "default";
    *n = colon ? (size_t) (colon - p) : 7;
    return true;
}

int
gw_config_count_tenants (const char *tokens)
{
    /* tenants are few: each entry's is compared with the earlier ones' */
    int count = 0;
    for (const char *p = tokens ? tokens : ""; *p;) {
        size_t len = strcspn (p, ",");
        const char *name, *other;
        size_t n, other_n;
        bool seen = !s_entry_tenant (p, len, &name, &n);
        for (const char *q = tokens; !seen && q < p;) {
            size_t qlen = strcspn (q, ",");
            seen = s_entry_tenant (q, qlen, &other, &other_n) && other_n == n
                   && strncmp (other, name, n) == 0;
            q += qlen + (q[qlen] == ',');
        }
        count += !seen;
        p += len + (p[len] == ',');
    }
    return count;
}

int
gw_config_resolve (gw_config_t *self)
{
    long all = gw_config_int (self, GW_SET_MAX_SESSIONS);
    const char *v = self->values[GW_SET_TENANT_MAX_SESSIONS];
    long share = strcmp (v, "auto") == 0
                 ? (gw_config_count_tenants (self->values[GW_SET_API_TOKENS]) > 1
                    ? (all / 2 > 0 ? all / 2 : 1) : all)
                 : strtol (v, NULL, 10);
    if (share > all)
        share = all;
    char text[32];
    snprintf (text, sizeof text, "%ld", share);
    char *copy = strdup (text);
    if (!copy)
        return -ENOMEM;
    free (self->values[GW_SET_TENANT_MAX_SESSIONS]);
    self->values[GW_SET_TENANT_MAX_SESSIONS] = copy;
    return 0;
}

long
gw_config_share (const gw_config_t *self, long size)
{
    long all = gw_config_int (self, GW_SET_MAX_SESSIONS);
    long mine = gw_config_int (self, GW_SET_TENANT_MAX_SESSIONS);
    if (mine <= 0 || all <= 0 || mine >= all)
        return size;            /* unresolved ("auto"), or every session */
    long share = (long) ((long long) size * mine / all);
    return share > 0 ? share : 1;
}

const char *
gw_config_str (const gw_config_t *self, gw_setting_t id)
{
    return self->values[id];
}

long
gw_config_int (const gw_config_t *self, gw_setting_t id)
{
    return strtol (self->values[id], NULL, 10);
}

bool
gw_config_bool (const gw_config_t *self, gw_setting_t id)
{
    return s_in_words ("1|true|on|yes", self->values[id]);
}

const char *
gw_setting_name (gw_setting_t id)
{
    return s_table[id].name;
}

void
gw_setting_doc (gw_setting_t id, gw_setting_doc_t *doc)
{
    const s_setting_t *row = &s_table[id];
    static const char tail[] = " (default: ";
    const char *said = strstr (row->help, tail);
    size_t n = strlen (row->help);
    *doc = (gw_setting_doc_t) {.name = row->name, .kind = row->kind, .http_only = row->http,
        .help = row->help, .help_len = n, .def = row->def, .def_len = strlen (row->def)};
    if (said && n && row->help[n - 1] == ')' && !*row->def) {
        doc->help_len = (size_t) (said - row->help);
        doc->def = said + sizeof tail - 1;
        doc->def_len = (size_t) (row->help + n - 1 - doc->def);
        doc->def_in_words = true;
    }
}

void
gw_config_print_help (FILE *out, bool http)
{
    fprintf (out, "Settings (default < .env or --config FILE < environment < flag)%s:\n",
             http ? "" : ", those `codebox mcp` reads");
    for (int i = 0; i < GW_SETTING_COUNT; i++) {
        gw_setting_doc_t doc;
        gw_setting_doc ((gw_setting_t) i, &doc);
        if (doc.http_only && !http)
            continue;
        fprintf (out, "  %-32s %.*s (default: %.*s)\n", doc.name, (int) doc.help_len, doc.help,
                 doc.def_len ? (int) doc.def_len : 5, doc.def_len ? doc.def : "unset");
    }
}
