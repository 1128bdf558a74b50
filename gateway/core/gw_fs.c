/* gw_fs: folder creation, tree removal, whole-file reads. Any thread. */
#include "gw_fs.h"

#include <errno.h>
#include <fts.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
gw_fs_mkdirs (const char *path, mode_t mode)
{
    char buf[4096];
    if (snprintf (buf, sizeof buf, "%s", path) >= (int) sizeof buf)
        return -ENAMETOOLONG;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir (buf, mode) < 0 && errno != EEXIST)
            return -errno;
        *p = '/';
    }
    if (mkdir (buf, mode) < 0 && errno != EEXIST)
        return -errno;
    return 0;
}

static int
s_remove_one (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void) st;
    (void) ftw;
    int rc = flag == FTW_DP ? rmdir (path) : unlink (path);
    return rc < 0 && errno != ENOENT ? -1 : 0;
}

int
gw_fs_remove_tree (const char *path)
{
    if (nftw (path, s_remove_one, 32, FTW_DEPTH | FTW_PHYS) < 0)
        return errno == ENOENT ? 0 : -errno;
    return 0;
}

long long
gw_fs_tree_size (const char *path)
{
    char *paths[] = {(char *) path, NULL};
    FTS *fts = fts_open (paths, FTS_PHYSICAL | FTS_NOCHDIR, NULL);
    if (!fts)
        return 0;
    long long bytes = 0;
    long entries = 0;
    FTSENT *e;
    while ((e = fts_read (fts)) && ++entries <= 1000000)
        if (e->fts_info == FTS_F && S_ISREG (e->fts_statp->st_mode))
            bytes += e->fts_statp->st_size;
    fts_close (fts);
    return bytes;
}

int
gw_fs_read_fd (int fd, size_t max, char **data_p, size_t *len_p)
{
    size_t cap = 65536, len = 0;
    char *data = malloc (cap + 1);
    if (!data)
        return -ENOMEM;
    for (;;) {
        if (len == cap) {
            if (cap > max) {
                free (data);
                return -EFBIG;
            }
            cap *= 2;
            char *grown = realloc (data, cap + 1);
            if (!grown) {
                free (data);
                return -ENOMEM;
            }
            data = grown;
        }
        ssize_t n = read (fd, data + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            free (data);
            return -e;
        }
        if (n == 0)
            break;
        len += (size_t) n;
    }
    if (len > max) {
        free (data);
        return -EFBIG;
    }
    data[len] = '\0';
    *data_p = data;
    *len_p = len;
    return 0;
}

json_t *
gw_fs_read_json (int fd, size_t max)
{
    char *data = NULL;
    size_t len = 0;
    int rc = fd < 0 ? fd : gw_fs_read_fd (fd, max, &data, &len);
    if (fd >= 0)
        close (fd);
    json_t *json = rc ? NULL : json_loadb (data, len, 0, NULL);
    free (data);
    return json;
}

int
gw_fs_write_all (int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t n = write (fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        p += n;
        len -= (size_t) n;
    }
    return 0;
}
