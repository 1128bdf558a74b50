/* gw_mcp_exec: turns a finished execution into an MCP CallToolResult: one
 * text item (stdout, stderr, results, tracebacks without ANSI colours,
 * new artifacts), one image item per PNG or JPEG shown (those over
 * CODEBOX_MAX_IMAGE_BYTES are saved under output/ and linked with a
 * resource_link instead), SVG and HTML as embedded resources; and the
 * structuredContent {status, execution_count, stdout, stderr, result,
 * error, displays, new_artifacts, duration_ms, session_id}.
 *
 * Threads: the loop thread only. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gw_ansi.h"
#include "gw_base64.h"
#include "gw_fs.h"
#include "gw_image.h"
#include "gw_mcp_internal.h"
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

/* Adds the rich parts of one display/result to content and displays. */
static void
s_add_display (json_t *content, json_t *displays, json_t *data, gw_session_t *session,
               size_t max_image, int count, int *image_no, s_text_t *text)
{
    bool shown = false;
    static const char *const images[] = {"image/png", "image/jpeg"};
    for (int i = 0; i < 2; i++) {
        const char *b64 = json_string_value (json_object_get (data, images[i]));
        if (!b64)
            continue;
        shown = true;
        size_t b64_len = strlen (b64);
        size_t pad = b64_len >= 2 && b64[b64_len - 1] == '=' ? (b64[b64_len - 2] == '=' ? 2 : 1)
                                                            : 0;
        size_t bytes = b64_len / 4 * 3 - pad;   /* the kernel's base64 has no line breaks now */
        json_array_append_new (displays, json_pack ("{s:s, s:I}", "mime", images[i], "bytes",
                                                    (json_int_t) bytes));
        if (bytes <= max_image) {
            json_array_append_new (content, json_pack ("{s:s, s:s, s:s}", "type", "image",
                                                       "data", b64, "mimeType", images[i]));
            continue;
        }
        s_add_large_image (content, session, b64, images[i], max_image, count, ++*image_no,
                           text);
    }
    static const char *const texts[] = {"image/svg+xml", "text/html", "text/markdown",
                                        "application/json"};
    for (int i = 0; i < 4 && !shown; i++) {
        json_t *value = json_object_get (data, texts[i]);
        if (!value)
            continue;
        shown = true;
        char *dumped = json_is_string (value) ? NULL : json_dumps (value, JSON_COMPACT);
        const char *body = dumped ? dumped : json_string_value (value);
        json_array_append_new (displays, json_pack ("{s:s}", "mime", texts[i]));
        json_array_append_new (content, json_pack ("{s:s, s:{s:s, s:s, s:s}}", "type",
                                                   "resource", "resource", "uri",
                                                   "codebox://display", "mimeType", texts[i],
                                                   "text", body ? body : ""));
        free (dumped);
    }
    if (!shown) {
        const char *plain = json_string_value (json_object_get (data, "text/plain"));
        json_array_append_new (displays, json_pack ("{s:s, s:s}", "mime", "text/plain", "text",
                                                    plain ? plain : ""));
        if (plain) {
            s_adds (text, plain);
            s_newline (text);
        }
    }
}

