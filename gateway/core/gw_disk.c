/* gw_disk: a file system per session folder (see gw_disk.h).
 * Threads: the loop thread, the main thread at start and exit. */
#include "gw_disk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gw_fs.h"
#include "jp_log.h"
#include "jp_random.h"

extern char **environ;

static bool s_enabled;
static bool s_bound;            /* the state folder was bind-mounted on itself here */
static char s_image_dir[4200];  /* where images are made (then unlinked) */
static char s_keep[4400];       /* mounts below it are not this server's (gw_disk_setup) */

bool
gw_disk_enabled (void)
{
    return s_enabled;
}

/* Decodes the octal escapes of a mountinfo path in place. */
static void
s_unescape (char *p)
{
    char *out = p;
    while (*p) {
        if (p[0] == '\\' && p[1] >= '0' && p[1] <= '7' && p[2] && p[3]) {
            *out++ = (char) (((p[1] - '0') << 6) | ((p[2] - '0') << 3) | (p[3] - '0'));
            p += 4;
        } else
            *out++ = *p++;
    }
    *out = '\0';
}

/* True when the mount that holds dir propagates to peers ("shared:" in
 * mountinfo), where a mount cannot be moved (MS_MOVE). */
static bool
s_holder_is_shared (const char *dir)
{
    FILE *f = fopen ("/proc/self/mountinfo", "re");
    if (!f)
        return true;
    char line[8192], best[4200] = "";
    bool shared = true;
    while (fgets (line, sizeof line, f)) {
        bool is_shared = strstr (line, " shared:") != NULL;
        char *save = NULL, *field = strtok_r (line, " ", &save);
        for (int i = 0; field && i < 4; i++)
            field = strtok_r (NULL, " ", &save);
        if (!field)
            continue;
        s_unescape (field);
        size_t n = strlen (field);
        bool holds = strcmp (field, "/") == 0
                     || (strncmp (dir, field, n) == 0 && (dir[n] == '\0' || dir[n] == '/'));
        if (holds && n >= strlen (best) && n < sizeof best) {
            snprintf (best, sizeof best, "%s", field);
            shared = is_shared;
        }
    }
    fclose (f);
    return shared;
}

/* The mount point a line of /proc/self/mountinfo names (unescaped in
 * place), or NULL. */
static char *
s_mount_point (char *line)
{
    char *save = NULL, *field = strtok_r (line, " ", &save);
    for (int i = 0; field && i < 4; i++)
        field = strtok_r (NULL, " ", &save);
    if (field)
        s_unescape (field);
    return field;
}

/* Whether a line of /proc/self/mountinfo mounts something below dir (len
 * bytes). */
static bool
s_mountinfo_below (char *line, const char *dir, size_t len)
{
    const char *field = s_mount_point (line);
    return field && strncmp (field, dir, len) == 0 && field[len] == '/';
}

int
gw_disk_unmount_below (const char *dir)
{
    return gw_disk_unmount_below_but (dir, NULL);
}

int
gw_disk_unmount_below_but (const char *dir, const char *keep)
{
    size_t n = strlen (dir), k = keep ? strlen (keep) : 0;
    int count = 0;
    /* deepest first: each pass unmounts the longest path found */
    for (int pass = 0; pass < 10000; pass++) {
        FILE *f = fopen ("/proc/self/mountinfo", "re");
        if (!f)
            return count;
        char line[8192], best[4200] = "";
        while (fgets (line, sizeof line, f)) {
            char *field = s_mount_point (line);
            if (!field)
                continue;
            if (keep && strncmp (field, keep, k) == 0 && (field[k] == '/' || !field[k]))
                continue;
            if (strncmp (field, dir, n) == 0 && field[n] == '/' && field[n + 1]
                && strlen (field) > strlen (best) && strlen (field) < sizeof best)
                snprintf (best, sizeof best, "%s", field);
        }
        fclose (f);
        if (!best[0] || umount2 (best, MNT_DETACH) < 0)
            return count;
        count++;
    }
    return count;
}

