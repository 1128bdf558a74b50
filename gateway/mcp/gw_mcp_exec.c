/* gw_mcp_exec: turns a finished execution into an MCP CallToolResult, as
 * the model that reads it needs it. content: one text item with every
 * output in the order the kernel sent it (streams; each result and
 * display as text: its text/plain, else Markdown or LaTeX as written, else
 * HTML as text, tables as rows (jp_bundle_text); tracebacks without ANSI
 * colours; the new artifacts; why a run stopped), then one image item per
 * PNG or JPEG shown (those over CODEBOX_MAX_IMAGE_BYTES downscaled, the
 * full file saved under output/ and linked with a resource_link), SVG as
 * an embedded resource. Text past CODEBOX_MODEL_TEXT_BYTES keeps its head
 * and tail around a marker; the whole text is saved in the session under
 * .codebox/outputs/ (hidden: not an artifact) and linked, so read_file
 * and resources/read open it. isError is true whenever the code did not
 * complete (an exception, a timeout, a cancel, a dead kernel).
 * structuredContent: {status, execution_count, stdout, stderr, result,
 * error, displays, new_artifacts, duration_ms, session_id}.
 *
 * Threads: the loop thread only. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw_ansi.h"
#include "gw_base64.h"
#include "gw_fs.h"
#include "gw_image.h"
#include "jp_bundle_text.h"
#include "gw_mcp_exec.h"
#include "gw_path.h"
#include "gw_session.h"

/* A growing text. */
typedef struct {
    char *data;
    size_t len, cap;
} s_text_t;

static void
s_add (s_text_t *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        size_t cap = (t->len + n + 1) * 2;
        char *grown = realloc (t->data, cap);
        if (!grown)
            return;
        t->data = grown;
        t->cap = cap;
    }
    memcpy (t->data + t->len, s, n);
    t->len += n;
    t->data[t->len] = '\0';
}

static void
s_adds (s_text_t *t, const char *s)
{
    if (s)
        s_add (t, s, strlen (s));
}

/* Appends s without ANSI escape sequences. */
static void
s_add_plain (s_text_t *t, const char *s)
{
    char *copy = s ? strdup (s) : NULL;
    if (copy)
        s_add (t, copy, gw_ansi_strip (copy));
    free (copy);
}

static json_t *
s_text_json (s_text_t *t)
{
    return json_stringn (t->data ? t->data : "", t->len);
}

/* Ends text with a newline unless empty or already ended. */
static void
s_newline (s_text_t *t)
{
    if (t->len && t->data[t->len - 1] != '\n')
        s_add (t, "\n", 1);
}

/* Saves an image too large to send inline under output/ and returns a
 * resource_link to it (new), or NULL. The bytes are decoded into *bytes_p
 * (caller frees) for downscaling. */
