/* test_jobs: the job store (gateway/core/gw_job.c): lookups by request id
 * and tenant, and the long polls' waits, which the loop asks for every
 * turn and which live on a list of their own (not found by visiting every
 * job kept); and output items as clients get them (a PNG named by its
 * index in "files", tracebacks without colours). Runs in the test's
 * process; the store is the loop thread's. */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "gw_job.h"
#include "suites.h"

typedef struct {
    int told[GW_JOB_SHUTDOWN + 1];
    gw_job_observer_t *also_drop;       /* unobserved when this one is told */
    gw_job_t *also_drop_job;
} s_watch_t;

static void
s_told (gw_job_t *job, gw_job_event_t event, json_t *item, gw_job_observer_t *o)
{
    (void) job;
    (void) item;
    s_watch_t *w = o->arg;
    w->told[event]++;
    if (w->also_drop)
        gw_job_unobserve (w->also_drop_job, w->also_drop);
}

START_TEST (test_find_by_id_and_tenant)
{
    gw_jobs_t *jobs = gw_jobs_new ();
    gw_job_t *mine[300];
    for (int i = 0; i < 300; i++)
        mine[i] = gw_jobs_add (jobs, NULL, i % 2 ? "s1" : "s2", i % 3 ? "alice" : "bob", "1+1", 0);
    for (int i = 0; i < 300; i++) {
        const char *tenant = i % 3 ? "alice" : "bob", *other = i % 3 ? "bob" : "alice";
        ck_assert_ptr_eq (gw_jobs_find (jobs, gw_job_id (mine[i]), tenant), mine[i]);
        ck_assert_ptr_null (gw_jobs_find (jobs, gw_job_id (mine[i]), other));
    }
    ck_assert_ptr_null (gw_jobs_find (jobs, "s1~nope", "alice"));
    /* a finished job past the count bound goes, and its id with it */
    char gone[GW_JOB_ID_SIZE];
    strcpy (gone, gw_job_id (mine[1]));
    gw_job_set_transient (mine[1]);
    gw_job_finish (mine[1], GW_EXEC_COMPLETED);
    gw_jobs_expire (jobs, 0);
    ck_assert_ptr_null (gw_jobs_find (jobs, gone, "alice"));
    ck_assert_ptr_eq (gw_jobs_find (jobs, gw_job_id (mine[2]), "alice"), mine[2]);
    gw_jobs_destroy (&jobs);
}
END_TEST

/* Over its count the store evicts the oldest result of the tenant that
 * holds the most, not simply the oldest: a flood evicts its own. */
START_TEST (test_a_flood_evicts_its_own_results)
{
    gw_jobs_t *jobs = gw_jobs_new ();
    gw_jobs_set_max_count (jobs, 10);
    gw_job_t *bob = gw_jobs_add (jobs, NULL, "b", "bob", "1", 0);
    gw_job_finish (bob, GW_EXEC_COMPLETED);
    char bob_id[GW_JOB_ID_SIZE], first[GW_JOB_ID_SIZE], last[GW_JOB_ID_SIZE];
    strcpy (bob_id, gw_job_id (bob));
    /* one of alice's runs, so it stays whatever the count */
    gw_job_t *running = gw_jobs_add (jobs, NULL, "a", "alice", "1", 0);
    for (int i = 0; i < 30; i++) {
        gw_job_t *a = gw_jobs_add (jobs, NULL, "a", "alice", "1", 0);
        gw_job_finish (a, GW_EXEC_COMPLETED);
        strcpy (i == 0 ? first : last, gw_job_id (a));
        gw_jobs_expire (jobs, 0);
    }
    ck_assert_ptr_nonnull (gw_jobs_find (jobs, bob_id, "bob"));
    ck_assert_ptr_eq (gw_jobs_find (jobs, gw_job_id (running), "alice"), running);
    ck_assert_ptr_null (gw_jobs_find (jobs, first, "alice"));
    ck_assert_ptr_nonnull (gw_jobs_find (jobs, last, "alice"));
    /* bob, now the larger holder, loses his oldest when over */
    gw_jobs_set_max_count (jobs, 3);
    gw_job_finish (running, GW_EXEC_COMPLETED);
    gw_jobs_expire (jobs, 0);
    ck_assert_ptr_nonnull (gw_jobs_find (jobs, bob_id, "bob"));
    gw_jobs_set_max_count (jobs, 1);
    for (int i = 0; i < 3; i++) {
        gw_job_t *b = gw_jobs_add (jobs, NULL, "b", "bob", "1", 0);
        gw_job_finish (b, GW_EXEC_COMPLETED);
    }
    gw_jobs_expire (jobs, 0);
    ck_assert_ptr_null (gw_jobs_find (jobs, bob_id, "bob"));
    gw_jobs_destroy (&jobs);
}
END_TEST

