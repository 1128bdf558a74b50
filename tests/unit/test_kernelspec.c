/* test_kernelspec: ks_spec (kernel.json parsing, argv substitution,
 * environment expansion, the ipc hint) against the folders in
 * fixtures/kernels/{valid,broken}/, and ks_search (the Jupyter search order)
 * against the trees in fixtures/kernels/search/:
 *
 *   kpath/         a CODEBOX_KERNEL_PATH folder of kernelspec folders
 *   cbt-single/    a kernelspec folder given directly in the kernel path
 *   jpath1/, jpath2/   JUPYTER_PATH entries (each has kernels/)
 *   data/          JUPYTER_DATA_DIR (has kernels/)
 *   home/          HOME (has .local/share/jupyter/kernels/)
 *
 * Each kernel.json there has display_name naming the folder it is in, so a
 * test can tell which copy of a shadowed name was found. Every fixture name
 * starts with "cbt-"; the tests assert nothing about other kernelspecs (the
 * machine may have python3 or javascript in /usr/share or /usr/local).
 * Also ks_kernel's rule for when a kernel's iopub rests. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ks_kernel.h"
#include "ks_search.h"
#include "ks_spec.h"
#include "suites.h"
#include "testutil.h"

#define ERR_LEN 512

/* Loads fixtures/kernels/<group>/<name>; returns the spec or NULL, with
 * err filled. resource_dir is absolute. */
static ks_spec_t *
s_load (const char *group, const char *name, char *err)
{
    char rel[256];
    snprintf (rel, sizeof rel, "fixtures/kernels/%s/%s", group, name);
    char *dir = tu_abspath (rel);
    err[0] = '\0';
    ks_spec_t *spec = ks_spec_load (name, dir, err, ERR_LEN);
    free (dir);
    return spec;
}

/* Each broken folder, the words its error must contain. */
static const struct {
    const char *folder;
    const char *words[3];
} s_broken[] = {
    {"not_json", {"not valid JSON", "line", "not_json/kernel.json"}},
    {"top_array", {"must hold a JSON object", "top_array"}},
    {"argv_missing", {"\"argv\"", "non-empty array", "argv_missing"}},
    {"argv_not_array", {"\"argv\"", "non-empty array"}},
    {"argv_empty", {"\"argv\"", "non-empty array"}},
    {"argv_number", {"\"argv\" item 2", "not a string"}},
    {"env_not_object", {"\"env\"", "must be an object"}},
    {"env_value_number", {"\"env\"", "THREADS", "not a string"}},
    {"interrupt_mode_invalid", {"\"interrupt_mode\"", "\"signal\" or \"message\""}},
    {"display_name_number", {"\"display_name\"", "must be a string"}},
    {"language_null", {"\"language\"", "must be a string"}},
    {"metadata_not_object", {"\"metadata\"", "must be an object"}},
    {"no_kernel_json", {"cannot read", "No such file", "no_kernel_json/kernel.json"}},
    {"does_not_exist", {"cannot read", "does_not_exist"}},
};

/* Each broken kernelspec (_i) loads as NULL with an error naming the
 * kernelspec and the problem. */
START_TEST (test_load_broken)
{
    char err[ERR_LEN];
    const char *folder = s_broken[_i].folder;
    ks_spec_t *spec = s_load ("broken", folder, err);
    ck_assert_msg (spec == NULL, "%s loaded", folder);
    ck_assert_msg (strstr (err, folder) != NULL, "%s: error '%s' does not name it", folder, err);
    for (int w = 0; w < 3 && s_broken[_i].words[w]; w++)
        ck_assert_msg (strstr (err, s_broken[_i].words[w]) != NULL,
                       "%s: error '%s' lacks '%s'", folder, err, s_broken[_i].words[w]);
}
END_TEST

