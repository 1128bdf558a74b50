/* gw_artifacts: the files under a session's output/ folder (see
 * gw_artifacts.h): snapshots taken before and after an execution, their
 * difference as JSON, a listing, and MIME types by extension.
 *
 * The walk opens every folder with O_NOFOLLOW, the top one included, so a
 * symlink put in place of output/ or of a subfolder is never walked. Only
 * files a client could fetch are kept: a relative path that
 * gw_path_check_relative accepts (valid UTF-8, else it could not be a JSON
 * string; no control character, no backslash, at most GW_PATH_MAX
 * bytes). File system only; any thread, but one snapshot belongs to
 * one thread. */
#include "gw_artifacts.h"
#include "gw_changes.h"
#include "jp_log.h"
#include "jp_time.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw_path.h"

#define S_MAX_FILES   10000
#define S_MAX_VISITS  30000     /* entries looked at (folders, skipped ones too) */
#define S_DIRENT_BUF  32768     /* bytes of folder entries one getdents64 reads */
#define S_MAX_MS      200       /* and no longer than this: the loop thread waits */
#define S_MAX_LEVELS  16        /* dir itself is level 1 */
#define S_EXT_MAX     16        /* longer extensions have no MIME type */

typedef struct {
    char *rel;                  /* path relative to the walked folder */
    long long size;
    struct timespec mtime;
} s_entry_t;

struct gw_snapshot {
    s_entry_t *entries;         /* sorted by rel once taken */
    size_t count;
    size_t cap;
    size_t visits;              /* entries looked at */
    size_t refs;                /* holders; gw_snapshot_destroy drops one */
    size_t path_bytes;          /* the entries' paths, their NULs included */
    gw_changes_t *changes;      /* while taking: watches each folder walked, or NULL */
    int64_t started_ms;
    struct timespec started_wall; /* the clock file times come from, at the start */
    bool cut;                   /* the walk stopped at its budget */
    unsigned flags;             /* GW_SNAPSHOT_* */
};

/* True when the walk of a session folder leaves the folder name (at level,
 * the top being 1) out: uploads (input/), installed packages
 * (node_modules/ at the top) and hidden folders anywhere (.packages,
 * .ipynb_checkpoints...). */
static bool
s_skipped_folder (const gw_snapshot_t *self, const char *name, int level)
{
    if (!(self->flags & GW_SNAPSHOT_SESSION))
        return false;
    return name[0] == '.' || (level == 1 && (strcmp (name, "input") == 0
                                             || strcmp (name, "node_modules") == 0));
}

/* The MIME types by lowercase extension. A linear table: at ~100 entries a
 * scan is cheap, and it cannot be silently mis-sorted. */
