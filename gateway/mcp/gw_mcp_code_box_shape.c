/* gw_mcp_code_box_shape: the answers of the "code-box" tool set in Code
 * Box's shape, made from what codebox's own tools answer. Code Box's
 * FastMCP tools return a dict: the client gets it as one text item (the
 * dict as JSON, two-space indented) and, here, as structuredContent too.
 * Every dict has "status" ("success" or "error"); an error is
 * {session_id?, status: "error", error: TEXT} and, here, isError as well,
 * so a model reading the content and a client looking at isError both
 * see it.
 *
 * Artifacts are Code Box's {filename, path, extension, size_bytes} plus
 * codebox's mime, url and blob; when blob upload is on
 * (CODEBOX_BLOB_CONNECTION_STRING or CODEBOX_BLOB_URL, or Code Box's
 * AZURE_BLOB_CONNECTION_STRING) and the file went up, its read-only SAS
 * URL is sas_url as well, as Code Box's README promises
 * (new_artifacts[].sas_url). Without blob storage there is no sas_url, as
 * in Code Box, and path is where code in the session opens the file.
 *
 * Threads: the loop thread only. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_artifacts.h"
#include "gw_mcp_code_box.h"
#include "gw_mcp_exec.h"
#include "gw_session.h"

/* all_artifacts lists at most this many files (the rest are counted). */
#define S_MAX_LISTED 500

json_t *
gw_mcp_code_box_answer (json_t *structured, json_t *more, bool is_error)
{
    char *text = structured ? json_dumps (structured, JSON_INDENT (2)) : NULL;
    json_t *content = json_pack ("[{s:s, s:s}]", "type", "text", "text",
                                 text ? text : "{\"status\": \"error\", \"error\": \"out of "
                                               "memory\"}");
    free (text);
    if (more)
        json_array_extend (content, more);
    json_decref (more);
    return json_pack ("{s:o, s:o, s:b}", "content", content, "structuredContent",
                      structured ? structured : json_object (), "isError", is_error);
}

/* Code Box's error dict (new). */
static json_t *
s_error_dict (const char *session_id, const char *message)
{
    json_t *dict = json_object ();
    if (session_id)
        json_object_set_new (dict, "session_id", json_string (session_id));
    json_object_set_new (dict, "status", json_string ("error"));
    json_object_set_new (dict, "error", json_string (message));
    return dict;
}

json_t *
gw_mcp_code_box_fail (const char *session_id, const char *fmt, ...)
{
    char message[1536];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (message, sizeof message, fmt, ap);
    va_end (ap);
    return gw_mcp_code_box_answer (s_error_dict (session_id, message), NULL, true);
}

json_t *
gw_mcp_code_box_error (json_t *tool_error, const char *session_id)
{
    json_t *item = json_array_get (json_object_get (tool_error, "content"), 0);
    const char *text = json_string_value (json_object_get (item, "text"));
    json_t *answer = gw_mcp_code_box_answer (s_error_dict (session_id, text ? text : "failed"),
                                             NULL, true);
    json_decref (tool_error);
    return answer;
}

/* One artifact in Code Box's shape (new). */
static json_t *
s_artifact (json_t *a)
{
    const char *ext = json_string_value (json_object_get (a, "extension"));
    char dotted[40];
    snprintf (dotted, sizeof dotted, "%s%.30s", ext && *ext ? "." : "", ext ? ext : "");
    json_t *out = json_object ();
    json_object_set (out, "filename", json_object_get (a, "filename"));
    json_object_set (out, "path", json_object_get (a, "path"));
    json_object_set_new (out, "extension", json_string (dotted));
    json_object_set (out, "size_bytes", json_object_get (a, "size"));
    json_object_set (out, "mime", json_object_get (a, "mime"));
    json_t *url = json_object_get (a, "url");
    json_t *blob = json_object_get (a, "blob");
    const char *state = json_string_value (json_object_get (blob, "status"));
    /* the blob's URL (uploaded, or still going up when the answer's wait
       ran out); a failed upload leaves url to the gateway's own link */
    if (json_is_string (url) && state && strcmp (state, "failed") != 0)
        json_object_set (out, "sas_url", url);
    if (url)
        json_object_set (out, "url", url);
    if (blob)
        json_object_set (out, "blob", blob);
    return out;
}

json_t *
gw_mcp_code_box_artifacts (json_t *artifacts)
{
    json_t *list = json_array ();
    size_t i;
    json_t *a;
    json_array_foreach (artifacts, i, a)
        json_array_append_new (list, s_artifact (a));
    return list;
}

/* The session id a call's shape was given. */
static const char *
s_call_session (gw_mcp_call_t *call)
{
    return json_string_value (json_object_get (call->shape_arg, "session_id"));
}

