/* gw_session_record: a session's record of cells in the state folder
 * (see gw_session_record.h). Threads: the loop thread only. */
#include "gw_session_record.h"

#include "gw_job_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gw_fs.h"
#include "gw_path.h"
#include "jp_json.h"
#include "jp_log.h"

#define S_PENDING 4     /* Jupyter clients' cells followed at once */
#define S_CELLS "cells.jsonl"
#define S_INFO "session.json"

/* A Jupyter client's cell on its way: an execution fed the messages
 * whose parent is its request (nothing is sent: it has no kernel). */
typedef struct {
    gw_execution_t *exec;
    char *code;
    char msg_id[64];
} s_pending_t;

struct gw_session_record {
    char folder[4400];
    char id[GW_ID_SIZE];
    int fd;                     /* cells.jsonl (O_APPEND), or -1: nothing kept */
    size_t size;                /* its bytes */
    json_t *info;               /* session.json's content */
    int run, cells;
    size_t max_output_bytes;
    s_pending_t pending[S_PENDING];
    int n_pending;
};

int
gw_session_record_folder (char *buf, size_t len, const char *state_dir, const char *tenant,
                          const char *id)
{
    /* a tenant's name becomes a folder's: one name, not a hidden one */
    if (!gw_path_valid_session_id (id) || !tenant || !tenant[0] || tenant[0] == '.'
        || strchr (tenant, '/'))
        return -EINVAL;
    int n = strcmp (tenant, "default") == 0
                ? snprintf (buf, len, "%s/" GW_RECORD_DIR "/%s", state_dir, id)
                : snprintf (buf, len, "%s/" GW_RECORD_DIR "/@%s/%s", state_dir, tenant, id);
    return n < 0 || (size_t) n >= len ? -ENAMETOOLONG : 0;
}

/* Writes len bytes of data to the file name of the record's folder
 * whole: a temporary file renamed into place. Returns 0 or -errno. */
static int
s_write_whole (const char *folder, const char *name, const char *data, size_t len)
{
    char path[4600], tmp[4700];
    snprintf (path, sizeof path, "%s/%s", folder, name);
    snprintf (tmp, sizeof tmp, "%s.tmp", path);
    int fd = open (tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -errno;
    int rc = gw_fs_write_all (fd, data, len);
    if (close (fd) < 0 && !rc)
        rc = -errno;
    if (!rc && rename (tmp, path) < 0)
        rc = -errno;
    if (rc)
        unlink (tmp);
    return rc;
}

/* Makes the folder (emptied), session.json and cells.jsonl. 0 or -errno. */
static int
s_make_files (gw_session_record_t *self)
{
    gw_fs_remove_tree (self->folder);   /* what an earlier session of this id left */
    int rc = gw_fs_mkdirs (self->folder, 0700);
    size_t len = 0;
    char *text = rc ? NULL : jp_json_dump (self->info, &len);
    if (!rc && !text)
        rc = -ENOMEM;
    if (!rc)
        rc = s_write_whole (self->folder, S_INFO, text, len);
    free (text);
    if (rc)
        return rc;
    char path[4600];
    snprintf (path, sizeof path, "%s/" S_CELLS, self->folder);
    self->fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
                     0600);
    return self->fd < 0 ? -errno : 0;
}

gw_session_record_t *
gw_session_record_new (const char *state_dir, const char *tenant, const char *id, json_t *info,
                       size_t max_output_bytes)
{
    gw_session_record_t *self = calloc (1, sizeof *self);
    if (!self || !info) {
        free (self);
        json_decref (info);
        return NULL;
    }
    self->fd = -1;
    self->info = info;
    self->run = 1;
    self->max_output_bytes = max_output_bytes;
    snprintf (self->id, sizeof self->id, "%s", id);
    int rc = gw_session_record_folder (self->folder, sizeof self->folder, state_dir, tenant,
                                       id);
    if (!rc)
        rc = s_make_files (self);
    if (rc)
        jp_log_warn ("record event=not-kept session=%s error=\"%s\"", id, strerror (-rc));
    if (rc == -EINVAL || rc == -ENAMETOOLONG)
        self->folder[0] = '\0';    /* no folder of ours to remove */
    return self;
}

