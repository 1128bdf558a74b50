/* gw_upload: a request body written to a file of a session folder as it
 * arrives, instead of held in memory (PUT /sessions/{id}/files/{path}).
 * The loop thread makes it (a hidden temporary file beneath the session
 * folder, .codebox/uploads/<random>, the kernel user's, and the room the
 * session's disk quota leaves), the transport writes each piece of the
 * body as it comes (counted against that room), and the loop thread moves
 * it into place (renameat within the session folder, confined by
 * gw_path). What is not moved into place leaves nothing: a write that
 * fails or passes the room removes the file at once, and
 * gw_upload_destroy removes it if it is still there (a client that left).
 *
 * Threads: one at a time. The loop thread makes and commits it; the
 * transport writes it between the two (gw_http runs libmicrohttpd on the
 * loop thread too). */
#ifndef GW_UPLOAD_H
#define GW_UPLOAD_H

#include <stdint.h>
#include <sys/types.h>

#define GW_UPLOAD_DIR ".codebox/uploads"    /* in the session folder */

typedef struct gw_upload gw_upload_t;

/* Makes a temporary file in GW_UPLOAD_DIR beneath the session folder
 * session_fd (the folders made as the gateway's own, the file given to
 * uid:gid; -1 leaves an owner as made), to hold at most room bytes.
 * Returns 0 with *self_p set, or a negative errno. */
int gw_upload_new (int session_fd, uint64_t room, uid_t uid, gid_t gid, gw_upload_t **self_p);

/* Appends len bytes. Past the room the upload fails with -EFBIG; a write
 * that fails (-ENOSPC when the session's file system is full) fails it
 * with its error. A failed upload's file is removed at once and every
 * later write returns the same error. Returns 0 or that error. */
int gw_upload_write (gw_upload_t *self, const void *data, size_t len);

/* Bytes written so far. */
uint64_t gw_upload_size (const gw_upload_t *self);

/* 0, or the error that failed the upload. */
int gw_upload_error (const gw_upload_t *self);

/* Moves the file to path (relative, checked) beneath session_fd, making
 * its missing folders (given to uid:gid) and replacing a file that is
 * there. Returns 0, the upload's own error, or a negative errno (the
 * temporary file is removed then: -EISDIR when path is a folder). */
int gw_upload_commit (gw_upload_t *self, int session_fd, const char *path, uid_t uid,
                      gid_t gid);

/* Removes the temporary file if it was not moved into place, closes it,
 * frees the upload and nulls *self_p. Safe on NULL. */
void gw_upload_destroy (gw_upload_t **self_p);

#endif
