/* test_artifacts: snapshots of a scratch output folder before and after
 * changes (new files, a changed size, a changed modification time, files
 * left alone, symlinks), the listing and its JSON shape, the names that
 * cannot be listed, the walk's limits (16 levels, 10000 files), and MIME
 * types by extension. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw_artifacts.h"
#include "suites.h"
#include "testutil.h"

/* Returns dir/rel in a new string. */
static char *
s_at (const char *dir, const char *rel)
{
    char *out = NULL;
    ck_assert_int_ge (asprintf (&out, "%s/%s", dir, rel), 0);
    return out;
}

static void
s_mkdir (const char *dir, const char *rel)
{
    char *p = s_at (dir, rel);
    ck_assert_msg (mkdir (p, 0755) == 0, "mkdir %s: %s", p, strerror (errno));
    free (p);
}

static void
s_file (const char *dir, const char *rel, const char *text)
{
    char *p = s_at (dir, rel);
    tu_write_file (p, text, strlen (text));
    free (p);
}

static void
s_symlink (const char *target, const char *dir, const char *rel)
{
    char *p = s_at (dir, rel);
    ck_assert_msg (symlink (target, p) == 0, "symlink %s: %s", p, strerror (errno));
    free (p);
}

/* Sets the modification time of dir/rel to sec seconds after the epoch. */
static void
s_set_mtime (const char *dir, const char *rel, time_t sec)
{
    char *p = s_at (dir, rel);
    struct timespec times[2] = {{0, UTIME_OMIT}, {sec, 0}};
    ck_assert_int_eq (utimensat (AT_FDCWD, p, times, AT_SYMLINK_NOFOLLOW), 0);
    free (p);
}

/* Checks one entry of an artifact array, field by field. */
static void
s_assert_entry (json_t *entry, const char *filename, const char *path, const char *ext,
                long long size, const char *mime)
{
    ck_assert_msg (json_is_object (entry), "entry for %s is not an object", path);
    ck_assert_uint_eq (json_object_size (entry), 5);
    ck_assert_str_eq (json_string_value (json_object_get (entry, "filename")), filename);
    ck_assert_str_eq (json_string_value (json_object_get (entry, "path")), path);
    ck_assert_str_eq (json_string_value (json_object_get (entry, "extension")), ext);
    ck_assert_str_eq (json_string_value (json_object_get (entry, "mime")), mime);
    json_t *jsize = json_object_get (entry, "size");
    ck_assert_msg (json_is_integer (jsize), "size of %s is not an integer", path);
    ck_assert_int_eq (json_integer_value (jsize), size);
}

/* Checks that the paths of an artifact array are exactly want, in order. */
static void
s_assert_paths (json_t *array, const char **want, size_t n)
{
    ck_assert_msg (json_is_array (array), "not an array");
    char *dump = json_dumps (array, JSON_COMPACT);
    ck_assert_msg (json_array_size (array) == n, "want %zu files, got %s", n, dump);
    for (size_t i = 0; i < n; i++) {
        const char *got = json_string_value (json_object_get (json_array_get (array, i), "path"));
        ck_assert_msg (got && strcmp (got, want[i]) == 0, "file %zu: want %s in %s", i, want[i],
                       dump);
    }
    free (dump);
}

/* A folder with a changed size, a changed modification time, a new file in
 * a new subfolder, untouched files and new symlinks: the diff is exactly
 * the three new or changed files, sorted, with their details. */
