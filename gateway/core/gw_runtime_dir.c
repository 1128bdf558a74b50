/* gw_runtime_dir: the runtime folder, its lock and the sweep of dead
 * servers' folders (see gw_runtime_dir.h). Threads: the main thread. */
#include "gw_runtime_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw_disk.h"
#include "gw_fs.h"
#include "gw_state_dir.h"
#include "jp_log.h"

#define PREFIX "codebox-"
#define LOCK_NAME ".runtime-lock"
#define LOCK_NEW ".runtime-lock.new"

int
gw_runtime_dir_make (const char *parent, char *buf, size_t len, int *lock_fd_p,
                     char *err, size_t err_len)
{
    *lock_fd_p = -1;
    int n = snprintf (buf, len, "%s/" PREFIX "XXXXXX", parent);
    if (n < 0 || (size_t) n >= len) {
        snprintf (err, err_len, "the runtime folder's name is too long");
        buf[0] = '\0';
        return -ENAMETOOLONG;
    }
    if (!mkdtemp (buf)) {
        int e = errno;
        snprintf (err, err_len, "cannot make a runtime folder in %s: %s", parent, strerror (e));
        buf[0] = '\0';
        return -e;
    }
    char fresh[4200], lock[4200];
    snprintf (fresh, sizeof fresh, "%s/" LOCK_NEW, buf);
    snprintf (lock, sizeof lock, "%s/" LOCK_NAME, buf);
    int fd = -1, rc = 0;
    char pid[32];
    int pid_len = snprintf (pid, sizeof pid, "%ld\n", (long) getpid ());
    if (chmod (buf, 0711) < 0
        || (fd = open (fresh, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0
        || flock (fd, LOCK_EX | LOCK_NB) < 0
        || pwrite (fd, pid, (size_t) pid_len, 0) != pid_len
        || rename (fresh, lock) < 0)
        rc = -(errno ? errno : EIO);
    if (rc) {
        snprintf (err, err_len, "cannot set up the runtime folder %s: %s", buf, strerror (-rc));
        if (fd >= 0)
            close (fd);
        gw_fs_remove_tree (buf);
        buf[0] = '\0';
        return rc;
    }
    *lock_fd_p = fd;
    return 0;
}

/* codebox-XXXXXX, the X as mkdtemp makes them */
static bool
s_is_runtime_name (const char *name)
{
    size_t p = strlen (PREFIX);
    if (strncmp (name, PREFIX, p) != 0 || strlen (name) != p + 6)
        return false;
    for (const char *c = name + p; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')))
            return false;
    return true;
}

int
gw_runtime_dir_sweep (const char *parent)
{
    DIR *d = opendir (parent);
    if (!d)
        return 0;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir (d))) {
        if (!s_is_runtime_name (e->d_name))
            continue;
        struct stat st;
        if (fstatat (dirfd (d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0
            || !S_ISDIR (st.st_mode) || st.st_uid != geteuid ())
            continue;
        int folder = openat (dirfd (d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (folder < 0)
            continue;
        int lock = gw_state_dir_take_dead_lock (folder, LOCK_NAME);
        close (folder);
        if (lock < 0)
            continue;
        char path[4400];
        snprintf (path, sizeof path, "%s/%s", parent, e->d_name);
        int mounts = gw_disk_unmount_below (path);
        int rc = gw_fs_remove_tree (path);
        close (lock);
        if (rc)
            jp_log_warn ("runtime event=sweep-failed folder=%s mounts=%d error=%s", path,
                         mounts, strerror (-rc));
        else {
            jp_log_info ("runtime event=swept folder=%s mounts=%d why=its-server-is-gone", path,
                         mounts);
            removed++;
        }
    }
    closedir (d);
    return removed;
}
