/* gw_notebook: a session's record of cells as an nbformat 4.5 notebook
 * (see gw_notebook.h). Threads: any for the build; the loop thread for a
 * session's. */
#include "gw_notebook.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jp_json.h"

/* A string member of obj, or fallback. */
static const char *
s_str (json_t *obj, const char *key, const char *fallback)
{
    const char *value = json_string_value (json_object_get (obj, key));
    return value && value[0] ? value : fallback;
}

/* The markdown cell that marks the start of kernel run `run`; before
 * holds the last cell of the run before (its status says why). */
static json_t *
s_restart_cell (size_t index, int run, json_t *before)
{
    json_t *codebox = json_object_get (json_object_get (before, "metadata"), "codebox");
    const char *status = json_is_true (json_object_get (codebox, "kernel_restarted"))
                             ? s_str (codebox, "status", "") : "";
    const char *why = strcmp (status, "timeout") == 0 ? ": the cell above ran past its time "
                                                        "limit and did not stop"
                    : strcmp (status, "kernel_died") == 0 ? ": the kernel died in the cell above"
                    : strcmp (status, "cancelled") == 0 ? " while the cell above ran"
                    : "";
    char text[400], id[32];
    snprintf (text, sizeof text, "**Kernel restarted**%s. Run %d starts here: the variables "
              "of the cells above are gone; files are kept.", why, run);
    snprintf (id, sizeof id, "restart-%zu", index);
    return json_pack ("{s:s, s:s, s:{s:{s:i}, s:[s]}, s:s}", "cell_type", "markdown", "id", id,
                      "metadata", "codebox", "restart", run, "tags", "kernel-restart",
                      "source", text);
}

/* The code cell of one record line (a parsed object, borrowed). */
static json_t *
s_code_cell (size_t index, json_t *line, int run)
{
    char id[32];
    snprintf (id, sizeof id, "cell-%zu", index);
    json_int_t count = json_integer_value (json_object_get (line, "execution_count"));
    json_t *outputs = json_object_get (line, "outputs");
    outputs = json_is_array (outputs) ? json_incref (outputs) : json_array ();
    json_t *codebox = json_pack ("{s:s, s:i}", "status", s_str (line, "status", "ok"), "run",
                                 run);
    static const char *const flags[] = {"replay", "kernel_restarted", "via", "outputs_left_out",
                                        "code_left_out"};
    for (size_t i = 0; codebox && i < sizeof flags / sizeof flags[0]; i++)
        if (json_object_get (line, flags[i]))
            json_object_set (codebox, flags[i], json_object_get (line, flags[i]));
    const char *left_out = s_str (line, "outputs_left_out", NULL);
    if (left_out) {
        char note[300];
        snprintf (note, sizeof note, "[codebox: the outputs of this cell were not kept: %s]\n",
                  left_out);
        json_array_append_new (outputs, json_pack ("{s:s, s:s, s:s}", "output_type", "stream",
                                                   "name", "stderr", "text", note));
    }
    json_t *execution = json_object ();
    if (json_is_string (json_object_get (line, "started")))
        json_object_set (execution, "iopub.execute_input", json_object_get (line, "started"));
    if (json_is_string (json_object_get (line, "ended")))
        json_object_set (execution, "shell.execute_reply", json_object_get (line, "ended"));
    return json_pack ("{s:s, s:s, s:o, s:{s:o, s:o}, s:s, s:o}", "cell_type", "code", "id", id,
                      "execution_count", count > 0 ? json_integer (count) : json_null (),
                      "metadata", "codebox", codebox, "execution", execution, "source",
                      s_str (line, "code", ""), "outputs", outputs);
}

/* The notebook's metadata from the session's settings. */
static json_t *
s_metadata (json_t *settings)
{
    json_t *spec = json_object_get (settings, "kernelspec");
    const char *name = s_str (spec, "name", s_str (settings, "kernel", "python3"));
    const char *language = s_str (spec, "language", "python");
    json_t *meta = json_pack ("{s:{s:s, s:s, s:s}, s:{s:s}}", "kernelspec", "name", name,
                              "display_name", s_str (spec, "display_name", name), "language",
                              language, "language_info", "name", language);
    json_t *codebox = json_object ();
    if (json_is_string (json_object_get (settings, "session_id")))
        json_object_set (codebox, "session_id", json_object_get (settings, "session_id"));
    if (json_is_string (json_object_get (settings, "created")))
        json_object_set (codebox, "created", json_object_get (settings, "created"));
    if (meta)
        json_object_set (meta, "codebox", codebox);
    json_decref (codebox);
    return meta;
}

json_t *
gw_notebook_build (const char *text, size_t len, json_t *settings)
{
    json_t *cells = json_array ();
    json_t *before = NULL;      /* the last code cell */
    int last_run = 1;
    for (const char *p = text, *end = text + len; cells && p && p < end;) {
        const char *nl = memchr (p, '\n', (size_t) (end - p));
        size_t n = nl ? (size_t) (nl - p) : (size_t) (end - p);
        json_t *line = json_loadb (p, n, 0, NULL);
        p += n + 1;
        if (!json_is_object (line) || !json_is_string (json_object_get (line, "code"))) {
            json_decref (line);
            continue;
        }
        json_t *run_json = json_object_get (line, "run");
        int run = json_is_integer (run_json) ? (int) json_integer_value (run_json) : last_run;
        if (run != last_run)
            json_array_append_new (cells, s_restart_cell (json_array_size (cells), run, before));
        last_run = run;
        before = s_code_cell (json_array_size (cells), line, run);
        json_array_append_new (cells, before);
        json_decref (line);
    }
    if (!cells)
        return NULL;
    return json_pack ("{s:i, s:i, s:o, s:o}", "nbformat", 4, "nbformat_minor", 5, "metadata",
                      s_metadata (settings), "cells", cells);
}

char *
gw_notebook_of_session (gw_session_t *session, size_t *len, int *err)
{
    gw_session_record_t *record = gw_session_cell_record (session);
    char *text = NULL;
    size_t text_len = 0;
    *err = gw_session_record_read (record, &text, &text_len);
    if (*err)
        return NULL;
    json_t *settings = record ? json_incref (gw_session_record_info (record))
                              : gw_session_settings_json (session);
    json_t *notebook = gw_notebook_build (text, text_len, settings);
    free (text);
    json_decref (settings);
    char *out = notebook ? jp_json_dump (notebook, len) : NULL;
    json_decref (notebook);
    if (!out)
        *err = -ENOMEM;
    return out;
}