START_TEST (test_diff_new_and_changed)
{
    char *tmp = tu_mkdtemp ();
    s_file (tmp, "a.txt", "abc");
    s_file (tmp, "keep.txt", "same");
    s_mkdir (tmp, "sub");
    s_file (tmp, "sub/b.csv", "x,y\n");
    s_file (tmp, "sub/still.json", "{}");
    s_symlink ("a.txt", tmp, "old-link");
    s_set_mtime (tmp, "a.txt", 1000000000);
    s_set_mtime (tmp, "keep.txt", 1000000000);
    s_set_mtime (tmp, "sub/b.csv", 1000000000);
    gw_snapshot_t *before = gw_snapshot_take (tmp, 0);
    ck_assert_ptr_nonnull (before);

    s_file (tmp, "a.txt", "abcde");                 /* size changes */
    s_set_mtime (tmp, "a.txt", 1000000000);         /* ... mtime does not */
    s_set_mtime (tmp, "sub/b.csv", 1000000060);     /* mtime changes, size does not */
    s_set_mtime (tmp, "keep.txt", 1000000000);      /* touched, but unchanged */
    s_mkdir (tmp, "sub/new");
    s_file (tmp, "sub/new/plot.PNG", "png!");
    s_symlink ("keep.txt", tmp, "new-link");
    s_symlink ("/etc/passwd", tmp, "passwd-link");
    s_symlink ("/etc", tmp, "etc-dir-link");
    s_symlink ("sub", tmp, "sub-dir-link");
    gw_snapshot_t *after = gw_snapshot_take (tmp, 0);
    ck_assert_ptr_nonnull (after);

    json_t *diff = gw_snapshot_diff (before, after, "output");
    const char *want[] = {"output/a.txt", "output/sub/b.csv", "output/sub/new/plot.PNG"};
    s_assert_paths (diff, want, 3);
    s_assert_entry (json_array_get (diff, 0), "a.txt", "output/a.txt", "txt", 5, "text/plain");
    s_assert_entry (json_array_get (diff, 1), "b.csv", "output/sub/b.csv", "csv", 4, "text/csv");
    s_assert_entry (json_array_get (diff, 2), "plot.PNG", "output/sub/new/plot.PNG", "png", 4,
                    "image/png");
    json_decref (diff);

    diff = gw_snapshot_diff (after, after, "output");
    s_assert_paths (diff, NULL, 0);
    json_decref (diff);
    diff = gw_snapshot_diff (after, before, "output");  /* a.txt and b.csv differ */
    const char *back[] = {"output/a.txt", "output/sub/b.csv"};
    s_assert_paths (diff, back, 2);
    json_decref (diff);

    gw_snapshot_destroy (&before);
    gw_snapshot_destroy (&after);
    ck_assert_ptr_null (after);
    gw_snapshot_destroy (&after);                       /* NULL is a no-op */
    tu_rmtree (tmp);
    free (tmp);
}
END_TEST

/* A missing folder, or a symlink in place of it, gives an empty snapshot;
 * a file then created in it is new. */
START_TEST (test_snapshot_missing_dir)
{
    char *tmp = tu_mkdtemp ();
    char *out = s_at (tmp, "output");
    gw_snapshot_t *before = gw_snapshot_take (out, 0);
    ck_assert_ptr_nonnull (before);
    s_mkdir (tmp, "elsewhere");
    s_file (tmp, "elsewhere/f.txt", "f");
    s_symlink ("elsewhere", tmp, "output");
    json_t *list = gw_artifacts_list (out, "output", 0);
    s_assert_paths (list, NULL, 0);
    json_decref (list);
    ck_assert_int_eq (unlink (out), 0);
    s_mkdir (tmp, "output");
    s_file (tmp, "output/f.txt", "f");
    gw_snapshot_t *after = gw_snapshot_take (out, 0);
    json_t *diff = gw_snapshot_diff (before, after, "output");
    const char *want[] = {"output/f.txt"};
    s_assert_paths (diff, want, 1);
    json_decref (diff);
    gw_snapshot_destroy (&before);
    gw_snapshot_destroy (&after);
    free (out);
    tu_rmtree (tmp);
    free (tmp);
}
END_TEST

/* The listing has every file, sorted by path, with its details; names
 * without an extension (".bashrc", "README") get "" and the default type;
 * the prefix is joined with exactly one '/', or left out when empty. */
/* A session folder: its own files and output/'s are artifacts; input/,
 * node_modules/ at the top and hidden folders anywhere are not. */