START_TEST (test_waits_end_on_time_and_only_theirs)
{
    gw_jobs_t *jobs = gw_jobs_new ();
    gw_job_t *a = gw_jobs_add (jobs, NULL, "s", "t", "x", 0);
    gw_job_t *b = gw_jobs_add (jobs, NULL, "s", "t", "y", 0);
    for (int i = 0; i < 1000; i++)              /* jobs nobody waits on */
        gw_jobs_add (jobs, NULL, "s", "t", "z", 0);
    ck_assert_int_eq (gw_jobs_expire_waits (jobs, 100), -1);
    s_watch_t wa = {0}, wb = {0}, wc = {0}, untimed = {0};
    gw_job_observer_t oa = {.fn = s_told, .arg = &wa, .until_ms = 500};
    gw_job_observer_t ob = {.fn = s_told, .arg = &wb, .until_ms = 300};
    gw_job_observer_t oc = {.fn = s_told, .arg = &wc, .until_ms = 900};
    gw_job_observer_t ou = {.fn = s_told, .arg = &untimed};
    gw_job_observe (a, &oa);
    gw_job_observe (b, &ob);
    gw_job_observe (a, &oc);
    gw_job_observe (a, &ou);
    ck_assert_int_eq (gw_jobs_expire_waits (jobs, 100), 300);
    /* b's wait ends; its owner, told, drops a's 900 ms wait too */
    wb.also_drop = &oc;
    wb.also_drop_job = a;
    ck_assert_int_eq (gw_jobs_expire_waits (jobs, 300), 500);
    ck_assert_int_eq (wb.told[GW_JOB_WAIT_OVER], 1);
    ck_assert_int_eq (wc.told[GW_JOB_WAIT_OVER], 0);
    /* a finishes before its wait: told once, and its wait is gone */
    gw_job_finish (a, GW_EXEC_COMPLETED);
    ck_assert_int_eq (wa.told[GW_JOB_FINISHED], 1);
    ck_assert_int_eq (untimed.told[GW_JOB_FINISHED], 1);
    ck_assert_int_eq (gw_jobs_expire_waits (jobs, 10000), -1);
    ck_assert_int_eq (wa.told[GW_JOB_WAIT_OVER], 0);
    ck_assert_int_eq (wc.told[GW_JOB_WAIT_OVER] + wc.told[GW_JOB_FINISHED], 0);
    /* an unobserved wait is not told either; a later one is */
    s_watch_t wd = {0}, we = {0};
    gw_job_observer_t od = {.fn = s_told, .arg = &wd, .until_ms = 2000};
    gw_job_observer_t oe = {.fn = s_told, .arg = &we, .until_ms = 3000};
    gw_job_observe (b, &od);
    gw_job_observe (b, &oe);
    gw_job_unobserve (b, &od);
    ck_assert_int_eq (gw_jobs_expire_waits (jobs, 2500), 3000);
    ck_assert_int_eq (gw_jobs_expire_waits (jobs, 3000), -1);
    ck_assert_int_eq (wd.told[GW_JOB_WAIT_OVER], 0);
    ck_assert_int_eq (we.told[GW_JOB_WAIT_OVER], 1);
    /* shutdown tells the rest, and no wait is left */
    s_watch_t wf = {0};
    gw_job_observer_t of = {.fn = s_told, .arg = &wf, .until_ms = 5000};
    gw_job_observe (b, &of);
    gw_jobs_shutdown (jobs);
    ck_assert_int_eq (wf.told[GW_JOB_SHUTDOWN], 1);
    ck_assert_int_eq (gw_jobs_expire_waits (jobs, 6000), -1);
    ck_assert_int_eq (wf.told[GW_JOB_WAIT_OVER], 0);
    gw_jobs_destroy (&jobs);
}
END_TEST

START_TEST (test_client_outputs_name_their_images)
{
    json_t *stored = json_pack (
        "[{s:s, s:s, s:s}, {s:s, s:{s:s, s:s}}, {s:s, s:s, s:{s:s}},"
        " {s:s, s:s, s:{s:s, s:s}}, {s:s, s:s, s:s, s:[s]}]",
        "type", "stream", "name", "stdout", "content", "hi\n",
        "type", "display", "data", "text/plain", "<Figure>", "image/png", "iVBORw0K",
        "type", "result", "content", "x", "data", "text/plain", "x",
        "type", "result", "content", "y", "data", "text/plain", "y", "image/png", "AAAA",
        "type", "error", "ename", "E", "evalue", "v", "traceback", "\x1b[31mline\x1b[0m");
    ck_assert_ptr_nonnull (stored);
    json_t *want = json_pack (
        "[{s:s, s:s, s:s}, {s:s, s:{s:s}, s:i}, {s:s, s:s, s:{s:s}},"
        " {s:s, s:s, s:{s:s}, s:i}, {s:s, s:s, s:s, s:[s]}]",
        "type", "stream", "name", "stdout", "content", "hi\n",
        "type", "display", "data", "text/plain", "<Figure>", "file", 0,
        "type", "result", "content", "x", "data", "text/plain", "x",
        "type", "result", "content", "y", "data", "text/plain", "y", "file", 1,
        "type", "error", "ename", "E", "evalue", "v", "traceback", "line");
    json_t *copy = json_deep_copy (stored);
    size_t files = 0, i;
    json_t *item;
    json_array_foreach (stored, i, item) {
        json_t *client = gw_job_client_output (item, &files);
        ck_assert_msg (json_equal (client, json_array_get (want, i)), "item %zu", i);
        json_decref (client);
    }
    ck_assert_uint_eq (files, 2);
    ck_assert (json_equal (stored, copy));      /* the stored items keep their images */
    json_decref (copy);
    json_decref (want);
    json_decref (stored);
}
END_TEST

Suite *
jobs_suite (void)
{
    Suite *s = suite_create ("jobs");
    TCase *tc = tcase_create ("store");
    tcase_add_test (tc, test_find_by_id_and_tenant);
    tcase_add_test (tc, test_a_flood_evicts_its_own_results);
    tcase_add_test (tc, test_waits_end_on_time_and_only_theirs);
    tcase_add_test (tc, test_client_outputs_name_their_images);
    suite_add_tcase (s, tc);
    return s;
}
