/* gw_volumes: the tenants' named volumes (see gw_volumes.h).
 * Threads: the loop thread only. */
#include "gw_volumes.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "gw_disk.h"
#include "gw_fs.h"
#include "gw_id.h"
#include "gw_sandbox.h"
#include "gw_session.h"
#include "gw_state_dir.h"
#include "jp_log.h"

#define S_NAME_MAX 64
#define S_META_MAX 4096

/* A live session's hold on a volume. */
typedef struct {
    char tenant[GW_ID_SIZE];
    char session[GW_ID_SIZE];
    char name[S_NAME_MAX + 1];
} s_hold_t;

struct gw_volumes {
    gw_server_t *server;
    s_hold_t *holds;
    size_t n_holds, cap_holds;
};

/* Where one volume lives. */
typedef struct {
    char dir[4200];             /* STATE/.volumes/@TENANT */
    char folder[4400];
    char image[4400];
    char meta[4400];
} s_paths_t;

const char gw_volumes_name_rule[] = "1-64 characters of A-Z a-z 0-9 _ -";

bool
gw_volumes_valid_name (const char *name)
{
    size_t n = name ? strlen (name) : 0;
    if (n == 0 || n > S_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
              || c == '_' || c == '-'))
            return false;
    }
    return true;
}

static void
s_paths (gw_volumes_t *self, const char *tenant, const char *name, s_paths_t *p)
{
    snprintf (p->dir, sizeof p->dir, "%s/%s/@%s", gw_server_state_dir (self->server),
              GW_STATE_DIR_VOLUMES, tenant);
    snprintf (p->folder, sizeof p->folder, "%s/%s", p->dir, name ? name : "");
    snprintf (p->image, sizeof p->image, "%s/%s.img", p->dir, name ? name : "");
    snprintf (p->meta, sizeof p->meta, "%s/%s.json", p->dir, name ? name : "");
}

/* A volume's settings ({"size_mb","created"}, new), or NULL when it does
 * not exist (or its file is unreadable). */
static json_t *
s_meta (const s_paths_t *p)
{
    json_t *meta = gw_fs_read_json (open (p->meta, O_RDONLY | O_CLOEXEC | O_NOFOLLOW),
                                    S_META_MAX);
    if (meta && (!json_is_object (meta) || json_integer_value (json_object_get (meta,
                                                                                "size_mb")) < 1)) {
        json_decref (meta);
        meta = NULL;
    }
    return meta;
}

/* Writes the settings whole (beside, synced, renamed, the folder synced):
 * the volume exists once this is done. */
static int
s_write_meta (const s_paths_t *p, json_t *meta)
{
    char tmp[4500];
    snprintf (tmp, sizeof tmp, "%s.tmp", p->meta);
    char *text = json_dumps (meta, JSON_COMPACT);
    int fd = text ? open (tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600) : -1;
    int rc = !text ? -ENOMEM : fd < 0 ? -errno : gw_fs_write_all (fd, text, strlen (text));
    if (!rc && fsync (fd) < 0)
        rc = -errno;
    if (fd >= 0)
        close (fd);
    free (text);
    if (!rc && rename (tmp, p->meta) < 0)
        rc = -errno;
    if (rc) {
        unlink (tmp);
        return rc;
    }
    int dirfd = open (p->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd >= 0) {
        fsync (dirfd);
        close (dirfd);
    }
    return 0;
}

/* Mounts the volume's image on its folder when it has one and it is not
 * mounted yet (first use after a start). Returns 0 or -errno with err. */
static int
s_mount (const s_paths_t *p, char *err, size_t err_len)
{
    struct stat st;
    if (lstat (p->image, &st) < 0 || !S_ISREG (st.st_mode))
        return 0;   /* a plain folder */
    if (gw_disk_is_mount (p->folder))
        return 0;
    if (!gw_disk_enabled ()) {
        snprintf (err, err_len, "the volume's file system cannot be mounted: this server "
                  "makes no file systems (it does not run as root?)");
        return -EPERM;
    }
    if (mkdir (p->folder, 0755) < 0 && errno != EEXIST) {
        snprintf (err, err_len, "cannot make the volume's folder: %s", strerror (errno));
        return -errno;
    }
    int rc = gw_disk_image_mount (p->image, p->folder, err, err_len);
    if (!rc)
        jp_log_info ("volume event=mounted folder=%s", p->folder);
    return rc;
}

