/* gw_archive: a folder as a tar.gz made as it is read, never whole in
 * memory: first the in-memory files given (such as notebook.ipynb and
 * session.json), then the folder under a name of its own (prefix/...):
 * its folders and regular files only (symlinks, devices, FIFOs and
 * sockets are left out, and no symlink is ever followed: each entry is
 * opened beneath the folder with O_NOFOLLOW), in ustar form, with a PAX
 * header for a name longer than 100 bytes or a size past 8 GiB. The
 * files' bytes are bounded (max_bytes; the files past it are left out);
 * a file that shrinks while it is read is padded with zeros, one that
 * grows is cut at the size its header said. gzip by zlib, at its fastest
 * level: the reads run on the thread that serves the answer.
 *
 * Threads: any, one at a time (the HTTP edge's reader: the loop thread). */
#ifndef GW_ARCHIVE_H
#define GW_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct gw_archive gw_archive_t;

/* An archive of the folder at path (opened now) under prefix (a name
 * such as "session"), whose files hold at most max_bytes. NULL with
 * -errno in *err when the folder cannot be opened (or OOM). */
gw_archive_t *gw_archive_new (const char *path, const char *prefix, uint64_t max_bytes,
                              int *err);

/* Adds a file name (at the archive's top) of len bytes of data (stolen,
 * malloc'd), written before the folder. Before the first read. Returns 0
 * or -ENOMEM (data freed). */
int gw_archive_add (gw_archive_t *self, const char *name, char *data, size_t len);

/* Leaves the entry name of the folder's top out (such as ".tmp", the
 * kernel's /tmp), with what it holds. At most GW_ARCHIVE_LEAVE_OUT names;
 * before the first read. Returns 0 or -ENOSPC. */
#define GW_ARCHIVE_LEAVE_OUT 4
int gw_archive_leave_out (gw_archive_t *self, const char *name);

/* Writes the next gzip bytes into buf (max > 0). Returns how many (> 0),
 * -1 at the end, or -2 on an error (zlib's or memory). */
ssize_t gw_archive_read (gw_archive_t *self, char *buf, size_t max);

/* How many files and folders went in, and how many were left out (not
 * regular, or past the bound), so far. */
void gw_archive_counts (const gw_archive_t *self, long *entries, long *left_out);

void gw_archive_destroy (gw_archive_t **self_p);

#endif