/* Every field of a full kernelspec. env stays as written. */
START_TEST (test_load_full)
{
    char err[ERR_LEN];
    ks_spec_t *spec = s_load ("valid", "full", err);
    ck_assert_msg (spec != NULL, "%s", err);
    char *dir = tu_abspath ("fixtures/kernels/valid/full");
    ck_assert_str_eq (spec->name, "full");
    ck_assert_str_eq (spec->resource_dir, dir);
    ck_assert_uint_eq (spec->argc, 5);
    ck_assert_str_eq (spec->argv[0], "{resource_dir}/bin/kernel");
    ck_assert_str_eq (spec->argv[2], "{connection_file}");
    ck_assert_ptr_null (spec->argv[5]);
    ck_assert_str_eq (spec->display_name, "Full Kernel \xe2\x9c\x93");
    ck_assert_str_eq (spec->language, "python");
    ck_assert (spec->interrupt_by_message);
    ck_assert (json_is_object (spec->env));
    ck_assert_uint_eq (json_object_size (spec->env), 3);
    ck_assert_str_eq (json_string_value (json_object_get (spec->env, "EXTRA_PATH")),
                      "${HOME}/bin:$PATH");
    ck_assert_str_eq (json_string_value (json_object_get (spec->env, "PLAIN")), "x");
    ck_assert (json_is_true (json_object_get (json_object_get (spec->json, "metadata"),
                                              "debugger")));
    free (dir);
    ks_spec_destroy (&spec);
    ck_assert_ptr_null (spec);
    ks_spec_destroy (&spec);
    ks_spec_destroy (NULL);
}
END_TEST

/* Only argv given: display_name is the name, language "", interrupt by
 * signal, env empty. */
START_TEST (test_load_minimal_defaults)
{
    char err[ERR_LEN];
    ks_spec_t *spec = s_load ("valid", "minimal", err);
    ck_assert_msg (spec != NULL, "%s", err);
    ck_assert_uint_eq (spec->argc, 3);
    ck_assert_str_eq (spec->argv[0], "node");
    ck_assert_str_eq (spec->display_name, "minimal");
    ck_assert_str_eq (spec->language, "");
    ck_assert (!spec->interrupt_by_message);
    ck_assert (json_is_object (spec->env));
    ck_assert_uint_eq (json_object_size (spec->env), 0);
    ks_spec_destroy (&spec);

    spec = s_load ("valid", "ipykernel", err);
    ck_assert_msg (spec != NULL, "%s", err);
    ck_assert_str_eq (spec->display_name, "Python 3 (ipykernel)");
    ck_assert (!spec->interrupt_by_message);
    ks_spec_destroy (&spec);
}
END_TEST

/* ks_spec_parse works on text directly, with or without a final NUL, and
 * refuses NUL bytes and text after the object. */
START_TEST (test_parse_text)
{
    char err[ERR_LEN];
    const char text[] = "{\"argv\":[\"a\",\"{connection_file}\"],\"language\":\"r\"}";
    ks_spec_t *spec = ks_spec_parse ("r", "/opt/r", text, sizeof text - 1, err, sizeof err);
    ck_assert_msg (spec != NULL, "%s", err);
    ck_assert_str_eq (spec->language, "r");
    ck_assert_str_eq (spec->resource_dir, "/opt/r");
    ks_spec_destroy (&spec);
    /* len stops before the closing brace: not JSON */
    spec = ks_spec_parse ("r", "/opt/r", text, sizeof text - 2, err, sizeof err);
    ck_assert_ptr_null (spec);
    ck_assert_ptr_nonnull (strstr (err, "not valid JSON"));
    const char trailing[] = "{\"argv\":[\"a\"]} {}";
    spec = ks_spec_parse ("r", "/opt/r", trailing, sizeof trailing - 1, err, sizeof err);
    ck_assert_ptr_null (spec);
    const char nul[] = "{\"argv\":[\"a\\u0000b\"]}";
    spec = ks_spec_parse ("r", "/opt/r", nul, sizeof nul - 1, err, sizeof err);
    ck_assert_ptr_null (spec);
    /* a short error buffer is cut, not overrun */
    char small[8];
    memset (small, 'X', sizeof small);
    spec = ks_spec_parse ("r", "/opt/r", "[]", 2, small, sizeof small);
    ck_assert_ptr_null (spec);
    ck_assert_uint_eq (strlen (small), sizeof small - 1);
}
END_TEST

