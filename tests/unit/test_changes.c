/* test_changes: the session folder's change tracker (gw_changes) with the
 * walk that arms it (gw_snapshot_take_watched), on scratch folders: each
 * kind of change the walk would see is seen (each test walks again after a
 * change, as a session does: a watch tells once), what the walk skips is
 * not, a write through a file opened before the walk is seen, the bounds
 * (folders watched at once, trackers per process) turn a tracker off, and
 * an off tracker says "changed" every time. Snapshots shared by reference. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw_artifacts.h"
#include "gw_changes.h"
#include "suites.h"
#include "testutil.h"

static char *s_dir;

static void
s_setup (void)
{
    s_dir = tu_mkdtemp ();
}

static void
s_teardown (void)
{
    tu_rmtree (s_dir);
    free (s_dir);
}

static char *
s_at (const char *rel)
{
    char *out = NULL;
    ck_assert_int_ge (asprintf (&out, "%s/%s", s_dir, rel), 0);
    return out;
}

static void
s_mkdir (const char *rel)
{
    char *p = s_at (rel);
    ck_assert_msg (mkdir (p, 0755) == 0, "mkdir %s: %s", p, strerror (errno));
    free (p);
}

static void
s_file (const char *rel, const char *text)
{
    char *p = s_at (rel);
    tu_write_file (p, text, strlen (text));
    free (p);
}

/* A walk of the scratch folder that (re)sets ch's watches, as a session
 * walks after a take that says changed. */
static void
s_walk (gw_changes_t *ch)
{
    gw_snapshot_t *snap = gw_snapshot_take_watched (s_dir, GW_SNAPSHOT_SESSION, ch);
    ck_assert (gw_snapshot_whole (snap));
    gw_snapshot_destroy (&snap);
}

/* True when ch tells of a change; walks again then, as a session does. */
static bool
s_changed (gw_changes_t *ch)
{
    if (!gw_changes_take (ch))
        return false;
    s_walk (ch);
    return true;
}

/* A tracker armed by a walk of the scratch folder, with nothing pending. */
static gw_changes_t *
s_armed (void)
{
    gw_changes_t *ch = gw_changes_new ();
    ck_assert_ptr_nonnull (ch);
    ck_assert (gw_changes_on (ch));
    s_walk (ch);
    ck_assert (!gw_changes_take (ch));
    return ch;
}

/* A session folder's shape: output/sub/, input/, a hidden folder. */
static void
s_session_folder (void)
{
    s_mkdir ("output");
    s_mkdir ("output/sub");
    s_mkdir ("input");
    s_mkdir (".hidden");
    s_file ("output/sub/a.txt", "a");
}

/* Each change the walk would see, one at a time, in watched folders. */
START_TEST (test_changes_seen)
{
    s_session_folder ();
    gw_changes_t *ch = s_armed ();
    s_file ("output/new.txt", "n");     /* a new file */
    ck_assert (s_changed (ch));
    ck_assert (!s_changed (ch));        /* told once */
    s_file ("output/sub/a.txt", "aa");  /* a file rewritten, three levels down */
    ck_assert (s_changed (ch));
    s_file ("output/sub/a.txt", "ab");  /* again: the walk set its watch again */
    ck_assert (s_changed (ch));
    char *p = s_at ("output/sub/a.txt");
    struct timespec times[2] = {{0, UTIME_OMIT}, {1000, 0}};
    ck_assert_int_eq (utimensat (AT_FDCWD, p, times, 0), 0);    /* only its time */
    ck_assert (s_changed (ch));
    char *q = s_at ("output/sub/b.txt");
    ck_assert_int_eq (rename (p, q), 0);    /* a rename */
    ck_assert (s_changed (ch));
    ck_assert_int_eq (unlink (q), 0);       /* a removal */
    ck_assert (s_changed (ch));
    s_mkdir ("output/fresh");               /* a new folder, then a file in it */
    ck_assert (s_changed (ch));
    s_file ("output/fresh/f.txt", "f");
    ck_assert (s_changed (ch));
    s_file ("top.txt", "t");                /* the session folder's own file */
    ck_assert (s_changed (ch));
    ck_assert (!s_changed (ch));
    free (p);
    free (q);
    gw_changes_destroy (&ch);
    ck_assert_ptr_null (ch);
}
END_TEST

/* Folders the walk skips are not watched: input/'s files and a hidden
 * folder's change nothing. Making such a folder is told once (the walk
 * after it finds nothing new), and a folder moved from a hidden name to a
 * walked one is a change. */
