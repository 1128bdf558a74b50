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

int
main (void)
{
    const char *fork_env = getenv ("CK_FORK");
    if (fork_env && strcmp (fork_env, "no") == 0) {
        fprintf (stderr, "unit-tests: CK_FORK=no is not supported; every test needs its own process\n");
        return 2;
    }
    SRunner *runner = srunner_create (sign_suite ());
    srunner_add_suite (runner, message_suite ());
    srunner_add_suite (runner, connection_suite ());
    srunner_add_suite (runner, spec_suite ());
    srunner_add_suite (runner, search_suite ());
    srunner_add_suite (runner, path_suite ());
    srunner_add_suite (runner, artifacts_suite ());
    srunner_add_suite (runner, sql_classify_suite ());
    srunner_add_suite (runner, sql_run_suite ());
    srunner_add_suite (runner, config_suite ());
    srunner_add_suite (runner, package_policy_suite ());
    srunner_add_suite (runner, download_suite ());
    srunner_add_suite (runner, blob_auth_suite ());
    srunner_add_suite (runner, http_edge_suite ());
    srunner_add_suite (runner, execution_suite ());
    srunner_add_suite (runner, jupyter_wire_suite ());
    srunner_add_suite (runner, loop_suite ());
    srunner_add_suite (runner, jobs_suite ());
    srunner_add_suite (runner, zmtp_filter_suite ());
    srunner_set_fork_status (runner, CK_FORK);
    srunner_run_all (runner, CK_NORMAL);
    int failed = srunner_ntests_failed (runner);
    int run = srunner_ntests_run (runner);
    srunner_free (runner);
    printf ("unit-tests: %d run, %d passed, %d failed\n", run, run - failed, failed);
    return failed == 0 && run > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
