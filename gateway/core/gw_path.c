/* gw_path: confinement of client-given names and paths to a session folder
 * (see gw_path.h). Paths are opened with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_MAGICLINKS); on a kernel without openat2 (ENOSYS) the path is
 * walked one component at a time with O_NOFOLLOW, refusing every symlink.
 * Every descriptor this file opens is close-on-exec, so none leaks into a
 * kernel the gateway launches. Pure code and file system calls; any
 * thread. */
#include "gw_path.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "jp_utf8.h"

#define S_RESOLVE       (RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)
#define S_DIR_FLAGS     (O_PATH | O_DIRECTORY | O_CLOEXEC)
#define S_EAGAIN_TRIES  8

/* Who what an open makes belongs to (NULL: the caller, as made). */
typedef struct {
    uid_t uid;
    gid_t gid;
} s_owner_t;

/* Gives the file or folder of fd (an O_PATH one too) to owner, when there
 * is one. Returns 0 or a negative errno. */
static int
s_own (int fd, const s_owner_t *owner)
{
    if (!owner || (owner->uid == (uid_t) -1 && owner->gid == (gid_t) -1))
        return 0;
    return fchownat (fd, "", owner->uid, owner->gid, AT_EMPTY_PATH) < 0 ? -errno : 0;
}

bool
gw_path_valid_session_id (const char *id)
{
    if (!id || id[0] == '\0' || id[0] == '.')
        return false;
    size_t n = 0;
    for (const char *p = id; *p; p++, n++) {
        char c = *p;
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
                  || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
        if (!ok || n >= 64)
            return false;
    }
    return true;
}

/* Writes a sentence into err (when the caller gave room) and returns
 * -EINVAL, so each refusal in gw_path_check_relative is one line. */
static int
s_refuse (char *err, size_t err_len, const char *why)
{
    if (err && err_len > 0)
        snprintf (err, err_len, "%s", why);
    return -EINVAL;
}

/* Checks the component of len bytes at start: not empty, not "." or "..",
 * not longer than a file system takes. Returns NULL when it is acceptable,
 * else the reason. */
static const char *
s_component_problem (const char *start, size_t len)
{
    if (len == 0)
        return "The path has an empty component (\"//\").";
    if ((len == 1 && start[0] == '.') || (len == 2 && start[0] == '.' && start[1] == '.'))
        return "The path may not contain \".\" or \"..\" components.";
    if (len > GW_PATH_NAME_MAX)
        return "A name in the path is longer than 255 bytes (a file or folder name may have "
               "at most 255).";
    return NULL;
}

int
gw_path_check_relative (const char *path, char *err, size_t err_len)
{
    if (!path || path[0] == '\0')
        return s_refuse (err, err_len, "The path is empty.");
    if (path[0] == '/')
        return s_refuse (err, err_len, "The path must be relative to the session folder.");
    size_t len = strnlen (path, GW_PATH_MAX + 1);
    if (len > GW_PATH_MAX)
        return s_refuse (err, err_len, "The path is longer than 1024 bytes.");
    if (!jp_utf8_valid (path, strlen (path)))
        return s_refuse (err, err_len, "The path is not valid UTF-8.");
    const char *start = path;
    for (size_t i = 0; i <= len; i++) {
        unsigned char c = (unsigned char) path[i];
        if (c == '\\')
            return s_refuse (err, err_len, "The path may not contain a backslash.");
        /* C0, DEL and C1 (U+0080-U+009F: 0xC2 0x80-0x9F in valid UTF-8) */
        bool c1 = c == 0xC2 && (unsigned char) path[i + 1] >= 0x80
                  && (unsigned char) path[i + 1] <= 0x9F;
        if ((c < 0x20 && c != '\0') || c == 0x7f || c1)
            return s_refuse (err, err_len, "The path may not contain control characters.");
        if (c != '/' && c != '\0')
            continue;
        size_t comp_len = (size_t) (&path[i] - start);
        bool trailing_slash = c == '\0' && comp_len == 0;     /* "output/" */
        const char *why = trailing_slash ? NULL : s_component_problem (start, comp_len);
        if (why)
            return s_refuse (err, err_len, why);
        start = &path[i + 1];
    }
    return 0;
}

/* The rest of path after root and the slashes that follow, or NULL when
 * path does not start with root as a whole component. */
static const char *
s_after_root (const char *path, const char *root)
{
    size_t n = strlen (root);
    while (n > 1 && root[n - 1] == '/')
        n--;
    if (n == 0 || strncmp (path, root, n) != 0 || (path[n] != '/' && path[n] != '\0'))
        return NULL;
    const char *rest = path + n;
    while (*rest == '/')
        rest++;
    return rest;
}

const char *
gw_path_in_session (const char *path, const char *visible_root)
{
    if (!path || path[0] != '/')
        return path;
    const char *rest = visible_root ? s_after_root (path, visible_root) : NULL;
    if (!rest)
        rest = s_after_root (path, "/session");
    if (!rest && path[strspn (path, "/")] == '\0')
        rest = "";      /* "/": the session folder */
    return rest;
}

