/* testutil: helpers for the unit tests (see testutil.h). */
#include "testutil.h"

#include <check.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *
tu_abspath (const char *rel)
{
    char cwd[PATH_MAX];
    ck_assert_ptr_nonnull (getcwd (cwd, sizeof cwd));
    char *out = NULL;
    ck_assert_int_ge (asprintf (&out, "%s/%s", cwd, rel), 0);
    return out;
}

static int
s_nibble (char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    ck_abort_msg ("bad hex digit '%c'", c);
    return -1;
}

uint8_t *
tu_hex_decode (const char *hex, size_t *len)
{
    size_t n = strlen (hex);
    ck_assert_msg (n % 2 == 0, "odd hex length %zu", n);
    uint8_t *out = malloc (n / 2 + 1);
    ck_assert_ptr_nonnull (out);
    for (size_t i = 0; i < n / 2; i++)
        out[i] = (uint8_t) (s_nibble (hex[2 * i]) << 4 | s_nibble (hex[2 * i + 1]));
    *len = n / 2;
    return out;
}

json_t *
tu_load_json (const char *path)
{
    json_error_t jerr;
    json_t *json = json_load_file (path, 0, &jerr);
    ck_assert_msg (json != NULL, "%s: line %d: %s", path, jerr.line, jerr.text);
    return json;
}

char *
tu_mkdtemp (void)
{
    const char *tmp = getenv ("TMPDIR");
    char *path = NULL;
    ck_assert_int_ge (asprintf (&path, "%s/codebox-unit-XXXXXX", tmp && *tmp ? tmp : "/tmp"), 0);
    ck_assert_msg (mkdtemp (path) != NULL, "mkdtemp %s failed", path);
    return path;
}

static int
s_rm_cb (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void) st, (void) flag, (void) ftw;
    remove (path);
    return 0;
}

void
tu_rmtree (const char *path)
{
    nftw (path, s_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

void
tu_write_file (const char *path, const void *data, size_t len)
{
    FILE *f = fopen (path, "wb");
    ck_assert_msg (f != NULL, "cannot write %s", path);
    ck_assert_uint_eq (fwrite (data, 1, len, f), len);
    ck_assert_int_eq (fclose (f), 0);
}