/* Runs mkfs.ext4 on image (owned by uid:gid at its root). */
static int
s_mkfs (const char *image, uid_t uid, gid_t gid)
{
    char owner[64];
    snprintf (owner, sizeof owner, "lazy_itable_init=1,root_owner=%u:%u", (unsigned) uid,
              (unsigned) gid);
    char *argv[] = {"mkfs.ext4", "-q", "-F", "-m", "0", "-O", "^has_journal", "-E", owner,
                    (char *) image, NULL};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init (&actions);
    posix_spawn_file_actions_addopen (&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen (&actions, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    char *env[] = {"PATH=/usr/sbin:/sbin:/usr/bin:/bin", NULL};
    int rc = posix_spawnp (&pid, "mkfs.ext4", &actions, NULL, argv, env);
    posix_spawn_file_actions_destroy (&actions);
    if (rc)
        return -rc;
    int status;
    while (waitpid (pid, &status, 0) < 0)
        if (errno != EINTR)
            return -errno;
    return WIFEXITED (status) && WEXITSTATUS (status) == 0 ? 0 : -EIO;
}

/* Attaches image to a free loop device that frees itself at its last
 * close or unmount: returns its open descriptor (keep it open until the
 * mount is made) and its path in dev, or -errno. */
static int
s_loop_attach (const char *image, char *dev, size_t dev_len)
{
    int attached = -1;
    int ctl = open ("/dev/loop-control", O_RDWR | O_CLOEXEC);
    if (ctl < 0)
        return -errno;
    int file = open (image, O_RDWR | O_CLOEXEC);
    int rc = file < 0 ? -errno : -EBUSY;
    for (int tries = 0; file >= 0 && rc == -EBUSY && tries < 20; tries++) {
        int no = ioctl (ctl, LOOP_CTL_GET_FREE);
        if (no < 0) {
            rc = -errno;
            break;
        }
        snprintf (dev, dev_len, "/dev/loop%d", no);
        int loop = open (dev, O_RDWR | O_CLOEXEC);
        if (loop < 0) {
            rc = -errno;
            break;
        }
        if (ioctl (loop, LOOP_SET_FD, file) < 0)
            rc = errno == EBUSY ? -EBUSY : -errno;     /* taken meanwhile: again */
        else {
            struct loop_info64 info;
            memset (&info, 0, sizeof info);
            info.lo_flags = LO_FLAGS_AUTOCLEAR;
            rc = ioctl (loop, LOOP_SET_STATUS64, &info) < 0 ? -errno : 0;
            if (rc)
                ioctl (loop, LOOP_CLR_FD, 0);
            else
                attached = loop;
        }
        if (attached < 0)
            close (loop);
    }
    if (file >= 0)
        close (file);
    close (ctl);
    return attached >= 0 ? attached : rc;
}

int
gw_disk_make (const char *folder, long quota_mb, uid_t uid, gid_t gid, char *err,
              size_t err_len)
{
    if (mkdir (folder, 0755) < 0) {
        int e = errno;
        snprintf (err, err_len, "cannot make %s: %s", folder, strerror (e));
        return -e;
    }
    if (!s_enabled) {
        if (chown (folder, uid, gid) < 0 && geteuid () == 0) {
            int e = errno;
            rmdir (folder);
            snprintf (err, err_len, "cannot give %s to the kernel user: %s", folder, strerror (e));
            return -e;
        }
        return 0;
    }
    char uuid[JP_UUID_LEN + 1], image[4400], dev[64] = "";
    jp_random_uuid (uuid);
    snprintf (image, sizeof image, "%s/%.12s.img", s_image_dir, uuid);
    /* the space is reserved up front: a quota the state folder's disk
       cannot hold would turn into I/O errors later; without the room, the
       session gets a plain folder (the disk's own free space is then its
       limit) */
    int fd = open (image, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    int rc = fd < 0 ? -errno : 0;
    if (!rc && (rc = posix_fallocate (fd, 0, (off_t) quota_mb << 20)) == EOPNOTSUPP)
        rc = ftruncate (fd, (off_t) quota_mb << 20) < 0 ? errno : 0;
    rc = -rc;
    if (fd >= 0)
        close (fd);
    if (rc == -ENOSPC) {
        unlink (image);
        jp_log_warn ("disk event=no-room folder=%s quota_mb=%ld: a plain folder instead",
                     folder, quota_mb);
        if (geteuid () == 0 && chown (folder, uid, gid) < 0) {
            int e = errno;
            rmdir (folder);
            snprintf (err, err_len, "cannot give %s to the kernel user: %s", folder,
                      strerror (e));
            return -e;
        }
        return 0;
    }
    const char *step = "make the image";
    int loop = -1;
    if (!rc && (step = "make the file system", rc = s_mkfs (image, uid, gid)) == 0) {
        step = "attach a loop device";
        loop = s_loop_attach (image, dev, sizeof dev);
        rc = loop < 0 ? loop : 0;
    }
    if (!rc && mount (dev, folder, "ext4", MS_NOSUID | MS_NODEV, NULL) < 0) {
        step = "mount it";
        rc = -errno;
    }
    if (loop >= 0)
        close (loop);   /* unmounted (or never mounted), the device frees itself */
    if (rc) {
        unlink (image);     /* kept otherwise: a later server mounts it again */
        rmdir (folder);
        snprintf (err, err_len, "cannot make the session's file system (%s): %s", step,
                  strerror (-rc));
        return rc;
    }
    char lost[4400];
    snprintf (lost, sizeof lost, "%s/lost+found", folder);
    rmdir (lost);
    return 0;
}

int
gw_disk_make_session (const char *folder, long quota_mb, uid_t uid, gid_t gid, char *err,
                      size_t err_len)
{
    int rc = gw_disk_make (folder, quota_mb, uid, gid, err, err_len);
    static const char *const subs[] = {"input", "output", ".tmp"};
    for (size_t i = 0; !rc && i < 3; i++) {
        char path[4400];
        snprintf (path, sizeof path, "%s/%s", folder, subs[i]);
        if (mkdir (path, i == 2 ? 0700 : 0755) < 0
            || (geteuid () == 0 && chown (path, uid, gid) < 0)) {
            rc = -errno;
            snprintf (err, err_len, "cannot make %s: %s", path, strerror (errno));
            gw_disk_remove (folder);
        }
    }
    return rc;
}

/* True when folder is a mount point (a file system of its own). */
static bool
s_is_mount (const char *folder)
{
    struct stat here, parent;
    char up[4400];
    snprintf (up, sizeof up, "%s/..", folder);
    return stat (folder, &here) == 0 && stat (up, &parent) == 0 && here.st_dev != parent.st_dev;
}

int
gw_disk_move (const char *from, const char *to)
{
    if (!s_enabled || !s_is_mount (from))
        return rename (from, to) < 0 ? -errno : 0;
    if (mkdir (to, 0755) < 0)
        return -errno;
    if (mount (from, to, NULL, MS_MOVE, NULL) < 0) {
        int e = errno;
        rmdir (to);
        return -e;
    }
    return 0;   /* `from` stays, empty, for the caller to remove */
}

int
gw_disk_image_of (const char *folder, char *buf, size_t len)
{
    struct stat st;
    if (!s_enabled || !s_is_mount (folder) || stat (folder, &st) < 0)
        return -ENOENT;
    char sys[128];
    snprintf (sys, sizeof sys, "/sys/dev/block/%u:%u/loop/backing_file", major (st.st_dev),
              minor (st.st_dev));
    FILE *f = fopen (sys, "re");
    bool got = f && fgets (buf, (int) len, f);
    if (f)
        fclose (f);
    if (!got)
        return -ENOENT;
    buf[strcspn (buf, "\n")] = '\0';
    return strncmp (buf, s_image_dir, strlen (s_image_dir)) == 0 ? 0 : -ENOENT;
}

int
gw_disk_mount (const char *image, const char *folder)
{
    if (!s_enabled)
        return -ENOTSUP;
    if (mkdir (folder, 0755) < 0 && errno != EEXIST)
        return -errno;
    if (s_is_mount (folder))
        return 0;       /* mounted already */
    char err[300];      /* through the loop device still attached to it, if one is */
    return gw_disk_image_mount (image, folder, err, sizeof err);
}

void
gw_disk_trim (const char *folder)
{
    struct fstrim_range range = {.start = 0, .len = UINT64_MAX, .minlen = 0};
    int fd = s_enabled && s_is_mount (folder) ? open (folder, O_RDONLY | O_DIRECTORY
                                                      | O_CLOEXEC) : -1;
    if (fd >= 0 && ioctl (fd, FITRIM, &range) < 0)
        jp_log_info ("disk event=no-trim folder=%s why=\"%s\"", folder, strerror (errno));
    if (fd >= 0)
        close (fd);
}

int
gw_disk_remove (const char *folder)
{
    /* a file system goes with its mount and its image; a plain folder file
       by file */
    if (s_enabled) {
        char image[4400];
        bool has_image = gw_disk_image_of (folder, image, sizeof image) == 0;
        gw_disk_unmount_below (folder);
        bool gone = s_is_mount (folder) && umount2 (folder, MNT_DETACH) == 0
                    && rmdir (folder) == 0;
        if (has_image)
            unlink (image);
        if (gone)
            return 0;
    }
    return gw_fs_remove_tree (folder);
}

void
gw_disk_setup (const char *state_dir, const char *keep, char *why, size_t why_len)
{
    s_enabled = false;
    snprintf (s_keep, sizeof s_keep, "%s", keep ? keep : "");
    if (geteuid () != 0) {
        snprintf (why, why_len, "not root: the quota is checked after each execution");
        return;
    }
    snprintf (s_image_dir, sizeof s_image_dir, "%s/.disks", state_dir);
    char trial[4400], err[512];
    snprintf (trial, sizeof trial, "%s/.disk-trial", state_dir);
    if (mkdir (s_image_dir, 0700) < 0 && errno != EEXIST) {
        snprintf (why, why_len, "cannot make %s: %s", s_image_dir, strerror (errno));
        return;
    }
    /* a mount moves (MS_MOVE) only within a mount that does not propagate:
       where the state folder's does, it gets a private one of its own,
       with what is mounted below it (a running stdio server's sessions) */
    if (s_holder_is_shared (state_dir)) {
        if (mount (state_dir, state_dir, NULL, MS_BIND | MS_REC, NULL) < 0
            || mount (NULL, state_dir, NULL, MS_PRIVATE, NULL) < 0) {
            snprintf (why, why_len, "cannot make %s a private mount: %s", state_dir,
                      strerror (errno));
            return;
        }
        s_bound = true;
    }
    s_enabled = true;
    if (gw_disk_make (trial, 1, 0, 0, err, sizeof err) < 0) {
        s_enabled = false;
        snprintf (why, why_len, "%s", err);
        gw_disk_teardown (state_dir);
        return;
    }
    gw_disk_remove (trial);
    snprintf (why, why_len, "a file system per session");
}

void
gw_disk_teardown (const char *state_dir)
{
    const char *keep = s_keep[0] ? s_keep : NULL;
    int kept = 0;
    gw_disk_unmount_below_but (state_dir, keep);
    if (keep) {
        char line[8192];
        size_t k = strlen (keep);
        FILE *f = fopen ("/proc/self/mountinfo", "re");
        while (f && fgets (line, sizeof line, f))
            kept += s_mountinfo_below (line, keep, k);
        if (f)
            fclose (f);
    }
    /* the private mount stays while mounts it holds stay: a running
       stdio server's sessions (a later server finds it private) */
    if (s_bound && !kept)
        umount2 (state_dir, MNT_DETACH);
    s_bound = false;
    s_enabled = false;
}

/* A kept image: its space reserved (a size the disk cannot hold fails
   now, not as I/O errors later), then its file system. */
int
gw_disk_image_make (const char *image, long size_mb, uid_t uid, gid_t gid, char *err,
                    size_t err_len)
{
    int fd = open (image, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    int rc = fd < 0 ? errno : 0;
    if (!rc && (rc = posix_fallocate (fd, 0, (off_t) size_mb << 20)) == EOPNOTSUPP)
        rc = ftruncate (fd, (off_t) size_mb << 20) < 0 ? errno : 0;
    if (fd >= 0 && !rc && fsync (fd) < 0)
        rc = errno;
    if (fd >= 0)
        close (fd);
    const char *step = "make the image";
    if (!rc && (step = "make the file system", rc = -s_mkfs (image, uid, gid)) == 0)
        return 0;
    if (fd >= 0)
        unlink (image);
    snprintf (err, err_len, "cannot %s: %s", step, strerror (rc));
    return -rc;
}

/* The loop device image is still attached to, opened (its path in dev),
 * or -1: a mount of it may outlive our unmount in another mount namespace
 * (every namespace made while it was mounted holds a copy, a kernel's
 * launcher's among them) and keep its file system, with writes not yet on
 * the image, alive. Mounting that device again shares that file system;
 * a second loop device would make a second, stale one. */
static int
s_loop_find (const char *image, char *dev, size_t dev_len)
{
    struct stat st;
    DIR *d = stat (image, &st) == 0 ? opendir ("/sys/block") : NULL;
    struct dirent *e;
    int found = -1;
    while (d && found < 0 && (e = readdir (d))) {
        if (strncmp (e->d_name, "loop", 4) != 0)
            continue;
        snprintf (dev, dev_len, "/dev/%.50s", e->d_name);
        int fd = open (dev, O_RDWR | O_CLOEXEC);
        struct loop_info64 info;
        if (fd >= 0 && ioctl (fd, LOOP_GET_STATUS64, &info) == 0
            && info.lo_inode == (uint64_t) st.st_ino && info.lo_device == (uint64_t) st.st_dev)
            found = fd;
        else if (fd >= 0)
            close (fd);
    }
    if (d)
        closedir (d);
    return found;
}

int
gw_disk_image_mount (const char *image, const char *folder, char *err, size_t err_len)
{
    char dev[64] = "";
    int loop = s_loop_find (image, dev, sizeof dev);
    if (loop < 0)
        loop = s_loop_attach (image, dev, sizeof dev);
    int rc = loop < 0 ? loop : 0;
    if (!rc && mount (dev, folder, "ext4", MS_NOSUID | MS_NODEV, NULL) < 0)
        rc = -errno;
    if (rc == -ENXIO) {     /* the device let go of it meanwhile: a new one */
        close (loop);
        loop = s_loop_attach (image, dev, sizeof dev);
        rc = loop < 0 ? loop
             : mount (dev, folder, "ext4", MS_NOSUID | MS_NODEV, NULL) < 0 ? -errno : 0;
    }
    if (loop >= 0)
        close (loop);   /* unmounted (or never mounted), the device frees itself */
    if (rc) {
        snprintf (err, err_len, "cannot mount %s: %s", image, strerror (-rc));
        return rc;
    }
    char lost[4400];
    snprintf (lost, sizeof lost, "%s/lost+found", folder);
    rmdir (lost);
    return 0;
}

bool
gw_disk_is_mount (const char *folder)
{
    return s_is_mount (folder);
}
