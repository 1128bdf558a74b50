/* gw_archive: a folder as a tar.gz streamed as it is read (see
 * gw_archive.h). Threads: whichever reads it, one at a time. */
#include "gw_archive.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define S_RAW (128u << 10)          /* tar bytes made before deflate takes them */
#define S_NAME_MAX 4096             /* bytes of an entry's name in the archive */
#define S_HEADER_ROOM (S_NAME_MAX + 4 * 512)    /* a PAX header, its record and a header */
#define S_DEPTH 48                  /* folders open at once; deeper ones are left out */
#define S_STEP (1u << 20)           /* tar bytes one read deflates once it has some output
                                       (it runs on the loop thread: ~3 ms at zlib level 1) */
#define S_USTAR_SIZE_MAX 077777777777ULL

/* A file of the archive's top, held in memory. */
typedef struct s_mem {
    char *name, *data;
    size_t len;
    struct s_mem *next;
} s_mem_t;

struct gw_archive {
    z_stream z;
    bool z_ready, z_done, tar_done;
    unsigned char raw[S_RAW];
    size_t raw_len, raw_at;
    s_mem_t *mem, *mem_tail;    /* still to write */
    s_mem_t *cur_mem;           /* the one being written, or NULL */
    size_t mem_at;
    char prefix[256];
    int root_fd;                /* the folder, until its entry is written */
    DIR *dirs[S_DEPTH];         /* the folders being walked, outermost first */
    size_t name_at[S_DEPTH];    /* the length of name for each ("prefix/a/b/") */
    int depth;
    char name[S_NAME_MAX + 2];
    int fd;                     /* the file being written, or -1 */
    uint64_t left, pad;         /* its bytes to go, then its padding */
    uint64_t used, max;         /* the folder's file bytes so far, and their bound */
    char leave_out[GW_ARCHIVE_LEAVE_OUT][256];  /* names of the folder's top left out */
    long entries, left_out;
};