static const struct {
    const char *ext;
    const char *mime;
} s_mime_table[] = {
    {"png", "image/png"}, {"jpg", "image/jpeg"}, {"jpeg", "image/jpeg"},
    {"gif", "image/gif"}, {"webp", "image/webp"}, {"svg", "image/svg+xml"},
    {"bmp", "image/bmp"}, {"tif", "image/tiff"}, {"tiff", "image/tiff"},
    {"ico", "image/vnd.microsoft.icon"}, {"avif", "image/avif"},
    {"pdf", "application/pdf"}, {"csv", "text/csv"},
    {"tsv", "text/tab-separated-values"}, {"json", "application/json"},
    {"jsonl", "application/x-ndjson"}, {"ndjson", "application/x-ndjson"},
    {"geojson", "application/geo+json"}, {"txt", "text/plain"},
    {"md", "text/markdown"}, {"html", "text/html"}, {"htm", "text/html"},
    {"xml", "application/xml"}, {"yaml", "application/yaml"},
    {"yml", "application/yaml"}, {"toml", "application/toml"},
    {"py", "text/x-python"}, {"js", "text/javascript"}, {"mjs", "text/javascript"},
    {"ts", "text/x-typescript"}, {"c", "text/x-c"}, {"h", "text/x-c"},
    {"cpp", "text/x-c++"}, {"hpp", "text/x-c++"}, {"java", "text/x-java"},
    {"r", "text/x-r"}, {"sh", "application/x-sh"}, {"sql", "application/sql"},
    {"css", "text/css"}, {"log", "text/plain"}, {"ini", "text/plain"},
    {"cfg", "text/plain"}, {"tex", "application/x-tex"},
    {"ipynb", "application/x-ipynb+json"},
    {"parquet", "application/vnd.apache.parquet"},
    {"feather", "application/vnd.apache.arrow.file"},
    {"arrow", "application/vnd.apache.arrow.file"},
    {"xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
    {"xls", "application/vnd.ms-excel"},
    {"docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
    {"pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"},
    {"odt", "application/vnd.oasis.opendocument.text"},
    {"ods", "application/vnd.oasis.opendocument.spreadsheet"},
    {"rtf", "application/rtf"}, {"epub", "application/epub+zip"},
    {"zip", "application/zip"}, {"gz", "application/gzip"}, {"tgz", "application/gzip"},
    {"tar", "application/x-tar"}, {"bz2", "application/x-bzip2"},
    {"xz", "application/x-xz"}, {"zst", "application/zstd"},
    {"7z", "application/x-7z-compressed"}, {"npy", "application/x-npy"},
    {"npz", "application/x-npz"}, {"pkl", "application/x-pickle"},
    {"pickle", "application/x-pickle"}, {"joblib", "application/x-pickle"},
    {"h5", "application/x-hdf5"}, {"hdf5", "application/x-hdf5"},
    {"nc", "application/x-netcdf"}, {"wav", "audio/wav"}, {"mp3", "audio/mpeg"},
    {"ogg", "audio/ogg"}, {"flac", "audio/flac"}, {"m4a", "audio/mp4"},
    {"mp4", "video/mp4"}, {"webm", "video/webm"}, {"mov", "video/quicktime"},
    {"avi", "video/x-msvideo"}, {"mkv", "video/x-matroska"},
    {"sqlite", "application/vnd.sqlite3"}, {"sqlite3", "application/vnd.sqlite3"},
    {"db", "application/vnd.sqlite3"}, {"woff", "font/woff"}, {"woff2", "font/woff2"},
    {"ttf", "font/ttf"}, {"otf", "font/otf"}, {"wasm", "application/wasm"},
};

/* The extension of the last component of path, without its dot, or NULL
 * when there is none: no dot, a dot only at the start (".bashrc"), or a
 * dot at the end ("notes."). Borrowed from path. */
static const char *
s_extension (const char *path)
{
    const char *slash = strrchr (path, '/');
    const char *name = slash ? slash + 1 : path;
    const char *dot = strrchr (name, '.');
    if (!dot || dot == name || dot[1] == '\0')
        return NULL;
    return dot + 1;
}

const char *
gw_mime_for_path (const char *path)
{
    const char *ext = path ? s_extension (path) : NULL;
    if (!ext || strlen (ext) >= S_EXT_MAX)
        return "application/octet-stream";
    char lower[S_EXT_MAX];
    size_t i = 0;
    for (; ext[i]; i++)
        lower[i] = (char) tolower ((unsigned char) ext[i]);
    lower[i] = '\0';
    for (size_t k = 0; k < sizeof s_mime_table / sizeof s_mime_table[0]; k++)
        if (strcmp (s_mime_table[k].ext, lower) == 0)
            return s_mime_table[k].mime;
    return "application/octet-stream";
}

/* Adds a file to the snapshot, taking ownership of rel. Returns 0 or
 * -ENOMEM (rel is freed then). */
static int
s_add (gw_snapshot_t *self, char *rel, const struct stat *st)
{
    if (self->count == self->cap) {
        size_t cap = self->cap ? self->cap * 2 : 64;
        s_entry_t *grown = realloc (self->entries, cap * sizeof *grown);
        if (!grown) {
            free (rel);
            return -ENOMEM;
        }
        self->entries = grown;
        self->cap = cap;
    }
    self->path_bytes += strlen (rel) + 1;
    self->entries[self->count++] = (s_entry_t) {rel, (long long) st->st_size, st->st_mtim};
    return 0;
}

static int s_walk (gw_snapshot_t *self, int fd, const char *prefix, int level);

/* True once the walk has looked at S_MAX_VISITS entries or taken S_MAX_MS:
 * a folder of millions of files or folders never stalls the loop. */
static bool
s_over_budget (gw_snapshot_t *self)
{
    if (self->visits >= S_MAX_VISITS
        || ((self->visits & 255) == 0 && jp_time_now_ms () - self->started_ms > S_MAX_MS))
        self->cut = true;
    return self->cut;
}

/* Looks at one entry of the folder dfd (whose relative path is prefix,
 * NULL for the top), of the type its folder listing gave (DT_UNKNOWN when
 * the file system does not say): keeps a regular file, walks a folder,
 * skips anything else. A folder is opened without a stat of its own (the
 * open refuses what is not one, a symlink included); a file is stat'ed
 * for its size and time. Returns 0 or -ENOMEM. */
static int
s_visit (gw_snapshot_t *self, int dfd, const char *prefix, const char *name,
         unsigned char type, int level)
{
    if (type != DT_UNKNOWN && type != DT_REG && type != DT_DIR)
        return 0;
    char *rel = NULL;
    if (asprintf (&rel, "%s%s%s", prefix ? prefix : "", prefix ? "/" : "", name) < 0)
        return -ENOMEM;
    struct stat st;
    bool keep = gw_path_check_relative (rel, NULL, 0) == 0;
    if (keep && type != DT_DIR) {
        keep = fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
        if (keep && S_ISREG (st.st_mode))
            return s_add (self, rel, &st);
        type = keep && S_ISDIR (st.st_mode) ? DT_DIR : DT_UNKNOWN;
    }
    int rc = 0;
    if (keep && type == DT_DIR && level < S_MAX_LEVELS && !s_skipped_folder (self, name, level)) {
        int sub = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0)
            rc = s_walk (self, sub, rel, level + 1);
    }
    free (rel);
    return rc;
}

/* Walks the folder fd (owned: closed here) at the given level, adding its
 * files until the snapshot holds S_MAX_FILES. Reads the folder with
 * getdents64 itself: opendir's stat and two fcntl calls per folder were a
 * third of an execution's system calls. Returns 0 or -ENOMEM. */
static int
s_walk (gw_snapshot_t *self, int fd, const char *prefix, int level)
{
    char *buf = malloc (S_DIRENT_BUF);
    if (!buf) {
        close (fd);
        return -ENOMEM;
    }
    gw_changes_watch_fd (self->changes, fd);   /* before reading it */
    int rc = 0;
    ssize_t got = 0, at = 0;
    while (rc == 0 && self->count < S_MAX_FILES && !s_over_budget (self)) {
        if (at >= got) {
            got = getdents64 (fd, buf, S_DIRENT_BUF);
            at = 0;
            if (got <= 0)
                break;
        }
        struct dirent64 *ent = (struct dirent64 *) (buf + at);
        at += ent->d_reclen;
        if (strcmp (ent->d_name, ".") == 0 || strcmp (ent->d_name, "..") == 0)
            continue;
        self->visits++;
        rc = s_visit (self, fd, prefix, ent->d_name, ent->d_type, level);
    }
    free (buf);
    close (fd);
    return rc;
}

static int
s_entry_cmp (const void *a, const void *b)
{
    return strcmp (((const s_entry_t *) a)->rel, ((const s_entry_t *) b)->rel);
}

gw_snapshot_t *
gw_snapshot_take_watched (const char *dir, unsigned flags, gw_changes_t *changes)
{
    gw_snapshot_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->flags = flags;
    self->refs = 1;
    self->changes = changes;
    self->started_ms = jp_time_now_ms ();
    clock_gettime (CLOCK_REALTIME_COARSE, &self->started_wall);
    int fd = !dir ? -1 : open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0 && s_walk (self, fd, NULL, 1) < 0) {
        gw_snapshot_destroy (&self);
        return NULL;
    }
    self->changes = NULL;
    if (self->count > 1)
        qsort (self->entries, self->count, sizeof *self->entries, s_entry_cmp);
    if (self->cut || self->count >= S_MAX_FILES)
        jp_log_warn ("artifacts event=listing-cut files=%zu visits=%zu ms=%lld", self->count,
                     self->visits, (long long) (jp_time_now_ms () - self->started_ms));
    return self;
}