/* A kernel.json larger than 1 MiB is refused by name. */
START_TEST (test_load_too_large)
{
    char *dir = tu_mkdtemp ();
    char path[4096];
    snprintf (path, sizeof path, "%s/kernel.json", dir);
    size_t len = (1 << 20) + 1;
    char *text = malloc (len);
    ck_assert_ptr_nonnull (text);
    memset (text, ' ', len);
    memcpy (text, "{\"argv\":[\"x\"]}", 14);
    tu_write_file (path, text, len);
    char err[ERR_LEN];
    ks_spec_t *spec = ks_spec_load ("big", dir, err, sizeof err);
    ck_assert_ptr_null (spec);
    ck_assert_msg (strstr (err, "larger than 1 MiB") != NULL, "%s", err);
    /* exactly 1 MiB is fine */
    tu_write_file (path, text, len - 1);
    spec = ks_spec_load ("big", dir, err, sizeof err);
    ck_assert_msg (spec != NULL, "%s", err);
    ks_spec_destroy (&spec);
    free (text);
    tu_rmtree (dir);
    free (dir);
}
END_TEST

/* {connection_file} and {resource_dir} are substituted everywhere they
 * occur; other braces stay; the spec's own argv is unchanged. */
START_TEST (test_argv_substitution)
{
    char err[ERR_LEN];
    ks_spec_t *spec = s_load ("valid", "full", err);
    ck_assert_msg (spec != NULL, "%s", err);
    char **argv = ks_spec_argv (spec, "/run/k/kernel-1.json");
    ck_assert_ptr_nonnull (argv);
    char want0[4096], want3[4096];
    snprintf (want0, sizeof want0, "%s/bin/kernel", spec->resource_dir);
    snprintf (want3, sizeof want3, "--log=%s//run/k/kernel-1.json.log", spec->resource_dir);
    ck_assert_str_eq (argv[0], want0);
    ck_assert_str_eq (argv[1], "-f");
    ck_assert_str_eq (argv[2], "/run/k/kernel-1.json");
    ck_assert_str_eq (argv[3], want3);
    ck_assert_str_eq (argv[4], "{other}");
    ck_assert_ptr_null (argv[5]);
    ck_assert_str_eq (spec->argv[2], "{connection_file}");
    ks_strv_free (argv);
    ks_strv_free (NULL);
    ks_spec_destroy (&spec);
}
END_TEST

/* ks_expand_env follows Python's Template.safe_substitute, which is what
 * jupyter_client applies to a kernelspec's env. */