START_TEST (test_session_folder)
{
    char *tmp = tu_mkdtemp ();
    s_mkdir (tmp, "input");
    s_file (tmp, "input/data.csv", "a\n");
    s_mkdir (tmp, "output");
    s_file (tmp, "output/plot.png", "png");
    s_file (tmp, "chart.png", "png");
    s_file (tmp, ".env", "x");
    s_mkdir (tmp, ".packages");
    s_file (tmp, ".packages/mod.py", "x");
    s_mkdir (tmp, "node_modules");
    s_file (tmp, "node_modules/x.js", "x");
    s_mkdir (tmp, "work");
    s_mkdir (tmp, "work/.ipynb_checkpoints");
    s_file (tmp, "work/.ipynb_checkpoints/a.ipynb", "{}");
    s_file (tmp, "work/result.txt", "r");
    s_mkdir (tmp, "work/input");
    s_file (tmp, "work/input/kept.txt", "k");
    /* neither a file nor a folder: skipped from its listing's type alone */
    char *fifo = s_at (tmp, "output/pipe");
    ck_assert_int_eq (mkfifo (fifo, 0600), 0);
    free (fifo);
    gw_snapshot_t *before = gw_snapshot_take (tmp, GW_SNAPSHOT_SESSION);
    json_t *list = gw_artifacts_list (tmp, "/session", GW_SNAPSHOT_SESSION);
    const char *want[] = {"/session/.env", "/session/chart.png", "/session/output/plot.png",
                          "/session/work/input/kept.txt", "/session/work/result.txt"};
    s_assert_paths (list, want, 5);
    json_decref (list);
    s_file (tmp, "input/new.csv", "b\n");
    s_file (tmp, "new.png", "png");
    s_file (tmp, ".packages/new.py", "x");
    gw_snapshot_t *after = gw_snapshot_take (tmp, GW_SNAPSHOT_SESSION);
    json_t *diff = gw_snapshot_diff (before, after, "/session");
    const char *new_ones[] = {"/session/new.png"};
    s_assert_paths (diff, new_ones, 1);
    json_decref (diff);
    gw_snapshot_destroy (&before);
    gw_snapshot_destroy (&after);
    tu_rmtree (tmp);
    free (tmp);
}
END_TEST

START_TEST (test_list_all_sorted)
{
    char *tmp = tu_mkdtemp ();
    s_file (tmp, "z.xyz", "zz");
    s_file (tmp, "README", "read me");
    s_file (tmp, ".bashrc", "");
    s_file (tmp, "PLOT.PNG", "12345678");
    s_mkdir (tmp, "data");
    s_mkdir (tmp, "data/empty");
    s_file (tmp, "data/x.tar.gz", "gz");
    s_file (tmp, "data/table.CSV", "a\n");
    s_symlink ("README", tmp, "readme-link");
    json_t *list = gw_artifacts_list (tmp, "output", 0);
    const char *want[] = {"output/.bashrc", "output/PLOT.PNG", "output/README",
                          "output/data/table.CSV", "output/data/x.tar.gz", "output/z.xyz"};
    s_assert_paths (list, want, 6);
    const char *octet = "application/octet-stream";
    s_assert_entry (json_array_get (list, 0), ".bashrc", want[0], "", 0, octet);
    s_assert_entry (json_array_get (list, 1), "PLOT.PNG", want[1], "png", 8, "image/png");
    s_assert_entry (json_array_get (list, 2), "README", want[2], "", 7, octet);
    s_assert_entry (json_array_get (list, 3), "table.CSV", want[3], "csv", 2, "text/csv");
    s_assert_entry (json_array_get (list, 4), "x.tar.gz", want[4], "gz", 2, "application/gzip");
    s_assert_entry (json_array_get (list, 5), "z.xyz", want[5], "xyz", 2, octet);
    json_decref (list);

    list = gw_artifacts_list (tmp, "s/abc/output/", 0);
    ck_assert_str_eq (json_string_value (json_object_get (json_array_get (list, 2), "path")),
                      "s/abc/output/README");
    json_decref (list);
    list = gw_artifacts_list (tmp, "", 0);
    ck_assert_str_eq (json_string_value (json_object_get (json_array_get (list, 3), "path")),
                      "data/table.CSV");
    json_decref (list);
    tu_rmtree (tmp);
    free (tmp);
}
END_TEST

/* Names a client could not fetch or JSON could not carry are left out:
 * control characters, a backslash, invalid UTF-8, and what is inside a
 * folder so named. Valid UTF-8 stays. */
START_TEST (test_list_skips_unusable_names)
{
    char *tmp = tu_mkdtemp ();
    s_file (tmp, "ok.txt", "ok");
    s_file (tmp, "caf\xc3\xa9.txt", "ok");
    s_file (tmp, "tab\there.txt", "no");
    s_file (tmp, "back\\slash.txt", "no");
    s_file (tmp, "bad\xff.txt", "no");
    s_file (tmp, "overlong\xc0\xaf.txt", "no");
    s_mkdir (tmp, "ctl\x01");
    s_file (tmp, "ctl\x01/inner.txt", "no");
    json_t *list = gw_artifacts_list (tmp, "output", 0);
    const char *want[] = {"output/caf\xc3\xa9.txt", "output/ok.txt"};
    s_assert_paths (list, want, 2);
    json_decref (list);
    tu_rmtree (tmp);
    free (tmp);
}
END_TEST

/* The walk goes 16 levels deep (the folder itself is level 1): of a file
 * at each of 20 levels, the 16 shallowest are listed. */
