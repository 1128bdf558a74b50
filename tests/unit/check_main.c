/* check_main: runs every unit-test suite of suites.h with Check and exits
 * non-zero when any test fails. `make unit` runs it from tests/unit, so the
 * tests name their fixtures relative to that folder (fixtures/...).
 *
 * Each test runs in its own process (Check's fork mode; CK_FORK=no is
 * refused so a crash or a changed environment cannot leak into the next
 * test). Under AddressSanitizer each test process ends with LeakSanitizer's
 * exit check, so a leak fails the test that caused it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"

/* Every suite, in the order a whole run takes them: the one with the most
 * tests first, so that scripts/unit.sh does not end with it running alone. */
static Suite *(*const s_suites[]) (void) = {
    sql_classify_suite, sign_suite, message_suite, connection_suite, spec_suite, search_suite,
    path_suite, artifacts_suite, sql_run_suite, config_suite, package_policy_suite,
    download_suite, blob_auth_suite, http_edge_suite, execution_suite, jupyter_wire_suite,
    loop_suite, jobs_suite, zmtp_filter_suite, changes_suite, display_text_suite,
    decoder_suite, proxy_request_suite, utf8_suite, tool_sets_suite, notebook_suite,
    jupyter_asks_suite, pool_preload_suite, oauth_suite, jwt_suite, zmtp_client_suite,
};
#define S_SUITES (int) (sizeof s_suites / sizeof s_suites[0])

/* No argument: every suite. `--count`: prints how many there are.
 * `--only I`: suite I (0-based) alone, so that scripts/unit.sh can run
 * several suites at once: under AddressSanitizer each test's process costs
 * about 0.3 s (the fork and LeakSanitizer's exit check). */
int
main (int argc, char **argv)
{
    const char *fork_env = getenv ("CK_FORK");
    if (fork_env && strcmp (fork_env, "no") == 0) {
        fprintf (stderr, "unit-tests: CK_FORK=no is not supported; every test needs its own process\n");
        return 2;
    }
    int only = -1;
    if (argc == 2 && strcmp (argv[1], "--count") == 0) {
        printf ("%d\n", S_SUITES);
        return EXIT_SUCCESS;
    }
    if (argc == 3 && strcmp (argv[1], "--only") == 0) {
        char *end;
        long i = strtol (argv[2], &end, 10);
        if (*argv[2] == '\0' || *end != '\0' || i < 0 || i >= S_SUITES) {
            fprintf (stderr, "unit-tests: --only takes 0 to %d\n", S_SUITES - 1);
            return 2;
        }
        only = (int) i;
    } else if (argc != 1) {
        fprintf (stderr, "usage: unit-tests [--count | --only I]\n");
        return 2;
    }
    SRunner *runner = NULL;
    for (int i = 0; i < S_SUITES; i++) {
        if (only >= 0 && i != only)
            continue;
        if (!runner)
            runner = srunner_create (s_suites[i] ());
        else
            srunner_add_suite (runner, s_suites[i] ());
    }
    srunner_set_fork_status (runner, CK_FORK);
    srunner_run_all (runner, CK_NORMAL);
    int failed = srunner_ntests_failed (runner);
    int run = srunner_ntests_run (runner);
    srunner_free (runner);
    printf ("unit-tests: %d run, %d passed, %d failed\n", run, run - failed, failed);
    return failed == 0 && run > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
