/* ks_search: kernelspec discovery over the Jupyter search path. Runs in
 * whichever thread calls it; touches only the file system and getenv. */
#include "ks_search.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* Appends a copy of dir to the vector (*v, *n). Returns 0 or -ENOMEM. */
static int
s_push (char ***v, size_t *n, const char *dir)
{
    if (!dir || !*dir)
        return 0;
    char **grown = realloc (*v, (*n + 2) * sizeof (char *));
    if (!grown)
        return -ENOMEM;
    *v = grown;
    if (!(grown[*n] = strdup (dir)))
        return -ENOMEM;
    grown[++*n] = NULL;
    return 0;
}

/* Pushes each entry of a ':'-separated list, with suffix appended. */
static int
s_push_list (char ***v, size_t *n, const char *list, const char *suffix)
{
    if (!list)
        return 0;
    char *copy = strdup (list), *save = NULL;
    if (!copy)
        return -ENOMEM;
    int rc = 0;
    for (char *tok = strtok_r (copy, ":", &save); tok && !rc; tok = strtok_r (NULL, ":", &save)) {
        char dir[4096];
        if (snprintf (dir, sizeof dir, "%s%s", tok, suffix) < (int) sizeof dir)
            rc = s_push (v, n, dir);
    }
    free (copy);
    return rc;
}

char **
ks_search_dirs (const char *kernel_path)
{
    char **v = calloc (1, sizeof (char *));
    size_t n = 0;
    char dir[4096];
    int rc = v ? 0 : -ENOMEM;
    if (!rc)
        rc = s_push_list (&v, &n, kernel_path, "");
    if (!rc)
        rc = s_push_list (&v, &n, getenv ("JUPYTER_PATH"), "/kernels");
    const char *data_dir = getenv ("JUPYTER_DATA_DIR");
    const char *home = getenv ("HOME");
    int len = 0;
    if (data_dir && *data_dir)
        len = snprintf (dir, sizeof dir, "%s/kernels", data_dir);
    else if (home && *home)
        len = snprintf (dir, sizeof dir, "%s/.local/share/jupyter/kernels", home);
    if (len <= 0 || len >= (int) sizeof dir)
        dir[0] = '\0';
    if (!rc)
        rc = s_push (&v, &n, dir);
    if (!rc)
        rc = s_push (&v, &n, "/usr/local/share/jupyter/kernels");
    if (!rc)
        rc = s_push (&v, &n, "/usr/share/jupyter/kernels");
    if (rc) {
        ks_strv_free (v);
        return NULL;
    }
    return v;
}

int
ks_search_valid_name (const char *name)
{
    size_t len = strlen (name);
    if (len == 0 || len > 64)
        return 0;
    for (const char *p = name; *p; p++)
        if (!isalnum ((unsigned char) *p) && *p != '.' && *p != '_' && *p != '-')
            return 0;
    return 1;
}

static int
s_has_kernel_json (const char *dir)
{
    char path[4096];
    struct stat st;
    if (snprintf (path, sizeof path, "%s/kernel.json", dir) >= (int) sizeof path)
        return 0;
    return stat (path, &st) == 0 && S_ISREG (st.st_mode);
}

/* qsort comparator for an array of strings. */
static int
s_by_string (const void *a, const void *b)
{
    return strcmp (*(char *const *) a, *(char *const *) b);
}

/* Calls found(name, resource_dir, arg) for every kernelspec folder in the
 * search path, in search order, until it returns non-zero. */
typedef int (s_found_fn) (const char *name, const char *resource_dir, void *arg);

static int
s_walk (const char *kernel_path, s_found_fn *found, void *arg)
{
    char **dirs = ks_search_dirs (kernel_path);
    if (!dirs)
        return -ENOMEM;
    int stop = 0;
    for (char **d = dirs; *d && !stop; d++) {
        size_t len = strlen (*d);
        while (len > 1 && (*d)[len - 1] == '/')
            (*d)[--len] = '\0';
        if (s_has_kernel_json (*d)) {       /* a kernelspec folder itself */
            const char *slash = strrchr (*d, '/');
            const char *name = slash ? slash + 1 : *d;
            if (ks_search_valid_name (name))
                stop = found (name, *d, arg);
            continue;
        }
        DIR *dir = opendir (*d);
        if (!dir)
            continue;
        /* readdir's order is arbitrary; sort the names for stable results */
        char **names = NULL;
        size_t n = 0;
        struct dirent *e;
        while ((e = readdir (dir)))
            if (e->d_name[0] != '.' && ks_search_valid_name (e->d_name))
                s_push (&names, &n, e->d_name);
        closedir (dir);
        if (names)
            qsort (names, n, sizeof (char *), s_by_string);
        for (size_t i = 0; i < n && !stop; i++) {
            char rd[4096];
            if (snprintf (rd, sizeof rd, "%s/%s", *d, names[i]) < (int) sizeof rd
                && s_has_kernel_json (rd))
                stop = found (names[i], rd, arg);
        }
        ks_strv_free (names);
    }
    ks_strv_free (dirs);
    return 0;
}

typedef struct {
    const char *name;
    char *resource_dir;
    char *found_name;
    char **seen;
    size_t n_seen;
} s_find_t;