gw_snapshot_t *
gw_snapshot_take (const char *dir, unsigned flags)
{
    return gw_snapshot_take_watched (dir, flags, NULL);
}

gw_snapshot_t *
gw_snapshot_ref (gw_snapshot_t *self)
{
    if (self)
        self->refs++;
    return self;
}

size_t
gw_snapshot_bytes (const gw_snapshot_t *self)
{
    return self ? sizeof *self + self->cap * sizeof *self->entries + self->path_bytes : 0;
}

bool
gw_snapshot_whole (const gw_snapshot_t *self)
{
    return self && !self->cut && self->count < S_MAX_FILES;
}

void
gw_snapshot_destroy (gw_snapshot_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gw_snapshot_t *self = *self_p;
    *self_p = NULL;
    if (--self->refs > 0)
        return;
    for (size_t i = 0; i < self->count; i++)
        free (self->entries[i].rel);
    free (self->entries);
    free (self);
    *self_p = NULL;
}

/* The JSON description of one file (new reference), NULL on OOM. The path
 * is prefix + "/" + rel; an empty or NULL prefix gives rel alone, and a
 * prefix ending in '/' gets no second one. */
static json_t *
s_entry_json (const s_entry_t *e, const char *prefix)
{
    const char *name = strrchr (e->rel, '/') ? strrchr (e->rel, '/') + 1 : e->rel;
    const char *ext = s_extension (name);
    char *lower = strdup (ext ? ext : "");
    char *path = NULL;
    size_t plen = prefix ? strlen (prefix) : 0;
    const char *sep = plen == 0 || prefix[plen - 1] == '/' ? "" : "/";
    if (!lower || asprintf (&path, "%s%s%s", plen ? prefix : "", sep, e->rel) < 0) {
        free (lower);
        return NULL;
    }
    for (char *p = lower; *p; p++)
        *p = (char) tolower ((unsigned char) *p);
    json_t *obj = json_pack ("{s:s, s:s, s:s, s:I, s:s}", "filename", name, "path", path,
                             "extension", lower, "size", (json_int_t) e->size,
                             "mime", gw_mime_for_path (name));
    free (lower);
    free (path);
    return obj;
}