/* openat2 with the confinement flags, retried while the kernel reports a
 * concurrent rename (EAGAIN). Returns a descriptor or a negative errno. */
static int
s_openat2 (int dirfd, const char *path, int flags, mode_t mode)
{
    struct open_how how = {
        .flags = (unsigned long long) (flags | O_CLOEXEC),
        .mode = ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) ? mode : 0,
        .resolve = S_RESOLVE,
    };
    for (int tries = 0; tries < S_EAGAIN_TRIES; tries++) {
        long fd = syscall (SYS_openat2, dirfd, path, &how, sizeof how);
        if (fd >= 0)
            return (int) fd;
        if (errno != EAGAIN && errno != EINTR)
            return -errno;
    }
    return -EAGAIN;
}

/* With openat2: makes every missing parent folder of path beneath dirfd.
 * Each prefix ("a", "a/b", ...) is opened from dirfd with RESOLVE_BENEATH;
 * a missing one is made with mkdirat relative to its parent's descriptor,
 * itself opened the same way, so a symlinked parent cannot lead out, and
 * given to owner through that descriptor. Returns 0 or a negative errno. */
static int
s_make_parents (int dirfd, const char *path, const s_owner_t *owner)
{
    char prefix[GW_PATH_MAX + 1];
    int parent = -1;
    for (const char *slash = strchr (path, '/'); slash && slash[1]; slash = strchr (slash + 1, '/')) {
        size_t n = (size_t) (slash - path);
        memcpy (prefix, path, n);
        prefix[n] = '\0';
        int fd = s_openat2 (dirfd, prefix, S_DIR_FLAGS, 0);
        if (fd == -ENOENT) {
            const char *name = strrchr (prefix, '/') ? strrchr (prefix, '/') + 1 : prefix;
            bool made = mkdirat (parent >= 0 ? parent : dirfd, name, 0755) == 0;
            if (!made && errno != EEXIST)
                fd = -errno;
            else
                fd = s_openat2 (dirfd, prefix, S_DIR_FLAGS, 0);
            int rc = made && fd >= 0 ? s_own (fd, owner) : 0;
            if (rc < 0) {
                close (fd);
                fd = rc;
            }
        }
        if (parent >= 0)
            close (parent);
        if (fd < 0)
            return fd;
        parent = fd;
    }
    if (parent >= 0)
        close (parent);
    return 0;
}

/* Without openat2: the error for the entry name of dirfd that open
 * refused with ENOTDIR: ELOOP when it is a symlink (O_NOFOLLOW with
 * O_DIRECTORY says ENOTDIR there), else ENOTDIR. */