json_t *
gw_mcp_exec_result (gw_mcp_t *mcp, gw_job_t *job)
{
    size_t max_image = (size_t) gw_config_int (gw_server_config (mcp->server), GW_SET_MAX_IMAGE_BYTES);
    json_t *outputs = gw_job_execution (job) ? gw_execution_outputs (gw_job_execution (job)) : NULL;
    s_text_t all = {0}, out = {0}, err = {0}, result = {0};
    json_t *content = json_array (), *displays = json_array (), *error = json_null ();
    int image_no = 0;
    int count = gw_job_execution (job) ? gw_execution_count (gw_job_execution (job)) : 0;
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
        } else if (strcmp (type, "result") == 0) {
            has_result = true;
            s_adds (&result, json_string_value (json_object_get (item, "content")));
            s_newline (&all);
            s_add_display (content, displays, json_object_get (item, "data"), gw_job_session (job),
                           max_image, count, &image_no, &all);
        } else if (strcmp (type, "display") == 0) {
            s_newline (&all);
            s_add_display (content, displays, json_object_get (item, "data"), gw_job_session (job),
                           max_image, count, &image_no, &all);
        } else if (strcmp (type, "error") == 0) {
            s_newline (&all);
            json_t *tb = json_object_get (item, "traceback");
            size_t k;
            json_t *line;
            json_array_foreach (tb, k, line) {
                s_add_plain (&all, json_string_value (line));
                s_add (&all, "\n", 1);
            }
            if (json_array_size (tb) == 0) {
                s_adds (&all, json_string_value (json_object_get (item, "ename")));
                s_adds (&all, ": ");
                s_adds (&all, json_string_value (json_object_get (item, "evalue")));
                s_add (&all, "\n", 1);
            }
            json_decref (error);
            error = json_pack ("{s:O, s:O}", "ename", json_object_get (item, "ename"), "evalue",
                               json_object_get (item, "evalue"));
        }
    }
    json_t *artifacts = gw_job_new_artifacts (job) ? gw_job_new_artifacts (job) : NULL;
    if (json_array_size (artifacts)) {
        s_newline (&all);
        s_adds (&all, "New artifacts:\n");
        json_array_foreach (artifacts, i, item) {
            char line[1400];
            snprintf (line, sizeof line, "  %s (%lld bytes, %s)",
                      json_string_value (json_object_get (item, "path")),
                      (long long) json_integer_value (json_object_get (item, "size")),
                      json_string_value (json_object_get (item, "mime")));
            s_adds (&all, line);
            const char *url = json_string_value (json_object_get (item, "url"));
            const char *failed = json_string_value (
                json_object_get (json_object_get (item, "blob"), "error"));
            if (url) {
                s_adds (&all, " ");
                s_adds (&all, url);
            }
            if (failed) {
                s_adds (&all, " [upload failed: ");
                s_adds (&all, failed);
                s_adds (&all, "]");
            }
            s_add (&all, "\n", 1);
        }
    }
    if (gw_job_status (job) == GW_EXEC_TIMEOUT || gw_job_status (job) == GW_EXEC_CANCELLED) {
        s_newline (&all);
        s_adds (&all, gw_job_status (job) == GW_EXEC_TIMEOUT
                          ? "[the execution timed out and was interrupted]\n"
                          : "[the execution was cancelled]\n");
    }
    if (all.len == 0)
        s_adds (&all, "(no output)");
    json_array_insert_new (content, 0, json_pack ("{s:s, s:o}", "type", "text", "text",
                                                  s_text_json (&all)));
    json_t *structured = json_pack (
        "{s:s, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:s}", "status",
        gw_exec_status_name (gw_job_status (job)), "execution_count",
        gw_job_execution (job) ? gw_execution_count (gw_job_execution (job)) : 0, "stdout", s_text_json (&out), "stderr",
        s_text_json (&err), "result", has_result ? s_text_json (&result) : json_null (), "error",
        error, "displays", displays, "new_artifacts",
        artifacts ? json_incref (artifacts) : json_array (),
        "duration_ms", (json_int_t) (gw_job_execution (job) ? gw_execution_duration_ms (gw_job_execution (job)) : 0),
        "session_id", gw_job_session_id (job));
    if (structured && gw_job_kernel_restarted (job))
        json_object_set_new (structured, "kernel_restarted", json_true ());
    free (all.data);
    free (out.data);
    free (err.data);
    free (result.data);
    bool is_error = gw_job_status (job) == GW_EXEC_TIMEOUT || gw_job_status (job) == GW_EXEC_CANCELLED;
    return json_pack ("{s:o, s:o, s:b}", "content", content, "structuredContent", structured,
                      "isError", is_error);
}
