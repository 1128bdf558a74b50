/* test_path: session id validation, the relative path check, and
 * gw_path_open_beneath against a scratch tree with symlinks that stay
 * inside and symlinks that lead out (absolute, relative "../..", a
 * symlinked parent folder, a dangling symlink to create through, the
 * /proc magic links), and the owner gw_path_create_beneath gives what it
 * makes; gw_path_parent_beneath, and gw_upload (a body written beside and
 * renamed into place, or removed) on the same tree. The open tests run
 * twice: once with openat2, once
 * with openat2 made to fail with ENOSYS by a seccomp filter, so the
 * component walk that replaces it is checked too. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gw_path.h"
#include "gw_upload.h"
#include "suites.h"
#include "testutil.h"

#define S_NATIVE    0           /* loop index: openat2 works */
#define S_FALLBACK  1           /* loop index: openat2 gives ENOSYS */

/* ---- session ids and relative paths ------------------------------------ */

static const struct {
    const char *id;
    bool valid;
} s_ids[] = {
    {"", false}, {".hidden", false}, {"a/b", false}, {"../x", false}, {"a b", false},
    {"caf\xc3\xa9", false}, {"tab\there", false}, {"-ok", true}, {"ok.1_2", true},
    {"a", true}, {"Session-42", true},
};

/* Each id of s_ids is accepted or refused as marked. */
START_TEST (test_session_ids)
{
    ck_assert_msg (gw_path_valid_session_id (s_ids[_i].id) == s_ids[_i].valid,
                   "session id \"%s\" should be %s", s_ids[_i].id,
                   s_ids[_i].valid ? "valid" : "invalid");
}
END_TEST

/* 64 characters are the most a session id may have; 65 are refused. */
START_TEST (test_session_id_length)
{
    char id[66];
    memset (id, 'x', 64);
    id[64] = '\0';
    ck_assert (gw_path_valid_session_id (id));
    id[64] = 'x';
    id[65] = '\0';
    ck_assert (!gw_path_valid_session_id (id));
    ck_assert (!gw_path_valid_session_id (NULL));
}
END_TEST

static const char *s_bad_paths[] = {
    "", "/etc/passwd", "/", "..", "../x", "a/../b", "a/..", "./a", "a/./b", ".",
    "a//b", "//", "a//", "a\\b", "a\tb", "a\nb", "a\x1f", "a\x7f", "\x01",
    /* not UTF-8: a stray byte, a cut sequence, Latin-1, an overlong '/',
       a surrogate; and a C1 control (NEL) */
    "\xff", "input/caf\xc3", "input/caf\xe9", "a\xc0\xaf" "b", "\xed\xa0\x80", "a\xc2\x85" "b",
};

/* Each path of s_bad_paths is refused with -EINVAL and a sentence. */
START_TEST (test_relative_rejects)
{
    char err[128] = "";
    ck_assert_msg (gw_path_check_relative (s_bad_paths[_i], err, sizeof err) == -EINVAL,
                   "path #%d \"%s\" was accepted", _i, s_bad_paths[_i]);
    ck_assert_msg (strlen (err) > 10 && err[strlen (err) - 1] == '.',
                   "path #%d: no sentence in err (\"%s\")", _i, err);
}
END_TEST

static const char *s_good_paths[] = {
    "input/data.csv", "output/", "output/sub/x.png", "a", ".hidden", "a/.b/..c", "caf\xc3\xa9.txt",
};

/* Each path of s_good_paths is accepted, with or without room for err. */
START_TEST (test_relative_accepts)
{
    char err[64] = "untouched";
    ck_assert_msg (gw_path_check_relative (s_good_paths[_i], err, sizeof err) == 0,
                   "path \"%s\" was refused: %s", s_good_paths[_i], err);
    ck_assert_int_eq (gw_path_check_relative (s_good_paths[_i], NULL, 0), 0);
}
END_TEST

