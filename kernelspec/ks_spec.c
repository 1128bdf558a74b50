/* ks_spec: kernel.json parsing, environment expansion and argv
 * substitution. Pure code, no threads. */
#include "ks_spec.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SPEC_BYTES (1 << 20)

void
ks_strv_free (char **strv)
{
    if (!strv)
        return;
    for (char **p = strv; *p; p++)
        free (*p);
    free (strv);
}

void
ks_spec_destroy (ks_spec_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ks_spec_t *self = *self_p;
    free (self->name);
    free (self->resource_dir);
    ks_strv_free (self->argv);
    free (self->display_name);
    free (self->language);
    json_decref (self->env);
    json_decref (self->json);
    free (self);
    *self_p = NULL;
}

/* A growing string. */
typedef struct {
    char *data;
    size_t len, cap;
    bool failed;
} s_buf_t;

static void
s_buf_add (s_buf_t *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->len + n + 1) * 2;
        char *data = realloc (b->data, cap);
        if (!data) {
            b->failed = true;
            return;
        }
        b->data = data;
        b->cap = cap;
    }
    memcpy (b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

/* Returns the finished string (new), or NULL if anything failed. */
static char *
s_buf_finish (s_buf_t *b)
{
    if (!b->failed && !b->data)
        s_buf_add (b, "", 0);
    if (b->failed) {
        free (b->data);
        return NULL;
    }
    return b->data;
}

char *
ks_expand_env (const char *value)
{
    s_buf_t out = {0};
    const char *p = value;
    while (*p) {
        if (*p == '$') {
            bool braced = p[1] == '{';
            const char *start = p + (braced ? 2 : 1);
            const char *end = start;
            if (isalpha ((unsigned char) *end) || *end == '_')
                while (isalnum ((unsigned char) *end) || *end == '_')
                    end++;
            bool closed = !braced || *end == '}';
            if (end > start && closed) {
                char *name = strndup (start, (size_t) (end - start));
                const char *v = name ? getenv (name) : NULL;
                free (name);
                size_t consumed = (size_t) (end - p) + (braced ? 1 : 0);
                if (v)
                    s_buf_add (&out, v, strlen (v));
                else
                    s_buf_add (&out, p, consumed);
                p += consumed;
                continue;
            }
            if (p[1] == '$') {      /* $$ is a literal $ */
                s_buf_add (&out, "$", 1);
                p += 2;
                continue;
            }
        }
        s_buf_add (&out, p, 1);
        p++;
    }
    return s_buf_finish (&out);
}

/* Copies a string member, or returns NULL with err set if it is present
 * but not a string. *ok turns false on a type error. */
static char *
s_opt_string (json_t *obj, const char *key, const char *fallback, bool *ok,
              char *err, size_t err_len)
{
    json_t *v = json_object_get (obj, key);
    if (!v)
        return fallback ? strdup (fallback) : NULL;
    if (!json_is_string (v)) {
        snprintf (err, err_len, "\"%s\" must be a string", key);
        *ok = false;
        return NULL;
    }
    return strdup (json_string_value (v));
}

ks_spec_t *
ks_spec_parse (const char *name, const char *resource_dir, const char *text,
               size_t len, char *err, size_t err_len)
{
    char why[200] = "";
    json_error_t jerr;
    json_t *json = json_loadb (text, len, 0, &jerr);
    if (!json) {
        snprintf (err, err_len, "kernelspec %s: %s/kernel.json is not valid JSON "
                  "(line %d, column %d: %s)", name, resource_dir, jerr.line,
                  jerr.column, jerr.text);
        return NULL;
    }
    ks_spec_t *self = calloc (1, sizeof *self);
    if (!self) {
        json_decref (json);
        snprintf (err, err_len, "out of memory");
        return NULL;
    }
    self->json = json;
    self->name = strdup (name);
    self->resource_dir = strdup (resource_dir);
    bool ok = true;
    json_t *argv = json_object_get (json, "argv");
    if (!json_is_object (json))
        snprintf (why, sizeof why, "the file must hold a JSON object"), ok = false;
    else if (!json_is_array (argv) || json_array_size (argv) == 0)
        snprintf (why, sizeof why, "\"argv\" must be a non-empty array of strings"), ok = false;
    if (ok) {
        self->argc = json_array_size (argv);
        self->argv = calloc (self->argc + 1, sizeof (char *));
        for (size_t i = 0; ok && self->argv && i < self->argc; i++) {
            const char *s = json_string_value (json_array_get (argv, i));
            if (!s)
                snprintf (why, sizeof why, "\"argv\" item %zu is not a string", i), ok = false;
            else
                self->argv[i] = strdup (s);
        }
    }
    if (ok)
        self->display_name = s_opt_string (json, "display_name", name, &ok, why, sizeof why);
    if (ok)
        self->language = s_opt_string (json, "language", "", &ok, why, sizeof why);
    if (ok) {
        char *mode = s_opt_string (json, "interrupt_mode", "signal", &ok, why, sizeof why);
        if (ok && !mode)
            snprintf (why, sizeof why, "out of memory"), ok = false;
        if (ok && strcmp (mode, "signal") != 0 && strcmp (mode, "message") != 0)
            snprintf (why, sizeof why, "\"interrupt_mode\" must be \"signal\" or \"message\""), ok = false;
        self->interrupt_by_message = ok && strcmp (mode, "message") == 0;
        free (mode);
    }
    if (ok) {
        json_t *env = json_object_get (json, "env");
        const char *k;
        json_t *v;
        if (env && !json_is_object (env))
            snprintf (why, sizeof why, "\"env\" must be an object of strings"), ok = false;
        json_object_foreach (env, k, v)
            if (ok && !json_is_string (v))
                snprintf (why, sizeof why, "\"env\" value of %s is not a string", k), ok = false;
        if (ok)
            self->env = env ? json_incref (env) : json_object ();
    }
    json_t *metadata = json_object_get (json, "metadata");
    if (ok && metadata && !json_is_object (metadata))
        snprintf (why, sizeof why, "\"metadata\" must be an object"), ok = false;
    if (ok && (!self->name || !self->resource_dir || !self->argv || !self->env))
        snprintf (why, sizeof why, "out of memory"), ok = false;
    if (!ok) {
        snprintf (err, err_len, "kernelspec %s: %s/kernel.json: %s", name, resource_dir, why);
        ks_spec_destroy (&self);
    }
    return self;
}

ks_spec_t *
ks_spec_load (const char *name, const char *resource_dir, char *err, size_t err_len)
{
    char path[4096];
    FILE *f = NULL;
    if (snprintf (path, sizeof path, "%s/kernel.json", resource_dir) < (int) sizeof path)
        f = fopen (path, "re");
    else
        errno = ENAMETOOLONG;
    if (!f) {
        snprintf (err, err_len, "kernelspec %s: cannot read %s: %s", name, path,
                  strerror (errno));
        return NULL;
    }
    char *text = malloc (MAX_SPEC_BYTES + 1);
    size_t len = text ? fread (text, 1, MAX_SPEC_BYTES + 1, f) : 0;
    fclose (f);
    ks_spec_t *self = NULL;
    if (!text)
        snprintf (err, err_len, "out of memory");
    else if (len > MAX_SPEC_BYTES)
        snprintf (err, err_len, "kernelspec %s: %s is larger than 1 MiB", name, path);
    else
        self = ks_spec_parse (name, resource_dir, text, len, err, err_len);
    free (text);
    return self;
}

/* Returns s with each from[k] replaced by to[k] in one left-to-right pass
 * (new string). */
static char *
s_replace2 (const char *s, const char *from[2], const char *to[2])
{
    s_buf_t out = {0};
    while (*s) {
        int k = -1;
        for (int j = 0; j < 2 && k < 0; j++)
            if (strncmp (s, from[j], strlen (from[j])) == 0)
                k = j;
        if (k >= 0) {
            s_buf_add (&out, to[k], strlen (to[k]));
            s += strlen (from[k]);
        } else
            s_buf_add (&out, s++, 1);
    }
    return s_buf_finish (&out);
}

/* Jupyter runs a kernelspec whose argv[0] is "python" or "python3" with
 * its own Python (sys.executable), whatever PATH holds: here that is the
 * system's Python, where Debian puts ipykernel and the kernels' packages.
 * Returns that path, or NULL to keep argv0. */
static const char *
s_jupyter_python (const char *argv0)
{
    static const char system_python[] = "/usr/bin/python3";
    if (strcmp (argv0, "python") != 0 && strcmp (argv0, "python3") != 0)
        return NULL;
    return access (system_python, X_OK) == 0 ? system_python : NULL;
}

char **
ks_spec_argv (const ks_spec_t *self, const char *connection_file)
{
    char **argv = calloc (self->argc + 1, sizeof (char *));
    if (!argv)
        return NULL;
    for (size_t i = 0; i < self->argc; i++) {
        /* one pass, as jupyter_client: a substituted value is not scanned */
        const char *from[2] = {"{connection_file}", "{resource_dir}"};
        const char *to[2] = {connection_file, self->resource_dir};
        const char *python = i == 0 ? s_jupyter_python (self->argv[0]) : NULL;
        argv[i] = python ? strdup (python) : s_replace2 (self->argv[i], from, to);
        if (!argv[i]) {
            ks_strv_free (argv);
            return NULL;
        }
    }
    return argv;
}

bool
ks_spec_supports_ipc (const ks_spec_t *self)
{
    json_t *codebox = json_object_get (json_object_get (self->json, "metadata"), "codebox");
    const char *transport = json_string_value (json_object_get (codebox, "transport"));
    if (transport)
        return strcmp (transport, "ipc") == 0;
    for (size_t i = 0; i < self->argc; i++)
        if (strstr (self->argv[i], "ipykernel"))
            return true;
    return false;
}
