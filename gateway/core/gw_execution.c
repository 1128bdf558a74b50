/* gw_execution: the execution core: one execute_request and the outputs
 * whose parent it is. Threads: the thread that owns the kernel. */
#include "gw_execution.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jp_bundle_text.h"
#include "jp_json.h"
#include "jp_time.h"

#define MAX_DISPLAY_BYTES (64u << 20)   /* images and rich data per execution */
#define S_MAX_ENAME 256                 /* an exception's name, whatever it claims */
#define S_MAX_EVALUE (64u << 10)        /* its value (the traceback says it again) */

struct gw_execution {
    char *code;
    size_t max_text;
    size_t text_used;
    size_t display_used;
    bool truncated, displays_dropped, input_noted;
    gw_exec_status_t status;
    ks_kernel_t *kernel;
    char msg_id[64];
    bool got_reply, got_idle;
    int64_t last_msg_ms;        /* when the last message of ours came */
    char probe_id[64];          /* the last kernel_info_request we sent to
                                   learn that iopub has caught up */
    int probes;
    json_t *reply;              /* execute_reply content */
    json_t *items;
    bool clear_pending;         /* clear_output(wait=True) seen */
    /* the last item while it is a stream, and its growing text */
    json_t *open_stream;
    char *open_text;
    size_t open_len, open_cap;
    int execution_count;
    int64_t started_ms, finished_ms;
    gw_output_fn *on_output;
    void *arg;
    gw_input_fn *on_input;      /* set: input() asks it instead of failing */
    void *input_arg;
    json_t *input_header;       /* the header of the input_request waiting */
};

gw_execution_t *
gw_execution_new (const char *code, size_t max_output_bytes)
{
    gw_execution_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->code = strdup (code);
    self->items = json_array ();
    self->max_text = max_output_bytes ? max_output_bytes : SIZE_MAX;
    if (!self->code || !self->items)
        gw_execution_destroy (&self);
    return self;
}

void
gw_execution_destroy (gw_execution_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gw_execution_t *self = *self_p;
    free (self->code);
    free (self->open_text);
    json_decref (self->items);
    json_decref (self->reply);
    json_decref (self->input_header);
    free (self);
    *self_p = NULL;
}

void
gw_execution_set_output_handler (gw_execution_t *self, gw_output_fn *fn, void *arg)
{
    self->on_output = fn;
    self->arg = arg;
}

void
gw_execution_set_input_handler (gw_execution_t *self, gw_input_fn *fn, void *arg)
{
    self->on_input = fn;
    self->input_arg = arg;
}

int
gw_execution_answer_input (gw_execution_t *self, const char *value)
{
    if (!self->input_header || !self->kernel || self->status != GW_EXEC_RUNNING)
        return -ENOENT;
    jp_msg_t *reply = ks_kernel_msg_new (self->kernel, "input_reply");
    if (!reply)
        return -ENOMEM;
    jp_msg_t parent = {.header = self->input_header};
    jp_msg_set_parent (reply, &parent);
    jp_msg_set_content (reply, json_pack ("{s:s}", "value", value));
    int rc = ks_kernel_send (self->kernel, JP_CHANNEL_STDIN, reply);
    jp_msg_destroy (&reply);
    json_decref (self->input_header);
    self->input_header = NULL;
    return rc;
}

int
gw_execution_start (gw_execution_t *self, ks_kernel_t *kernel)
{
    jp_msg_t *msg = ks_kernel_msg_new (kernel, "execute_request");
    if (!msg)
        return -1;
    jp_msg_set_content (msg, json_pack ("{s:s, s:b, s:b, s:{}, s:b, s:b}", "code",
                                        self->code, "silent", 0, "store_history", 1,
                                        "user_expressions", "allow_stdin", self->on_input != NULL,
                                        /* we send one request at a time: a
                                           kernel that aborts its queue after
                                           an error would only abort the next
                                           request, sent right after */
                                        "stop_on_error", 0));
    char msg_id[64];
    snprintf (msg_id, sizeof msg_id, "%s", jp_msg_id (msg));
    int rc = ks_kernel_send (kernel, JP_CHANNEL_SHELL, msg);
    jp_msg_destroy (&msg);
    if (rc)
        return rc;
    gw_execution_running (self, msg_id, kernel);
    return 0;
}