/* Bytes used in and still free in the volume (mounted first). */
static void
s_usage (const s_paths_t *p, long size_mb, long long *used, long long *room)
{
    struct statvfs vfs;
    bool disk = statvfs (p->folder, &vfs) == 0;
    long long free_disk = disk ? (long long) vfs.f_bavail * (long long) vfs.f_frsize : LLONG_MAX;
    if (gw_disk_is_mount (p->folder) && disk) {
        *used = (long long) (vfs.f_blocks - vfs.f_bfree) * (long long) vfs.f_frsize;
        *room = free_disk;
        return;
    }
    *used = gw_fs_tree_size (p->folder);
    long long left = ((long long) size_mb << 20) - *used;
    *room = left < free_disk ? left : free_disk;
    if (*room < 0)
        *room = 0;
}

/* The sessions of tenant that hold name, as a new array of ids. */
static json_t *
s_holders (gw_volumes_t *self, const char *tenant, const char *name)
{
    json_t *ids = json_array ();
    for (size_t i = 0; ids && i < self->n_holds; i++)
        if (strcmp (self->holds[i].tenant, tenant) == 0 && strcmp (self->holds[i].name, name) == 0)
            json_array_append_new (ids, json_string (self->holds[i].session));
    return ids;
}

/* The description of an existing volume (meta borrowed), new. */
static json_t *
s_describe (gw_volumes_t *self, const char *tenant, const char *name, const s_paths_t *p,
            json_t *meta)
{
    char err[300];
    long size_mb = (long) json_integer_value (json_object_get (meta, "size_mb"));
    long long used = 0, room = 0;
    if (s_mount (p, err, sizeof err) == 0)
        s_usage (p, size_mb, &used, &room);
    char at[128];
    snprintf (at, sizeof at, "%s/%s", GW_VOLUMES_AT, name);
    json_t *d = json_pack ("{s:s, s:I, s:I, s:I, s:s, s:o}", "name", name, "size_mb",
                           (json_int_t) size_mb, "used_bytes", (json_int_t) used, "free_bytes",
                           (json_int_t) room, "path", at, "sessions",
                           s_holders (self, tenant, name));
    json_t *created = json_object_get (meta, "created");
    if (d && json_is_string (created))
        json_object_set (d, "created", created);
    return d;
}

/* The names of tenant's volumes (sorted) and their sizes summed. */
static int
s_cmp (const void *a, const void *b)
{
    return strcmp (*(char *const *) a, *(char *const *) b);
}

static char **
s_names (gw_volumes_t *self, const char *tenant, size_t *n, long long *total_mb)
{
    s_paths_t p;
    s_paths (self, tenant, NULL, &p);
    *n = 0;
    *total_mb = 0;
    char **names = NULL;
    size_t cap = 0;
    DIR *d = opendir (p.dir);
    struct dirent *e;
    while (d && (e = readdir (d))) {
        size_t len = strlen (e->d_name);
        if (len < 6 || strcmp (e->d_name + len - 5, ".json") != 0 || len - 5 > S_NAME_MAX)
            continue;
        char name[S_NAME_MAX + 1];
        snprintf (name, sizeof name, "%.*s", (int) (len - 5), e->d_name);
        s_paths_t q;
        s_paths (self, tenant, name, &q);
        json_t *meta = gw_volumes_valid_name (name) ? s_meta (&q) : NULL;
        if (!meta)
            continue;
        *total_mb += json_integer_value (json_object_get (meta, "size_mb"));
        json_decref (meta);
        if (*n == cap) {
            char **grown = realloc (names, (cap = cap ? cap * 2 : 8) * sizeof *names);
            if (!grown)
                break;
            names = grown;
        }
        if (!(names[*n] = strdup (name)))
            break;
        (*n)++;
    }
    if (d)
        closedir (d);
    if (names)
        qsort (names, *n, sizeof *names, s_cmp);
    return names;
}

static void
s_names_free (char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free (names[i]);
    free (names);
}

/* Removes what a volume leaves on disk (its mount, files and image). */
static void
s_remove (const s_paths_t *p)
{
    gw_disk_unmount_below (p->folder);
    if (gw_disk_is_mount (p->folder))
        umount2 (p->folder, MNT_DETACH);
    gw_fs_remove_tree (p->folder);
    unlink (p->image);
}

/* The refusals of a new volume: its name, its size, the tenant's bounds,
 * a volume of that name. 0 or -1 with *e and err set. */