static json_t *
s_link_large_image (gw_session_t *session, const char *b64, const char *mime, int count,
                    int n, uint8_t **bytes_p, size_t *len_p)
{
    *bytes_p = NULL;
    if (gw_base64_decode (b64, strlen (b64), bytes_p, len_p))
        return NULL;
    if (!session)
        return NULL;
    char rel[128];
    snprintf (rel, sizeof rel, "output/image-%d-%d.%s", count, n,
              strcmp (mime, "image/png") == 0 ? "png" : "jpg");
    int dirfd = open (gw_session_workdir (session), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int fd = dirfd < 0 ? -1
                       : gw_path_open_beneath (dirfd, rel, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                                               0644);
    bool ok = fd >= 0 && gw_fs_write_all (fd, *bytes_p, *len_p) == 0;
    if (fd >= 0)
        close (fd);
    if (dirfd >= 0)
        close (dirfd);
    if (!ok)
        return NULL;
    char uri[1200];
    snprintf (uri, sizeof uri, "artifact://%s/%s", gw_session_id (session), rel);
    return json_pack ("{s:s, s:s, s:s, s:s, s:s, s:I}", "type", "resource_link", "uri", uri,
                      "name", strrchr (rel, '/') + 1, "mimeType", mime, "description",
                      "the full-size image", "size", (json_int_t) *len_p);
}

/* An image item for an image over the inline limit: downscaled to fit,
 * plus a link to the full file. */
static void
s_add_large_image (json_t *content, gw_session_t *session, const char *b64, const char *mime,
                   size_t max_image, int count, int n, s_text_t *text)
{
    uint8_t *bytes;
    size_t len;
    json_t *link = s_link_large_image (session, b64, mime, count, n, &bytes, &len);
    void *small = NULL;
    size_t small_len = 0;
    int w = 0, h = 0;
    int rc = bytes ? gw_image_fit (bytes, len, mime, max_image, &small, &small_len, &w, &h) : -1;
    free (bytes);
    char note[300];
    if (rc == 0) {
        char *small_b64 = gw_base64_encode (small, small_len);
        gw_image_free (small);
        if (small_b64)
            json_array_append_new (content, json_pack ("{s:s, s:s, s:s}", "type", "image",
                                                       "data", small_b64, "mimeType", mime));
        free (small_b64);
        snprintf (note, sizeof note, "[%s of %zu bytes sent downscaled to %dx%d%s]\n", mime,
                  len, w, h, link ? "; the full image is linked" : "");
    } else
        snprintf (note, sizeof note, "[%s of %zu bytes is over the %zu-byte inline limit%s]\n",
                  mime, len, max_image, link ? "; see the linked file" : "");
    s_adds (text, note);
    if (link)
        json_array_append_new (content, link);
}

/* What one result or display adds: its images to content, its text (or a
 * note of what it was, when it has no text form) to the text, and its
 * entry to displays. max_text bounds HTML and JSON turned into text. */
typedef struct {
    json_t *content, *displays;
    gw_session_t *session;
    size_t max_image, max_text;
    int count, image_no;
    s_text_t *text;
} s_render_t;

/* The MIME types of a bundle, as a note "a, b" (at most a few). */
static void
s_mime_list (json_t *data, char *out, size_t len)
{
    const char *mime;
    json_t *value;
    size_t used = 0;
    int n = 0;
    out[0] = '\0';
    json_object_foreach (data, mime, value) {
        if (n++ == 4) {
            snprintf (out + used, len - used, ", ...");
            return;
        }
        int w = snprintf (out + used, len - used, "%s%.80s", used ? ", " : "", mime);
        if (w < 0 || (size_t) w >= len - used)
            return;
        used += (size_t) w;
    }
}

static void
s_add_display (s_render_t *r, json_t *data)
{
    const char *primary = NULL;
    static const char *const images[] = {"image/png", "image/jpeg"};
    for (int i = 0; i < 2; i++) {
        const char *b64 = json_string_value (json_object_get (data, images[i]));
        if (!b64)
            continue;
        primary = primary ? primary : images[i];
        size_t b64_len = strlen (b64);
        size_t pad = b64_len >= 2 && b64[b64_len - 1] == '=' ? (b64[b64_len - 2] == '=' ? 2 : 1)
                                                            : 0;
        size_t bytes = b64_len / 4 * 3 - pad;   /* the kernel's base64 has no line breaks now */
        json_array_append_new (r->displays, json_pack ("{s:s, s:I}", "mime", images[i], "bytes",
                                                       (json_int_t) bytes));
        if (bytes <= r->max_image)
            json_array_append_new (r->content, json_pack ("{s:s, s:s, s:s}", "type", "image",
                                                          "data", b64, "mimeType", images[i]));
        else
            s_add_large_image (r->content, r->session, b64, images[i], r->max_image, r->count,
                               ++r->image_no, r->text);
    }
    size_t len = 0;
    const char *mime = NULL;
    char *text = jp_bundle_text (data, r->max_text, &len, &mime);
    /* "<IPython.core.display.Image object>" beside its image says nothing */
    if (text && primary && jp_bundle_placeholder (text, len)) {
        free (text);
        text = NULL;
    }
    if (text) {
        s_newline (r->text);
        s_add (r->text, text, len);
        s_newline (r->text);
    }
    const char *svg = json_string_value (json_object_get (data, "image/svg+xml"));
    if (svg && !primary) {
        primary = "image/svg+xml";
        json_array_append_new (r->content, json_pack ("{s:s, s:{s:s, s:s, s:s}}", "type",
                                                      "resource", "resource", "uri",
                                                      "codebox://display", "mimeType",
                                                      "image/svg+xml", "text", svg));
        if (!text) {
            char note[120];
            snprintf (note, sizeof note, "[an SVG image of %zu bytes, attached as a resource]\n",
                      strlen (svg));
            s_newline (r->text);
            s_adds (r->text, note);
        }
    }
    if (!text && !primary) {
        /* never nothing: say what it was (a chart or widget with no text form) */
        char mimes[400], note[480];
        s_mime_list (data, mimes, sizeof mimes);
        snprintf (note, sizeof note, "[a display with no text form: %s]\n",
                  *mimes ? mimes : "no data");
        s_newline (r->text);
        s_adds (r->text, note);
    }
    if (!primary || strcmp (primary, "image/svg+xml") == 0) {
        /* an image's entry is its own (above) */
        json_t *entry = json_pack ("{s:s}", "mime", primary ? primary : mime ? mime : "");
        if (text && mime && strcmp (mime, "text/plain") == 0)
            json_object_set_new (entry, "text", json_stringn (text, len));
        json_array_append_new (r->displays, entry);
    }
    free (text);
}

/* How many whole outputs a session keeps in .codebox/outputs/. */
#define S_OUTPUTS_KEPT 16
#define S_OUTPUTS_DIR ".codebox/outputs"

/* One saved output, for pruning. */
typedef struct {
    char name[64];
    struct timespec mtime;
} s_saved_t;

static int
s_saved_newest_first (const void *a, const void *b)
{
    const struct timespec *x = &((const s_saved_t *) a)->mtime;
    const struct timespec *y = &((const s_saved_t *) b)->mtime;
    if (x->tv_sec != y->tv_sec)
        return x->tv_sec > y->tv_sec ? -1 : 1;
    return x->tv_nsec > y->tv_nsec ? -1 : x->tv_nsec < y->tv_nsec ? 1 : 0;
}

/* Removes the oldest saved outputs beyond S_OUTPUTS_KEPT (session_fd: the
 * session folder). Looks at S_OUTPUTS_SCAN entries at most. */
#define S_OUTPUTS_SCAN 256
static void
s_prune_outputs (int session_fd)
{
    int fd = gw_path_open_beneath (session_fd, S_OUTPUTS_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                                   0);
    DIR *dir = fd < 0 ? NULL : fdopendir (fd);
    s_saved_t *saved = dir ? calloc (S_OUTPUTS_SCAN, sizeof *saved) : NULL;
    if (!saved) {
        if (dir)
            closedir (dir);
        else if (fd >= 0)
            close (fd);
        return;
    }
    size_t n = 0;
    struct dirent *e;
    while (n < S_OUTPUTS_SCAN && (e = readdir (dir))) {
        struct stat st;
        if (e->d_name[0] == '.' || strlen (e->d_name) >= sizeof saved[0].name
            || fstatat (dirfd (dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0
            || !S_ISREG (st.st_mode))
            continue;
        snprintf (saved[n].name, sizeof saved[n].name, "%s", e->d_name);
        saved[n++].mtime = st.st_mtim;
    }
    qsort (saved, n, sizeof *saved, s_saved_newest_first);
    for (size_t i = S_OUTPUTS_KEPT; i < n; i++)
        unlinkat (dirfd (dir), saved[i].name, 0);
    free (saved);
    closedir (dir);
}

/* Saves the whole text of an execution in the session as
 * .codebox/outputs/<request>.txt; returns 0 and the path relative to the
 * session folder in rel, or a negative errno. */
static int
s_save_output (gw_session_t *session, const char *request_id, const char *text, size_t len,
               char *rel, size_t rel_len)
{
    const char *tilde = strrchr (request_id, '~');
    snprintf (rel, rel_len, S_OUTPUTS_DIR "/%s.txt", tilde ? tilde + 1 : request_id);
    int dirfd = open (gw_session_workdir (session), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0)
        return -errno;
    int fd = gw_path_open_beneath (dirfd, rel, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = fd < 0 ? fd : gw_fs_write_all (fd, text, len);
    if (fd >= 0)
        close (fd);
    if (rc == 0)
        s_prune_outputs (dirfd);
    close (dirfd);
    return rc;
}

/* Where in text[0..len) a cut near at falls: just after a line break
 * within reach bytes of at (before it for a head, after it for a tail),
 * else at a character boundary. */
static size_t
s_cut_point (const char *text, size_t len, size_t at, size_t reach, bool tail)
{
    if (!tail) {
        for (size_t i = at; i > 0 && at - i < reach; i--)
            if (text[i - 1] == '\n')
                return i;
    } else {
        for (size_t i = at; i < len && i - at < reach; i++)
            if (text[i] == '\n')
                return i + 1;
    }
    while (at > 0 && at < len && ((unsigned char) text[at] & 0xC0) == 0x80)
        at--;
    return at;
}

json_t *
gw_mcp_text_piece (const char *data, size_t len, json_t *args, size_t limit, const char *path,
                   json_t *structured)
{
    json_t *offset_j = json_object_get (args, "offset"), *length_j = json_object_get (args, "length");
    if ((offset_j && (!json_is_integer (offset_j) || json_integer_value (offset_j) < 0))
        || (length_j && (!json_is_integer (length_j) || json_integer_value (length_j) < 1)))
        return NULL;
    size_t start = offset_j ? (size_t) json_integer_value (offset_j) : 0;
    size_t want = length_j ? (size_t) json_integer_value (length_j) : limit;
    if (start > len)
        start = len;
    while (start < len && ((unsigned char) data[start] & 0xC0) == 0x80)
        start++;    /* an offset inside a character starts at the next one */
    if (want > limit)
        want = limit;
    size_t end = len - start > want ? start + want : len;
    if (end < len) {
        size_t cut = s_cut_point (data + start, end - start, end - start, want / 16, false);
        end = start + (cut ? cut : end - start);
        while (end > start && end < len && ((unsigned char) data[end] & 0xC0) == 0x80)
            end--;
    }
    json_object_set_new (structured, "offset", json_integer ((json_int_t) start));
    json_object_set_new (structured, "length", json_integer ((json_int_t) (end - start)));
    if (start == 0 && end == len)
        return json_pack ("{s:s, s:s%}", "type", "text", "text", data, len);
    char marker[1400];
    int n = end < len
                ? snprintf (marker, sizeof marker, "\n[... bytes %zu-%zu of %zu shown; read on "
                            "with read_file path=%s offset=%zu]\n", start, end, len, path, end)
                : snprintf (marker, sizeof marker, "\n[bytes %zu-%zu of %zu: the end of the "
                            "file]\n", start, end, len);
    if (end < len)
        json_object_set_new (structured, "next_offset", json_integer ((json_int_t) end));
    char *text = malloc (end - start + (size_t) n + 1);
    if (!text)
        return json_pack ("{s:s, s:s}", "type", "text", "text", "out of memory");
    memcpy (text, data + start, end - start);
    memcpy (text + (end - start), marker, (size_t) n + 1);
    json_t *item = json_pack ("{s:s, s:s}", "type", "text", "text", text);
    free (text);
    return item;
}

/* Cuts t to at most max bytes: its head, a marker that says how much was
 * left out and where the whole text is (saved in the session, and linked
 * in content), and its tail. */
static void
s_fit_model (s_text_t *t, size_t max, gw_session_t *session, const char *request_id,
             json_t *content)
{
    if (t->len <= max)
        return;
    char rel[200] = "", marker[900];
    bool saved = session && !gw_session_ephemeral (session)
                 && s_save_output (session, request_id, t->data, t->len, rel, sizeof rel) == 0;
    char where[600];
    if (saved)
        snprintf (where, sizeof where, "the whole output is saved as %s/%s (read_file with that "
                  "path, or the linked resource)", gw_session_visible_workdir (session), rel);
    else
        snprintf (where, sizeof where, "%s", session && gw_session_ephemeral (session)
                  ? "a one-shot run keeps no files: use exec_code with a session_id to keep "
                    "the whole output"
                  : "the whole output could not be saved");
    /* the marker's numbers are final only once the cut is known: measure
       with the largest, then cut */
    int marker_len = snprintf (marker, sizeof marker, "\n[... %zu of %zu bytes left out here; "
                               "%s ...]\n", t->len, t->len, where);
    size_t room = max > (size_t) marker_len + 64 ? max - (size_t) marker_len : 64;
    size_t head = s_cut_point (t->data, t->len, room * 2 / 3, room / 16, false);
    size_t tail = s_cut_point (t->data, t->len, t->len - (room - head), room / 16, true);
    if (tail < head)
        tail = head;
    marker_len = snprintf (marker, sizeof marker, "\n[... %zu of %zu bytes left out here; %s "
                           "...]\n", tail - head, t->len, where);
    memmove (t->data + head + marker_len, t->data + tail, t->len - tail);
    memcpy (t->data + head, marker, (size_t) marker_len);
    t->len = head + (size_t) marker_len + (t->len - tail);
    t->data[t->len] = '\0';
    if (saved) {
        char uri[1200];
        snprintf (uri, sizeof uri, "artifact://%s/%s", gw_session_id (session), rel);
        json_array_append_new (content, json_pack ("{s:s, s:s, s:s, s:s, s:s}", "type",
                                                   "resource_link", "uri", uri, "name",
                                                   strrchr (rel, '/') + 1, "mimeType",
                                                   "text/plain", "description",
                                                   "the whole output of this run"));
    }
}

/* Appends the new artifacts to the text, one a line. */
static void
s_add_artifacts (s_text_t *all, json_t *artifacts)
{
    size_t i;
    json_t *item;
    if (!json_array_size (artifacts))
        return;
    s_newline (all);
    s_adds (all, "New artifacts:\n");
    json_array_foreach (artifacts, i, item) {
        char line[1400];
        snprintf (line, sizeof line, "  %s (%lld bytes, %s)",
                  json_string_value (json_object_get (item, "path")),
                  (long long) json_integer_value (json_object_get (item, "size")),
                  json_string_value (json_object_get (item, "mime")));
        s_adds (all, line);
        const char *url = json_string_value (json_object_get (item, "url"));
        const char *failed = json_string_value (
            json_object_get (json_object_get (item, "blob"), "error"));
        if (url) {
            s_adds (all, " ");
            s_adds (all, url);
        }
        if (failed) {
            s_adds (all, " [upload failed: ");
            s_adds (all, failed);
            s_adds (all, "]");
        }
        s_add (all, "\n", 1);
    }
}

/* Appends an error output: its traceback without colours, or "ename:
 * evalue" when it has none. */
static void
s_add_error (s_text_t *all, json_t *item)
{
    s_newline (all);
    json_t *tb = json_object_get (item, "traceback");
    size_t k;
    json_t *line;
    json_array_foreach (tb, k, line) {
        s_add_plain (all, json_string_value (line));
        s_add (all, "\n", 1);
    }
    if (json_array_size (tb) == 0) {
        s_adds (all, json_string_value (json_object_get (item, "ename")));
        s_adds (all, ": ");
        s_adds (all, json_string_value (json_object_get (item, "evalue")));
        s_add (all, "\n", 1);
    }
}

/* Why a run that did not complete stopped, for the model. */
static const char *
s_stop_note (gw_job_t *job)
{
    const char *reason = gw_job_reason (job);
    switch (gw_job_status (job)) {
    case GW_EXEC_TIMEOUT:
        return reason && strcmp (reason, "cpu_time") == 0
                   ? "[the execution used up its CPU time and was interrupted]\n"
                   : "[the execution timed out and was interrupted]\n";
    case GW_EXEC_CANCELLED:
        return "[the execution was cancelled]\n";
    case GW_EXEC_ERROR:
        return reason && strcmp (reason, "kernel_died") == 0
                   ? "[the kernel died; it was restarted and its variables are lost (files "
                     "are kept)]\n"
                   : NULL;     /* the traceback says it */
    default:
        return NULL;
    }
}

json_t *
gw_mcp_exec_result (gw_mcp_t *mcp, gw_job_t *job)
{
    const gw_config_t *config = gw_server_config (mcp->server);
    gw_execution_t *exec = gw_job_execution (job);
    json_t *outputs = exec ? gw_execution_outputs (exec) : NULL;
    s_text_t all = {0}, out = {0}, err = {0}, result = {0};
    json_t *content = json_array (), *displays = json_array (), *error = json_null ();
    s_render_t render = {
        .content = content, .displays = displays, .session = gw_job_session (job),
        .max_image = (size_t) gw_config_int (config, GW_SET_MAX_IMAGE_BYTES),
        .max_text = (size_t) gw_config_int (config, GW_SET_MAX_OUTPUT_BYTES),
        .count = exec ? gw_execution_count (exec) : 0, .text = &all,
    };
    bool has_result = false;
    size_t i;
    json_t *item;
    json_array_foreach (outputs, i, item) {
        const char *type = json_string_value (json_object_get (item, "type"));
        if (strcmp (type, "stream") == 0) {
            const char *text = json_string_value (json_object_get (item, "content"));
            bool is_err = strcmp (json_string_value (json_object_get (item, "name")), "stderr") == 0;
            s_adds (is_err ? &err : &out, text);
            s_adds (&all, text);
        } else if (strcmp (type, "result") == 0 || strcmp (type, "display") == 0) {
            s_add_display (&render, json_object_get (item, "data"));
            if (strcmp (type, "result") == 0) {
                /* the execution keeps a result's text by the same rule
                   (jp_bundle_text), within its text budget */
                has_result = true;
                s_adds (&result, json_string_value (json_object_get (item, "content")));
            }
        } else if (strcmp (type, "error") == 0) {
            s_add_error (&all, item);
            json_decref (error);
            error = json_pack ("{s:O, s:O}", "ename", json_object_get (item, "ename"), "evalue",
                               json_object_get (item, "evalue"));
        }
    }
    s_add_artifacts (&all, gw_job_new_artifacts (job));
    const char *stop = s_stop_note (job);
    if (stop) {
        s_newline (&all);
        s_adds (&all, stop);
    }
    if (gw_job_kernel_restarted (job) && gw_job_status (job) == GW_EXEC_COMPLETED) {
        s_newline (&all);
        s_adds (&all, "[the kernel had been restarted before this run: variables from earlier "
                      "runs are gone, files are kept]\n");
    }
    size_t images = json_array_size (content);
    if (all.len == 0 && images) {
        char note[64];     /* what the kernel sent is all in the images */
        snprintf (note, sizeof note, "[%zu image%s, shown below]", images, images > 1 ? "s" : "");
        s_adds (&all, note);
    } else if (all.len == 0)
        s_adds (&all, "(no output)");
    s_fit_model (&all, (size_t) gw_config_int (config, GW_SET_MODEL_TEXT_BYTES),
                 gw_job_session (job), gw_job_id (job), content);
    json_array_insert_new (content, 0, json_pack ("{s:s, s:o}", "type", "text", "text",
                                                  s_text_json (&all)));
    json_t *artifacts = gw_job_new_artifacts (job);
    json_t *structured = json_pack (
        "{s:s, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:s}", "status",
        gw_exec_status_name (gw_job_status (job)), "execution_count", render.count, "stdout",
        s_text_json (&out), "stderr", s_text_json (&err), "result",
        has_result ? s_text_json (&result) : json_null (), "error", error, "displays", displays,
        "new_artifacts", artifacts ? json_incref (artifacts) : json_array (), "duration_ms",
        (json_int_t) (exec ? gw_execution_duration_ms (exec) : 0), "session_id",
        gw_job_session_id (job));
    if (structured && gw_job_kernel_restarted (job))
        json_object_set_new (structured, "kernel_restarted", json_true ());
    free (all.data);
    free (out.data);
    free (err.data);
    free (result.data);
    bool is_error = gw_job_status (job) != GW_EXEC_COMPLETED;
    return json_pack ("{s:o, s:o, s:b}", "content", content, "structuredContent", structured,
                      "isError", is_error);
}