START_TEST (test_changes_skipped_folders)
{
    s_session_folder ();
    gw_changes_t *ch = s_armed ();
    s_file ("input/up.csv", "1,2");
    s_file (".hidden/cache", "c");
    s_mkdir (".hidden/deeper");
    ck_assert (!s_changed (ch));
    s_mkdir (".another");
    ck_assert (s_changed (ch));
    s_mkdir (".another/d");
    s_file (".another/d/f.txt", "f");
    s_mkdir ("node_modules");
    ck_assert (s_changed (ch));
    s_file ("node_modules/x.js", "x");
    s_file (".another/d/g.txt", "g");
    ck_assert (!s_changed (ch));
    char *from = s_at (".another/d"), *to = s_at ("output/d");
    ck_assert_int_eq (rename (from, to), 0);
    ck_assert (s_changed (ch));
    s_file ("output/d/h.txt", "h");         /* and the moved folder is watched now */
    ck_assert (s_changed (ch));
    free (from);
    free (to);
    gw_changes_destroy (&ch);
}
END_TEST

/* A file opened before the walk and written after it: the write is seen
 * (the kernel keeps files open between executions), and so is its close. */
START_TEST (test_changes_write_through_open_file)
{
    s_session_folder ();
    char *p = s_at ("output/log.txt");
    int fd = open (p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    ck_assert_int_ge (fd, 0);
    gw_changes_t *ch = s_armed ();
    ck_assert_int_eq (write (fd, "x", 1), 1);
    ck_assert (s_changed (ch));
    ck_assert_int_eq (write (fd, "y", 1), 1);
    ck_assert (s_changed (ch));
    close (fd);
    ck_assert (s_changed (ch));
    ck_assert (!s_changed (ch));
    free (p);
    gw_changes_destroy (&ch);
}
END_TEST

/* A folder told of and watched again hundreds of times is still one watch:
 * the bound counts watches set at once, not watches ever made. */
START_TEST (test_changes_rearm_is_not_a_new_folder)
{
    s_session_folder ();
    gw_changes_t *ch = s_armed ();
    for (int i = 0; i < 2 * GW_CHANGES_MAX_WATCHES; i++) {
        char text[16];
        snprintf (text, sizeof text, "%d", i);
        s_file ("output/sub/a.txt", text);
        ck_assert_msg (s_changed (ch), "round %d", i);
    }
    ck_assert (gw_changes_on (ch));
    ck_assert (!s_changed (ch));
    gw_changes_destroy (&ch);
}
END_TEST

/* Past GW_CHANGES_MAX_WATCHES folders the tracker is off: every take says
 * changed, and its instance goes back to the process's budget. */
START_TEST (test_changes_folder_bound)
{
    s_mkdir ("output");
    for (int i = 0; i < GW_CHANGES_MAX_WATCHES + 10; i++) {
        char rel[64];
        snprintf (rel, sizeof rel, "output/%d", i);
        s_mkdir (rel);
    }
    int before = gw_changes_trackers ();
    gw_changes_t *ch = NULL;
    gw_snapshot_t *snap = NULL;
    /* the walk itself is whole; a walk past its 200 ms is cut by design,
       which a loaded machine under ASan can reach once: tried again then */
    for (int attempt = 0; attempt < 3; attempt++) {
        gw_snapshot_destroy (&snap);
        gw_changes_destroy (&ch);
        ch = gw_changes_new ();
        ck_assert (gw_changes_on (ch));
        ck_assert_int_eq (gw_changes_trackers (), before + 1);
        snap = gw_snapshot_take_watched (s_dir, GW_SNAPSHOT_SESSION, ch);
        if (gw_snapshot_whole (snap))
            break;
    }
    ck_assert (gw_snapshot_whole (snap));
    gw_snapshot_destroy (&snap);
    ck_assert (!gw_changes_on (ch));
    ck_assert_int_eq (gw_changes_trackers (), before);
    ck_assert (gw_changes_take (ch));
    ck_assert (gw_changes_take (ch));
    gw_changes_destroy (&ch);
    ck_assert_int_eq (gw_changes_trackers (), before);
}
END_TEST

/* At most GW_CHANGES_MAX_TRACKERS trackers hold an instance; the next one
 * is off (says changed) until a destroyed one frees a place, which the
 * first waiting tracker to ask takes (a later one waits on). */
START_TEST (test_changes_tracker_budget)
{
    gw_changes_t *all[GW_CHANGES_MAX_TRACKERS];
    for (int i = 0; i < GW_CHANGES_MAX_TRACKERS; i++) {
        all[i] = gw_changes_new ();
        ck_assert (gw_changes_on (all[i]));
        ck_assert (!gw_changes_take (all[i]));
    }
    gw_changes_t *extra = gw_changes_new ();
    ck_assert_ptr_nonnull (extra);
    ck_assert (!gw_changes_on (extra));
    ck_assert (gw_changes_take (extra));
    gw_changes_watch_fd (extra, 0);        /* an off tracker ignores watches */
    gw_changes_t *later = gw_changes_new ();
    ck_assert (!gw_changes_on (later));
    ck_assert_int_eq (gw_changes_trackers (), GW_CHANGES_MAX_TRACKERS);
    gw_changes_destroy (&all[0]);
    ck_assert_int_eq (gw_changes_trackers (), GW_CHANGES_MAX_TRACKERS - 1);
    /* the waiting one takes the place: "changed" (its walk sets the
       watches), then quiet while nothing happens */
    ck_assert (gw_changes_take (extra));
    ck_assert (gw_changes_on (extra));
    ck_assert (!gw_changes_take (extra));
    ck_assert (gw_changes_take (later));
    ck_assert (!gw_changes_on (later));
    gw_changes_destroy (&extra);
    ck_assert (gw_changes_take (later));
    ck_assert (gw_changes_on (later));
    gw_changes_destroy (&later);
    extra = gw_changes_new ();
    ck_assert (gw_changes_on (extra));
    gw_changes_destroy (&extra);
    for (int i = 1; i < GW_CHANGES_MAX_TRACKERS; i++)
        gw_changes_destroy (&all[i]);
    ck_assert_int_eq (gw_changes_trackers (), 0);
    gw_changes_destroy (&extra);           /* NULL: nothing */
}
END_TEST

/* A snapshot held twice lives until its last holder lets go, and counts
 * the bytes it holds. */
START_TEST (test_snapshot_refs_and_whole)
{
    s_session_folder ();
    gw_snapshot_t *a = gw_snapshot_take (s_dir, GW_SNAPSHOT_SESSION);
    gw_snapshot_t *b = gw_snapshot_ref (a);
    ck_assert_ptr_eq (a, b);
    gw_snapshot_destroy (&a);
    ck_assert_ptr_null (a);
    json_t *diff = gw_snapshot_diff (NULL, b, "");
    ck_assert_int_eq (json_array_size (diff), 1);
    ck_assert_str_eq (json_string_value (json_object_get (json_array_get (diff, 0), "path")),
                      "output/sub/a.txt");
    json_decref (diff);
    ck_assert (gw_snapshot_whole (b));
    /* its bytes: at least its table of one entry and that entry's path */
    size_t one = gw_snapshot_bytes (b);
    ck_assert_uint_ge (one, sizeof "output/sub/a.txt");
    gw_snapshot_destroy (&b);
    ck_assert_uint_eq (gw_snapshot_bytes (NULL), 0);
    char name[201];     /* 200 characters: a file name may have 255 */
    memset (name, 'n', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    char rel[320];
    for (int i = 0; i < 100; i++) {
        snprintf (rel, sizeof rel, "output/%02d%s", i, name);
        s_file (rel, "x");
    }
    gw_snapshot_t *big = gw_snapshot_take (s_dir, GW_SNAPSHOT_SESSION);
    ck_assert_uint_ge (gw_snapshot_bytes (big), one + 100 * (sizeof "output/" - 1 + 2 + 200 + 1));
    gw_snapshot_destroy (&big);
    ck_assert (!gw_snapshot_whole (NULL));
    ck_assert_ptr_null (gw_snapshot_ref (NULL));
}
END_TEST

Suite *
changes_suite (void)
{
    Suite *s = suite_create ("changes");
    TCase *tc = tcase_create ("tracker");
    tcase_add_checked_fixture (tc, s_setup, s_teardown);
    tcase_add_test (tc, test_changes_seen);
    tcase_add_test (tc, test_changes_skipped_folders);
    tcase_add_test (tc, test_changes_write_through_open_file);
    tcase_add_test (tc, test_changes_rearm_is_not_a_new_folder);
    tcase_add_test (tc, test_changes_folder_bound);
    tcase_add_test (tc, test_changes_tracker_budget);
    tcase_add_test (tc, test_snapshot_refs_and_whole);
    suite_add_tcase (s, tc);
    return s;
}
