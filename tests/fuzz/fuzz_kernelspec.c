/* fuzz_kernelspec: libFuzzer target for ks_spec_parse (kernel.json text),
 * and for what runs on a parsed spec: ks_spec_argv, ks_expand_env on every
 * env value, ks_spec_supports_ipc.
 *
 * Input format: the whole input is the kernel.json text (not
 * NUL-terminated). The same bytes, cut at the first NUL, also go to
 * ks_expand_env as a template string.
 *
 * Checked properties (a failure aborts): a parse either returns a spec whose
 * fields are all set (argc >= 1, argv NULL-terminated with argc strings,
 * display_name, language, env an object of strings) or NULL with a
 * non-empty, NUL-terminated error that fits its buffer, also when the
 * buffer is tiny; argv substitution leaves no {connection_file}. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ks_spec.h"

static void
s_fail (const char *what)
{
    fprintf (stderr, "fuzz_kernelspec: %s\n", what);
    abort ();
}

static void
s_check_spec (const ks_spec_t *spec)
{
    if (!spec->name || !spec->resource_dir || !spec->argv || spec->argc == 0
        || !spec->display_name || !spec->language || !json_is_object (spec->env)
        || !json_is_object (spec->json))
        s_fail ("a parsed spec lacks a field");
    for (size_t i = 0; i < spec->argc; i++)
        if (!spec->argv[i])
            s_fail ("argv has a NULL before argc");
    if (spec->argv[spec->argc])
        s_fail ("argv is not NULL-terminated");
    const char *k;
    json_t *v;
    json_object_foreach (spec->env, k, v) {
        if (!json_is_string (v))
            s_fail ("env value is not a string");
        char *expanded = ks_expand_env (json_string_value (v));
        if (!expanded)
            s_fail ("ks_expand_env returned NULL");
        free (expanded);
    }
    char **argv = ks_spec_argv (spec, "/run/codebox/kernel-fuzz.json");
    if (!argv)
        s_fail ("ks_spec_argv returned NULL");
    for (size_t i = 0; i < spec->argc; i++) {
        if (!argv[i])
            s_fail ("substituted argv is short");
        if (strstr (argv[i], "{connection_file}"))
            s_fail ("{connection_file} left in argv");
    }
    if (argv[spec->argc])
        s_fail ("substituted argv is not NULL-terminated");
    ks_strv_free (argv);
    (void) ks_spec_supports_ipc (spec);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char err[256];
    memset (err, 'X', sizeof err);
    ks_spec_t *spec = ks_spec_parse ("fuzz", "/opt/kernels/fuzz", (const char *) data, size,
                                     err, sizeof err);
    if (spec) {
        s_check_spec (spec);
        ks_spec_destroy (&spec);
        if (spec)
            s_fail ("ks_spec_destroy did not null the pointer");
    } else if (err[0] == '\0' || !memchr (err, '\0', sizeof err))
        s_fail ("NULL without an error message");

    /* The same input with a tiny error buffer must not overrun it. */
    char small[5];
    memset (small, 'X', sizeof small);
    spec = ks_spec_parse ("fuzz", "/opt/kernels/fuzz", (const char *) data, size, small,
                          sizeof small);
    if (!spec && !memchr (small, '\0', sizeof small))
        s_fail ("error not terminated in a small buffer");
    ks_spec_destroy (&spec);

    char *text = malloc (size + 1);
    if (!text)
        s_fail ("out of memory");
    memcpy (text, data, size);
    text[size] = '\0';
    char *expanded = ks_expand_env (text);
    if (!expanded)
        s_fail ("ks_expand_env returned NULL");
    free (expanded);
    free (text);
    return 0;
}
