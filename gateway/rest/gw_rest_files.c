/* gw_rest_files: GET and PUT /sessions/{id}/files/{path} and GET
 * /sessions/{id}/artifacts. Paths are confined to the session folder by
 * gw_path (openat2 RESOLVE_BENEATH); uploads go to input/ or output/ only.
 *
 * Threads: the loop thread only. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw_artifacts.h"
#include "gw_fs.h"
#include "gw_path.h"
#include "gw_rest.h"
#include "gw_sandbox.h"


/* Answers the error of a failed open beneath the session folder. */
static void
s_reply_open_error (gw_request_t *req, const char *path, int rc)
{
    if (rc == -ENOENT)
        gw_request_reply_error (req, GW_E_NOT_FOUND, "no file '%s' in the session", path);
    else if (rc == -EXDEV || rc == -ELOOP || rc == -EINVAL)
        gw_request_reply_error (req, GW_E_INVALID_PATH,
                                "'%s' leads outside the session folder", path);
    else if (rc == -EPERM || rc == -ENXIO)
        gw_request_reply_error (req, GW_E_BAD_REQUEST,
                                "'%s' is not a regular file (a pipe or socket?)", path);
    else if (rc == -EISDIR)
        gw_request_reply_error (req, GW_E_BAD_REQUEST, "'%s' is a folder", path);
    else
        gw_request_reply_error (req, GW_E_INTERNAL, "cannot open '%s': %s", path,
                                strerror (-rc));
}

static void
s_get_file (gw_request_t *req, int dirfd, const char *path)
{
    int fd = gw_path_open_beneath (dirfd, path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) {
        s_reply_open_error (req, path, fd);
        return;
    }
    struct stat st;
    int bad = fstat (fd, &st) < 0 ? -errno : S_ISDIR (st.st_mode) ? -EISDIR
                                            : !S_ISREG (st.st_mode) ? -EINVAL : 0;
    if (bad) {
        close (fd);
        s_reply_open_error (req, path, bad);
        return;
    }
    /* streamed from the descriptor: a file of any size costs no memory */
    gw_request_reply_file (req, 200, fd, (uint64_t) st.st_size, gw_mime_for_path (path));
}

static void
s_put_file (gw_request_t *req, gw_session_t *session, int dirfd, const char *path)
{
    if (strncmp (path, "input/", 6) != 0 && strncmp (path, "output/", 7) != 0) {
        gw_request_reply_error (req, GW_E_INVALID_PATH,
                                "uploads go under input/ or output/ (got '%s')", path);
        return;
    }
    size_t len = strlen (path);
    if (path[len - 1] == '/') {
        gw_request_reply_error (req, GW_E_INVALID_PATH, "'%s' names a folder, not a file", path);
        return;
    }
    /* the folders it makes and the file are the kernel user's (as root),
       as input/ and output/ are: kernel code writes beside an upload */
    uid_t uid = (uid_t) -1;
    gid_t gid = (gid_t) -1;
    gw_sandbox_owner (gw_server_sandbox (gw_session_server (session)), &uid, &gid);
    int fd = gw_path_create_beneath (dirfd, path, O_WRONLY | O_TRUNC | O_CLOEXEC, 0644, uid, gid);
    if (fd < 0) {
        s_reply_open_error (req, path, fd);
        return;
    }
    int rc = gw_fs_write_all (fd, req->body, req->body_len);
    if (rc && ftruncate (fd, 0) < 0)
        rc = rc ? rc : -errno;      /* nothing half-written stays */
    if (close (fd) < 0 && !rc)
        rc = -errno;
    if (rc == -ENOSPC || rc == -EDQUOT || rc == -EFBIG)
        gw_request_reply_error (req, GW_E_TOO_LARGE, "'%s' does not fit: no space left in the "
                                "session's disk quota (CODEBOX_DISK_QUOTA_MB) or on the disk; "
                                "delete files first", path);
    else if (rc)
        gw_request_reply_error (req, GW_E_INTERNAL, "cannot write '%s': %s", path,
                                strerror (-rc));
    if (rc)
        return;
    gw_session_touch (session);
    char full[2200];
    snprintf (full, sizeof full, "%s/%s", gw_session_visible_workdir (session), path);
    gw_request_reply_json (req, 201, json_pack ("{s:s, s:I}", "path", full, "size",
                                                (json_int_t) req->body_len));
}

void
gw_rest_files_handle (gw_server_t *server, gw_request_t *req, const char *id, const char *what,
                      const char *rest)
{
    bool get = strcmp (req->method, "GET") == 0, put = strcmp (req->method, "PUT") == 0;
    if (strcmp (what, "artifacts") == 0 && !rest && get) {
        req->route = "/sessions/{id}/artifacts";
        gw_session_t *session = gw_rest_session_or_reply (server, req, id);
        if (session) {
            json_t *list = gw_artifacts_list (gw_session_workdir (session),
                                              gw_session_visible_workdir (session),
                                              GW_SNAPSHOT_SESSION);
            gw_server_annotate (gw_session_server (session), session, list);
            gw_request_reply_json (req, 200, json_pack ("{s:o}", "artifacts", list));
        }
        return;
    }
    if (strcmp (what, "files") != 0 || !(get || put)) {
        gw_request_reply_error (req, GW_E_NOT_FOUND, "no route %s %s", req->method, req->path);
        return;
    }
    req->route = "/sessions/{id}/files/{path}";
    gw_session_t *session = gw_rest_session_or_reply (server, req, id);
    if (!session)
        return;
    char err[256];
    const char *given = rest;
    rest = gw_path_in_session (rest, gw_session_visible_workdir (session));
    if (given && !rest) {
        gw_request_reply_error (req, GW_E_INVALID_PATH, "'%s' is outside the session folder: "
                                "give a path relative to it or under %s", given,
                                gw_session_visible_workdir (session));
        return;
    }
    if (!rest || gw_path_check_relative (rest, err, sizeof err)) {
        gw_request_reply_error (req, GW_E_INVALID_PATH, "%s",
                                rest ? err : "give a path after files/");
        return;
    }
    int dirfd = open (gw_session_workdir (session), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0) {
        gw_request_reply_error (req, GW_E_INTERNAL, "the session folder is gone");
        return;
    }
    if (get)
        s_get_file (req, dirfd, rest);
    else
        s_put_file (req, session, dirfd, rest);
    close (dirfd);
}