/* The last whole line of the open cells.jsonl (size bytes) as JSON, or
 * NULL: read from the end, in chunks that grow until one holds it. */
static json_t *
s_last_cell (int fd, size_t size)
{
    json_t *last = NULL;
    for (size_t chunk = 64u << 10; !last; chunk *= 4) {
        size_t n = chunk < size ? chunk : size;
        char *buf = malloc (n + 1);
        if (!buf || pread (fd, buf, n, (off_t) (size - n)) != (ssize_t) n) {
            free (buf);
            return NULL;
        }
        buf[n] = '\0';
        size_t end = n;
        while (end > 0 && buf[end - 1] == '\n')
            end--;
        buf[end] = '\0';
        char *nl = strrchr (buf, '\n');
        if (nl || n == size)
            last = json_loads (nl ? nl + 1 : buf, 0, NULL);
        free (buf);
        if (nl || n == size)
            break;
    }
    return last;
}

gw_session_record_t *
gw_session_record_open (const char *state_dir, const char *tenant, const char *id,
                        size_t max_output_bytes)
{
    gw_session_record_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->fd = -1;
    self->run = 1;
    self->max_output_bytes = max_output_bytes;
    snprintf (self->id, sizeof self->id, "%s", id);
    char path[4600];
    if (gw_session_record_folder (self->folder, sizeof self->folder, state_dir, tenant, id)
        || (snprintf (path, sizeof path, "%s/" S_INFO, self->folder),
            !(self->info = json_load_file (path, 0, NULL)))) {
        gw_session_record_destroy (&self, false);
        return NULL;
    }
    snprintf (path, sizeof path, "%s/" S_CELLS, self->folder);
    self->fd = open (path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    struct stat st;
    int rfd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (rfd >= 0 && fstat (rfd, &st) == 0 && st.st_size > 0) {
        self->size = (size_t) st.st_size;
        json_t *last = s_last_cell (rfd, self->size);
        self->cells = (int) json_integer_value (json_object_get (last, "cell"));
        json_int_t run = json_integer_value (json_object_get (last, "run"));
        self->run = run > 0 ? (int) run : 1;
        json_decref (last);
    }
    if (rfd >= 0)
        close (rfd);
    return self;
}

/* Ends the clients' cells still running as status, kept. */
static void s_end_pending (gw_session_record_t *self, const char *status, const char *ename,
                           const char *why);
/* Drops the pending cell at i (its execution and code freed). */
static void s_drop_pending (gw_session_record_t *self, int i);

void
gw_session_record_destroy (gw_session_record_t **self_p, bool remove)
{
    if (!self_p || !*self_p)
        return;
    gw_session_record_t *self = *self_p;
    while (self->n_pending > 0)
        s_drop_pending (self, 0);
    if (self->fd >= 0)
        close (self->fd);
    if (remove && self->folder[0])
        gw_fs_remove_tree (self->folder);
    json_decref (self->info);
    free (self);
    *self_p = NULL;
}

/* RFC 3339 UTC with milliseconds. */
static void
s_iso (int64_t ms, char out[32])
{
    time_t t = (time_t) (ms / 1000);
    struct tm tm;
    gmtime_r (&t, &tm);
    size_t n = strftime (out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf (out + n, 32 - n, ".%03dZ", (int) (ms % 1000));
}

/* A data bundle as nbformat takes it (new; values shared): a JSON type's
 * value as it is, any other's only when text (a string or a list of
 * strings). */
static json_t *
s_bundle (json_t *data)
{
    json_t *out = json_object ();
    const char *mime;
    json_t *value;
    json_object_foreach (data, mime, value) {
        size_t n = strlen (mime);
        bool json_type = strncmp (mime, "application/", 12) == 0 && n >= 4
                         && strcmp (mime + n - 4, "json") == 0;
        bool text = json_is_string (value);
        if (json_is_array (value)) {
            size_t i;
            json_t *line;
            text = true;
            json_array_foreach (value, i, line)
                text = text && json_is_string (line);
        }
        if (json_type || text)
            json_object_set (out, mime, value);
    }
    return out;
}

/* One output item of an execution as an nbformat output (new; its big
 * values shared, not copied), or NULL for none. */
static json_t *
s_nb_output (json_t *item, int count)
{
    const char *type = json_string_value (json_object_get (item, "type"));
    json_t *metadata = json_object_get (item, "metadata");
    metadata = json_is_object (metadata) ? json_incref (metadata) : json_object ();
    json_t *out = NULL;
    if (!type)
        ;
    else if (strcmp (type, "stream") == 0)
        out = json_pack ("{s:s, s:O, s:O}", "output_type", "stream", "name",
                         json_object_get (item, "name"), "text", json_object_get (item, "content"));
    else if (strcmp (type, "result") == 0)
        out = json_pack ("{s:s, s:o, s:o, s:O}", "output_type", "execute_result",
                         "execution_count", count > 0 ? json_integer (count) : json_null (),
                         "data", s_bundle (json_object_get (item, "data")), "metadata",
                         metadata);
    else if (strcmp (type, "display") == 0)
        out = json_pack ("{s:s, s:o, s:O}", "output_type", "display_data", "data",
                         s_bundle (json_object_get (item, "data")), "metadata", metadata);
    else if (strcmp (type, "error") == 0)
        out = json_pack ("{s:s, s:O, s:O, s:O}", "output_type", "error", "ename",
                         json_object_get (item, "ename"), "evalue",
                         json_object_get (item, "evalue"), "traceback",
                         json_object_get (item, "traceback"));
    json_decref (metadata);
    return out;
}

/* Appends a line (text, len bytes and room for one more) with one write;
 * a write cut short is taken back, so no half line stays. */
static void
s_append (gw_session_record_t *self, char *text, size_t len)
{
    text[len++] = '\n';
    ssize_t n = write (self->fd, text, len);
    if (n == (ssize_t) len) {
        self->size += len;
        return;
    }
    int e = n < 0 ? errno : ENOSPC;
    if (n > 0 && ftruncate (self->fd, (off_t) self->size) < 0)
        e = errno;
    jp_log_warn ("record event=write-failed session=%s error=\"%s\"", self->id, strerror (e));
}

/* The text of cell, with its outputs or without them (and its code) when
 * the record's bounds say so. NULL on OOM. */
static char *
s_fit_line (gw_session_record_t *self, json_t *cell, size_t *len)
{
    char *text = jp_json_dump (cell, len);
    if (text && self->size + *len + 1 > GW_RECORD_MAX_BYTES
        && json_array_size (json_object_get (cell, "outputs"))) {
        char why[160];
        snprintf (why, sizeof why, "the session's record passed its %zu MiB bound",
                  GW_RECORD_MAX_BYTES >> 20);
        json_object_set_new (cell, "outputs", json_array ());
        json_object_set_new (cell, "outputs_left_out", json_string (why));
        free (text);
        text = jp_json_dump (cell, len);
    }
    if (text && self->size + *len + 1 > GW_RECORD_MAX_BYTES + GW_RECORD_CODE_BYTES) {
        json_object_set_new (cell, "code", json_string (""));
        json_object_set_new (cell, "code_left_out", json_true ());
        free (text);
        text = jp_json_dump (cell, len);
    }
    return text;
}

/* Keeps one cell that ran as exec with code. */
static void
s_keep (gw_session_record_t *self, const char *code, gw_execution_t *exec, const char *status,
        bool replay, bool restarted, bool jupyter)
{
    if (self->fd < 0 || !exec)
        return;
    struct timespec now;
    clock_gettime (CLOCK_REALTIME, &now);   /* a date, where jp_time's clock is not one */
    int64_t ended = (int64_t) now.tv_sec * 1000 + now.tv_nsec / 1000000;
    char started_at[32], ended_at[32];
    s_iso (ended - gw_execution_duration_ms (exec), started_at);
    s_iso (ended, ended_at);
    int count = gw_execution_count (exec);
    json_t *outputs = json_array ();
    size_t i;
    json_t *item;
    json_array_foreach (gw_execution_outputs (exec), i, item)
        json_array_append_new (outputs, s_nb_output (item, count));
    json_t *cell = json_pack ("{s:i, s:i, s:o, s:s, s:s, s:s, s:s, s:o}", "cell",
                              self->cells + 1, "run", self->run, "execution_count",
                              count > 0 ? json_integer (count) : json_null (), "status", status,
                              "started", started_at, "ended", ended_at, "code", code ? code : "",
                              "outputs", outputs);
    if (cell && replay)
        json_object_set_new (cell, "replay", json_true ());
    if (cell && restarted)
        json_object_set_new (cell, "kernel_restarted", json_true ());
    if (cell && jupyter)
        json_object_set_new (cell, "via", json_string ("jupyter"));
    size_t len = 0;
    char *text = cell ? s_fit_line (self, cell, &len) : NULL;
    json_decref (cell);
    if (!text) {
        jp_log_warn ("record event=cell-lost session=%s why=out-of-memory", self->id);
        return;
    }
    self->cells++;
    s_append (self, text, len);     /* jp_json_dump's NUL makes room for the '\n' */
    free (text);
}

/* The record's word for how a job ended. */
static const char *
s_job_status (gw_exec_status_t status, const char *reason)
{
    if (status == GW_EXEC_COMPLETED)
        return "ok";
    if (reason && strcmp (reason, "kernel_died") == 0)
        return "kernel_died";
    if (status == GW_EXEC_TIMEOUT || (reason && strcmp (reason, "cpu_time") == 0))
        return "timeout";
    if (status == GW_EXEC_CANCELLED || (reason && strcmp (reason, "cancelled") == 0))
        return "cancelled";
    return "error";
}

void
gw_session_record_job (gw_session_record_t *self, gw_job_t *job, gw_exec_status_t status)
{
    if (self && job->recorded && job->exec)
        s_keep (self, job->code, job->exec, s_job_status (status, job->reason), job->replay,
                job->kernel_restarted, false);
}

static void
s_drop_pending (gw_session_record_t *self, int i)
{
    gw_execution_destroy (&self->pending[i].exec);
    free (self->pending[i].code);
    memmove (&self->pending[i], &self->pending[i + 1],
             (size_t) (self->n_pending - i - 1) * sizeof self->pending[0]);
    self->n_pending--;
}

/* Keeps the pending cell at i as it ended, and drops it. */
static void
s_keep_pending (gw_session_record_t *self, int i, const char *status)
{
    gw_execution_t *exec = self->pending[i].exec;
    if (!status)
        status = gw_execution_status (exec) == GW_EXEC_COMPLETED ? "ok" : "error";
    s_keep (self, self->pending[i].code, exec, status, false, strcmp (status, "ok") != 0
            && strcmp (status, "error") != 0, true);
    s_drop_pending (self, i);
}

/* A Jupyter client's execute_input: the start of its cell. */
static void
s_start_pending (gw_session_record_t *self, const char *parent, json_t *content)
{
    const char *code = json_string_value (json_object_get (content, "code"));
    for (int i = 0; i < self->n_pending; i++)
        if (strcmp (self->pending[i].msg_id, parent) == 0)
            return;
    if (!code || strlen (parent) >= sizeof self->pending[0].msg_id)
        return;
    if (self->n_pending == S_PENDING)   /* its end never came: kept as it is */
        s_end_pending (self, "error", "NoReply", "the kernel never said this cell ended");
    gw_execution_t *exec = gw_execution_new ("", self->max_output_bytes);
    char *copy = strdup (code);
    if (!exec || !copy) {
        gw_execution_destroy (&exec);
        free (copy);
        return;
    }
    gw_execution_running (exec, parent, NULL);
    s_pending_t *p = &self->pending[self->n_pending++];
    p->exec = exec;
    p->code = copy;
    snprintf (p->msg_id, sizeof p->msg_id, "%s", parent);
}

void
gw_session_record_client_msg (gw_session_record_t *self, jp_channel_t channel,
                              const jp_msg_t *msg)
{
    if (!self || self->fd < 0 || channel != JP_CHANNEL_SHELL
        || strcmp (jp_msg_type (msg), "execute_request") != 0)
        return;
    json_t *silent = json_object_get (msg->content, "silent");
    json_t *history = json_object_get (msg->content, "store_history");
    if (json_is_true (silent) || json_is_false (history))
        return;
    s_start_pending (self, jp_msg_id (msg), msg->content);
}

void
gw_session_record_kernel_msg (gw_session_record_t *self, jp_channel_t channel,
                              const jp_msg_t *msg)
{
    if (!self || self->fd < 0 || channel == JP_CHANNEL_STDIN)
        return;
    const char *parent = jp_msg_parent_id (msg);
    if (!parent || !parent[0])
        return;
    if (channel == JP_CHANNEL_IOPUB && strcmp (jp_msg_type (msg), "execute_input") == 0) {
        s_start_pending (self, parent, msg->content);
        return;
    }
    for (int i = 0; i < self->n_pending; i++)
        if (strcmp (self->pending[i].msg_id, parent) == 0) {
            gw_execution_feed (self->pending[i].exec, channel, msg);
            if (gw_execution_finished (self->pending[i].exec))
                s_keep_pending (self, i, NULL);
            return;
        }
}

static void
s_end_pending (gw_session_record_t *self, const char *status, const char *ename,
               const char *why)
{
    while (self->n_pending > 0) {
        gw_execution_abort (self->pending[0].exec, GW_EXEC_ERROR, ename, why);
        s_keep_pending (self, 0, status);
    }
}

void
gw_session_record_kernel_died (gw_session_record_t *self)
{
    if (self)
        s_end_pending (self, "kernel_died", "KernelDied", "the kernel died during this cell");
}

void
gw_session_record_restart (gw_session_record_t *self)
{
    if (!self)
        return;
    s_end_pending (self, "cancelled", "KernelRestarted",
                   "the kernel was restarted during this cell");
    self->run++;
}

json_t *
gw_session_record_info (const gw_session_record_t *self)
{
    return self ? self->info : NULL;
}

int
gw_session_record_run (const gw_session_record_t *self)
{
    return self ? self->run : 0;
}

int
gw_session_record_read (const gw_session_record_t *self, char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    char path[4600];
    int fd = -1;
    if (self && self->fd >= 0) {
        snprintf (path, sizeof path, "%s/" S_CELLS, self->folder);
        fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
            return -errno;
    }
    int rc = fd < 0 ? 0 : gw_fs_read_fd (fd, GW_RECORD_MAX_BYTES + GW_RECORD_CODE_BYTES
                                              + (64u << 20), text, len);
    if (fd >= 0)
        close (fd);
    if (rc)
        return rc;
    if (!*text && !(*text = strdup ("")))
        return -ENOMEM;
    while (*len > 0 && (*text)[*len - 1] != '\n')   /* a line cut short is no line */
        (*len)--;
    (*text)[*len] = '\0';
    return 0;
}

char *
gw_session_record_replay_code (const char *text, size_t len, int *cells, int *skipped)
{
    *cells = *skipped = 0;
    size_t cap = 256, used = 0;
    char *code = malloc (cap);
    for (const char *p = text, *end = text + len; code && p < end;) {
        const char *nl = memchr (p, '\n', (size_t) (end - p));
        size_t n = nl ? (size_t) (nl - p) : (size_t) (end - p);
        json_t *cell = json_loadb (p, n, 0, NULL);
        p += n + 1;
        if (!cell)
            continue;
        const char *status = json_string_value (json_object_get (cell, "status"));
        json_t *source = json_object_get (cell, "code");
        if (json_is_true (json_object_get (cell, "replay")))
            ;   /* a replay's cells are the ones it replayed */
        else if (!status || strcmp (status, "ok") != 0 || !json_is_string (source)
                 || json_is_true (json_object_get (cell, "code_left_out")))
            (*skipped)++;
        else {
            size_t k = json_string_length (source);
            if (used + k + 2 > cap) {
                cap = (used + k + 2) * 2;
                char *grown = realloc (code, cap);
                if (!grown)
                    free (code);
                code = grown;
            }
            if (code) {
                memcpy (code + used, json_string_value (source), k);
                used += k;
                code[used++] = '\n';
                (*cells)++;
            }
        }
        json_decref (cell);
    }
    if (code)
        code[used] = '\0';
    return code;
}