START_TEST (test_expand_env)
{
    setenv ("HOME", "/home/tester", 1);
    setenv ("CBT_EMPTY", "", 1);
    unsetenv ("UNDEFINED_VAR_X");
    unsetenv ("UNDEFINED");
    unsetenv ("HOMEX");
    static const char *cases[][2] = {
        {"${HOME}/x", "/home/tester/x"},
        {"$HOME/x", "/home/tester/x"},
        {"$HOME$HOME", "/home/tester/home/tester"},
        {"a-${HOME}}", "a-/home/tester}"},
        {"${UNDEFINED_VAR_X}", "${UNDEFINED_VAR_X}"},
        {"$UNDEFINED", "$UNDEFINED"},
        {"$HOMEX", "$HOMEX"},
        {"[$CBT_EMPTY]", "[]"},
        {"$$", "$"},
        {"$$HOME", "$HOME"},
        {"x$$$HOME", "x$/home/tester"},
        {"$$$$", "$$"},
        {"a$", "a$"},
        {"${HOME", "${HOME"},
        {"${}", "${}"},
        {"${ HOME}", "${ HOME}"},
        {"$1", "$1"},
        {"", ""},
        {"\xc3\xa9$HOME-\xc3\xa9", "\xc3\xa9/home/tester-\xc3\xa9"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *out = ks_expand_env (cases[i][0]);
        ck_assert_ptr_nonnull (out);
        ck_assert_msg (strcmp (out, cases[i][1]) == 0, "'%s' gave '%s', want '%s'", cases[i][0],
                       out, cases[i][1]);
        free (out);
    }
}
END_TEST

/* ipykernel binds ipc sockets; node does not; metadata.codebox.transport
 * overrides both ways. */
START_TEST (test_supports_ipc)
{
    static const struct {
        const char *folder;
        bool ipc;
    } cases[] = {
        {"ipykernel", true}, {"minimal", false}, {"ipykernel_tcp", false},
        {"node_ipc", true}, {"full", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char err[ERR_LEN];
        ks_spec_t *spec = s_load ("valid", cases[i].folder, err);
        ck_assert_msg (spec != NULL, "%s", err);
        ck_assert_msg (ks_spec_supports_ipc (spec) == cases[i].ipc, "%s: expected %d",
                       cases[i].folder, cases[i].ipc);
        ks_spec_destroy (&spec);
    }
}
END_TEST

/* --- search --- */

/* Points the environment at the search fixtures. data: whether
 * JUPYTER_DATA_DIR is set (else HOME's data folder is used). Returns the
 * kernel path "kpath:cbt-single" (absolute, new). */
static char *
s_search_env (bool jupyter_path, bool data)
{
    char *jp1 = tu_abspath ("fixtures/kernels/search/jpath1");
    char *jp2 = tu_abspath ("fixtures/kernels/search/jpath2");
    char *data_dir = tu_abspath ("fixtures/kernels/search/data");
    char *home = tu_abspath ("fixtures/kernels/search/home");
    char *kpath = tu_abspath ("fixtures/kernels/search/kpath");
    char *single = tu_abspath ("fixtures/kernels/search/cbt-single");
    char list[8192];
    snprintf (list, sizeof list, "%s:%s", jp1, jp2);
    if (jupyter_path)
        setenv ("JUPYTER_PATH", list, 1);
    else
        unsetenv ("JUPYTER_PATH");
    if (data)
        setenv ("JUPYTER_DATA_DIR", data_dir, 1);
    else
        unsetenv ("JUPYTER_DATA_DIR");
    setenv ("HOME", home, 1);
    char *out = NULL;
    ck_assert_int_ge (asprintf (&out, "%s:%s", kpath, single), 0);
    free (jp1), free (jp2), free (data_dir), free (home), free (kpath), free (single);
    return out;
}

/* Finds name and returns its display_name (new), or NULL with err. */
static char *
s_find_display (const char *kernel_path, const char *name, char *err)
{
    ks_spec_t *spec = ks_search_find (kernel_path, name, err, ERR_LEN);
    if (!spec)
        return NULL;
    char *out = strdup (spec->display_name);
    ks_spec_destroy (&spec);
    return out;
}

static void
s_assert_found (const char *kernel_path, const char *name, const char *display)
{
    char err[ERR_LEN] = "";
    char *got = s_find_display (kernel_path, name, err);
    ck_assert_msg (got != NULL, "%s not found: %s", name, err);
    ck_assert_msg (strcmp (got, display) == 0, "%s found in '%s', want '%s'", name, got, display);
    free (got);
}

/* The folders, in order: kernel path entries, JUPYTER_PATH entries +
 * /kernels (empty entries skipped), JUPYTER_DATA_DIR/kernels, then the
 * system folders. */
START_TEST (test_dirs_order)
{
    setenv ("JUPYTER_PATH", "/jp/a::/jp/b", 1);
    setenv ("JUPYTER_DATA_DIR", "/data", 1);
    setenv ("HOME", "/home/u", 1);
    char **dirs = ks_search_dirs ("/k/one::/k/two");
    ck_assert_ptr_nonnull (dirs);
    static const char *want[] = {
        "/k/one", "/k/two", "/jp/a/kernels", "/jp/b/kernels", "/data/kernels",
        "/usr/local/share/jupyter/kernels", "/usr/share/jupyter/kernels", NULL,
    };
    for (size_t i = 0; want[i]; i++) {
        ck_assert_msg (dirs[i] != NULL, "only %zu folders", i);
        ck_assert_str_eq (dirs[i], want[i]);
    }
    ck_assert_ptr_null (dirs[7]);
    ks_strv_free (dirs);

    /* without JUPYTER_DATA_DIR, HOME's data folder takes its place */
    unsetenv ("JUPYTER_PATH");
    unsetenv ("JUPYTER_DATA_DIR");
    dirs = ks_search_dirs (NULL);
    ck_assert_ptr_nonnull (dirs);
    ck_assert_str_eq (dirs[0], "/home/u/.local/share/jupyter/kernels");
    ck_assert_str_eq (dirs[1], "/usr/local/share/jupyter/kernels");
    ck_assert_str_eq (dirs[2], "/usr/share/jupyter/kernels");
    ck_assert_ptr_null (dirs[3]);
    ks_strv_free (dirs);

    /* an empty JUPYTER_DATA_DIR counts as unset */
    setenv ("JUPYTER_DATA_DIR", "", 1);
    dirs = ks_search_dirs ("");
    ck_assert_str_eq (dirs[0], "/home/u/.local/share/jupyter/kernels");
    ks_strv_free (dirs);
}
END_TEST

/* A name in every folder: the kernel path wins. */
START_TEST (test_kernel_path_wins)
{
    char *kp = s_search_env (true, true);
    s_assert_found (kp, "cbt-shadow1", "kernel_path");
    s_assert_found (kp, "cbt-kpath-only", "kernel_path");
    /* without the kernel path, the next in line */
    s_assert_found (NULL, "cbt-shadow1", "JUPYTER_PATH 1");
    free (kp);
}
END_TEST

/* JUPYTER_PATH wins over JUPYTER_DATA_DIR; its first entry over its second. */
START_TEST (test_jupyter_path_wins)
{
    char *kp = s_search_env (true, true);
    s_assert_found (kp, "cbt-shadow2", "JUPYTER_PATH 1");
    s_assert_found (kp, "cbt-jpath2-only", "JUPYTER_PATH 2");
    free (kp);
    kp = s_search_env (false, true);
    s_assert_found (kp, "cbt-shadow2", "JUPYTER_DATA_DIR");
    free (kp);
}
END_TEST

/* JUPYTER_DATA_DIR wins over HOME: when it is set, HOME's data folder is
 * not searched at all (as jupyter_core's jupyter_data_dir). */
START_TEST (test_data_dir_wins_over_home)
{
    char err[ERR_LEN];
    char *kp = s_search_env (false, true);
    s_assert_found (kp, "cbt-shadow3", "JUPYTER_DATA_DIR");
    char *got = s_find_display (kp, "cbt-home-only", err);
    ck_assert_msg (got == NULL, "HOME searched although JUPYTER_DATA_DIR is set");
    free (kp);
    kp = s_search_env (false, false);
    s_assert_found (kp, "cbt-shadow3", "HOME");
    s_assert_found (kp, "cbt-home-only", "HOME");
    s_assert_found (kp, "cbt-shadow1", "kernel_path");
    free (kp);
}
END_TEST

/* Names match whatever their case; the spec keeps its folder's name. */
START_TEST (test_find_case_insensitive)
{
    char err[ERR_LEN];
    char *kp = s_search_env (true, true);
    ks_spec_t *spec = ks_search_find (kp, "CBT-Shadow1", err, sizeof err);
    ck_assert_msg (spec != NULL, "%s", err);
    ck_assert_str_eq (spec->name, "cbt-shadow1");
    ck_assert_str_eq (spec->display_name, "kernel_path");
    ks_spec_destroy (&spec);
    /* cbt-MixedCase (JUPYTER_PATH) shadows cbt-mixedcase (JUPYTER_DATA_DIR) */
    spec = ks_search_find (kp, "cbt-mixedcase", err, sizeof err);
    ck_assert_msg (spec != NULL, "%s", err);
    ck_assert_str_eq (spec->name, "cbt-MixedCase");
    ck_assert_str_eq (spec->display_name, "JUPYTER_PATH 1");
    ks_spec_destroy (&spec);
    free (kp);
}
END_TEST

/* A kernel path entry holding kernel.json itself is found under its
 * folder's name, in any case. */
START_TEST (test_find_single_folder)
{
    char err[ERR_LEN];
    char *kp = s_search_env (true, true);
    ks_spec_t *spec = ks_search_find (kp, "CBT-SINGLE", err, sizeof err);
    ck_assert_msg (spec != NULL, "%s", err);
    ck_assert_str_eq (spec->name, "cbt-single");
    ck_assert_str_eq (spec->display_name, "single");
    char *dir = tu_abspath ("fixtures/kernels/search/cbt-single");
    ck_assert_str_eq (spec->resource_dir, dir);
    free (dir);
    ks_spec_destroy (&spec);
    free (kp);
    /* alone as the whole kernel path */
    char *single = tu_abspath ("fixtures/kernels/search/cbt-single");
    s_assert_found (single, "cbt-single", "single");
    free (single);
}
END_TEST

/* An unknown name: NULL, and the error lists names that exist. Hidden
 * folders, folders with invalid names and folders without kernel.json are
 * not kernelspecs. */
START_TEST (test_find_unknown)
{
    char err[ERR_LEN];
    char *kp = s_search_env (true, true);
    ks_spec_t *spec = ks_search_find (kp, "cbt-nope", err, sizeof err);
    ck_assert_ptr_null (spec);
    ck_assert_msg (strstr (err, "no kernelspec named 'cbt-nope'") != NULL, "%s", err);
    static const char *listed[] = {"cbt-shadow1", "cbt-kpath-only", "cbt-single",
                                   "cbt-jpath2-only", "cbt-shadow3"};
    for (size_t i = 0; i < sizeof listed / sizeof *listed; i++)
        ck_assert_msg (strstr (err, listed[i]) != NULL, "'%s' lacks %s", err, listed[i]);
    ck_assert_msg (strstr (err, "cbt-home-only") == NULL, "'%s' lists HOME's kernel", err);
    /* each name listed once */
    const char *first = strstr (err, "cbt-shadow1");
    ck_assert_ptr_null (strstr (first + 1, "cbt-shadow1"));

    ck_assert_ptr_null (ks_search_find (kp, ".cbt-hidden", err, sizeof err));
    ck_assert_ptr_nonnull (strstr (err, "no kernelspec named"));
    ck_assert_ptr_null (ks_search_find (kp, "cbt-no-json", err, sizeof err));
    ck_assert_ptr_nonnull (strstr (err, "no kernelspec named"));
    free (kp);
}
END_TEST

/* A name that is not a kernelspec name (a path, spaces, too long) is
 * refused before any folder is read. */
START_TEST (test_find_invalid_name)
{
    char err[ERR_LEN];
    char *kp = s_search_env (true, true);
    char long_name[66];
    memset (long_name, 'x', 65);
    long_name[65] = '\0';
    const char *bad[] = {"../cbt-single", "cbt bad name", "", "a/b", long_name};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        ck_assert_ptr_null (ks_search_find (kp, bad[i], err, sizeof err));
        ck_assert_msg (strstr (err, "invalid kernelspec name") != NULL, "'%s': %s", bad[i], err);
    }
    free (kp);
}
END_TEST

/* The first copy found is broken: the error says why. */
START_TEST (test_find_broken)
{
    char err[ERR_LEN];
    char *kp = s_search_env (true, true);
    ck_assert_ptr_null (ks_search_find (kp, "cbt-broken", err, sizeof err));
    ck_assert_msg (strstr (err, "cbt-broken") && strstr (err, "not valid JSON"), "%s", err);
    free (kp);
}
END_TEST

typedef struct {
    char text[4096];
    int count;
} s_warnings_t;

static void
s_warn_cb (const char *message, void *arg)
{
    s_warnings_t *w = arg;
    size_t len = strlen (w->text);
    snprintf (w->text + len, sizeof w->text - len, "%s\n", message);
    w->count++;
}

/* Returns the spec called name in the array, or NULL. */
static ks_spec_t *
s_in (ks_spec_t **specs, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp (specs[i]->name, name) == 0)
            return specs[i];
    return NULL;
}

