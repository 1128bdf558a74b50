/* gw_rest_files: GET and PUT /sessions/{id}/files/{path} and GET
 * /sessions/{id}/artifacts. Paths are confined to the session folder by
 * gw_path (openat2 RESOLVE_BENEATH); uploads go to input/ or output/ only,
 * streamed by the HTTP edge to a hidden temporary file (gw_upload) within
 * the room the session's disk quota leaves, and renamed into place. The
 * same ways serve a volume's files (gw_rest_volumes.c: gw_rest_file_serve).
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
#include "gw_rest_files.h"
#include "gw_sandbox.h"
#include "gw_upload.h"


/* Answers the error of a failed open beneath the session folder. */
static void
s_reply_open_error (gw_request_t *req, const gw_rest_file_target_t *t, const char *path, int rc)
{
    if (rc == -ENOENT)
        gw_request_reply_error (req, GW_E_NOT_FOUND, "no file '%s' in the %s", path, t->where);
    else if (rc == -EXDEV || rc == -ELOOP || rc == -EINVAL)
        gw_request_reply_error (req, GW_E_INVALID_PATH,
                                "'%s' leads outside the %s folder", path, t->where);
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
s_get_file (gw_request_t *req, const gw_rest_file_target_t *t, const char *path)
{
    int fd = gw_path_open_beneath (t->dirfd, path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) {
        s_reply_open_error (req, t, path, fd);
        return;
    }
    struct stat st;
    int bad = fstat (fd, &st) < 0 ? -errno : S_ISDIR (st.st_mode) ? -EISDIR
                                            : !S_ISREG (st.st_mode) ? -EINVAL : 0;
    if (bad) {
        close (fd);
        s_reply_open_error (req, t, path, bad);
        return;
    }
    /* streamed from the descriptor: a file of any size costs no memory */
    gw_request_reply_file (req, 200, fd, (uint64_t) st.st_size, gw_mime_for_path (path));
}

/* Answers 413 for an upload that does not fit the quota. */
static void
s_reply_no_room (gw_request_t *req, const gw_rest_file_target_t *t, const char *path)
{
    gw_request_reply_error (req, GW_E_TOO_LARGE, "'%s' does not fit: no space left in %s or "
                            "on the disk; delete files first", path, t->quota);
}

/* Answers the error that stopped an upload (or its move into place). */
static void
s_reply_upload_error (gw_request_t *req, const gw_rest_file_target_t *t, const char *path,
                      int rc)
{
    if (rc == -ENOSPC || rc == -EDQUOT || rc == -EFBIG)
        s_reply_no_room (req, t, path);
    else if (rc == -EISDIR || rc == -ENOTDIR || rc == -EXDEV || rc == -ELOOP || rc == -EINVAL)
        s_reply_open_error (req, t, path, rc == -ENOTDIR ? -EINVAL : rc);
    else
        gw_request_reply_error (req, GW_E_INTERNAL, "cannot write '%s': %s", path,
                                strerror (-rc));
}

/* Before the body is read: refuses it when its declared length passes the
 * room the session's disk quota leaves (nothing is read then), else
 * gives the transport a temporary file beneath the session folder to
 * write it to as it arrives, counted against that room. */
static void
s_put_ahead (gw_request_t *req, const gw_rest_file_target_t *t, const char *path, uid_t uid,
             gid_t gid)
{
    long long room = t->room;
    const char *length = gw_request_header (req, "Content-Length");
    unsigned long long declared = length ? strtoull (length, NULL, 10) : 0;
    if (room <= 0 || declared > (unsigned long long) room) {
        gw_request_reply_error (req, GW_E_TOO_LARGE, "'%s' does not fit: %llu bytes, where "
                                "the space left in %s or on the disk is %lld; delete files "
                                "first", path, declared, t->quota, room > 0 ? room : 0);
        return;
    }
    gw_upload_t *upload;
    int rc = gw_upload_new (t->dirfd, (uint64_t) room, uid, gid, &upload);
    if (rc)
        s_reply_upload_error (req, t, path, rc);
    else
        gw_request_read_body_into (req, upload);
}

/* Moves an uploaded body into place (its folders made as the kernel
 * user's) and answers 201, or answers what stopped it. */
static void
s_put_commit (gw_request_t *req, const gw_rest_file_target_t *t, const char *path, uid_t uid,
              gid_t gid)
{
    if (!req->upload) {
        gw_request_reply_error (req, GW_E_INTERNAL, "the upload of '%s' went missing", path);
        return;
    }
    int rc = gw_upload_commit (req->upload, t->dirfd, path, uid, gid);
    uint64_t size = gw_upload_size (req->upload);
    gw_upload_destroy (&req->upload);
    if (rc) {
        s_reply_upload_error (req, t, path, rc);
        return;
    }
    char full[2200];
    snprintf (full, sizeof full, "%s/%s", t->visible, path);
    gw_request_reply_json (req, 201, json_pack ("{s:s, s:I}", "path", full, "size",
                                                (json_int_t) size));
}

/* PUT: the HTTP edge posts it twice, before its body (GW_BODY_AHEAD) and
 * once the body is in the upload given then (GW_BODY_WRITTEN); a body
 * held whole (another caller) takes the same way at once. Whatever path
 * it goes to, the file is whole or absent: it is written beside and
 * renamed into place. */
static void
s_put_file (gw_request_t *req, gw_server_t *server, const gw_rest_file_target_t *t,
            const char *path)
{
    if (!t->anywhere && strncmp (path, "input/", 6) != 0 && strncmp (path, "output/", 7) != 0) {
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
    gw_sandbox_owner (gw_server_sandbox (server), &uid, &gid);
    if (req->body_at == GW_BODY_AHEAD) {
        s_put_ahead (req, t, path, uid, gid);
        return;
    }
    if (req->body_at == GW_BODY_WHOLE) {
        int rc = t->room < (long long) req->body_len ? -ENOSPC
               : gw_upload_new (t->dirfd, req->body_len, uid, gid, &req->upload);
        if (!rc)
            rc = gw_upload_write (req->upload, req->body, req->body_len);
        if (rc) {
            gw_upload_destroy (&req->upload);
            s_reply_upload_error (req, t, path, rc);
            return;
        }
    }
    s_put_commit (req, t, path, uid, gid);
}

void
gw_rest_file_serve (gw_server_t *server, gw_request_t *req, const gw_rest_file_target_t *t,
                    const char *given)
{
    char err[256];
    const char *rest = gw_path_in_session (given, t->visible);
    if (given && !rest) {
        gw_request_reply_error (req, GW_E_INVALID_PATH, "'%s' is outside the %s folder: "
                                "give a path relative to it or under %s", given, t->where,
                                t->visible);
        return;
    }
    if (!rest || gw_path_check_relative (rest, err, sizeof err)) {
        gw_request_reply_error (req, GW_E_INVALID_PATH, "%s",
                                rest ? err : "give a path after files/");
        return;
    }
    if (strcmp (req->method, "GET") == 0)
        s_get_file (req, t, rest);
    else
        s_put_file (req, server, t, rest);
}

void
gw_rest_artifacts (gw_server_t *server, gw_request_t *req, const char *id)
{
    if (strcmp (req->method, "GET") != 0) {
        gw_request_reply_error (req, GW_E_NOT_FOUND, "no route %s %s", req->method, req->path);
        return;
    }
    req->route = "/sessions/{id}/artifacts";
    gw_session_t *session = gw_rest_session_or_reply (server, req, id);
    if (session) {
        json_t *list = gw_artifacts_list (gw_session_workdir (session),
                                          gw_session_visible_workdir (session),
                                          GW_SNAPSHOT_SESSION);
        gw_server_annotate (gw_session_server (session), session, list);
        gw_request_reply_json (req, 200, json_pack ("{s:o}", "artifacts", list));
    }
}

void
gw_rest_files (gw_server_t *server, gw_request_t *req, const char *id, const char *rest)
{
    bool get = strcmp (req->method, "GET") == 0, put = strcmp (req->method, "PUT") == 0;
    if (!(get || put)) {
        gw_request_reply_error (req, GW_E_NOT_FOUND, "no route %s %s", req->method, req->path);
        return;
    }
    req->route = "/sessions/{id}/files/{path}";
    gw_session_t *session = gw_rest_session_or_reply (server, req, id);
    if (!session)
        return;
    int dirfd = open (gw_session_workdir (session), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0) {
        gw_request_reply_error (req, GW_E_INTERNAL, "the session folder is gone");
        return;
    }
    if (put)
        gw_session_touch (session);
    gw_rest_file_target_t t = {
        .dirfd = dirfd,
        .room = put ? gw_session_disk_room (session) : 0,
        .visible = gw_session_visible_workdir (session),
        .where = "session",
        .quota = "the session's disk quota (CODEBOX_DISK_QUOTA_MB)",
    };
    gw_rest_file_serve (server, req, &t, rest);
    close (dirfd);
}