void
gw_execution_running (gw_execution_t *self, const char *msg_id, ks_kernel_t *kernel)
{
    snprintf (self->msg_id, sizeof self->msg_id, "%s", msg_id);
    self->kernel = kernel;
    self->status = GW_EXEC_RUNNING;
    self->started_ms = jp_time_now_ms ();
}

/* Writes the open stream's text into its item. */
static void
s_flush_stream (gw_execution_t *self)
{
    if (self->open_stream)
        json_object_set_new (self->open_stream, "content",
                             json_stringn_nocheck (self->open_text ? self->open_text : "",
                                                   self->open_len));
}

/* Closes the open stream: the next output starts a new item. */
static void
s_close_stream (gw_execution_t *self)
{
    s_flush_stream (self);
    self->open_stream = NULL;
    self->open_len = 0;
}

/* Applies a pending clear_output(wait=True) before the next output. */
static void
s_apply_clear (gw_execution_t *self)
{
    if (!self->clear_pending)
        return;
    self->clear_pending = false;
    self->open_stream = NULL;
    self->open_len = 0;
    json_array_clear (self->items);
}

/* Appends item (stolen) and tells the output handler. */
static void
s_add_item (gw_execution_t *self, json_t *item)
{
    if (!item)
        return;
    s_apply_clear (self);
    s_close_stream (self);
    json_array_append (self->items, item);
    if (self->on_output)
        self->on_output (self, item, self->arg);
    json_decref (item);
}

/* How many of the n bytes of text to keep for at most max, cut back to a
 * UTF-8 character boundary. */
static size_t
s_utf8_cut (const char *text, size_t n, size_t max)
{
    if (n <= max)
        return n;
    while (max > 0 && ((unsigned char) text[max] & 0xC0) == 0x80)
        max--;
    return max;
}

/* How many of n bytes of text fit under the limit, cut back to a UTF-8
 * character boundary. */
static size_t
s_fit (gw_execution_t *self, const char *text, size_t n)
{
    size_t room = self->max_text - self->text_used;
    if (n <= room)
        return n;
    while (room > 0 && ((unsigned char) text[room] & 0xC0) == 0x80)
        room--;
    return room;
}

/* Appends to the open stream text. Returns 0 or -1 on OOM. */
static int
s_append_text (gw_execution_t *self, const char *text, size_t n)
{
    if (self->open_len + n + 1 > self->open_cap) {
        size_t cap = (self->open_len + n + 1) * 2;
        char *grown = realloc (self->open_text, cap);
        if (!grown)
            return -1;
        self->open_text = grown;
        self->open_cap = cap;
    }
    memcpy (self->open_text + self->open_len, text, n);
    self->open_len += n;
    return 0;
}

static void
s_on_stream (gw_execution_t *self, json_t *content)
{
    const char *name = json_string_value (json_object_get (content, "name"));
    json_t *text_json = json_object_get (content, "text");
    const char *text = json_string_value (text_json);
    if (!name || !text || self->truncated)
        return;
    size_t n = json_string_length (text_json);
    size_t keep = s_fit (self, text, n);
    char marker[160] = "";
    if (keep < n) {
        self->truncated = true;
        snprintf (marker, sizeof marker,
                  "\n[codebox: output truncated at %zu bytes; write large output to a file]\n",
                  self->max_text);
    }
    self->text_used += keep;
    s_apply_clear (self);
    const char *open_name = self->open_stream
        ? json_string_value (json_object_get (self->open_stream, "name")) : NULL;
    if (!open_name || strcmp (open_name, name) != 0) {
        s_close_stream (self);
        json_t *item = json_pack ("{s:s, s:s, s:s}", "type", "stream", "name", name,
                                  "content", "");
        if (!item)
            return;
        json_array_append_new (self->items, item);
        self->open_stream = item;
    }
    s_append_text (self, text, keep);
    s_append_text (self, marker, strlen (marker));
    if (self->on_output) {
        json_t *chunk = json_pack ("{s:s, s:s, s:s%}", "type", "stream", "name", name,
                                   "content", text, keep);
        json_t *full = chunk && *marker
            ? json_pack ("{s:s, s:s, s:s}", "type", "stream", "name", name, "content",
                         marker) : NULL;
        if (chunk)
            self->on_output (self, chunk, self->arg);
        if (full)
            self->on_output (self, full, self->arg);
        json_decref (chunk);
        json_decref (full);
    }
}