/* True when e differs from its namesake in before, or has none there.
 * *j is a cursor into before's sorted entries, advanced as after is. A
 * before that is not whole (its walk stopped at a limit) did not see every
 * file: one it lacks is new only when modified since that walk began (file
 * times come from the coarse clock read then), not every file it missed. */
static bool
s_is_new (const gw_snapshot_t *before, size_t *j, const s_entry_t *e)
{
    size_t count = before ? before->count : 0;
    while (*j < count && strcmp (before->entries[*j].rel, e->rel) < 0)
        (*j)++;
    if (*j == count || strcmp (before->entries[*j].rel, e->rel) != 0) {
        if (!before || gw_snapshot_whole (before))
            return true;
        const struct timespec *t0 = &before->started_wall;
        return e->mtime.tv_sec > t0->tv_sec
               || (e->mtime.tv_sec == t0->tv_sec && e->mtime.tv_nsec >= t0->tv_nsec);
    }
    const s_entry_t *old = &before->entries[*j];
    return old->size != e->size || old->mtime.tv_sec != e->mtime.tv_sec
           || old->mtime.tv_nsec != e->mtime.tv_nsec;
}

json_t *
gw_snapshot_diff (const gw_snapshot_t *before, const gw_snapshot_t *after,
                  const char *path_prefix)
{
    json_t *out = json_array ();
    if (!out)
        return NULL;
    size_t j = 0;
    for (size_t i = 0; after && i < after->count; i++) {
        if (!s_is_new (before, &j, &after->entries[i]))
            continue;
        if (json_array_append_new (out, s_entry_json (&after->entries[i], path_prefix)) < 0) {
            json_decref (out);
            return NULL;
        }
    }
    return out;
}

json_t *
gw_artifacts_list (const char *dir, const char *path_prefix, unsigned flags)
{
    gw_snapshot_t *snap = gw_snapshot_take (dir, flags);
    if (!snap)
        return NULL;
    json_t *out = gw_snapshot_diff (NULL, snap, path_prefix);
    gw_snapshot_destroy (&snap);
    return out;
}
