/* gw_upload: a request body streamed to a hidden file of the session
 * folder and moved into place when whole (see gw_upload.h).
 *
 * Threads: one at a time (the loop thread, and the transport's between
 * gw_upload_new and gw_upload_commit). */
#include "gw_upload.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gw_fs.h"
#include "gw_path.h"
#include "jp_random.h"

struct gw_upload {
    int dir_fd;                 /* GW_UPLOAD_DIR, an O_PATH descriptor */
    int fd;                     /* the temporary file, or -1 once closed */
    char name[40];              /* its name in dir_fd; "" once gone or moved */
    uint64_t room;
    uint64_t size;
    int error;
};

/* Closes the file and removes it (a failed or abandoned upload). */
static void
s_discard (gw_upload_t *self)
{
    if (self->fd >= 0)
        close (self->fd);
    self->fd = -1;
    if (self->name[0])
        unlinkat (self->dir_fd, self->name, 0);
    self->name[0] = '\0';
}

/* Fails the upload with error (negative errno): the file goes at once. */
static int
s_fail (gw_upload_t *self, int error)
{
    self->error = error;
    s_discard (self);
    return error;
}

int
gw_upload_new (int session_fd, uint64_t room, uid_t uid, gid_t gid, gw_upload_t **self_p)
{
    *self_p = NULL;
    gw_upload_t *self = calloc (1, sizeof *self);
    if (!self)
        return -ENOMEM;
    self->fd = -1;
    self->room = room;
    uint8_t rnd[8];
    jp_random_bytes (rnd, sizeof rnd);
    char rel[sizeof GW_UPLOAD_DIR + sizeof self->name];
    snprintf (self->name, sizeof self->name, "%02x%02x%02x%02x%02x%02x%02x%02x.part", rnd[0],
              rnd[1], rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
    snprintf (rel, sizeof rel, "%s/%s", GW_UPLOAD_DIR, self->name);
    /* the folders are the gateway's (as .codebox/outputs is): kernel code
       does not reach into an upload on its way */
    const char *leaf;
    self->dir_fd = gw_path_parent_beneath (session_fd, rel, (uid_t) -1, (gid_t) -1, &leaf);
    if (self->dir_fd < 0) {
        int rc = self->dir_fd;
        free (self);
        return rc;
    }
    self->fd = openat (self->dir_fd, self->name,
                       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    int rc = self->fd < 0 ? -errno : 0;
    if (!rc && (uid != (uid_t) -1 || gid != (gid_t) -1) && fchown (self->fd, uid, gid) < 0)
        rc = -errno;
    if (rc) {
        if (self->fd < 0)
            self->name[0] = '\0';      /* not made: nothing to remove */
        s_discard (self);
        close (self->dir_fd);
        free (self);
        return rc;
    }
    *self_p = self;
    return 0;
}

int
gw_upload_write (gw_upload_t *self, const void *data, size_t len)
{
    if (self->error)
        return self->error;
    if (len > self->room - self->size)
        return s_fail (self, -EFBIG);
    int rc = gw_fs_write_all (self->fd, data, len);
    if (rc)
        return s_fail (self, rc);
    self->size += len;
    return 0;
}

uint64_t
gw_upload_size (const gw_upload_t *self)
{
    return self->size;
}

int
gw_upload_error (const gw_upload_t *self)
{
    return self->error;
}

int
gw_upload_commit (gw_upload_t *self, int session_fd, const char *path, uid_t uid, gid_t gid)
{
    if (self->error)
        return self->error;
    if (!self->name[0])
        return -ENOENT;
    int rc = close (self->fd) < 0 ? -errno : 0;
    self->fd = -1;
    if (rc)
        return s_fail (self, rc);
    const char *leaf;
    int parent = gw_path_parent_beneath (session_fd, path, uid, gid, &leaf);
    if (parent < 0)
        return s_fail (self, parent);
    rc = renameat (self->dir_fd, self->name, parent, leaf) < 0 ? -errno : 0;
    close (parent);
    if (rc)
        return s_fail (self, rc);
    self->name[0] = '\0';           /* in place: no longer ours to remove */
    return 0;
}

void
gw_upload_destroy (gw_upload_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gw_upload_t *self = *self_p;
    s_discard (self);
    close (self->dir_fd);
    free (self);
    *self_p = NULL;
}