/* Counts rich data against the display budget. Returns false if it does
 * not fit (and notes that once on stderr). */
static bool
s_display_fits (gw_execution_t *self, json_t *data)
{
    size_t size = 0;
    const char *mime;
    json_t *value;
    json_object_foreach (data, mime, value) {
        /* the memory it holds, not its text: [0, 0, ...] weighs 25 times its text */
        size_t weight = jp_json_weight (value);
        size += strlen (mime) + (weight == (size_t) -1 ? MAX_DISPLAY_BYTES : weight);
    }
    if (self->display_used + size <= MAX_DISPLAY_BYTES) {
        self->display_used += size;
        return true;
    }
    if (!self->displays_dropped) {
        self->displays_dropped = true;
        s_add_item (self, json_pack ("{s:s, s:s, s:s}", "type", "stream", "name", "stderr",
                                     "content", "[codebox: more than 64 MiB of displays; "
                                     "the rest were dropped]\n"));
    }
    return false;
}

/* The text of a result's data bundle (jp_bundle_text: its text/plain,
 * or what a bare "<... object>" repr stands for), counted against the
 * text limit. */
static json_t *
s_plain (gw_execution_t *self, json_t *data)
{
    size_t n = 0;
    const char *mime = NULL;
    size_t room = self->max_text > self->text_used ? self->max_text - self->text_used : 0;
    char *text = jp_bundle_text (data, room, &n, &mime);
    if (!text)
        return json_string ("");
    size_t keep = s_fit (self, text, n);
    self->text_used += keep;
    if (keep < n)
        self->truncated = true;
    json_t *kept = json_stringn_nocheck (text, keep);
    free (text);
    return kept;
}

/* Drops the line breaks kernels leave in base64 image data (ipykernel
 * ends it with one), so clients get plain standard base64. */
static void
s_tidy_images (json_t *data)
{
    static const char *const mimes[] = {"image/png", "image/jpeg", "image/gif", "image/webp"};
    for (int i = 0; i < 4; i++) {
        json_t *v = json_object_get (data, mimes[i]);
        const char *text = json_string_value (v);
        if (!text || !strpbrk (text, "\r\n "))
            continue;
        size_t n = json_string_length (v);
        char *clean = malloc (n + 1);
        size_t k = 0;
        for (size_t j = 0; clean && j < n; j++)
            if (text[j] != '\n' && text[j] != '\r' && text[j] != ' ')
                clean[k++] = text[j];
        if (clean)
            json_object_set_new (data, mimes[i], json_stringn (clean, k));
        free (clean);
    }
}

/* item (returned) with the message's metadata when it has any (image
 * sizes): the notebook keeps it; clients' items leave it out
 * (gw_job_client_output). */
static json_t *
s_with_metadata (json_t *item, json_t *content)
{
    json_t *metadata = json_object_get (content, "metadata");
    if (item && json_is_object (metadata) && json_object_size (metadata))
        json_object_set (item, "metadata", metadata);
    return item;
}