START_TEST (test_walk_depth_limit)
{
    char *tmp = tu_mkdtemp ();
    char rel[256] = "";
    for (int level = 1; level <= 20; level++) {
        char file[300];
        snprintf (file, sizeof file, "%s%sf.txt", rel, *rel ? "/" : "");
        s_file (tmp, file, "f");
        size_t n = strlen (rel);
        snprintf (rel + n, sizeof rel - n, "%sd", n ? "/" : "");
        s_mkdir (tmp, rel);
    }
    json_t *list = gw_artifacts_list (tmp, "", 0);
    ck_assert_uint_eq (json_array_size (list), 16);
    size_t deepest = 0, i;
    json_t *entry;
    json_array_foreach (list, i, entry) {
        const char *p = json_string_value (json_object_get (entry, "path"));
        size_t slashes = 0;
        for (; *p; p++)
            slashes += *p == '/';
        deepest = slashes > deepest ? slashes : deepest;
    }
    ck_assert_uint_eq (deepest, 15);
    json_decref (list);
    tu_rmtree (tmp);
    free (tmp);
}
END_TEST

/* At most 10000 files are taken: of 10005, exactly 10000 are listed. */
START_TEST (test_walk_file_limit)
{
    char *tmp = tu_mkdtemp ();
    int dfd = open (tmp, O_RDONLY | O_DIRECTORY);
    ck_assert_int_ge (dfd, 0);
    for (int i = 0; i < 10005; i++) {
        char name[32];
        snprintf (name, sizeof name, "f%05d.npy", i);
        int fd = openat (dfd, name, O_WRONLY | O_CREAT | O_EXCL, 0644);
        ck_assert_int_ge (fd, 0);
        close (fd);
    }
    close (dfd);
    json_t *list = gw_artifacts_list (tmp, "output", 0);
    ck_assert_uint_eq (json_array_size (list), 10000);
    json_decref (list);
    tu_rmtree (tmp);
    free (tmp);
}
END_TEST

/* A "before" walk that stopped at its limit (10000 files) did not see
 * every file: the files it missed, untouched since, are not new after it;
 * a file made after it began is. */
START_TEST (test_diff_after_a_cut_walk)
{
    char *tmp = tu_mkdtemp ();
    int dfd = open (tmp, O_RDONLY | O_DIRECTORY);
    ck_assert_int_ge (dfd, 0);
    struct timespec old[2] = {{1000, 0}, {1000, 0}};
    for (int i = 0; i < 10005; i++) {
        char name[32];
        snprintf (name, sizeof name, "f%05d.npy", i);
        int fd = openat (dfd, name, O_WRONLY | O_CREAT | O_EXCL, 0644);
        ck_assert_int_ge (fd, 0);
        ck_assert_int_eq (futimens (fd, old), 0);
        close (fd);
    }
    gw_snapshot_t *before = gw_snapshot_take (tmp, 0);
    ck_assert (!gw_snapshot_whole (before));
    /* ten files it saw go, so the next walk sees all the rest */
    json_t *seen = gw_snapshot_diff (NULL, before, "");
    ck_assert_uint_eq (json_array_size (seen), 10000);
    for (size_t i = 0; i < 10; i++)
        ck_assert_int_eq (unlinkat (dfd, json_string_value (json_object_get (
                                                json_array_get (seen, i), "path")), 0), 0);
    json_decref (seen);
    int fd = openat (dfd, "fresh.csv", O_WRONLY | O_CREAT | O_EXCL, 0644);
    ck_assert_int_ge (fd, 0);
    close (fd);
    close (dfd);
    gw_snapshot_t *after = gw_snapshot_take (tmp, 0);
    ck_assert (gw_snapshot_whole (after));
    json_t *diff = gw_snapshot_diff (before, after, "");
    const char *new_ones[] = {"fresh.csv"};     /* not the five it missed */
    s_assert_paths (diff, new_ones, 1);
    json_decref (diff);
    gw_snapshot_destroy (&before);
    gw_snapshot_destroy (&after);
    tu_rmtree (tmp);
    free (tmp);
}
END_TEST

