/* gw_state_dir: default, lock and start-up sweep of the state folder (see
 * gw_state_dir.h). Threads: the main thread. */
#include "gw_state_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw_disk.h"
#include "gw_fs.h"
#include "jp_log.h"

#define LOCK_NAME ".lock"

int
gw_state_dir_default (char *buf, size_t len)
{
    const char *xdg = getenv ("XDG_STATE_HOME");
    const char *home = getenv ("HOME");
    int n;
    if (geteuid () == 0)
        n = snprintf (buf, len, "/var/lib/codebox");
    else if (xdg && xdg[0] == '/')
        n = snprintf (buf, len, "%s/codebox", xdg);
    else if (home && home[0] == '/')
        n = snprintf (buf, len, "%s/.local/state/codebox", home);
    else
        n = snprintf (buf, len, "/tmp/codebox-state-%u", (unsigned) geteuid ());
    return n < 0 || (size_t) n >= len ? -ENAMETOOLONG : 0;
}

int
gw_state_dir_lock (const char *dir, int *fd_p, char *err, size_t err_len)
{
    char path[4200];
    snprintf (path, sizeof path, "%s/" LOCK_NAME, dir);
    int fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        int e = errno;
        snprintf (err, err_len, "cannot open the lock %s: %s", path, strerror (e));
        return -e;
    }
    if (flock (fd, LOCK_EX | LOCK_NB) < 0) {
        int e = errno;
        char holder[32] = "";
        ssize_t n = pread (fd, holder, sizeof holder - 1, 0);
        holder[n > 0 ? n : 0] = '\0';
        holder[strcspn (holder, "\n")] = '\0';
        close (fd);
        if (e == EWOULDBLOCK) {
            snprintf (err, err_len, "another codebox (pid %s) is using the state folder %s: "
                      "one server per state folder (choose another with --state-dir)",
                      holder[0] ? holder : "?", dir);
            return -EBUSY;
        }
        snprintf (err, err_len, "cannot lock %s: %s", path, strerror (e));
        return -e;
    }
    char pid[32];
    int n = snprintf (pid, sizeof pid, "%ld\n", (long) getpid ());
    if (ftruncate (fd, 0) < 0 || pwrite (fd, pid, (size_t) n, 0) != n) {
        int e = errno;
        close (fd);
        snprintf (err, err_len, "cannot write the lock %s: %s", path, strerror (e));
        return -e;
    }
    *fd_p = fd;
    return 0;
}

int
gw_state_dir_take_dead_lock (int dirfd, const char *name)
{
    int fd = openat (dirfd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return -1;
    struct stat st;
    char pid[32];
    if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || st.st_uid != geteuid ()
        || flock (fd, LOCK_EX | LOCK_NB) < 0 || pread (fd, pid, sizeof pid, 0) <= 0) {
        close (fd);
        return -1;
    }
    return fd;
}

/* Removes the folders of the stdio servers' parent folder whose server is
 * gone (their lock is free), mounts first; a live server's stays. */