static void
s_on_result (gw_execution_t *self, json_t *content)
{
    json_t *data = json_object_get (content, "data");
    if (!json_is_object (data) || !s_display_fits (self, data))
        return;
    s_tidy_images (data);
    json_int_t count = json_integer_value (json_object_get (content, "execution_count"));
    if (count > 0)
        self->execution_count = (int) count;
    s_add_item (self, s_with_metadata (json_pack ("{s:s, s:o, s:O}", "type", "result",
                                                  "content", s_plain (self, data), "data",
                                                  data), content));
}

static void
s_on_display (gw_execution_t *self, json_t *content)
{
    json_t *data = json_object_get (content, "data");
    if (!json_is_object (data) || !s_display_fits (self, data))
        return;
    s_tidy_images (data);
    json_t *item = s_with_metadata (json_pack ("{s:s, s:O}", "type", "display", "data", data),
                                    content);
    json_t *id = json_object_get (json_object_get (content, "transient"), "display_id");
    if (item && json_is_string (id))
        json_object_set (item, "display_id", id);
    s_add_item (self, item);
}

/* update_display_data: replaces the data of earlier displays with the id. */
static void
s_on_update_display (gw_execution_t *self, json_t *content)
{
    json_t *data = json_object_get (content, "data");
    const char *id = json_string_value (
        json_object_get (json_object_get (content, "transient"), "display_id"));
    if (!json_is_object (data) || !id)
        return;
    size_t i;
    json_t *item;
    json_array_foreach (self->items, i, item) {
        const char *item_id = json_string_value (json_object_get (item, "display_id"));
        if (item_id && strcmp (item_id, id) == 0 && s_display_fits (self, data))
            json_object_set (item, "data", data);
    }
}

/* An error output: its name, value and traceback count against the text
 * limit; the value first (at most S_MAX_EVALUE of it), so a huge message
 * still leaves room for the traceback. */
static json_t *
s_error_item (gw_execution_t *self, json_t *content)
{
    json_t *ename = json_object_get (content, "ename");
    json_t *evalue = json_object_get (content, "evalue");
    size_t n = json_is_string (ename) ? json_string_length (ename) : 0;
    size_t keep_name = s_utf8_cut (json_string_value (ename), n, S_MAX_ENAME);
    size_t v = json_is_string (evalue) ? json_string_length (evalue) : 0;
    size_t keep_value = v ? s_fit (self, json_string_value (evalue),
                                   s_utf8_cut (json_string_value (evalue), v, S_MAX_EVALUE))
                          : 0;
    self->text_used += keep_value;
    if (keep_name < n || keep_value < v)
        self->truncated = true;
    json_t *tb = json_array ();
    size_t i;
    json_t *line;
    json_array_foreach (json_object_get (content, "traceback"), i, line) {
        const char *text = json_string_value (line);
        if (!text)
            continue;
        size_t len = json_string_length (line);
        size_t keep = s_fit (self, text, len);
        self->text_used += keep;
        json_array_append_new (tb, json_stringn_nocheck (text, keep));
        if (keep < len) {
            self->truncated = true;
            break;
        }
    }
    return json_pack ("{s:s, s:s%, s:s%, s:o}", "type", "error", "ename",
                      keep_name ? json_string_value (ename) : "Error",
                      keep_name ? keep_name : 5, "evalue",
                      keep_value ? json_string_value (evalue) : "", keep_value,
                      "traceback", tb);
}

/* True once an error item is among the outputs. */
static bool
s_has_error (gw_execution_t *self)
{
    size_t i;
    json_t *item;
    json_array_foreach (self->items, i, item)
        if (strcmp (json_string_value (json_object_get (item, "type")), "error") == 0)
            return true;
    return false;
}