static int
s_check_new (gw_volumes_t *self, const char *tenant, const char *name, long size_mb,
             const s_paths_t *p, gw_error_t *e, char *err, size_t err_len)
{
    const gw_config_t *config = gw_server_config (self->server);
    long max_n = gw_config_int (config, GW_SET_VOLUMES_MAX);
    long max_mb = gw_config_int (config, GW_SET_VOLUME_MAX_MB);
    *e = GW_E_BAD_REQUEST;
    if (!gw_volumes_valid_name (name)) {
        snprintf (err, err_len, "invalid volume name '%.80s': use %s", name ? name : "",
                  gw_volumes_name_rule);
        return -1;
    }
    if (size_mb < 1) {
        snprintf (err, err_len, "size_mb must be a whole number of MiB, at least 1");
        return -1;
    }
    json_t *meta = s_meta (p);
    if (meta) {
        json_decref (meta);
        *e = GW_E_CONFLICT;
        snprintf (err, err_len, "a volume '%s' exists already; delete it first or pick "
                  "another name", name);
        return -1;
    }
    size_t n;
    long long total;
    char **names = s_names (self, tenant, &n, &total);
    s_names_free (names, n);
    if ((long) n >= max_n) {
        *e = GW_E_FORBIDDEN;
        snprintf (err, err_len, "this tenant has %zu volumes, the most CODEBOX_VOLUMES_MAX=%ld "
                  "allows; delete one first", n, max_n);
        return -1;
    }
    if (total + size_mb > max_mb) {
        *e = GW_E_TOO_LARGE;
        snprintf (err, err_len, "a volume of %ld MiB does not fit: this tenant's volumes hold "
                  "%lld of the %ld MiB CODEBOX_VOLUME_MAX_MB allows; ask for less or delete "
                  "one first", size_mb, total, max_mb);
        return -1;
    }
    return 0;
}

/* Makes the folder (an image's file system, or plain), owned as the
 * kernel's. 0 or -1 with *e and err set (nothing left behind). */
static int
s_make (gw_volumes_t *self, const s_paths_t *p, long size_mb, gw_error_t *e, char *err,
        size_t err_len)
{
    uid_t uid = geteuid ();
    gid_t gid = getegid ();
    gw_sandbox_owner (gw_server_sandbox (self->server), &uid, &gid);
    s_remove (p);   /* what a run that stopped halfway left */
    int rc = 0;
    if (gw_disk_enabled ()) {
        rc = gw_disk_image_make (p->image, size_mb, uid, gid, err, err_len);
        if (rc == -ENOSPC || rc == -EFBIG) {
            *e = GW_E_TOO_LARGE;
            snprintf (err, err_len, "the server's disk has no room for a volume of %ld MiB",
                      size_mb);
            return -1;
        }
    }
    if (!rc && mkdir (p->folder, 0755) < 0) {
        rc = -errno;
        snprintf (err, err_len, "cannot make the volume's folder: %s", strerror (errno));
    }
    if (!rc && gw_disk_enabled ())
        rc = s_mount (p, err, err_len);
    else if (!rc && geteuid () == 0 && chown (p->folder, uid, gid) < 0) {
        rc = -errno;
        snprintf (err, err_len, "cannot give the volume to the kernel user: %s",
                  strerror (errno));
    }
    if (rc) {
        s_remove (p);
        *e = GW_E_INTERNAL;
        return -1;
    }
    return 0;
}