static int
s_notdir_error (int dirfd, const char *name)
{
    struct stat st;
    if (fstatat (dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK (st.st_mode))
        return -ELOOP;
    return -ENOTDIR;
}

/* Without openat2: opens the folder name (one component) beneath dirfd as
 * an O_PATH descriptor, refusing a symlink (ELOOP); with create, makes it
 * first when missing (given to owner). Returns a descriptor or a negative
 * errno. */
static int
s_walk_dir (int dirfd, const char *name, bool create, const s_owner_t *owner)
{
    int fd = openat (dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    bool made = false;
    if (fd < 0 && errno == ENOENT && create) {
        made = mkdirat (dirfd, name, 0755) == 0;
        if (!made && errno != EEXIST)
            return -errno;
        fd = openat (dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0)
        return errno == ENOTDIR ? s_notdir_error (dirfd, name) : -errno;
    int rc = made ? s_own (fd, owner) : 0;
    if (rc < 0) {
        close (fd);
        return rc;
    }
    return fd;
}

/* Without openat2: walks path from dirfd one component at a time, never
 * following a symlink, and opens the last component with O_NOFOLLOW (a
 * trailing '/' asks for a folder). The path was checked, so no component
 * is "." or "..". Returns a descriptor or a negative errno. */
static int
s_open_walk (int dirfd, const char *path, int flags, mode_t mode, const s_owner_t *owner)
{
    char copy[GW_PATH_MAX + 1];
    snprintf (copy, sizeof copy, "%s", path);
    size_t len = strlen (copy);
    if (copy[len - 1] == '/') {
        copy[len - 1] = '\0';
        flags |= O_DIRECTORY;
    }
    int cur = dirfd;
    char *name = copy;
    for (char *slash = strchr (name, '/'); slash; slash = strchr (name, '/')) {
        *slash = '\0';
        int fd = s_walk_dir (cur, name, (flags & O_CREAT) != 0, owner);
        if (cur != dirfd)
            close (cur);
        if (fd < 0)
            return fd;
        cur = fd;
        name = slash + 1;
    }
    int fd = openat (cur, name, flags | O_NOFOLLOW | O_CLOEXEC, mode);
    int rc = fd >= 0 ? fd : errno == ENOTDIR ? s_notdir_error (cur, name) : -errno;
    if (cur != dirfd)
        close (cur);
    return rc;
}

/* True when an openat2 error means the call itself is unavailable: ENOSYS
 * from an old kernel, or EPERM from an older container seccomp profile
 * that denies unknown calls. Falling back is safe either way: the walk is
 * stricter, and a genuine EPERM comes back from it too. */
static bool
s_no_openat2 (int rc)
{
    return rc == -ENOSYS || rc == -EPERM;
}

/* Keeps fd when it is a regular file or a folder (with the caller's own
 * O_NONBLOCK setting back); closes it and returns -EPERM otherwise. */
static int
s_regular_or_dir (int fd, int flags)
{
    struct stat st;
    if (fstat (fd, &st) < 0 || !(S_ISREG (st.st_mode) || S_ISDIR (st.st_mode))) {
        close (fd);
        return -EPERM;
    }
    if (!(flags & O_NONBLOCK) && !(flags & O_PATH)) {
        int fl = fcntl (fd, F_GETFL);
        if (fl >= 0)
            fcntl (fd, F_SETFL, fl & ~O_NONBLOCK);
    }
    return fd;
}

/* gw_path_open_beneath, with what it makes given to owner (NULL: left
 * as made), the file itself too when O_CREAT asked for one. */
static int
s_open_beneath (int dirfd, const char *path, int flags, mode_t mode, const s_owner_t *owner)
{
    if (gw_path_check_relative (path, NULL, 0) < 0)
        return -EINVAL;
    int rc = flags & O_CREAT ? s_make_parents (dirfd, path, owner) : 0;
    if (rc < 0 && !s_no_openat2 (rc))
        return rc;
    /* O_NONBLOCK: a FIFO planted by kernel code must not hang the caller
       (open of a FIFO waits for the other end); only regular files and
       folders are handed back */
    int fd = rc < 0 ? rc : s_openat2 (dirfd, path, flags | O_NONBLOCK, mode);
    if (s_no_openat2 (fd))
        fd = s_open_walk (dirfd, path, flags | O_NONBLOCK, mode, owner);
    fd = fd < 0 ? fd : s_regular_or_dir (fd, flags);
    rc = fd >= 0 && (flags & O_CREAT) ? s_own (fd, owner) : 0;
    if (rc < 0) {
        close (fd);
        return rc;
    }
    return fd;
}

int
gw_path_open_beneath (int dirfd, const char *path, int flags, mode_t mode)
{
    return s_open_beneath (dirfd, path, flags, mode, NULL);
}

int
gw_path_create_beneath (int dirfd, const char *path, int flags, mode_t mode, uid_t uid,
                        gid_t gid)
{
    s_owner_t owner = {uid, gid};
    return s_open_beneath (dirfd, path, flags | O_CREAT, mode, &owner);
}

/* Without openat2: walks the folders of prefix (a checked relative path)
 * from dirfd one component at a time, never following a symlink, making
 * each missing one (given to owner). Returns the last one's descriptor or
 * a negative errno. */
static int
s_walk_dirs (int dirfd, const char *prefix, const s_owner_t *owner)
{
    char copy[GW_PATH_MAX + 1];
    snprintf (copy, sizeof copy, "%s", prefix);
    int cur = dirfd;
    for (char *name = copy, *slash; name; name = slash ? slash + 1 : NULL) {
        slash = strchr (name, '/');
        if (slash)
            *slash = '\0';
        int fd = s_walk_dir (cur, name, true, owner);
        if (cur != dirfd)
            close (cur);
        if (fd < 0)
            return fd;
        cur = fd;
    }
    return cur;
}

int
gw_path_parent_beneath (int dirfd, const char *path, uid_t uid, gid_t gid, const char **name)
{
    if (gw_path_check_relative (path, NULL, 0) < 0)
        return -EINVAL;
    size_t len = strlen (path);
    if (path[len - 1] == '/')
        return -EISDIR;     /* names a folder: there is no last name to give */
    const char *last = strrchr (path, '/');
    *name = last ? last + 1 : path;
    if (!last) {
        int fd = fcntl (dirfd, F_DUPFD_CLOEXEC, 0);
        return fd < 0 ? -errno : fd;
    }
    char prefix[GW_PATH_MAX + 1];
    memcpy (prefix, path, (size_t) (last - path));
    prefix[last - path] = '\0';
    s_owner_t owner = {uid, gid};
    int rc = s_make_parents (dirfd, path, &owner);
    if (rc < 0 && !s_no_openat2 (rc))
        return rc;
    int fd = rc < 0 ? rc : s_openat2 (dirfd, prefix, S_DIR_FLAGS, 0);
    if (s_no_openat2 (fd))
        fd = s_walk_dirs (dirfd, prefix, &owner);
    return fd;
}