gw_archive_t *
gw_archive_new (const char *path, const char *prefix, uint64_t max_bytes, int *err)
{
    gw_archive_t *self = calloc (1, sizeof *self);
    if (!self) {
        *err = -ENOMEM;
        return NULL;
    }
    self->fd = -1;
    self->max = max_bytes;
    snprintf (self->prefix, sizeof self->prefix, "%s", prefix);
    self->root_fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (self->root_fd < 0) {
        *err = -errno;
        free (self);
        return NULL;
    }
    /* gzip (15 + 16), at zlib's fastest level: the loop thread compresses */
    if (deflateInit2 (&self->z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        *err = -ENOMEM;
        gw_archive_destroy (&self);
        return NULL;
    }
    self->z_ready = true;
    return self;
}

int
gw_archive_add (gw_archive_t *self, const char *name, char *data, size_t len)
{
    s_mem_t *m = calloc (1, sizeof *m);
    if (!m || !(m->name = strdup (name))) {
        free (m);
        free (data);
        return -ENOMEM;
    }
    m->data = data;
    m->len = len;
    if (self->mem_tail)
        self->mem_tail->next = m;
    else
        self->mem = m;
    self->mem_tail = m;
    return 0;
}

int
gw_archive_leave_out (gw_archive_t *self, const char *name)
{
    for (int i = 0; i < GW_ARCHIVE_LEAVE_OUT; i++)
        if (!self->leave_out[i][0]) {
            snprintf (self->leave_out[i], sizeof self->leave_out[i], "%s", name);
            return 0;
        }
    return -ENOSPC;
}

/* True when name, at depth (1: the folder's top), is one to leave out. */
static bool
s_left_out (const gw_archive_t *self, int depth, const char *name)
{
    for (int i = 0; depth == 1 && i < GW_ARCHIVE_LEAVE_OUT; i++)
        if (strcmp (self->leave_out[i], name) == 0)
            return true;
    return false;
}

static void
s_mem_free (s_mem_t *m)
{
    if (m) {
        free (m->name);
        free (m->data);
        free (m);
    }
}

void
gw_archive_destroy (gw_archive_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gw_archive_t *self = *self_p;
    if (self->z_ready)
        deflateEnd (&self->z);
    while (self->mem) {
        s_mem_t *next = self->mem->next;
        s_mem_free (self->mem);
        self->mem = next;
    }
    s_mem_free (self->cur_mem);
    for (int i = 0; i < self->depth; i++)
        closedir (self->dirs[i]);
    if (self->root_fd >= 0)
        close (self->root_fd);
    if (self->fd >= 0)
        close (self->fd);
    free (self);
    *self_p = NULL;
}

void
gw_archive_counts (const gw_archive_t *self, long *entries, long *left_out)
{
    *entries = self->entries;
    *left_out = self->left_out;
}

/* Writes value in octal into the field of width bytes at at (width - 1
 * digits and a NUL), capped at the largest that fits. */
static void
s_octal (unsigned char *at, int width, unsigned long long value)
{
    unsigned long long most = (1ULL << (3 * (width - 1))) - 1;
    char digits[32];
    snprintf (digits, sizeof digits, "%0*llo", width - 1, value < most ? value : most);
    memcpy (at, digits, (size_t) width);
}

/* Fills a ustar header block at h and sets its checksum. */
static void
s_ustar (unsigned char *h, const char *name, char type, unsigned mode, uint64_t size,
         long long mtime)
{
    memset (h, 0, 512);
    size_t n = strlen (name);
    memcpy (h, name, n < 100 ? n : 100);
    s_octal (h + 100, 8, mode & 07777);
    s_octal (h + 108, 8, 0);    /* uid and gid 0: whoever unpacks owns it */
    s_octal (h + 116, 8, 0);
    s_octal (h + 124, 12, size > S_USTAR_SIZE_MAX ? 0 : size);  /* else the PAX size */
    s_octal (h + 136, 12, mtime > 0 ? (unsigned long long) mtime : 0);
    memset (h + 148, ' ', 8);
    h[156] = (unsigned char) type;
    memcpy (h + 257, "ustar", 6);
    memcpy (h + 263, "00", 2);
    unsigned sum = 0;
    for (int i = 0; i < 512; i++)
        sum += h[i];
    s_octal (h + 148, 7, sum);  /* six digits, a NUL, and the space left there */
}

/* One PAX record "LEN key=value\n" (LEN counts itself) at out; its length. */
static size_t
s_pax_record (char *out, const char *key, const char *value)
{
    size_t body = strlen (key) + strlen (value) + 3;    /* ' ', '=', '\n' */
    size_t len = body + 1;
    while (snprintf (NULL, 0, "%zu", len) + body != len)
        len++;
    return (size_t) sprintf (out, "%zu %s=%s\n", len, key, value);
}

/* Writes the header(s) of an entry into raw (S_HEADER_ROOM free). */
static void
s_header (gw_archive_t *self, const char *name, char type, unsigned mode, uint64_t size,
          long long mtime)
{
    size_t n = strlen (name);
    unsigned char *at = self->raw + self->raw_len;
    if (n > 100 || size > S_USTAR_SIZE_MAX) {
        char *body = (char *) at + 512;
        size_t len = 0;
        if (n > 100)
            len += s_pax_record (body, "path", name);
        if (size > S_USTAR_SIZE_MAX) {
            char digits[32];
            snprintf (digits, sizeof digits, "%llu", (unsigned long long) size);
            len += s_pax_record (body + len, "size", digits);
        }
        size_t padded = (len + 511) & ~(size_t) 511;
        memset (body + len, 0, padded - len);
        s_ustar (at, "././@PaxHeader", 'x', 0644, len, mtime);
        at += 512 + padded;
    }
    s_ustar (at, name, type, mode, size, mtime);
    self->raw_len = (size_t) (at + 512 - self->raw);
    self->entries++;
}

/* Starts the next in-memory file. */
static void
s_next_mem (gw_archive_t *self)
{
    s_mem_t *m = self->mem;
    self->mem = m->next;
    if (!self->mem)
        self->mem_tail = NULL;
    self->cur_mem = m;
    self->mem_at = 0;
    s_header (self, m->name, '0', 0644, m->len, (long long) time (NULL));
    self->left = m->len;
    self->pad = (512 - m->len % 512) % 512;
}

/* Copies the current file's next bytes (or its padding) into raw. */
static void
s_file_bytes (gw_archive_t *self)
{
    size_t room = S_RAW - self->raw_len;
    unsigned char *at = self->raw + self->raw_len;
    if (self->left > 0) {
        size_t n = self->left < room ? (size_t) self->left : room;
        if (self->cur_mem)
            memcpy (at, self->cur_mem->data + self->mem_at, n);
        else {
            ssize_t got = self->fd >= 0 ? read (self->fd, at, n) : 0;
            if (got <= 0) {     /* it shrank (or failed): zeros for the rest */
                if (self->fd >= 0)
                    close (self->fd);
                self->fd = -1;
                memset (at, 0, n);
            } else
                n = (size_t) got;
        }
        self->mem_at += n;
        self->left -= n;
        self->raw_len += n;
        return;
    }
    size_t n = self->pad < room ? (size_t) self->pad : room;
    memset (at, 0, n);
    self->pad -= n;
    self->raw_len += n;
}

/* The current file is written: lets it go. */
static void
s_end_file (gw_archive_t *self)
{
    s_mem_free (self->cur_mem);
    self->cur_mem = NULL;
    if (self->fd >= 0)
        close (self->fd);
    self->fd = -1;
}

/* Opens folder fd (taken) for the walk under the current name. */
static void
s_push (gw_archive_t *self, int fd, size_t name_len)
{
    DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close (fd);
        self->left_out++;
        return;
    }
    self->dirs[self->depth] = d;
    self->name_at[self->depth] = name_len;
    self->depth++;
}