json_t *
gw_volumes_create (gw_volumes_t *self, const char *tenant, const char *name, long size_mb,
                   gw_error_t *e, char *err, size_t err_len)
{
    s_paths_t p;
    s_paths (self, tenant, gw_volumes_valid_name (name) ? name : NULL, &p);
    if (s_check_new (self, tenant, name, size_mb, &p, e, err, err_len) < 0)
        return NULL;
    int rc = gw_fs_mkdirs (p.dir, 0700);
    if (rc) {
        *e = GW_E_INTERNAL;
        snprintf (err, err_len, "cannot make the volumes' folder: %s", strerror (-rc));
        return NULL;
    }
    if (s_make (self, &p, size_mb, e, err, err_len) < 0)
        return NULL;
    char created[32];
    time_t now = time (NULL);
    struct tm tm;
    gmtime_r (&now, &tm);
    strftime (created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_t *meta = json_pack ("{s:s, s:I, s:s}", "name", name, "size_mb", (json_int_t) size_mb,
                              "created", created);
    rc = meta ? s_write_meta (&p, meta) : -ENOMEM;
    if (rc) {
        json_decref (meta);
        s_remove (&p);
        *e = GW_E_INTERNAL;
        snprintf (err, err_len, "cannot write the volume's settings: %s", strerror (-rc));
        return NULL;
    }
    jp_log_info ("volume event=created tenant=%s name=%s size_mb=%ld by=%s", tenant, name,
                 size_mb, gw_disk_enabled () ? "filesystem" : "folder");
    json_t *d = s_describe (self, tenant, name, &p, meta);
    json_decref (meta);
    *e = GW_E_OK;
    return d;
}

json_t *
gw_volumes_list (gw_volumes_t *self, const char *tenant)
{
    size_t n;
    long long total;
    char **names = s_names (self, tenant, &n, &total);
    json_t *list = json_array ();
    for (size_t i = 0; list && i < n; i++) {
        s_paths_t p;
        s_paths (self, tenant, names[i], &p);
        json_t *meta = s_meta (&p);
        if (meta)
            json_array_append_new (list, s_describe (self, tenant, names[i], &p, meta));
        json_decref (meta);
    }
    s_names_free (names, n);
    return list;
}

/* The settings of tenant's volume name (new), or NULL with *e and err. */
static json_t *
s_find (gw_volumes_t *self, const char *tenant, const char *name, s_paths_t *p, gw_error_t *e,
        char *err, size_t err_len)
{
    if (!gw_volumes_valid_name (name)) {
        *e = GW_E_BAD_REQUEST;
        snprintf (err, err_len, "invalid volume name '%.80s': use %s", name ? name : "",
                  gw_volumes_name_rule);
        return NULL;
    }
    s_paths (self, tenant, name, p);
    json_t *meta = s_meta (p);
    if (!meta) {
        *e = GW_E_NOT_FOUND;
        snprintf (err, err_len, "no volume '%s'; make it with POST /volumes {\"name\", "
                  "\"size_mb\"}", name);
    }
    return meta;
}

json_t *
gw_volumes_describe (gw_volumes_t *self, const char *tenant, const char *name, gw_error_t *e,
                     char *err, size_t err_len)
{
    s_paths_t p;
    json_t *meta = s_find (self, tenant, name, &p, e, err, err_len);
    json_t *d = meta ? s_describe (self, tenant, name, &p, meta) : NULL;
    json_decref (meta);
    return d;
}

int
gw_volumes_delete (gw_volumes_t *self, const char *tenant, const char *name, gw_error_t *e,
                   char *err, size_t err_len)
{
    s_paths_t p;
    json_t *meta = s_find (self, tenant, name, &p, e, err, err_len);
    if (!meta)
        return -1;
    json_decref (meta);
    json_t *holders = s_holders (self, tenant, name);
    if (json_array_size (holders)) {
        *e = GW_E_CONFLICT;
        snprintf (err, err_len, "volume '%s' is mounted by %zu live session(s) (first: '%s'); "
                  "end them first (DELETE /sessions/{id})", name, json_array_size (holders),
                  json_string_value (json_array_get (holders, 0)));
        json_decref (holders);
        return -1;
    }
    json_decref (holders);
    if (unlink (p.meta) < 0) {
        *e = GW_E_INTERNAL;
        snprintf (err, err_len, "cannot delete volume '%s': %s", name, strerror (errno));
        return -1;
    }
    s_remove (&p);
    jp_log_info ("volume event=deleted tenant=%s name=%s", tenant, name);
    return 0;
}

int
gw_volumes_folder (gw_volumes_t *self, const char *tenant, const char *name, char *path,
                   size_t path_len, long long *room, gw_error_t *e, char *err, size_t err_len)
{
    s_paths_t p;
    json_t *meta = s_find (self, tenant, name, &p, e, err, err_len);
    if (!meta)
        return -1;
    long size_mb = (long) json_integer_value (json_object_get (meta, "size_mb"));
    json_decref (meta);
    if (s_mount (&p, err, err_len) < 0) {
        *e = GW_E_INTERNAL;
        return -1;
    }
    long long used;
    s_usage (&p, size_mb, &used, room);
    snprintf (path, path_len, "%s", p.folder);
    return 0;
}

/* One entry of a session's "volumes": a name, or {"name", "read_only"?}.
 * Returns 0 or -1 with err set. */
static int
s_entry (json_t *item, const char **name, bool *read_only, char *err, size_t err_len)
{
    json_t *ro = json_is_object (item) ? json_object_get (item, "read_only") : NULL;
    *name = json_is_string (item) ? json_string_value (item)
                                  : json_string_value (json_object_get (item, "name"));
    *read_only = json_is_true (ro);
    if (!*name || (ro && !json_is_boolean (ro) && !json_is_null (ro))) {
        snprintf (err, err_len, "volumes must be a list of {\"name\": NAME, \"read_only\"?: "
                  "true|false}");
        return -1;
    }
    return 0;
}

int
gw_volumes_attach (gw_volumes_t *self, const char *tenant, json_t *list,
                   gw_exec_options_t *exec, gw_error_t *e, char *err, size_t err_len)
{
    *e = GW_E_OK;
    if (!list || json_is_null (list) || (json_is_array (list) && !json_array_size (list)))
        return 0;
    *e = GW_E_BAD_REQUEST;
    if (!json_is_array (list) || json_array_size (list) > GW_EXEC_MAX_VOLUMES) {
        snprintf (err, err_len, "volumes must be a list of at most %d {\"name\": NAME, "
                  "\"read_only\"?: true|false}", GW_EXEC_MAX_VOLUMES);
        return -1;
    }
    if (!gw_sandbox_bwrap (gw_server_sandbox (self->server))) {
        *e = GW_E_FORBIDDEN;
        snprintf (err, err_len, "volumes need the sandbox: kernels here run unconfined "
                  "(CODEBOX_SANDBOX=none or bubblewrap is missing), so no folder can be "
                  "given to them alone; run the server with CODEBOX_SANDBOX=bwrap");
        return -1;
    }
    size_t i;
    json_t *item;
    json_array_foreach (list, i, item) {
        const char *name;
        bool read_only;
        if (s_entry (item, &name, &read_only, err, err_len) < 0)
            return -1;
        for (int k = 0; k < exec->n_volumes; k++)
            if (strcmp (exec->volumes[k].name, name) == 0) {
                snprintf (err, err_len, "volume '%s' is named twice", name);
                return -1;
            }
        gw_volume_mount_t *v = &exec->volumes[exec->n_volumes];
        long long room;
        if (gw_volumes_folder (self, tenant, name, v->host, sizeof v->host, &room, e, err,
                               err_len) < 0)
            return -1;
        snprintf (v->name, sizeof v->name, "%s", name);
        v->read_write = !read_only;
        exec->n_volumes++;
    }
    *e = GW_E_OK;
    return 0;
}

void
gw_volumes_hold (gw_volumes_t *self, gw_session_t *session, const gw_exec_options_t *exec)
{
    for (int i = 0; exec && i < exec->n_volumes; i++) {
        if (self->n_holds == self->cap_holds) {
            size_t cap = self->cap_holds ? self->cap_holds * 2 : 16;
            s_hold_t *grown = realloc (self->holds, cap * sizeof *grown);
            if (!grown)
                return;
            self->holds = grown;
            self->cap_holds = cap;
        }
        s_hold_t *h = &self->holds[self->n_holds++];
        snprintf (h->tenant, sizeof h->tenant, "%s", gw_session_tenant (session));
        snprintf (h->session, sizeof h->session, "%s", gw_session_id (session));
        snprintf (h->name, sizeof h->name, "%s", exec->volumes[i].name);
    }
}

/* A session ends: its holds go. */
static void
s_session_end (void *arg, gw_session_t *session)
{
    gw_volumes_t *self = arg;
    const char *tenant = gw_session_tenant (session), *id = gw_session_id (session);
    size_t kept = 0;
    for (size_t i = 0; i < self->n_holds; i++)
        if (strcmp (self->holds[i].tenant, tenant) != 0 || strcmp (self->holds[i].session, id) != 0)
            self->holds[kept++] = self->holds[i];
    self->n_holds = kept;
}

static const gw_session_hooks_t s_hooks = {.session_end = s_session_end};

gw_volumes_t *
gw_volumes_new (gw_server_t *server)
{
    gw_volumes_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->server = server;
    if (gw_server_add_hooks (server, &s_hooks, self) < 0) {
        free (self);
        return NULL;
    }
    return self;
}

void
gw_volumes_destroy (gw_volumes_t **self_p)
{
    gw_volumes_t *self = *self_p;
    if (!self)
        return;
    gw_server_remove_hooks (self->server, &s_hooks, self);
    free (self->holds);
    free (self);
    *self_p = NULL;
}
