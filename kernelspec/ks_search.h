/* ks_search: finds kernelspecs the way Jupyter does, in this order:
 * the CODEBOX_KERNEL_PATH folders (each a folder of kernelspec folders, or
 * one kernelspec folder itself), each JUPYTER_PATH entry + /kernels,
 * JUPYTER_DATA_DIR (or ~/.local/share/jupyter) + /kernels,
 * /usr/local/share/jupyter/kernels, /usr/share/jupyter/kernels.
 * Names match case-insensitively; the first found wins. Reads the
 * environment when called; no threads of its own. */
#ifndef KS_SEARCH_H
#define KS_SEARCH_H

#include <stddef.h>

#include "ks_spec.h"

/* Returns the folders searched, in order, as a new NULL-terminated vector
 * (free with ks_strv_free). kernel_path is CODEBOX_KERNEL_PATH or NULL. */
char **ks_search_dirs (const char *kernel_path);

/* Finds and parses the spec called name. On failure returns NULL and
 * writes into err either that no such kernelspec exists (with the names that
 * do) or why the first one found is broken. */
ks_spec_t *ks_search_find (const char *kernel_path, const char *name, char *err,
                           size_t err_len);

/* Finds every kernelspec, first found wins per name, sorted by name.
 * *specs_p gets a new array of *n_p specs (free with ks_search_free).
 * Broken specs are skipped; each one's error goes to warn (if not NULL).
 * Returns 0 or -ENOMEM. */
typedef void (ks_warn_fn) (const char *message, void *arg);
int ks_search_all (const char *kernel_path, ks_spec_t ***specs_p, size_t *n_p,
                   ks_warn_fn *warn, void *arg);

/* Frees an array from ks_search_all. */
void ks_search_free (ks_spec_t **specs, size_t n);

/* The language (as kernelspecs name it in "language") of a source file,
 * by its extension, case-insensitively: .py python, .js/.mjs/.cjs
 * javascript, .ts typescript, .r r, .jl julia, .m octave, .rb ruby,
 * .sh/.bash bash, .scala scala, .go go, .rs rust, .lua lua, .pl perl,
 * .sql sql; NULL when there is no extension or it is not one of these. */
const char *ks_search_language_of (const char *path);

/* The name of a kernelspec for language (compared case-insensitively):
 * preferred when it is one, else the first by name. A new string, or NULL
 * when none is found. */
char *ks_search_name_for_language (const char *kernel_path, const char *language,
                                   const char *preferred);

/* True when name is a valid kernelspec name: 1-64 of [A-Za-z0-9._-]. */
int ks_search_valid_name (const char *name);

#endif