/* 1024 bytes are accepted, 1025 refused; a tiny err buffer is cut, not
 * overrun. */
START_TEST (test_relative_length)
{
    char path[GW_PATH_MAX + 2];
    memset (path, 'a', sizeof path);
    for (size_t i = 100; i < GW_PATH_MAX; i += 100)
        path[i] = '/';
    path[GW_PATH_MAX] = '\0';
    ck_assert_int_eq (gw_path_check_relative (path, NULL, 0), 0);
    path[GW_PATH_MAX] = 'a';
    path[GW_PATH_MAX + 1] = '\0';
    char err[8];
    ck_assert_int_eq (gw_path_check_relative (path, err, sizeof err), -EINVAL);
    ck_assert_uint_eq (strlen (err), sizeof err - 1);
}
END_TEST

/* A name of 255 bytes is accepted, one of 256 refused with a sentence that
 * names the bound, wherever it is in the path; the whole path's bound
 * and UTF-8 have sentences of their own. */
START_TEST (test_relative_name_length)
{
    char path[600], err[160];
    memcpy (path, "input/", 6);
    memset (path + 6, 'n', 255);
    path[6 + 255] = '\0';
    ck_assert_int_eq (gw_path_check_relative (path, err, sizeof err), 0);
    memcpy (path + 6 + 255, "/x", 3);
    ck_assert_int_eq (gw_path_check_relative (path, err, sizeof err), 0);
    memset (path + 6, 'n', 256);
    memcpy (path + 6 + 256, "/x", 3);
    ck_assert_int_eq (gw_path_check_relative (path, err, sizeof err), -EINVAL);
    ck_assert_msg (strstr (err, "255 bytes"), "%s", err);
    path[6 + 256] = '\0';
    ck_assert_int_eq (gw_path_check_relative (path, err, sizeof err), -EINVAL);
    ck_assert_msg (strstr (err, "255 bytes"), "%s", err);
    ck_assert_int_eq (gw_path_check_relative ("input/\xff", err, sizeof err), -EINVAL);
    ck_assert_msg (strstr (err, "UTF-8"), "%s", err);
    ck_assert_int_eq (gw_path_check_relative ("input/a\xc2\x9f" "b", err, sizeof err), -EINVAL);
    ck_assert_msg (strstr (err, "control"), "%s", err);
    /* multi-byte characters count in bytes: 127 of 2 bytes fit, 128 do not */
    char wide[300] = "";
    for (int i = 0; i < 127; i++)
        strcat (wide, "\xc3\xa9");
    ck_assert_int_eq (gw_path_check_relative (wide, NULL, 0), 0);
    strcat (wide, "\xc3\xa9");
    ck_assert_int_eq (gw_path_check_relative (wide, NULL, 0), -EINVAL);
}
END_TEST

/* ---- gw_path_open_beneath ---------------------------------------------- */

/* A scratch tree: tmp/root is the confined folder (fd root), tmp/outside
 * holds a secret that no path beneath root may reach. */
typedef struct {
    char *tmp;
    int root;
} s_tree_t;

/* Returns tmp/rel in a new string. */
static char *
s_at (const s_tree_t *t, const char *rel)
{
    char *out = NULL;
    ck_assert_int_ge (asprintf (&out, "%s/%s", t->tmp, rel), 0);
    return out;
}

static void
s_mkdir (const s_tree_t *t, const char *rel)
{
    char *p = s_at (t, rel);
    ck_assert_msg (mkdir (p, 0755) == 0, "mkdir %s: %s", p, strerror (errno));
    free (p);
}

static void
s_file (const s_tree_t *t, const char *rel, const char *text)
{
    char *p = s_at (t, rel);
    tu_write_file (p, text, strlen (text));
    free (p);
}

/* Makes tmp/rel a symlink to target; "@/x" in target means tmp/x. */
static void
s_symlink (const s_tree_t *t, const char *target, const char *rel)
{
    char *p = s_at (t, rel);
    char *abs = strncmp (target, "@/", 2) == 0 ? s_at (t, target + 2) : strdup (target);
    ck_assert_msg (symlink (abs, p) == 0, "symlink %s: %s", p, strerror (errno));
    free (abs);
    free (p);
}

