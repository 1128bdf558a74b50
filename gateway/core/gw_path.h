/* gw_path: confinement of client-given names and paths to a session
 * folder. Session ids are 1-64 of [A-Za-z0-9_.-], not starting with '.'.
 * Paths are relative, valid UTF-8, at most GW_PATH_MAX bytes of names of
 * at most GW_PATH_NAME_MAX bytes, without "..", NUL or control
 * characters, and are opened with openat2(RESOLVE_BENEATH) so no symlink
 * can lead outside. Every file route and file tool goes through here, so
 * REST and MCP refuse the same names with the same sentence. Pure code and
 * file system calls; any thread. */
#ifndef GW_PATH_H
#define GW_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define GW_PATH_MAX 1024        /* bytes of a whole path */
#define GW_PATH_NAME_MAX 255    /* bytes of one name in it (NAME_MAX) */

/* True when id is a valid session id. */
bool gw_path_valid_session_id (const char *id);

/* Checks a client path relative to a session folder: not empty, not
 * absolute, at most GW_PATH_MAX bytes, valid UTF-8, each component at most
 * GW_PATH_NAME_MAX bytes, no "." or ".." component, no empty component (a
 * trailing '/' is allowed), no control characters (C0, DEL, C1), no
 * backslash. Returns 0, or -EINVAL with a sentence naming the rule in
 * err. */
int gw_path_check_relative (const char *path, char *err, size_t err_len);

/* A path a client gave back, relative to the session folder: a relative
 * path as it is; an absolute one under the folder as codebox shows it
 * (visible_root, such as "/session", or "/session" itself) without that
 * prefix and its slashes; "/" and the root itself as "" (the session
 * folder). NULL for any other absolute path. Pure. */
const char *gw_path_in_session (const char *path, const char *visible_root);

/* Opens path (checked as above) beneath the folder dirfd, never outside it:
 * symlinks may not lead out, magic links are refused. flags and mode are
 * those of openat; with O_CREAT the missing parent folders are made (0755)
 * beneath dirfd first. Only regular files and folders are opened: a FIFO
 * or socket kernel code planted gives -EPERM (-ENXIO for a FIFO opened
 * for writing), never a wait. Returns a file descriptor or a negative
 * errno (-EXDEV or -ELOOP for an escape, -ENOENT, -EINVAL for a bad
 * path...). */
int gw_path_open_beneath (int dirfd, const char *path, int flags, mode_t mode);

/* As gw_path_open_beneath with O_CREAT in flags, and what it makes or
 * truncates belongs to uid:gid: each missing parent folder as it is made,
 * and the file opened. (uid_t) -1 and (gid_t) -1 leave an owner as it is
 * (as chown does). An upload as root gives its folders to the kernel
 * user, as the session's own input/ and output/ are. */
int gw_path_create_beneath (int dirfd, const char *path, int flags, mode_t mode, uid_t uid,
                            gid_t gid);

/* Opens the folder that holds path (checked as above: "a/b/c" gives "a/b")
 * beneath dirfd as an O_PATH descriptor, never outside it, making the
 * missing folders first (0755, given to uid:gid as gw_path_create_beneath
 * gives them; (uid_t) -1 and (gid_t) -1 leave them as made), and points
 * *name at path's last component (in path). For a path of one component,
 * a new descriptor of dirfd itself. A renameat or unlinkat of *name in the
 * descriptor stays beneath dirfd. Returns a descriptor or a negative errno
 * (-ENOTDIR when a parent is a file, -EXDEV or -ELOOP for an escape). */
int gw_path_parent_beneath (int dirfd, const char *path, uid_t uid, gid_t gid,
                            const char **name);

#endif