/* The next entry of the innermost folder being walked. */
static void
s_next_entry (gw_archive_t *self)
{
    DIR *d = self->dirs[self->depth - 1];
    size_t base = self->name_at[self->depth - 1];
    struct dirent *e = readdir (d);
    if (!e) {
        closedir (d);
        self->depth--;
        return;
    }
    if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0
        || s_left_out (self, self->depth, e->d_name))
        return;
    struct stat st;
    size_t n = strlen (e->d_name);
    if (fstatat (dirfd (d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0
        || base + n + 1 > S_NAME_MAX || !(S_ISDIR (st.st_mode) || S_ISREG (st.st_mode))
        || (S_ISDIR (st.st_mode) && self->depth == S_DEPTH)) {
        self->left_out++;   /* gone, named too long, not a file or folder, or too deep */
        return;
    }
    memcpy (self->name + base, e->d_name, n);
    self->name[base + n] = '\0';
    if (S_ISDIR (st.st_mode)) {
        int fd = openat (dirfd (d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            self->left_out++;
            return;
        }
        memcpy (self->name + base + n, "/", 2);
        s_header (self, self->name, '5', st.st_mode, 0, (long long) st.st_mtime);
        s_push (self, fd, base + n + 1);
        return;
    }
    /* opened without following a link, and without waiting (a FIFO put
       there meanwhile): only a regular file goes in */
    int fd = openat (dirfd (d), e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode)
        || self->used + (uint64_t) st.st_size > self->max) {
        if (fd >= 0)
            close (fd);
        self->left_out++;
        return;
    }
    self->used += (uint64_t) st.st_size;
    s_header (self, self->name, '0', st.st_mode, (uint64_t) st.st_size, (long long) st.st_mtime);
    self->fd = fd;
    self->left = (uint64_t) st.st_size;
    self->pad = (512 - self->left % 512) % 512;
}

/* Makes tar bytes into raw (emptied) until it is nearly full or the
 * archive has ended. */
static void
s_fill (gw_archive_t *self)
{
    self->raw_len = self->raw_at = 0;
    while (!self->tar_done && S_RAW - self->raw_len >= S_HEADER_ROOM) {
        if (self->left > 0 || self->pad > 0) {
            s_file_bytes (self);
            continue;
        }
        s_end_file (self);
        if (self->mem)
            s_next_mem (self);
        else if (self->root_fd >= 0) {
            struct stat st;
            int fd = self->root_fd;
            self->root_fd = -1;
            size_t n = (size_t) snprintf (self->name, sizeof self->name, "%s/", self->prefix);
            fstat (fd, &st);
            s_header (self, self->name, '5', 0755, 0, (long long) st.st_mtime);
            s_push (self, fd, n);
        } else if (self->depth > 0)
            s_next_entry (self);
        else {
            memset (self->raw + self->raw_len, 0, 1024);    /* the end: two zero blocks */
            self->raw_len += 1024;
            self->tar_done = true;
        }
    }
}

ssize_t
gw_archive_read (gw_archive_t *self, char *buf, size_t max)
{
    if (self->z_done)
        return -1;
    if (max > (1u << 30))
        max = 1u << 30;
    self->z.next_out = (Bytef *) buf;
    self->z.avail_out = (uInt) max;
    size_t fed = 0;
    while (self->z.avail_out > 0) {
        if (self->raw_at == self->raw_len && !self->tar_done) {
            if (fed >= S_STEP && self->z.avail_out < max)
                break;      /* enough for one call; the rest next time */
            s_fill (self);
            fed += self->raw_len;
        }
        self->z.next_in = self->raw + self->raw_at;
        self->z.avail_in = (uInt) (self->raw_len - self->raw_at);
        int rc = deflate (&self->z, self->tar_done ? Z_FINISH : Z_NO_FLUSH);
        self->raw_at = self->raw_len - self->z.avail_in;
        if (rc == Z_STREAM_END) {
            self->z_done = true;
            break;
        }
        if (rc != Z_OK && rc != Z_BUF_ERROR)
            return -2;
    }
    size_t n = max - self->z.avail_out;
    return n > 0 ? (ssize_t) n : self->z_done ? -1 : -2;
}