static bool
s_exists (const s_tree_t *t, const char *rel)
{
    char *p = s_at (t, rel);
    struct stat st;
    bool yes = lstat (p, &st) == 0;
    free (p);
    return yes;
}

/* Makes openat2 fail with ENOSYS in this (forked) test process, as on a
 * kernel before 5.6, and checks that it does. */
static void
s_disable_openat2 (void)
{
    struct sock_filter code[] = {
        BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
        BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
        BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {(unsigned short) (sizeof code / sizeof code[0]), code};
    ck_assert_int_eq (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
    ck_assert_int_eq (prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog), 0);
    struct open_how how = {.flags = O_RDONLY, .resolve = RESOLVE_BENEATH};
    ck_assert_int_eq (syscall (SYS_openat2, AT_FDCWD, ".", &how, sizeof how), -1);
    ck_assert_int_eq (errno, ENOSYS);
}

/* Builds the tree; mode is S_NATIVE or S_FALLBACK.
 *   root/input/data.csv     "a,b\n"
 *   root/sub/up          -> ../input/data.csv      (stays inside)
 *   root/inlink          -> input/data.csv         (stays inside)
 *   root/abs             -> tmp/outside/secret.txt
 *   root/esc             -> ../../etc
 *   root/esc2            -> ../outside/secret.txt
 *   root/outdir          -> tmp/outside            (absolute)
 *   root/outrel          -> ../outside             (relative)
 *   root/dangling        -> tmp/outside/created.txt (missing)
 *   outside/secret.txt      "secret" */
static s_tree_t
s_tree_make (int mode)
{
    s_tree_t t = {tu_mkdtemp (), -1};
    s_mkdir (&t, "root");
    s_mkdir (&t, "outside");
    s_mkdir (&t, "root/input");
    s_mkdir (&t, "root/sub");
    s_file (&t, "root/input/data.csv", "a,b\n");
    s_file (&t, "outside/secret.txt", "secret");
    s_symlink (&t, "../input/data.csv", "root/sub/up");
    s_symlink (&t, "input/data.csv", "root/inlink");
    s_symlink (&t, "@/outside/secret.txt", "root/abs");
    s_symlink (&t, "../../etc", "root/esc");
    s_symlink (&t, "../outside/secret.txt", "root/esc2");
    s_symlink (&t, "@/outside", "root/outdir");
    s_symlink (&t, "../outside", "root/outrel");
    s_symlink (&t, "@/outside/created.txt", "root/dangling");
    char *root = s_at (&t, "root");
    t.root = open (root, O_RDONLY | O_DIRECTORY);
    ck_assert_int_ge (t.root, 0);
    free (root);
    if (mode == S_FALLBACK)
        s_disable_openat2 ();
    return t;
}

static void
s_tree_free (s_tree_t *t)
{
    close (t->root);
    tu_rmtree (t->tmp);
    free (t->tmp);
}

/* Reads the open file fd (closing it) and checks its text. */
static void
s_assert_text (int fd, const char *want)
{
    ck_assert_msg (fd >= 0, "open failed: %s", strerror (-fd));
    char buf[64] = "";
    ssize_t n = read (fd, buf, sizeof buf - 1);
    close (fd);
    ck_assert_int_ge (n, 0);
    ck_assert_str_eq (buf, want);
}

/* The error an escape gives: EXDEV from openat2, ELOOP from the walk. */
static int
s_escape_error (int mode)
{
    return mode == S_NATIVE ? -EXDEV : -ELOOP;
}

/* A plain file and a folder beneath root open, close-on-exec. */
START_TEST (test_open_inside)
{
    s_tree_t t = s_tree_make (_i);
    int fd = gw_path_open_beneath (t.root, "input/data.csv", O_RDONLY, 0);
    ck_assert_int_ge (fd, 0);
    ck_assert_int_eq (fcntl (fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
    s_assert_text (fd, "a,b\n");
    fd = gw_path_open_beneath (t.root, "input/", O_RDONLY | O_DIRECTORY, 0);
    ck_assert_int_ge (fd, 0);
    close (fd);
    ck_assert_int_eq (gw_path_open_beneath (t.root, "input/data.csv/", O_RDONLY, 0), -ENOTDIR);
    ck_assert_int_eq (gw_path_open_beneath (t.root, "input/none.csv", O_RDONLY, 0), -ENOENT);
    s_tree_free (&t);
}
END_TEST

/* Symlinks to an absolute path outside, and relative ones climbing out
 * ("../../etc", "../outside"), are refused. */
START_TEST (test_open_refuses_escaping_symlinks)
{
    s_tree_t t = s_tree_make (_i);
    int want = s_escape_error (_i);
    ck_assert_int_eq (gw_path_open_beneath (t.root, "abs", O_RDONLY, 0), want);
    ck_assert_int_eq (gw_path_open_beneath (t.root, "esc/passwd", O_RDONLY, 0), want);
    ck_assert_int_eq (gw_path_open_beneath (t.root, "esc2", O_RDONLY, 0), want);
    ck_assert_int_eq (gw_path_open_beneath (t.root, "outdir/secret.txt", O_RDONLY, 0), want);
    ck_assert_int_eq (gw_path_open_beneath (t.root, "outrel/secret.txt", O_RDONLY, 0), want);
    s_tree_free (&t);
}
END_TEST

/* Paths with "..", absolute paths and "." are refused before any open. */
START_TEST (test_open_refuses_bad_paths)
{
    s_tree_t t = s_tree_make (_i);
    ck_assert_int_eq (gw_path_open_beneath (t.root, "../outside/secret.txt", O_RDONLY, 0), -EINVAL);
    ck_assert_int_eq (gw_path_open_beneath (t.root, "../x", O_RDONLY | O_CREAT, 0644), -EINVAL);
    ck_assert_int_eq (gw_path_open_beneath (t.root, "input/../../outside/secret.txt", O_RDONLY, 0),
                      -EINVAL);
    char *secret = s_at (&t, "outside/secret.txt");
    ck_assert_int_eq (gw_path_open_beneath (t.root, secret, O_RDONLY, 0), -EINVAL);
    free (secret);
    ck_assert_int_eq (gw_path_open_beneath (t.root, "./input/data.csv", O_RDONLY, 0), -EINVAL);
    ck_assert (!s_exists (&t, "x"));
    s_tree_free (&t);
}
END_TEST

/* A symlink that stays inside opens with openat2; the walk refuses every
 * symlink, so there it is refused (fail closed). */
START_TEST (test_open_inside_symlink)
{
    s_tree_t t = s_tree_make (_i);
    int fd1 = gw_path_open_beneath (t.root, "inlink", O_RDONLY, 0);
    int fd2 = gw_path_open_beneath (t.root, "sub/up", O_RDONLY, 0);
    if (_i == S_NATIVE) {
        s_assert_text (fd1, "a,b\n");
        s_assert_text (fd2, "a,b\n");
    } else {
        ck_assert_int_eq (fd1, -ELOOP);
        ck_assert_int_eq (fd2, -ELOOP);
    }
    s_tree_free (&t);
}
END_TEST

/* /proc/self/root is a magic link: refused even beneath /proc/self. */
START_TEST (test_open_refuses_magic_links)
{
    s_tree_t t = s_tree_make (_i);
    int proc = open ("/proc/self", O_RDONLY | O_DIRECTORY);
    ck_assert_int_ge (proc, 0);
    ck_assert_int_eq (gw_path_open_beneath (proc, "root/etc/passwd", O_RDONLY, 0), -ELOOP);
    ck_assert_int_eq (gw_path_open_beneath (proc, "cwd", O_RDONLY | O_DIRECTORY, 0), -ELOOP);
    close (proc);
    s_tree_free (&t);
}
END_TEST

/* O_CREAT makes the missing parent folders (0755) and the file. */
START_TEST (test_open_creates_parents)
{
    s_tree_t t = s_tree_make (_i);
    umask (0);
    int fd = gw_path_open_beneath (t.root, "output/sub/deep/x.png", O_WRONLY | O_CREAT | O_EXCL, 0640);
    ck_assert_msg (fd >= 0, "create failed: %s", strerror (-fd));
    ck_assert_int_eq (write (fd, "png", 3), 3);
    close (fd);
    const char *dirs[] = {"root/output", "root/output/sub", "root/output/sub/deep"};
    for (size_t i = 0; i < 3; i++) {
        char *p = s_at (&t, dirs[i]);
        struct stat st;
        ck_assert_int_eq (lstat (p, &st), 0);
        ck_assert (S_ISDIR (st.st_mode));
        ck_assert_int_eq (st.st_mode & 07777, 0755);
        free (p);
    }
    char *p = s_at (&t, "root/output/sub/deep/x.png");
    struct stat st;
    ck_assert_int_eq (lstat (p, &st), 0);
    ck_assert (S_ISREG (st.st_mode));
    ck_assert_int_eq (st.st_mode & 07777, 0640);
    ck_assert_int_eq (st.st_size, 3);
    free (p);
    fd = gw_path_open_beneath (t.root, "output/sub/y.txt", O_WRONLY | O_CREAT, 0644);
    ck_assert_int_ge (fd, 0);
    close (fd);
    ck_assert (s_exists (&t, "root/output/sub/y.txt"));
    s_tree_free (&t);
}
END_TEST

/* gw_path_create_beneath gives what it makes to the owner asked for: each
 * missing folder and the file, not a folder that was there already
 * (as root; otherwise only that (uid_t) -1 leaves owners as they are). */
START_TEST (test_create_gives_to_owner)
{
    s_tree_t t = s_tree_make (_i);
    bool root = geteuid () == 0;
    uid_t uid = root ? 4242 : (uid_t) -1;
    gid_t gid = root ? 4343 : (gid_t) -1;
    char *before = s_at (&t, "root/input");
    struct stat was;
    ck_assert_int_eq (lstat (before, &was), 0);
    free (before);
    int fd = gw_path_create_beneath (t.root, "input/deep/er/f.txt", O_WRONLY | O_TRUNC, 0644,
                                     uid, gid);
    ck_assert_msg (fd >= 0, "create failed: %s", strerror (-fd));
    close (fd);
    const char *made[] = {"root/input/deep", "root/input/deep/er", "root/input/deep/er/f.txt"};
    for (size_t i = 0; i < 3; i++) {
        char *p = s_at (&t, made[i]);
        struct stat st;
        ck_assert_int_eq (lstat (p, &st), 0);
        ck_assert_msg (st.st_uid == (root ? uid : geteuid ()), "%s: uid %u", made[i],
                       (unsigned) st.st_uid);
        ck_assert_msg (st.st_gid == (root ? gid : getegid ()), "%s: gid %u", made[i],
                       (unsigned) st.st_gid);
        free (p);
    }
    char *p = s_at (&t, "root/input");
    struct stat st;
    ck_assert_int_eq (lstat (p, &st), 0);
    ck_assert_int_eq (st.st_uid, was.st_uid);     /* was there: left as it was */
    free (p);
    /* and it is confined as gw_path_open_beneath is */
    ck_assert_int_eq (gw_path_create_beneath (t.root, "outdir/new/f.txt", O_WRONLY, 0644, uid,
                                              gid), s_escape_error (_i));
    ck_assert (!s_exists (&t, "outside/new"));
    s_tree_free (&t);
}
END_TEST

/* The folder that holds a path: made as needed (given to the owner),
 * confined, and its last name pointed at; one component gives the root. */
START_TEST (test_parent_beneath)
{
    s_tree_t t = s_tree_make (_i);
    bool root = geteuid () == 0;
    uid_t uid = root ? 4242 : (uid_t) -1;
    gid_t gid = root ? 4343 : (gid_t) -1;
    const char *name = NULL;
    int fd = gw_path_parent_beneath (t.root, "input/new/deeper/f.txt", uid, gid, &name);
    ck_assert_msg (fd >= 0, "parent failed: %s", strerror (-fd));
    ck_assert_str_eq (name, "f.txt");
    int file = openat (fd, name, O_WRONLY | O_CREAT | O_EXCL, 0644);
    ck_assert_int_ge (file, 0);
    close (file);
    close (fd);
    ck_assert (s_exists (&t, "root/input/new/deeper/f.txt"));
    char *p = s_at (&t, "root/input/new/deeper");
    struct stat st;
    ck_assert_int_eq (lstat (p, &st), 0);
    ck_assert_int_eq (st.st_uid, root ? uid : geteuid ());
    free (p);
    /* one component: the folder itself */
    fd = gw_path_parent_beneath (t.root, "top.txt", uid, gid, &name);
    ck_assert_int_ge (fd, 0);
    ck_assert_str_eq (name, "top.txt");
    struct stat a, b;
    ck_assert_int_eq (fstat (fd, &a), 0);
    ck_assert_int_eq (fstat (t.root, &b), 0);
    ck_assert (a.st_ino == b.st_ino && a.st_dev == b.st_dev);
    close (fd);
    /* confined; a file for a folder; a folder for a file */
    ck_assert_int_eq (gw_path_parent_beneath (t.root, "outdir/x/f", uid, gid, &name),
                      s_escape_error (_i));
    ck_assert (!s_exists (&t, "outside/x"));
    ck_assert_int_eq (gw_path_parent_beneath (t.root, "input/data.csv/f", uid, gid, &name),
                      -ENOTDIR);
    ck_assert_int_eq (gw_path_parent_beneath (t.root, "input/", uid, gid, &name), -EISDIR);
    ck_assert_int_eq (gw_path_parent_beneath (t.root, "../x", uid, gid, &name), -EINVAL);
    s_tree_free (&t);
}
END_TEST

/* Entries of the tree's upload folder (0 when it is not there). */
static int
s_upload_entries (const s_tree_t *t)
{
    char *p = s_at (t, "root/" GW_UPLOAD_DIR);
    int fd = open (p, O_RDONLY | O_DIRECTORY);
    free (p);
    if (fd < 0)
        return 0;
    DIR *dir = fdopendir (fd);
    int n = 0;
    for (struct dirent *e; (e = readdir (dir));)
        n += strcmp (e->d_name, ".") != 0 && strcmp (e->d_name, "..") != 0;
    closedir (dir);
    return n;
}

/* An upload is written beside (in GW_UPLOAD_DIR) and renamed into place,
 * the file given to the owner; past its room, abandoned, or refused where
 * it goes, it leaves nothing. */
START_TEST (test_upload_whole_or_nothing)
{
    s_tree_t t = s_tree_make (_i);
    bool root = geteuid () == 0;
    uid_t uid = root ? 4242 : (uid_t) -1;
    gid_t gid = root ? 4343 : (gid_t) -1;
    gw_upload_t *up = NULL;
    /* into place */
    ck_assert_int_eq (gw_upload_new (t.root, 100, uid, gid, &up), 0);
    ck_assert_int_eq (gw_upload_write (up, "hello ", 6), 0);
    ck_assert_int_eq (gw_upload_write (up, "world", 5), 0);
    ck_assert_int_eq (s_upload_entries (&t), 1);
    ck_assert (!s_exists (&t, "root/input/up/f.txt"));
    ck_assert_int_eq (gw_upload_commit (up, t.root, "input/up/f.txt", uid, gid), 0);
    ck_assert_int_eq ((int) gw_upload_size (up), 11);
    gw_upload_destroy (&up);
    ck_assert (up == NULL);
    ck_assert_int_eq (s_upload_entries (&t), 0);
    int fd = gw_path_open_beneath (t.root, "input/up/f.txt", O_RDONLY, 0);
    char buf[32] = "";
    ck_assert_int_eq (read (fd, buf, sizeof buf - 1), 11);
    ck_assert_str_eq (buf, "hello world");
    struct stat st;
    ck_assert_int_eq (fstat (fd, &st), 0);
    ck_assert_int_eq (st.st_uid, root ? uid : geteuid ());
    close (fd);
    /* past its room: the file goes at once, and the error stays */
    ck_assert_int_eq (gw_upload_new (t.root, 8, uid, gid, &up), 0);
    ck_assert_int_eq (gw_upload_write (up, "12345", 5), 0);
    ck_assert_int_eq (gw_upload_write (up, "6789", 4), -EFBIG);
    ck_assert_int_eq (s_upload_entries (&t), 0);
    ck_assert_int_eq (gw_upload_write (up, "x", 1), -EFBIG);
    ck_assert_int_eq (gw_upload_error (up), -EFBIG);
    ck_assert_int_eq (gw_upload_commit (up, t.root, "input/past.txt", uid, gid), -EFBIG);
    gw_upload_destroy (&up);
    ck_assert (!s_exists (&t, "root/input/past.txt"));
    /* abandoned (a client that left) */
    ck_assert_int_eq (gw_upload_new (t.root, 100, uid, gid, &up), 0);
    ck_assert_int_eq (gw_upload_write (up, "part", 4), 0);
    gw_upload_destroy (&up);
    ck_assert_int_eq (s_upload_entries (&t), 0);
    /* onto a folder, or out of the tree: refused, nothing left */
    ck_assert_int_eq (gw_upload_new (t.root, 100, uid, gid, &up), 0);
    ck_assert_int_eq (gw_upload_write (up, "x", 1), 0);
    ck_assert_int_eq (gw_upload_commit (up, t.root, "input", uid, gid), -EISDIR);
    ck_assert_int_eq (s_upload_entries (&t), 0);
    gw_upload_destroy (&up);
    ck_assert_int_eq (gw_upload_new (t.root, 100, uid, gid, &up), 0);
    ck_assert_int_eq (gw_upload_commit (up, t.root, "outdir/f.txt", uid, gid),
                      s_escape_error (_i));
    gw_upload_destroy (&up);
    ck_assert_int_eq (s_upload_entries (&t), 0);
    ck_assert (!s_exists (&t, "outside/f.txt"));
    s_tree_free (&t);
}
END_TEST

/* With O_CREAT, a symlinked parent pointing outside is refused and nothing
 * is made outside: not the file, not a folder; nor through a dangling
 * symlink as the last component. */
START_TEST (test_open_create_refuses_escape)
{
    s_tree_t t = s_tree_make (_i);
    int want = s_escape_error (_i);
    int flags = O_WRONLY | O_CREAT;
    ck_assert_int_eq (gw_path_open_beneath (t.root, "outdir/new/f.txt", flags, 0644), want);
    ck_assert_int_eq (gw_path_open_beneath (t.root, "outrel/new/f.txt", flags, 0644), want);
    ck_assert_int_eq (gw_path_open_beneath (t.root, "outdir/f.txt", flags, 0644), want);
    ck_assert_int_eq (gw_path_open_beneath (t.root, "outrel/f.txt", flags, 0644), want);
    ck_assert_int_eq (gw_path_open_beneath (t.root, "dangling", flags, 0644), want);
    ck_assert_int_eq (gw_path_open_beneath (t.root, "esc/codebox-test", flags, 0644), want);
    ck_assert (!s_exists (&t, "outside/new"));
    ck_assert (!s_exists (&t, "outside/f.txt"));
    ck_assert (!s_exists (&t, "outside/created.txt"));
    s_tree_free (&t);
}
END_TEST

/* Paths codebox handed out come back as relative ones. */
static const struct {
    const char *path, *root, *want;     /* want NULL: refused */
} s_client_paths[] = {
    {"output/r.txt", "/session", "output/r.txt"},
    {"/session/output/r.txt", "/session", "output/r.txt"},
    {"/session//output/r.txt", "/session", "output/r.txt"},
    {"/session", "/session", ""},
    {"/session/", "/session", ""},
    {"/", "/session", ""},
    {"//", "/session", ""},
    {"/sessions/x", "/session", NULL},
    {"/sessionx", "/session", NULL},
    {"/etc/passwd", "/session", NULL},
    {"/var/lib/codebox/sessions/a/input/d.csv", "/var/lib/codebox/sessions/a", "input/d.csv"},
    {"/var/lib/codebox/sessions/a", "/var/lib/codebox/sessions/a/", ""},
    {"/var/lib/codebox/sessions/ab/x", "/var/lib/codebox/sessions/a", NULL},
    {"/session/output/x", "/var/lib/codebox/sessions/a", "output/x"},
    {"/session/../etc", "/session", "../etc"},     /* refused later by the relative check */
    {"", "/session", ""},
};

START_TEST (test_in_session)
{
    const char *got = gw_path_in_session (s_client_paths[_i].path, s_client_paths[_i].root);
    const char *want = s_client_paths[_i].want;
    ck_assert_msg (want ? got && strcmp (got, want) == 0 : got == NULL, "%s under %s: got %s",
                   s_client_paths[_i].path, s_client_paths[_i].root, got ? got : "NULL");
}
END_TEST

Suite *
path_suite (void)
{
    Suite *s = suite_create ("path");
    TCase *tc = tcase_create ("names");
    tcase_add_loop_test (tc, test_session_ids, 0, (int) (sizeof s_ids / sizeof s_ids[0]));
    tcase_add_test (tc, test_session_id_length);
    tcase_add_loop_test (tc, test_relative_rejects, 0,
                         (int) (sizeof s_bad_paths / sizeof s_bad_paths[0]));
    tcase_add_loop_test (tc, test_relative_accepts, 0,
                         (int) (sizeof s_good_paths / sizeof s_good_paths[0]));
    tcase_add_test (tc, test_relative_length);
    tcase_add_test (tc, test_relative_name_length);
    tcase_add_loop_test (tc, test_in_session, 0,
                         (int) (sizeof s_client_paths / sizeof s_client_paths[0]));
    suite_add_tcase (s, tc);

    tc = tcase_create ("open_beneath");
    tcase_add_loop_test (tc, test_open_inside, S_NATIVE, S_FALLBACK + 1);
    tcase_add_loop_test (tc, test_open_refuses_escaping_symlinks, S_NATIVE, S_FALLBACK + 1);
    tcase_add_loop_test (tc, test_open_refuses_bad_paths, S_NATIVE, S_FALLBACK + 1);
    tcase_add_loop_test (tc, test_open_inside_symlink, S_NATIVE, S_FALLBACK + 1);
    tcase_add_loop_test (tc, test_open_refuses_magic_links, S_NATIVE, S_FALLBACK + 1);
    tcase_add_loop_test (tc, test_open_creates_parents, S_NATIVE, S_FALLBACK + 1);
    tcase_add_loop_test (tc, test_open_create_refuses_escape, S_NATIVE, S_FALLBACK + 1);
    tcase_add_loop_test (tc, test_create_gives_to_owner, S_NATIVE, S_FALLBACK + 1);
    tcase_add_loop_test (tc, test_parent_beneath, S_NATIVE, S_FALLBACK + 1);
    tcase_add_loop_test (tc, test_upload_whole_or_nothing, S_NATIVE, S_FALLBACK + 1);
    suite_add_tcase (s, tc);
    return s;
}