static void
s_sweep_stdio (const char *parent)
{
    DIR *d = opendir (parent);
    struct dirent *e;
    while (d && (e = readdir (d))) {
        if (e->d_name[0] == '.')
            continue;
        char folder[4400];
        snprintf (folder, sizeof folder, "%s/%s", parent, e->d_name);
        int dir = open (folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int fd = dir >= 0 ? gw_state_dir_take_dead_lock (dir, LOCK_NAME) : -1;
        if (dir >= 0)
            close (dir);
        if (fd < 0)
            continue;
        int mounts = gw_disk_unmount_below (folder);
        gw_fs_remove_tree (folder);
        jp_log_info ("state event=swept entry=stdio/%s mounts=%d why=its-server-is-gone",
                     e->d_name, mounts);
        close (fd);
    }
    if (d)
        closedir (d);
}

/* True when the session folder name (below @tenant/ when tenant is not
 * NULL) has a record: a kept session (gw_session_record). */
static bool
s_recorded (const char *dir, const char *tenant, const char *name)
{
    char path[4600];
    if (tenant)
        snprintf (path, sizeof path, "%s/.kept/%s/%s/session.json", dir, tenant, name);
    else
        snprintf (path, sizeof path, "%s/.kept/%s/session.json", dir, name);
    struct stat st;
    return name[0] != '.' && stat (path, &st) == 0 && S_ISREG (st.st_mode);
}

/* Removes path (a folder or file) with what is mounted on and below it;
 * a kept session's folder is only unmounted (its image is mounted again
 * when its session is loaded). Returns 1 when it removed it. */
static int
s_sweep_entry (const char *path, const char *entry, bool kept)
{
    int mounts = gw_disk_unmount_below (path);
    mounts += umount2 (path, MNT_DETACH | UMOUNT_NOFOLLOW) == 0;
    if (kept) {
        if (mounts)
            jp_log_info ("state event=unmounted entry=%s mounts=%d why=kept-session", entry,
                         mounts);
        return 0;
    }
    int rc = gw_fs_remove_tree (path);
    if (rc)
        jp_log_warn ("state event=sweep-failed entry=%s error=%s", entry, strerror (-rc));
    else
        jp_log_info ("state event=swept entry=%s mounts=%d why=left-by-an-earlier-run", entry,
                     mounts);
    return rc == 0;
}

/* A tenant's folder (@tenant): its kept sessions stay, the rest goes. */
static int
s_sweep_tenant (const char *dir, const char *tenant)
{
    char parent[4400];
    snprintf (parent, sizeof parent, "%s/%s", dir, tenant);
    DIR *d = opendir (parent);
    if (!d)
        return s_sweep_entry (parent, tenant, false);
    int removed = 0;
    struct dirent *e;
    while ((e = readdir (d))) {
        if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
            continue;
        char path[4700];
        snprintf (path, sizeof path, "%s/%s", parent, e->d_name);
        removed += s_sweep_entry (path, e->d_name, s_recorded (dir, tenant, e->d_name));
    }
    closedir (d);
    return removed + (rmdir (parent) == 0);     /* a tenant with no kept session */
}

int
gw_state_dir_sweep (const char *dir)
{
    DIR *d = opendir (dir);
    if (!d)
        return 0;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir (d))) {
        if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0
            || strcmp (e->d_name, LOCK_NAME) == 0)
            continue;
        char path[4400];
        snprintf (path, sizeof path, "%s/%s", dir, e->d_name);
        if (strcmp (e->d_name, GW_STATE_DIR_STDIO) == 0 && e->d_type == DT_DIR) {
            /* `codebox mcp` servers' folders: only those whose server is
               gone; one may still run beside this server */
            s_sweep_stdio (path);
            continue;
        }
        if (strcmp (e->d_name, GW_STATE_DIR_VOLUMES) == 0 && e->d_type == DT_DIR) {
            gw_disk_unmount_below (path);   /* mounted again on first use */
            continue;
        }
        /* the records of kept sessions and their images stay (their
           sessions are loaded again, gw_sessions_load_kept) */
        if ((strcmp (e->d_name, ".kept") == 0 || strcmp (e->d_name, ".disks") == 0)
            && e->d_type == DT_DIR)
            continue;
        /* a session folder may be a file system of its own, with more
           mounted below it */
        if (e->d_name[0] == '@' && e->d_type == DT_DIR)
            removed += s_sweep_tenant (dir, e->d_name);
        else
            removed += s_sweep_entry (path, e->d_name, s_recorded (dir, NULL, e->d_name));
    }
    closedir (d);
    return removed;
}

int
gw_state_dir_for_stdio (char *buf, size_t len)
{
    char base[3800];
    if (gw_state_dir_default (base, sizeof base) < 0)
        return -ENAMETOOLONG;
    char parent[4000];
    snprintf (parent, sizeof parent, "%s/" GW_STATE_DIR_STDIO, base);
    s_sweep_stdio (parent);
    int n = snprintf (buf, len, "%s/%ld", parent, (long) getpid ());
    return n < 0 || (size_t) n >= len ? -ENAMETOOLONG : 0;
}