/* Every artifact of session (may be NULL: none), with fresh blob URLs,
 * as Code Box lists them; more than S_MAX_LISTED are cut (the count of
 * those left out goes to *left_out). */
static json_t *
s_all_artifacts (gw_session_t *session, size_t *left_out)
{
    *left_out = 0;
    if (!session)
        return json_array ();
    json_t *list = gw_artifacts_list (gw_session_workdir (session),
                                      gw_session_visible_workdir (session), GW_SNAPSHOT_SESSION);
    if (json_array_size (list) > S_MAX_LISTED) {
        *left_out = json_array_size (list) - S_MAX_LISTED;
        while (json_array_size (list) > S_MAX_LISTED)
            json_array_remove (list, json_array_size (list) - 1);
    }
    gw_server_annotate (gw_session_server (session), session, list);
    json_t *shaped = gw_mcp_code_box_artifacts (list);
    json_decref (list);
    return shaped;
}

/* Why a run that did not complete failed, in a sentence. */
static void
s_exec_error (json_t *sc, char *out, size_t len)
{
    json_t *error = json_object_get (sc, "error");
    const char *status = json_string_value (json_object_get (sc, "status"));
    /* a stopped run's KeyboardInterrupt says less than why it was stopped */
    if (status && strcmp (status, "timeout") == 0)
        snprintf (out, len, "The execution ran past its time limit and was interrupted; "
                  "split the work into shorter steps.");
    else if (status && strcmp (status, "cancelled") == 0)
        snprintf (out, len, "The execution was cancelled.");
    else if (json_is_object (error))
        snprintf (out, len, "%s: %s", json_string_value (json_object_get (error, "ename")),
                  json_string_value (json_object_get (error, "evalue")));
    else
        snprintf (out, len, "The kernel died while the code ran; it was restarted: variables "
                  "are lost, files are kept.");
}

/* exec_code's output: the run's text, less the list of new artifacts
 * gw_mcp_exec ends it with when there are some (new_artifacts holds
 * them); Code Box's words when there is none. */
static json_t *
s_output (const char *text, size_t n_artifacts)
{
    static const char mark[] = "New artifacts:\n";
    if (!text || strcmp (text, "(no output)") == 0)
        return json_string ("(no text output)");
    const char *cut = NULL;
    for (const char *p = text; n_artifacts && (p = strstr (p, mark)); p++)
        if (p == text || p[-1] == '\n')
            cut = p;        /* the last one at a line's start */
    if (!cut)
        return json_string (text);
    size_t len = (size_t) (cut - text);
    while (len && text[len - 1] == '\n')
        len--;
    if (!len)
        return json_string ("(no text output)");
    return json_stringn (text, len + 1);   /* with one newline */
}

/* exec_code's answer: {session_id, status, error?, output, new_artifacts,
 * all_artifacts}, then the images the code displayed. */
json_t *
gw_mcp_code_box_exec_result (gw_mcp_t *mcp, gw_job_t *job)
{
    json_t *result = gw_mcp_exec_result (mcp, job);
    json_t *sc = json_object_get (result, "structuredContent");
    const char *id = gw_job_session_id (job);
    bool failed = json_is_true (json_object_get (result, "isError"));
    json_t *content = json_object_get (result, "content");
    const char *text = json_string_value (json_object_get (json_array_get (content, 0), "text"));
    json_t *dict = json_object ();
    json_object_set_new (dict, "session_id", json_string (id ? id : ""));
    json_object_set_new (dict, "status", json_string (failed ? "error" : "success"));
    if (failed) {
        char why[1200];
        s_exec_error (sc, why, sizeof why);
        json_object_set_new (dict, "error", json_string (why));
    }
    /* Code Box's words for a run that printed nothing; the new artifacts
       are new_artifacts' (not again at the text's end) */
    json_object_set_new (dict, "output", s_output (text, json_array_size (
                                                             json_object_get (sc, "new_artifacts"))));
    json_object_set_new (dict, "new_artifacts",
                         gw_mcp_code_box_artifacts (json_object_get (sc, "new_artifacts")));
    size_t left_out;
    json_object_set_new (dict, "all_artifacts", s_all_artifacts (gw_job_session (job),
                                                                 &left_out));
    if (left_out)
        json_object_set_new (dict, "all_artifacts_left_out", json_integer ((json_int_t) left_out));
    if (json_is_true (json_object_get (sc, "kernel_restarted")))
        json_object_set_new (dict, "kernel_restarted", json_true ());
    /* the images (and links to whole outputs) after the text, for the model */
    json_t *more = json_array ();
    for (size_t i = 1; i < json_array_size (content); i++)
        json_array_append (more, json_array_get (content, i));
    json_decref (result);
    return gw_mcp_code_box_answer (dict, more, failed);
}