/* Every kernelspec once, first found wins, sorted by name; broken ones are
 * skipped and reported through warn. */
START_TEST (test_search_all)
{
    char *kp = s_search_env (true, true);
    ks_spec_t **specs = NULL;
    size_t n = 0;
    s_warnings_t warnings = {.count = 0};
    ck_assert_int_eq (ks_search_all (kp, &specs, &n, s_warn_cb, &warnings), 0);
    static const struct {
        const char *name, *display;
    } want[] = {
        {"cbt-jpath2-only", "JUPYTER_PATH 2"}, {"cbt-kpath-only", "kernel_path"},
        {"cbt-MixedCase", "JUPYTER_PATH 1"}, {"cbt-shadow1", "kernel_path"},
        {"cbt-shadow2", "JUPYTER_PATH 1"}, {"cbt-shadow3", "JUPYTER_DATA_DIR"},
        {"cbt-single", "single"},
    };
    size_t n_want = sizeof want / sizeof *want;
    for (size_t i = 0; i < n_want; i++) {
        ks_spec_t *spec = s_in (specs, n, want[i].name);
        ck_assert_msg (spec != NULL, "%s missing", want[i].name);
        ck_assert_str_eq (spec->display_name, want[i].display);
    }
    /* our fixtures appear in this order, and nothing else of ours */
    size_t ours = 0;
    for (size_t i = 0; i < n; i++) {
        if (strncasecmp (specs[i]->name, "cbt", 3) != 0)
            continue;
        ck_assert_msg (ours < n_want, "unexpected %s", specs[i]->name);
        ck_assert_str_eq (specs[i]->name, want[ours].name);
        ours++;
    }
    ck_assert_uint_eq (ours, n_want);
    /* the whole list is sorted and each name is there once, any case */
    for (size_t i = 1; i < n; i++)
        ck_assert_msg (strcasecmp (specs[i - 1]->name, specs[i]->name) < 0, "%s before %s",
                       specs[i - 1]->name, specs[i]->name);
    ck_assert_ptr_null (s_in (specs, n, "cbt-broken"));
    ck_assert_ptr_null (s_in (specs, n, "cbt-mixedcase"));
    ck_assert_ptr_null (s_in (specs, n, "cbt-home-only"));
    ck_assert_ptr_null (s_in (specs, n, ".cbt-hidden"));
    ck_assert_ptr_null (s_in (specs, n, "cbt bad name"));
    ck_assert_ptr_null (s_in (specs, n, "cbt-no-json"));
    ck_assert_int_ge (warnings.count, 1);
    ck_assert_msg (strstr (warnings.text, "cbt-broken") && strstr (warnings.text, "not valid JSON"),
                   "warnings: %s", warnings.text);
    ks_search_free (specs, n);

    /* without a warn callback the broken one is skipped quietly */
    ck_assert_int_eq (ks_search_all (kp, &specs, &n, NULL, NULL), 0);
    ck_assert_ptr_null (s_in (specs, n, "cbt-broken"));
    ck_assert_ptr_nonnull (s_in (specs, n, "cbt-single"));
    ks_search_free (specs, n);
    free (kp);
}
END_TEST

