/* gw_cmd_exec_place: the folders of one `codebox exec` run and the
 * idmapped mount that lets the kernel user work in the current folder.
 * See gw_cmd_exec_place.h. Main thread only. */
#include "gw_cmd_exec_place.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gw_fs.h"

/* When the mount was made, for s_clear_setid (nftw passes no argument). */
static time_t s_mounted_at;
static long s_walked;

/* Writes text to the file at path (a /proc map file). 0 or -errno. */
static int
s_write (const char *path, const char *text)
{
    int fd = open (path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = write (fd, text, strlen (text));
    int e = n == (ssize_t) strlen (text) ? 0 : n < 0 ? -errno : -EIO;
    close (fd);
    return e;
}

/* A user namespace (a descriptor to it) whose only ids are the folder
 * owner's, standing for the kernel user's: what an idmapped mount of the
 * folder needs to show the owner's files as the kernel user's. A child
 * makes the namespace; we write its maps, keep a descriptor, let it go.
 * Returns the descriptor or -errno. */
static int
s_userns (uid_t owner_uid, gid_t owner_gid, uid_t kernel_uid, gid_t kernel_gid)
{
    int ready[2], done[2];
    if (pipe2 (ready, O_CLOEXEC) < 0)
        return -errno;
    if (pipe2 (done, O_CLOEXEC) < 0) {
        int e = -errno;
        close (ready[0]);
        close (ready[1]);
        return e;
    }
    pid_t pid = fork ();
    if (pid == 0) {
        close (ready[0]);
        close (done[1]);        /* so that the parent's close ends the read */
        char c = unshare (CLONE_NEWUSER) == 0 ? 'y' : 'n';
        if (write (ready[1], &c, 1) == 1)
            (void) !read (done[0], &c, 1);
        _exit (0);
    }
    close (ready[1]);
    close (done[0]);
    char c = 'n', path[64], map[64];
    int rc = pid < 0 ? -errno : read (ready[0], &c, 1) == 1 && c == 'y' ? 0 : -EPERM;
    if (!rc) {
        snprintf (path, sizeof path, "/proc/%d/uid_map", (int) pid);
        snprintf (map, sizeof map, "%u %u 1\n", (unsigned) owner_uid, (unsigned) kernel_uid);
        rc = s_write (path, map);
    }
    if (!rc) {
        snprintf (path, sizeof path, "/proc/%d/gid_map", (int) pid);
        snprintf (map, sizeof map, "%u %u 1\n", (unsigned) owner_gid, (unsigned) kernel_gid);
        rc = s_write (path, map);
    }
    if (!rc) {
        snprintf (path, sizeof path, "/proc/%d/ns/user", (int) pid);
        rc = open (path, O_RDONLY | O_CLOEXEC);
        if (rc < 0)
            rc = -errno;
    }
    close (done[1]);            /* the child ends */
    close (ready[0]);
    if (pid > 0)
        while (waitpid (pid, NULL, 0) < 0 && errno == EINTR) {
        }
    return rc;
}

/* Mounts cwd at here, idmapped so that the kernel user is its owner, in a
 * mount namespace of this process's own (the mount is seen by nothing
 * else and goes when the process ends). 0 or -1 with err set. */
static int
s_mount_cwd (gw_exec_place_t *self, uid_t kernel_uid, gid_t kernel_gid, char *err,
             size_t err_len)
{
    struct stat st;
    if (stat (self->cwd, &st) < 0 || mkdir (self->here, 0755) < 0) {
        snprintf (err, err_len, "cannot reach %s: %s", self->cwd, strerror (errno));
        return -1;
    }
    const char *step = "a mount namespace";
    int userns = -1, tree = -1, rc = -1;
    if (unshare (CLONE_NEWNS) < 0 || mount (NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
        goto out;
    step = "a user namespace for the idmapping";
    userns = s_userns (st.st_uid, st.st_gid, kernel_uid, kernel_gid);
    if (userns < 0) {
        errno = -userns;
        goto out;
    }
    step = "a copy of the folder's mount";
    tree = open_tree (AT_FDCWD, self->cwd, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    if (tree < 0)
        goto out;
    /* nosuid and nodev: nothing set-user-ID runs from it in the sandbox */
    struct mount_attr attr = {
        .attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
        .userns_fd = (unsigned) userns,
    };
    step = "an idmapped mount (Linux 5.12 or later, on a file system that allows it)";
    if (mount_setattr (tree, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0)
        goto out;
    step = "the mount";
    if (move_mount (tree, "", AT_FDCWD, self->here, MOVE_MOUNT_F_EMPTY_PATH) < 0)
        goto out;
    self->mounted = true;
    s_mounted_at = time (NULL) - 1;
    rc = 0;
out:
    if (rc)
        snprintf (err, err_len, "cannot give the kernel user the folder %s: %s: %s (run "
                  "with --isolated for an empty folder instead)", self->cwd, step,
                  strerror (errno));
    if (tree >= 0)
        close (tree);
    if (userns >= 0)
        close (userns);
    return rc;
}

/* Puts the kernel in the same sandbox `codebox serve` gives its kernels,
 * working in self->workdir (made by the caller, or cwd). */
static int
s_sandbox (gw_exec_place_t *self, const gw_config_t *config, const ks_spec_t *spec,
           ks_kernel_options_t *kopts, char *err, size_t err_len)
{
    if (chmod (self->top, 0711) < 0 || mkdir (self->run, 0700) < 0) {
        snprintf (err, err_len, "cannot make the sandbox's folders: %s", strerror (errno));
        return -1;
    }
    self->sandbox = gw_sandbox_new (config, self->top, err, err_len);
    if (!self->sandbox)
        return -1;
    uid_t uid;
    gid_t gid;
    if (self->isolated && gw_sandbox_own (self->sandbox, self->work) < 0) {
        snprintf (err, err_len, "cannot give the kernel user its folder: %s", strerror (errno));
        return -1;
    }
    if (!self->isolated && gw_sandbox_owner (self->sandbox, &uid, &gid)) {
        if (s_mount_cwd (self, uid, gid, err, err_len) < 0)
            return -1;
        self->workdir = self->here;
    }
    char id[16];
    snprintf (id, sizeof id, "x%07ld", (long) getpid () % 10000000);
    kopts->runtime_dir = self->run;
    kopts->cwd = self->workdir;
    int rc = gw_sandbox_prepare (self->sandbox, spec, self->workdir, self->run, id, NULL,
                                 &self->launch, kopts);
    if (rc) {
        snprintf (err, err_len, "cannot prepare the sandbox: %s", strerror (-rc));
        return -1;
    }
    return 0;
}

int
gw_exec_place_open (gw_exec_place_t *self, const gw_config_t *config, const ks_spec_t *spec,
                    bool sandboxed, bool isolated, ks_kernel_options_t *kopts, char *err,
                    size_t err_len)
{
    memset (self, 0, sizeof *self);
    self->isolated = isolated;
    if (!getcwd (self->cwd, sizeof self->cwd)) {
        snprintf (err, err_len, "cannot tell the current folder: %s", strerror (errno));
        return -1;
    }
    snprintf (self->top, sizeof self->top, "/tmp/codebox-exec-XXXXXX");
    if (!mkdtemp (self->top)) {
        snprintf (err, err_len, "cannot make a runtime folder: %s", strerror (errno));
        self->top[0] = '\0';
        return -1;
    }
    snprintf (self->run, sizeof self->run, "%s/run", self->top);
    snprintf (self->work, sizeof self->work, "%s/work", self->top);
    snprintf (self->here, sizeof self->here, "%s/here", self->top);
    if (isolated && mkdir (self->work, 0700) < 0) {
        snprintf (err, err_len, "cannot make the kernel's folder: %s", strerror (errno));
        return -1;
    }
    self->workdir = isolated ? self->work : self->cwd;
    if (sandboxed)
        return s_sandbox (self, config, spec, kopts, err, err_len);
    kopts->runtime_dir = self->top;
    kopts->cwd = self->workdir;
    return 0;
}

void
gw_exec_place_launched (gw_exec_place_t *self)
{
    gw_sandbox_launch_clear (&self->launch);
}

/* nftw: a file changed since the mount that is set-user-ID or
 * set-group-ID loses those bits: on the idmapped mount the code wrote as
 * the folder's owner (root, say), and such a file would run as that owner
 * for anyone outside the sandbox. Stops past a million entries. */
static int
s_clear_setid (const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void) ftw;
    if (type == FTW_F && (st->st_mode & (S_ISUID | S_ISGID)) && st->st_ctime >= s_mounted_at
        && chmod (path, st->st_mode & 07777 & ~(mode_t) (S_ISUID | S_ISGID)) == 0) {
        fprintf (stderr, "codebox exec: %s was made set-user-ID or set-group-ID by the "
                 "code; those bits are removed\n", path);
    }
    return ++s_walked > 1000000;
}

/* The entries of folder path, "." and ".." aside; 0 when unreadable. */
static int
s_count_entries (const char *path)
{
    DIR *dir = opendir (path);
    int n = 0;
    for (struct dirent *e; dir && (e = readdir (dir));)
        n += strcmp (e->d_name, ".") != 0 && strcmp (e->d_name, "..") != 0;
    if (dir)
        closedir (dir);
    return n;
}

void
gw_exec_place_close (gw_exec_place_t *self)
{
    gw_sandbox_launch_clear (&self->launch);
    gw_sandbox_destroy (&self->sandbox);
    if (!self->top[0])
        return;
    int left = self->isolated ? s_count_entries (self->work) : 0;
    if (left)
        fprintf (stderr, "codebox exec: --isolated: %d file%s the code wrote in its empty "
                 "folder %s removed with it (without --isolated, the code works in the "
                 "current folder)\n", left, left == 1 ? "" : "s", left == 1 ? "is" : "are");
    if (self->mounted)
        nftw (self->cwd, s_clear_setid, 32, FTW_PHYS | FTW_MOUNT);
    /* never remove a tree that may still hold the user's folder */
    if (self->mounted && umount2 (self->here, MNT_DETACH) < 0) {
        fprintf (stderr, "codebox exec: cannot undo the mount at %s: %s; %s stays\n",
                 self->here, strerror (errno), self->top);
        return;
    }
    if (self->mounted && rmdir (self->here) < 0) {
        fprintf (stderr, "codebox exec: %s is not empty after its mount was undone; %s "
                 "stays\n", self->here, self->top);
        return;
    }
    self->mounted = false;
    gw_fs_remove_tree (self->top);
    self->top[0] = '\0';
}
