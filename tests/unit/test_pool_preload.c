/* test_pool_preload: gw_pool_preload_code, the execute_request code a warm
 * Python kernel preloads with: the modules CODEBOX_POOL_PRELOAD names
 * (commas or spaces between), dotted Python names only (anything else,
 * which could change the code, is left out), run by exec in a namespace
 * of its own from base64 (no quoting of the script can break); nothing to
 * preload is NULL. gw_pool_preload_language: Python kernels only. */
#include <stdlib.h>
#include <string.h>

#include "gw_base64.h"
#include "gw_pool_preload.h"
#include "suites.h"

START_TEST (names_become_a_list)
{
    char *code = gw_pool_preload_code ("numpy, pandas ,matplotlib.pyplot\t_x1");
    ck_assert_ptr_nonnull (code);
    ck_assert_ptr_nonnull (strstr (code, "'NAMES': ['numpy','pandas','matplotlib.pyplot','_x1']})"));
    ck_assert (strncmp (code, "exec(__import__('base64').b64decode('", 37) == 0);
    /* the script decodes to the Python that imports NAMES */
    const char *b64 = code + 37;
    size_t len = strcspn (b64, "'");
    uint8_t *py = NULL;
    size_t py_len = 0;
    ck_assert_int_eq (gw_base64_decode (b64, len, &py, &py_len), 0);
    ck_assert_ptr_nonnull (memmem (py, py_len, "for _name in NAMES:", 19));
    ck_assert_ptr_nonnull (memmem (py, py_len, "gc.freeze()", 11));
    free (py);
    free (code);
}
END_TEST

START_TEST (other_names_are_left_out)
{
    char *code = gw_pool_preload_code ("os.system('x'),1abc,a..b,.a,a.,a-b,ok,"
                                       "__import__(\"os\"),x;y,é");
    ck_assert_ptr_nonnull (code);
    ck_assert_ptr_nonnull (strstr (code, "'NAMES': ['ok']})"));
    free (code);
    ck_assert_ptr_null (gw_pool_preload_code (""));
    ck_assert_ptr_null (gw_pool_preload_code (" , ,"));
    char long_name[200];
    memset (long_name, 'a', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    ck_assert_ptr_null (gw_pool_preload_code (long_name));      /* past 128 */
    long_name[128] = '\0';
    code = gw_pool_preload_code (long_name);
    ck_assert_ptr_nonnull (code);
    free (code);
    ck_assert_ptr_null (gw_pool_preload_code (NULL));
}
END_TEST

START_TEST (python_only)
{
    ck_assert (gw_pool_preload_language ("python"));
    ck_assert (gw_pool_preload_language ("Python"));
    ck_assert (!gw_pool_preload_language ("javascript"));
    ck_assert (!gw_pool_preload_language (NULL));
}
END_TEST

Suite *
pool_preload_suite (void)
{
    Suite *s = suite_create ("pool_preload");
    TCase *tc = tcase_create ("code");
    tcase_add_test (tc, names_become_a_list);
    tcase_add_test (tc, other_names_are_left_out);
    tcase_add_test (tc, python_only);
    suite_add_tcase (s, tc);
    return s;
}