/* Finishes when both the reply and idle arrived. */
static void
s_maybe_finish (gw_execution_t *self)
{
    if (!self->got_reply || !self->got_idle || gw_execution_finished (self))
        return;
    const char *status = json_string_value (json_object_get (self->reply, "status"));
    bool ok = status && strcmp (status, "ok") == 0;
    if (!ok && !s_has_error (self)) {
        /* the kernel said error (or aborted) without publishing an error */
        json_t *content = json_deep_copy (self->reply);
        if (status && strcmp (status, "aborted") == 0)
            json_object_set_new (content, "ename", json_string ("Aborted")),
            json_object_set_new (content, "evalue",
                                 json_string ("the kernel aborted this execution"));
        s_add_item (self, s_error_item (self, content));
        json_decref (content);
    }
    s_close_stream (self);
    self->status = ok ? GW_EXEC_COMPLETED : GW_EXEC_ERROR;
    self->finished_ms = jp_time_now_ms ();
}

/* An input_request: asks the input handler, or answers an empty line so
 * input() returns at once. */
static void
s_on_input_request (gw_execution_t *self, const jp_msg_t *request)
{
    if (self->on_input) {
        json_decref (self->input_header);
        self->input_header = json_deep_copy (request->header);
        json_t *content = request->content;
        self->on_input (self, json_string_value (json_object_get (content, "prompt")),
                        json_is_true (json_object_get (content, "password")), self->input_arg);
        return;
    }
    jp_msg_t *reply = self->kernel ? ks_kernel_msg_new (self->kernel, "input_reply") : NULL;
    if (!reply)
        return;
    jp_msg_set_parent (reply, request);
    jp_msg_set_content (reply, json_pack ("{s:s}", "value", ""));
    ks_kernel_send (self->kernel, JP_CHANNEL_STDIN, reply);
    jp_msg_destroy (&reply);
    /* said once per execution (a loop of input() calls adds nothing), and
       counted against the text limit like any output */
    if (self->input_noted)
        return;
    self->input_noted = true;
    json_t *note = json_pack ("{s:s, s:s}", "name", "stderr", "text",
                              "[codebox: input() is not supported; an empty line was sent]\n");
    s_on_stream (self, note);
    json_decref (note);
}

bool
gw_execution_feed (gw_execution_t *self, jp_channel_t channel, const jp_msg_t *msg)
{
    if (self->status != GW_EXEC_RUNNING)
        return false;
    const char *type = jp_msg_type (msg);
    json_t *content = msg->content;
    if (self->probe_id[0] && strcmp (jp_msg_parent_id (msg), self->probe_id) == 0) {
        /* iopub is ordered: the probe's status comes after everything the
           kernel published for us before it (or dropped) */
        if (channel == JP_CHANNEL_IOPUB && strcmp (type, "status") == 0) {
            self->got_idle = true;
            s_maybe_finish (self);
        }
        return true;
    }
    if (strcmp (jp_msg_parent_id (msg), self->msg_id) != 0)
        return false;
    self->last_msg_ms = jp_time_now_ms ();
    if (channel == JP_CHANNEL_SHELL && strcmp (type, "execute_reply") == 0) {
        self->got_reply = true;
        json_decref (self->reply);
        self->reply = json_incref (content);
        json_int_t count = json_integer_value (json_object_get (content, "execution_count"));
        if (count > 0)
            self->execution_count = (int) count;
    } else if (channel == JP_CHANNEL_STDIN && strcmp (type, "input_request") == 0)
        s_on_input_request (self, msg);
    else if (channel == JP_CHANNEL_IOPUB) {
        if (strcmp (type, "status") == 0)
            self->got_idle = self->got_idle || jp_msg_is_idle (msg);
        else if (strcmp (type, "stream") == 0)
            s_on_stream (self, content);
        else if (strcmp (type, "execute_result") == 0)
            s_on_result (self, content);
        else if (strcmp (type, "display_data") == 0)
            s_on_display (self, content);
        else if (strcmp (type, "update_display_data") == 0)
            s_on_update_display (self, content);
        else if (strcmp (type, "error") == 0)
            s_add_item (self, s_error_item (self, content));
        else if (strcmp (type, "clear_output") == 0) {
            if (json_is_true (json_object_get (content, "wait")))
                self->clear_pending = true;
            else {
                self->clear_pending = true;
                s_apply_clear (self);
            }
        }
    }
    s_maybe_finish (self);
    return true;
}