static const struct {
    const char *path;
    const char *mime;
} s_mimes[] = {
    {"plot.png", "image/png"}, {"output/PLOT.PNG", "image/png"}, {"a.jpg", "image/jpeg"},
    {"a.JPEG", "image/jpeg"}, {"a.gif", "image/gif"}, {"a.webp", "image/webp"},
    {"a.svg", "image/svg+xml"}, {"a.bmp", "image/bmp"}, {"a.tiff", "image/tiff"},
    {"a.ico", "image/vnd.microsoft.icon"}, {"report.pdf", "application/pdf"},
    {"d.csv", "text/csv"}, {"d.tsv", "text/tab-separated-values"},
    {"d.json", "application/json"}, {"d.jsonl", "application/x-ndjson"},
    {"notes.txt", "text/plain"}, {"README.md", "text/markdown"}, {"i.html", "text/html"},
    {"i.htm", "text/html"}, {"x.xml", "application/xml"}, {"c.yaml", "application/yaml"},
    {"c.yml", "application/yaml"}, {"c.toml", "application/toml"}, {"s.py", "text/x-python"},
    {"s.js", "text/javascript"}, {"s.mjs", "text/javascript"}, {"s.ts", "text/x-typescript"},
    {"s.c", "text/x-c"}, {"s.h", "text/x-c"}, {"s.sh", "application/x-sh"},
    {"q.sql", "application/sql"}, {"t.parquet", "application/vnd.apache.parquet"},
    {"t.feather", "application/vnd.apache.arrow.file"},
    {"t.arrow", "application/vnd.apache.arrow.file"},
    {"t.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
    {"t.xls", "application/vnd.ms-excel"},
    {"t.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
    {"t.pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"},
    {"a.zip", "application/zip"}, {"a.tar.gz", "application/gzip"}, {"a.tar", "application/x-tar"},
    {"a.bz2", "application/x-bzip2"}, {"a.xz", "application/x-xz"},
    {"a.7z", "application/x-7z-compressed"}, {"m.npy", "application/x-npy"},
    {"m.npz", "application/x-npz"}, {"m.pkl", "application/x-pickle"},
    {"m.pickle", "application/x-pickle"}, {"m.h5", "application/x-hdf5"},
    {"m.hdf5", "application/x-hdf5"}, {"s.wav", "audio/wav"}, {"s.mp3", "audio/mpeg"},
    {"s.ogg", "audio/ogg"}, {"v.mp4", "video/mp4"}, {"v.webm", "video/webm"},
    {"v.mov", "video/quicktime"}, {"v.avi", "video/x-msvideo"},
    {"n.ipynb", "application/x-ipynb+json"}, {"run.log", "text/plain"}, {"c.ini", "text/plain"},
    {"c.cfg", "text/plain"}, {"d.sqlite", "application/vnd.sqlite3"},
    {"d.db", "application/vnd.sqlite3"}, {"f.woff", "font/woff"}, {"f.woff2", "font/woff2"},
    {"f.ttf", "font/ttf"}, {"f.otf", "font/otf"}, {"s.css", "text/css"},
    /* no extension, or an unknown one */
    {"data.xyz", "application/octet-stream"}, {".bashrc", "application/octet-stream"},
    {"dir.png/file", "application/octet-stream"}, {"out/.png", "application/octet-stream"}, {"notes.", "application/octet-stream"},
    {"Makefile", "application/octet-stream"}, {"", "application/octet-stream"},
    {"a.averyveryverylongextension", "application/octet-stream"},
    {"output/", "application/octet-stream"},
};

/* Each path of s_mimes gets its type. */
START_TEST (test_mime_for_path)
{
    ck_assert_msg (strcmp (gw_mime_for_path (s_mimes[_i].path), s_mimes[_i].mime) == 0,
                   "%s: want %s, got %s", s_mimes[_i].path, s_mimes[_i].mime,
                   gw_mime_for_path (s_mimes[_i].path));
}
END_TEST

Suite *
artifacts_suite (void)
{
    Suite *s = suite_create ("artifacts");
    TCase *tc = tcase_create ("snapshot");
    tcase_add_test (tc, test_diff_new_and_changed);
    tcase_add_test (tc, test_snapshot_missing_dir);
    tcase_add_test (tc, test_list_all_sorted);
    tcase_add_test (tc, test_session_folder);
    tcase_add_test (tc, test_list_skips_unusable_names);
    tcase_add_test (tc, test_walk_depth_limit);
    tcase_add_test (tc, test_walk_file_limit);
    tcase_add_test (tc, test_diff_after_a_cut_walk);
    suite_add_tcase (s, tc);

    tc = tcase_create ("mime");
    tcase_add_loop_test (tc, test_mime_for_path, 0, (int) (sizeof s_mimes / sizeof s_mimes[0]));
    suite_add_tcase (s, tc);
    return s;
}