static int
s_find_cb (const char *name, const char *resource_dir, void *arg)
{
    s_find_t *f = arg;
    if (strcasecmp (name, f->name) == 0) {
        f->resource_dir = strdup (resource_dir);
        f->found_name = strdup (name);
        return 1;
    }
    for (size_t i = 0; i < f->n_seen; i++)
        if (strcasecmp (f->seen[i], name) == 0)
            return 0;
    s_push (&f->seen, &f->n_seen, name);
    return 0;
}

ks_spec_t *
ks_search_find (const char *kernel_path, const char *name, char *err, size_t err_len)
{
    if (!ks_search_valid_name (name)) {
        snprintf (err, err_len, "invalid kernelspec name (use 1-64 of A-Z a-z 0-9 . _ -)");
        return NULL;
    }
    s_find_t f = {.name = name};
    s_walk (kernel_path, s_find_cb, &f);
    ks_spec_t *spec = NULL;
    if (f.resource_dir)
        spec = ks_spec_load (f.found_name, f.resource_dir, err, err_len);
    else {
        int off = snprintf (err, err_len, "no kernelspec named '%s'; available:", name);
        for (size_t i = 0; i < f.n_seen && off > 0 && (size_t) off < err_len; i++)
            off += snprintf (err + off, err_len - (size_t) off, " %s", f.seen[i]);
        if (f.n_seen == 0 && off > 0 && (size_t) off < err_len)
            snprintf (err + off, err_len - (size_t) off, " none (run 'make deps')");
    }
    free (f.resource_dir);
    free (f.found_name);
    ks_strv_free (f.seen);
    return spec;
}

typedef struct {
    ks_spec_t **specs;
    size_t n;
    char **seen;
    size_t n_seen;
    ks_warn_fn *warn;
    void *arg;
    int rc;
} s_all_t;

static int
s_all_cb (const char *name, const char *resource_dir, void *arg)
{
    s_all_t *a = arg;
    for (size_t i = 0; i < a->n_seen; i++)
        if (strcasecmp (a->seen[i], name) == 0)
            return 0;
    /* the first of a name shadows later ones even when it is broken, as
       ks_search_find (and Jupyter) do */
    if (s_push (&a->seen, &a->n_seen, name)) {
        a->rc = -ENOMEM;
        return 1;
    }
    char err[512];
    ks_spec_t *spec = ks_spec_load (name, resource_dir, err, sizeof err);
    if (!spec) {
        if (a->warn)
            a->warn (err, a->arg);
        return 0;
    }
    ks_spec_t **grown = realloc (a->specs, (a->n + 1) * sizeof *grown);
    if (!grown) {
        ks_spec_destroy (&spec);
        a->rc = -ENOMEM;
        return 1;
    }
    a->specs = grown;
    a->specs[a->n++] = spec;
    return 0;
}

static int
s_by_name (const void *a, const void *b)
{
    return strcasecmp ((*(ks_spec_t *const *) a)->name, (*(ks_spec_t *const *) b)->name);
}

int
ks_search_all (const char *kernel_path, ks_spec_t ***specs_p, size_t *n_p,
               ks_warn_fn *warn, void *arg)
{
    s_all_t a = {.warn = warn, .arg = arg};
    int rc = s_walk (kernel_path, s_all_cb, &a);
    ks_strv_free (a.seen);
    if (!rc)
        rc = a.rc;
    if (rc) {
        ks_search_free (a.specs, a.n);
        return rc;
    }
    if (a.n)
        qsort (a.specs, a.n, sizeof *a.specs, s_by_name);
    *specs_p = a.specs;
    *n_p = a.n;
    return 0;
}

void
ks_search_free (ks_spec_t **specs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ks_spec_destroy (&specs[i]);
    free (specs);
}

const char *
ks_search_language_of (const char *path)
{
    static const char *const map[][2] = {
        {"py", "python"}, {"js", "javascript"}, {"mjs", "javascript"}, {"cjs", "javascript"},
        {"ts", "typescript"}, {"r", "r"}, {"jl", "julia"}, {"m", "octave"}, {"rb", "ruby"},
        {"sh", "bash"}, {"bash", "bash"}, {"scala", "scala"}, {"go", "go"}, {"rs", "rust"},
        {"lua", "lua"}, {"pl", "perl"}, {"sql", "sql"},
    };
    const char *base = strrchr (path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr (base, '.');
    if (!dot || dot == base || !dot[1])
        return NULL;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcasecmp (dot + 1, map[i][0]) == 0)
            return map[i][1];
    return NULL;
}

char *
ks_search_name_for_language (const char *kernel_path, const char *language,
                             const char *preferred)
{
    ks_spec_t **specs = NULL;
    size_t n = 0;
    if (ks_search_all (kernel_path, &specs, &n, NULL, NULL) < 0)
        return NULL;
    const char *found = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!specs[i]->language || strcasecmp (specs[i]->language, language) != 0)
            continue;
        if (!found || (preferred && strcmp (specs[i]->name, preferred) == 0))
            found = specs[i]->name;
    }
    char *name = found ? strdup (found) : NULL;
    ks_search_free (specs, n);
    return name;
}