int64_t
gw_execution_settle_deadline (const gw_execution_t *self)
{
    if (self->status != GW_EXEC_RUNNING || !self->got_reply || self->got_idle)
        return -1;
    return self->last_msg_ms + GW_EXEC_IDLE_GRACE_MS;
}

void
gw_execution_settle (gw_execution_t *self, int64_t now)
{
    int64_t deadline = gw_execution_settle_deadline (self);
    if (deadline < 0 || now < deadline)
        return;
    self->last_msg_ms = now;
    if (self->kernel && ks_kernel_decoding (self->kernel))
        return;     /* its messages are on their way (a large one is being decoded) */
    if (self->probes++ >= GW_EXEC_IDLE_PROBES) {
        self->got_idle = true;  /* a kernel that publishes no status at all */
        s_maybe_finish (self);
        return;
    }
    jp_msg_t *probe = self->kernel ? ks_kernel_msg_new (self->kernel, "kernel_info_request")
                                   : NULL;
    if (probe && ks_kernel_send (self->kernel, JP_CHANNEL_SHELL, probe) == 0)
        snprintf (self->probe_id, sizeof self->probe_id, "%s", jp_msg_id (probe));
    jp_msg_destroy (&probe);
}

/* Adds an error output "ENAME: WHY" made by the gateway (not the kernel)
 * and closes the open stream. */
static void
s_add_gateway_error (gw_execution_t *self, const char *ename, const char *why)
{
    char *line = NULL;
    if (asprintf (&line, "%s: %s", ename, why) < 0)
        line = NULL;
    json_t *content = json_pack ("{s:s, s:s, s:[s]}", "ename", ename, "evalue", why,
                                 "traceback", line ? line : why);
    free (line);
    s_add_item (self, s_error_item (self, content));
    json_decref (content);
    s_close_stream (self);
}

void
gw_execution_abort (gw_execution_t *self, gw_exec_status_t status, const char *ename,
                    const char *why)
{
    if (gw_execution_finished (self))
        return;
    s_add_gateway_error (self, ename, why);
    self->status = status;
    self->finished_ms = jp_time_now_ms ();
    if (!self->started_ms)
        self->started_ms = self->finished_ms;
}

void
gw_execution_add_stream (gw_execution_t *self, const char *name, const char *text)
{
    json_t *content = json_pack ("{s:s, s:s}", "name", name, "text", text);
    if (content)
        s_on_stream (self, content);
    json_decref (content);
}

void
gw_execution_add_error (gw_execution_t *self, const char *ename, const char *why)
{
    s_add_gateway_error (self, ename, why);
    if (self->status == GW_EXEC_COMPLETED)
        self->status = GW_EXEC_ERROR;
}

bool
gw_execution_finished (const gw_execution_t *self)
{
    return self->status >= GW_EXEC_COMPLETED;
}

gw_exec_status_t
gw_execution_status (const gw_execution_t *self)
{
    return self->status;
}

const char *
gw_exec_status_name (gw_exec_status_t status)
{
    static const char *names[] = {"queued", "running", "completed", "error", "timeout",
                                  "cancelled"};
    return status <= GW_EXEC_CANCELLED ? names[status] : "?";
}

json_t *
gw_execution_outputs (gw_execution_t *self)
{
    s_flush_stream (self);
    return self->items;
}

int
gw_execution_count (const gw_execution_t *self)
{
    return self->execution_count;
}

int64_t
gw_execution_duration_ms (const gw_execution_t *self)
{
    if (!self->started_ms)
        return 0;
    return (self->finished_ms ? self->finished_ms : jp_time_now_ms ()) - self->started_ms;
}

size_t
gw_execution_bytes (const gw_execution_t *self)
{
    return self->text_used + self->display_used + 256 * json_array_size (self->items)
           + (self->code ? strlen (self->code) : 0);
}

bool
gw_execution_truncated (const gw_execution_t *self)
{
    return self->truncated;
}
