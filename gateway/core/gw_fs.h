/* gw_fs: small file system helpers: make a folder and its parents, remove
 * a tree without following symlinks, read a whole file (or its JSON).
 * Any thread. */
#ifndef GW_FS_H
#define GW_FS_H

#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

/* mkdir -p with mode for the folders it makes. Returns 0 or -errno. */
int gw_fs_mkdirs (const char *path, mode_t mode);

/* rm -rf path, never following a symlink. Returns 0 or -errno. */
int gw_fs_remove_tree (const char *path);

/* The bytes of the regular files under path (symlinks not followed; stops
 * counting past 1,000,000 entries). */
long long gw_fs_tree_size (const char *path);

/* Reads all of fd (up to max bytes) into a new buffer. Returns 0, -EFBIG
 * when larger than max, or -errno. */
int gw_fs_read_fd (int fd, size_t max, char **data_p, size_t *len_p);

/* The JSON that all of fd (taken: closed; < 0 gives NULL) holds, up to max
 * bytes, as a new reference; NULL when it cannot be read, is larger, or
 * is not JSON. */
json_t *gw_fs_read_json (int fd, size_t max);

/* Writes all of data to fd. Returns 0 or -errno. */
int gw_fs_write_all (int fd, const void *data, size_t len);

#endif