/* upload_file's answer: {session_id, status, saved_path, size_bytes,
 * filename, content_type, message}. */
json_t *
gw_mcp_code_box_upload_shape (gw_mcp_call_t *call, json_t *result)
{
    const char *id = s_call_session (call);
    if (json_is_true (json_object_get (result, "isError")))
        return gw_mcp_code_box_error (result, id);
    json_t *sc = json_object_get (result, "structuredContent");
    const char *saved = json_string_value (json_object_get (sc, "saved_path"));
    const char *name = json_string_value (json_object_get (sc, "filename"));
    char message[2600];
    snprintf (message, sizeof message, "File '%s' is saved in the session's input folder. Open "
              "it in exec_code as %s.", name ? name : "", saved ? saved : "");
    json_t *dict = json_pack ("{s:s, s:s, s:O, s:O, s:O, s:O, s:s}", "session_id", id ? id : "",
                              "status", "success", "saved_path", json_object_get (sc, "saved_path"),
                              "size_bytes", json_object_get (sc, "size"), "filename",
                              json_object_get (sc, "filename"), "content_type",
                              json_object_get (sc, "content_type"), "message", message);
    json_decref (result);
    return dict ? gw_mcp_code_box_answer (dict, NULL, false)
                : gw_mcp_code_box_fail (id, "out of memory");
}

/* The rows (arrays) of a result as objects by column name (new), as Code
 * Box's SQLAlchemy rows come. */
static json_t *
s_rows_as_dicts (json_t *names, json_t *rows)
{
    json_t *out = json_array ();
    size_t i, k;
    json_t *row, *value;
    json_array_foreach (rows, i, row) {
        json_t *dict = json_object ();
        json_array_foreach (row, k, value) {
            const char *name = json_string_value (json_array_get (names, k));
            if (name)
                json_object_set (dict, name, value);
        }
        json_array_append_new (out, dict);
    }
    return out;
}

/* exec_sql's answer: few rows inline {session_id, status, delivery:
 * "inline", columns, rows (objects), row_count}; many in a CSV {..,
 * delivery: "file", row_count, column_count, columns, file_path,
 * file_name, message}. */
json_t *
gw_mcp_code_box_sql_shape (gw_mcp_call_t *call, json_t *result)
{
    const char *id = s_call_session (call);
    if (json_is_true (json_object_get (result, "isError")))
        return gw_mcp_code_box_error (result, id);
    json_t *sc = json_object_get (result, "structuredContent");
    json_t *names = json_array ();
    size_t i;
    json_t *c;
    json_array_foreach (json_object_get (sc, "columns"), i, c)
        json_array_append (names, json_object_get (c, "name"));
    const char *csv = json_string_value (json_object_get (sc, "csv_path"));
    json_t *dict = json_pack ("{s:s, s:s, s:s}", "session_id", id ? id : "", "status", "success",
                              "delivery", csv ? "file" : "inline");
    json_t *count = json_object_get (sc, "row_count");
    if (!csv) {
        json_object_set_new (dict, "columns", names);
        json_object_set_new (dict, "rows", s_rows_as_dicts (names, json_object_get (sc, "rows")));
        json_object_set (dict, "row_count", count);
    } else {
        const char *slash = strrchr (csv, '/');
        bool limit = json_is_true (json_object_get (sc, "row_limit_reached"));
        bool cut = json_is_true (json_object_get (sc, "csv_cut"));
        char message[2600];
        snprintf (message, sizeof message, "The query returned %lld rows, more than are sent "
                  "inline; %s in the session's input folder. Load them in exec_code with "
                  "pd.read_csv(r'%s').%s", (long long) json_integer_value (count),
                  limit || cut ? "those are" : "all of them are", csv,
                  limit ? " Fetching stopped at the most rows exec_sql reads: the query has "
                          "more (add a LIMIT or aggregate)."
                  : cut ? " The CSV stopped at the session's disk quota: the query has more "
                          "(add a LIMIT, select fewer columns or aggregate)." : "");
        json_object_set (dict, "row_count", count);
        json_object_set_new (dict, "column_count", json_integer ((json_int_t) json_array_size (names)));
        json_object_set_new (dict, "columns", names);
        json_object_set_new (dict, "file_path", json_string (csv));
        json_object_set_new (dict, "file_name", json_string (slash ? slash + 1 : csv));
        json_object_set_new (dict, "message", json_string (message));
    }
    json_t *note = json_object_get (sc, "note");
    if (note && !csv)
        json_object_set (dict, "note", note);
    json_decref (result);
    return gw_mcp_code_box_answer (dict, NULL, false);
}