START_TEST (test_valid_name)
{
    char n64[65], n65[66];
    memset (n64, 'a', 64), n64[64] = '\0';
    memset (n65, 'a', 65), n65[65] = '\0';
    const char *good[] = {"python3", "ir", "a", "Py-3.11_x", "A.B-c_d", ".hidden", n64};
    const char *bad[] = {"", "a b", "a/b", "../x", "caf\xc3\xa9", "a:b", "a\tb", "$x", n65};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        ck_assert_msg (ks_search_valid_name (good[i]), "'%s' refused", good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg (!ks_search_valid_name (bad[i]), "'%s' accepted", bad[i]);
}
END_TEST

/* ks_iopub_rest_after_read: a read of a little rests iopub from now
 * (again), a read of more (messages or bytes) or by a kernel not ready has
 * it watched, and a read of nothing keeps a rest until its end. */
START_TEST (test_iopub_rest_rule)
{
    const int64_t now = 1000000, rest = KS_IOPUB_REST_MS;
    /* a little: rests from now, whether it rested or not */
    ck_assert_int_eq (ks_iopub_rest_after_read (0, 1, 300, true, now), now + rest);
    ck_assert_int_eq (ks_iopub_rest_after_read (now - 1, 4, 2400, true, now), now + rest);
    ck_assert_int_eq (ks_iopub_rest_after_read (0, KS_IOPUB_REST_MAX_MSGS,
                                                KS_IOPUB_REST_MAX_BYTES, true, now), now + rest);
    /* much: watched, even in the middle of a rest */
    ck_assert_int_eq (ks_iopub_rest_after_read (0, KS_IOPUB_REST_MAX_MSGS + 1, 100, true, now), 0);
    ck_assert_int_eq (ks_iopub_rest_after_read (now + 3, 2, KS_IOPUB_REST_MAX_BYTES + 1, true,
                                                now), 0);
    ck_assert_int_eq (ks_iopub_rest_after_read (now + 3, 512, 4u << 20, true, now), 0);
    /* a kernel not ready (starting: every message awaited) is watched */
    ck_assert_int_eq (ks_iopub_rest_after_read (0, 1, 100, false, now), 0);
    ck_assert_int_eq (ks_iopub_rest_after_read (now + 3, 1, 100, false, now), 0);
    /* nothing: a rest not over goes on, one over ends, none stays none */
    ck_assert_int_eq (ks_iopub_rest_after_read (now + 3, 0, 0, true, now), now + 3);
    ck_assert_int_eq (ks_iopub_rest_after_read (now, 0, 0, true, now), 0);
    ck_assert_int_eq (ks_iopub_rest_after_read (now - 7, 0, 0, true, now), 0);
    ck_assert_int_eq (ks_iopub_rest_after_read (0, 0, 0, true, now), 0);
}
END_TEST

Suite *
spec_suite (void)
{
    Suite *s = suite_create ("kernelspec");
    TCase *tc = tcase_create ("load");
    tcase_add_loop_test (tc, test_load_broken, 0, (int) (sizeof s_broken / sizeof *s_broken));
    tcase_add_test (tc, test_load_full);
    tcase_add_test (tc, test_load_minimal_defaults);
    tcase_add_test (tc, test_parse_text);
    tcase_add_test (tc, test_load_too_large);
    suite_add_tcase (s, tc);
    tc = tcase_create ("use");
    tcase_add_test (tc, test_argv_substitution);
    tcase_add_test (tc, test_expand_env);
    tcase_add_test (tc, test_supports_ipc);
    tcase_add_test (tc, test_iopub_rest_rule);
    suite_add_tcase (s, tc);
    return s;
}

Suite *
search_suite (void)
{
    Suite *s = suite_create ("search");
    TCase *tc = tcase_create ("order");
    tcase_add_test (tc, test_dirs_order);
    tcase_add_test (tc, test_kernel_path_wins);
    tcase_add_test (tc, test_jupyter_path_wins);
    tcase_add_test (tc, test_data_dir_wins_over_home);
    suite_add_tcase (s, tc);
    tc = tcase_create ("find");
    tcase_add_test (tc, test_find_case_insensitive);
    tcase_add_test (tc, test_find_single_folder);
    tcase_add_test (tc, test_find_unknown);
    tcase_add_test (tc, test_find_invalid_name);
    tcase_add_test (tc, test_find_broken);
    tcase_add_test (tc, test_search_all);
    tcase_add_test (tc, test_valid_name);
    suite_add_tcase (s, tc);
    return s;
}
