/* gw_mcp_e2b_run: the tools of the "e2b" tool set of CODEBOX_MCP_TOOLS
 * that run code, in the E2B sandbox MCP server's words and shapes (its
 * tools/code_execution_tools.py), on codebox's sessions:
 *
 * - execute_code(session_id, code): runs in the sandbox (a session made by
 *   create_sandbox), state kept between calls. Answers the seed's dict
 *   {"logs": {"stdout": [...], "stderr": [...]}, "error": null or
 *   {"name", "value", "traceback"}} (E2B's Logs and ExecutionError), plus
 *   "results" (each result or display as text: the seed drops them, and a
 *   model should see 6*7's 42) and "kernel_restarted" when it was; then
 *   one image item per PNG or JPEG shown, as codebox's exec_code gives
 *   them (gw_mcp_exec_result: large ones downscaled and linked). isError
 *   when the code did not complete, as every codebox tool that runs code.
 * - create_run_close(code): the same once, in a fresh kernel ended with the
 *   run, with the seed's "sandbox_status", "sandbox_closed" and
 *   "sandbox_removed".
 *
 * And what every tool of the set shares: its string arguments, the
 * sandbox a call names (a session of the caller's that exists), its
 * answers. Errors are the seed's dicts, {"error": "..."}, as JSON text (what the
 * model reads) with isError set. Text longer than CODEBOX_MODEL_TEXT_BYTES
 * keeps its head and tail in the JSON text (the dict in structuredContent
 * stays whole; the whole output is also saved in the session when
 * codebox's own rendering of it was cut, and its path named).
 *
 * A run's call is codebox's (gw_mcp_call_start: progress, cancellation,
 * tasks); its result_fn gives the answer this shape. input() is not asked
 * of the client: the seed's sandboxes have no stdin either.
 *
 * Threads: the loop thread only. */
#include "gw_mcp_e2b_run.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_ansi.h"
#include "gw_mcp_call.h"
#include "gw_mcp_exec.h"
#include "gw_mcp_tools.h"
#include "gw_session.h"
#include "gw_sessions.h"
#include "jp_bundle_text.h"

/* How many results an over-long answer's text keeps, at each end. */
#define S_RESULTS_KEPT 10

json_t *
gw_mcp_e2b_result (json_t *dict, json_t *extra, bool is_error)
{
    /* FastMCP gives a dict as indented JSON text */
    char *text = json_dumps (dict, JSON_INDENT (2));
    json_t *content = json_pack ("[{s:s, s:s}]", "type", "text", "text", text ? text : "{}");
    free (text);
    json_array_extend (content, extra);
    json_decref (extra);
    return json_pack ("{s:o, s:o, s:b}", "content", content, "structuredContent", dict,
                      "isError", is_error);
}

json_t *
gw_mcp_e2b_error (const char *fmt, ...)
{
    char message[1536];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (message, sizeof message, fmt, ap);
    va_end (ap);
    return gw_mcp_e2b_result (json_pack ("{s:s}", "error", message), NULL, true);
}

const char *
gw_mcp_e2b_arg (json_t *args, const char *key, json_t **error)
{
    json_t *v = json_object_get (args, key);
    if (v && !json_is_string (v) && !json_is_null (v) && !*error)
        *error = gw_mcp_e2b_error ("%s must be a string", key);
    return json_string_value (v);
}

gw_session_t *
gw_mcp_e2b_sandbox (gw_mcp_ctx_t *ctx, json_t *args, json_t **error)
{
    const char *id = gw_mcp_e2b_arg (args, "session_id", error);
    if (*error)
        return NULL;
    if (!id) {
        *error = gw_mcp_e2b_error ("session_id is required: the ID given to create_sandbox");
        return NULL;
    }
    gw_caller_t caller = gw_mcp_caller (ctx);
    gw_sessions_where_t where;
    gw_session_t *session = gw_sessions_resolve (ctx->mcp->server, &caller, id, &where);
    if (session)
        gw_session_touch (session);
    else if (where.e == GW_E_INVALID_SESSION_ID)
        *error = gw_mcp_e2b_error ("No sandbox found with session ID: %.80s. Sandbox IDs are "
                                   "1-64 characters of A-Z a-z 0-9 _ . - not starting with "
                                   "'.'", id);
    else if (where.e == GW_E_WRONG_NODE || where.e == GW_E_SESSION_LOST)
        *error = gw_mcp_e2b_error ("%s", where.why);
    else
        *error = gw_mcp_e2b_error ("No sandbox found with session ID: %s. Create a sandbox "
                                   "first.", id);
    return session;
}

/* ---- a run's answer ---- */

/* E2B's Logs: the stdout and stderr chunks, in order (new). */
static json_t *
s_logs (json_t *outputs)
{
    json_t *out = json_array (), *err = json_array ();
    size_t i;
    json_t *item;
    json_array_foreach (outputs, i, item) {
        if (strcmp (json_string_value (json_object_get (item, "type")), "stream") != 0)
            continue;
        bool is_err = strcmp (json_string_value (json_object_get (item, "name")), "stderr") == 0;
        json_array_append (is_err ? err : out, json_object_get (item, "content"));
    }
    return json_pack ("{s:o, s:o}", "stdout", out, "stderr", err);
}

/* E2B's ExecutionError of a run that did not complete, or null (new): the
 * exception's name, value and traceback (without colours); a timeout,
 * cancel or dead kernel named as such. */
static json_t *
s_error (gw_job_t *job, json_t *outputs)
{
    json_t *raised = NULL;
    size_t i;
    json_t *item;
    json_array_foreach (outputs, i, item)
        if (strcmp (json_string_value (json_object_get (item, "type")), "error") == 0)
            raised = item;
    gw_exec_status_t status = gw_job_status (job);
    const char *reason = gw_job_reason (job);
    if (status == GW_EXEC_COMPLETED && !raised)
        return json_null ();
    char *tb = NULL;
    size_t tb_len = 0;
    FILE *f = open_memstream (&tb, &tb_len);
    json_array_foreach (json_object_get (raised, "traceback"), i, item)
        if (f)
            fprintf (f, "%s%s", i ? "\n" : "", json_string_value (item));
    if (f)
        fclose (f);
    if (tb)
        gw_ansi_strip (tb);
    const char *name = json_string_value (json_object_get (raised, "ename"));
    const char *value = json_string_value (json_object_get (raised, "evalue"));
    if (status == GW_EXEC_TIMEOUT) {
        name = "TimeoutError";
        value = reason && strcmp (reason, "cpu_time") == 0
                    ? "the execution used up its CPU time and was interrupted"
                    : "the execution timed out and was interrupted";
    } else if (status == GW_EXEC_CANCELLED) {
        name = "CancelledError";
        value = "the execution was cancelled";
    } else if (reason && strcmp (reason, "kernel_died") == 0) {
        name = "KernelDiedError";
        value = "the kernel died; it was restarted and its variables are lost (files are kept)";
    } else if (!name) {
        name = "ExecutionError";
        value = reason ? reason : "the code did not complete";
    }
    json_t *error = json_pack ("{s:s, s:s, s:s}", "name", name, "value", value ? value : "",
                               "traceback", tb ? tb : "");
    free (tb);
    return error;
}

/* Each result and display as {"is_main_result", "text"?, "formats"}
 * (new): its text as codebox's exec_code gives it (jp_bundle_text), its
 * MIME types; images come as image items beside. */
static json_t *
s_results (json_t *outputs, size_t max_text)
{
    json_t *results = json_array ();
    size_t i;
    json_t *item;
    json_array_foreach (outputs, i, item) {
        const char *type = json_string_value (json_object_get (item, "type"));
        bool main_result = strcmp (type, "result") == 0;
        if (!main_result && strcmp (type, "display") != 0)
            continue;
        json_t *data = json_object_get (item, "data");
        json_t *formats = json_array ();
        const char *mime;
        json_t *value;
        bool image = false;
        json_object_foreach (data, mime, value) {
            json_array_append_new (formats, json_string (mime));
            image = image || strncmp (mime, "image/", 6) == 0;
        }
        json_t *entry = json_pack ("{s:b, s:o}", "is_main_result", main_result, "formats",
                                   formats);
        size_t len = 0;
        char *text = jp_bundle_text (data, max_text, &len, &mime);
        /* "<Figure size 640x480 with 1 Axes>" beside its image says little,
           but it is what E2B's text is too; only a bare repr is left out */
        if (text && !(image && jp_bundle_placeholder (text, len)))
            json_object_set_new (entry, "text", json_stringn (text, len));
        free (text);
        json_array_append_new (results, entry);
    }
    return results;
}

/* s (len bytes) as a new JSON string of at most about keep bytes: its
 * head and tail around a marker that says what was left out and where. */
static json_t *
s_cut (const char *s, size_t len, size_t keep, const char *where)
{
    if (len <= keep)
        return json_stringn (s, len);
    size_t head = keep * 2 / 3, tail = len - (keep - head);
    while (head > 0 && ((unsigned char) s[head] & 0xC0) == 0x80)
        head--;
    while (tail < len && ((unsigned char) s[tail] & 0xC0) == 0x80)
        tail++;
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream (&text, &n);
    if (!f)
        return json_string ("(out of memory)");
    fprintf (f, "%.*s\n[... %zu of %zu bytes left out here; %s ...]\n%.*s", (int) head, s,
             tail - head, len, where, (int) (len - tail), s + tail);
    fclose (f);
    json_t *cut = json_stringn (text ? text : "", text ? n : 0);
    free (text);
    return cut;
}

/* The chunks of a log (borrowed array) joined and cut to keep bytes
 * (new: an array of one string). */
static json_t *
s_cut_log (json_t *chunks, size_t keep, const char *where)
{
    if (json_array_size (chunks) == 0)
        return json_array ();
    char *all = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&all, &len);
    size_t i;
    json_t *chunk;
    json_array_foreach (chunks, i, chunk)
        if (f)
            fwrite (json_string_value (chunk), 1, json_string_length (chunk), f);
    if (f)
        fclose (f);
    json_t *one = json_pack ("[o]", s_cut (all ? all : "", all ? len : 0, keep, where));
    free (all);
    return one;
}

/* A copy of dict (borrowed) whose long texts are cut to keep bytes each:
 * the logs (joined), the traceback, each result's text; and at most
 * S_RESULTS_KEPT results at each end. */
static json_t *
s_shortened (json_t *dict, size_t keep, const char *where)
{
    json_t *copy = json_deep_copy (dict);
    json_t *logs = json_object_get (copy, "logs");
    for (int k = 0; k < 2 && logs; k++) {
        const char *name = k ? "stderr" : "stdout";
        json_object_set_new (logs, name, s_cut_log (json_object_get (logs, name), keep, where));
    }
    json_t *error = json_object_get (copy, "error");
    json_t *tb = json_object_get (error, "traceback");
    if (tb)
        json_object_set_new (error, "traceback", s_cut (json_string_value (tb),
                                                       json_string_length (tb), keep, where));
    json_t *results = json_object_get (copy, "results");
    size_t n = json_array_size (results);
    if (n > 2 * S_RESULTS_KEPT) {
        for (size_t i = S_RESULTS_KEPT; i < n - S_RESULTS_KEPT; i++)
            json_array_remove (results, S_RESULTS_KEPT);
        char note[120];
        snprintf (note, sizeof note, "[... %zu results left out here ...]",
                  n - 2 * S_RESULTS_KEPT);
        json_array_insert_new (results, S_RESULTS_KEPT,
                               json_pack ("{s:b, s:[], s:s}", "is_main_result", 0, "formats",
                                          "text", note));
    }
    size_t i;
    json_t *entry;
    json_array_foreach (results, i, entry) {
        json_t *text = json_object_get (entry, "text");
        if (text)
            json_object_set_new (entry, "text", s_cut (json_string_value (text),
                                                       json_string_length (text), keep, where));
    }
    return copy;
}

/* The answer of a finished run (new): the seed's dict (with closed, what
 * create_run_close adds) as JSON text, cut to the model's budget, then
 * the images and links of codebox's own answer. */
static json_t *
s_run_result (gw_mcp_t *mcp, gw_job_t *job, bool closed)
{
    const gw_config_t *config = gw_server_config (mcp->server);
    gw_execution_t *exec = gw_job_execution (job);
    json_t *outputs = exec ? gw_execution_outputs (exec) : NULL;
    json_t *dict = json_pack ("{s:o, s:o, s:o}", "logs", s_logs (outputs), "error",
                              s_error (job, outputs), "results",
                              s_results (outputs, (size_t) gw_config_int (
                                             config, GW_SET_MAX_OUTPUT_BYTES)));
    if (!dict)
        return gw_mcp_e2b_error ("Error executing code: out of memory");
    if (gw_job_kernel_restarted (job))
        json_object_set_new (dict, "kernel_restarted", json_true ());
    if (closed) {
        json_object_set_new (dict, "sandbox_status",
                             json_string ("created and will be closed automatically"));
        json_object_set_new (dict, "sandbox_closed", json_true ());
        json_object_set_new (dict, "sandbox_removed", json_true ());
    }
    /* codebox's own answer: its images (downscaled and linked when large),
       and the whole output saved when its text was cut */
    json_t *codebox = gw_mcp_exec_result (mcp, job);
    json_t *content = json_object_get (codebox, "content");
    json_t *extra = json_array ();
    char where[1400] = "";
    size_t i;
    json_t *item;
    json_array_foreach (content, i, item) {
        if (i == 0)
            continue;   /* its text: the dict says it */
        json_array_append (extra, item);
        const char *uri = json_string_value (json_object_get (item, "uri"));
        const char *rel = uri ? strstr (uri, "/.codebox/outputs/") : NULL;
        gw_session_t *session = gw_job_session (job);
        if (rel && session && strcmp (json_string_value (json_object_get (item, "type")),
                                      "resource_link") == 0)
            snprintf (where, sizeof where, "the whole output is saved as %s%s: read_file "
                      "with that file_path", gw_session_visible_workdir (session), rel);
    }
    bool is_error = json_is_true (json_object_get (codebox, "isError"));
    json_decref (codebox);
    if (!*where)
        snprintf (where, sizeof where, "%s", closed
                  ? "a one-shot run keeps no files: use create_sandbox and execute_code to "
                    "keep the whole output"
                  : "the whole output is in this result's structuredContent");
    size_t budget = (size_t) gw_config_int (config, GW_SET_MODEL_TEXT_BYTES);
    char *text = json_dumps (dict, JSON_INDENT (2));
    for (size_t keep = budget / 2; text && strlen (text) > budget && keep >= 64;
         keep = keep * 2 / 3) {
        free (text);
        json_t *shorter = s_shortened (dict, keep, where);
        text = json_dumps (shorter, JSON_INDENT (2));
        json_decref (shorter);
    }
    json_array_insert_new (extra, 0, json_pack ("{s:s, s:s}", "type", "text", "text",
                                                text ? text : "{}"));
    free (text);
    return json_pack ("{s:o, s:o, s:b}", "content", extra, "structuredContent", dict,
                      "isError", is_error);
}

static json_t *
s_execute_result (gw_mcp_t *mcp, gw_job_t *job)
{
    return s_run_result (mcp, job, false);
}

static json_t *
s_one_shot_result (gw_mcp_t *mcp, gw_job_t *job)
{
    return s_run_result (mcp, job, true);
}

/* ---- running code ---- */

/* The call that answers a run, made before the job is queued. */
typedef struct {
    gw_mcp_ctx_t *ctx;
    bool oneshot;
} s_run_t;

static bool
s_on_job (gw_job_t *job, void *arg)
{
    s_run_t *run = arg;
    gw_mcp_call_t *call = gw_mcp_call_start (run->ctx, job, run->oneshot);
    if (call)
        call->result_fn = run->oneshot ? s_one_shot_result : s_execute_result;
    return call != NULL;
}

/* Queues code in session; the reply is the call's then (NULL), or a tool
 * error (new). oneshot: the session ends with the run. */
static json_t *
s_submit (gw_mcp_ctx_t *ctx, gw_session_t *session, const char *code, bool oneshot)
{
    gw_caller_t caller = gw_mcp_caller (ctx);
    s_run_t run = {.ctx = ctx, .oneshot = oneshot};
    gw_sessions_submit_t submit = {.on_job = s_on_job, .arg = &run};
    gw_error_t e;
    char why[256];
    if (gw_sessions_submit (ctx->mcp->server, &caller, session, code, &submit, &e, why,
                            sizeof why))
        return NULL;
    if (oneshot)
        gw_session_end_later (session);
    return gw_mcp_e2b_error ("Error executing code: %s", why);
}

static json_t *
s_execute_code (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *error = NULL;
    const char *code = gw_mcp_e2b_arg (args, "code", &error);
    gw_session_t *session = error ? NULL : gw_mcp_e2b_sandbox (ctx, args, &error);
    if (!error && !code)
        error = gw_mcp_e2b_error ("code is required: the Python code to run in the sandbox");
    if (error)
        return error;
    return s_submit (ctx, session, code, false);
}

static json_t *
s_create_run_close (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *error = NULL;
    const char *code = gw_mcp_e2b_arg (args, "code", &error);
    if (!error && !code)
        error = gw_mcp_e2b_error ("code is required: the Python code to run");
    gw_session_t *session = error ? NULL : gw_mcp_oneshot_session (ctx, "python", &error);
    if (!error)
        return s_submit (ctx, session, code, true);
    if (!json_object_get (json_object_get (error, "structuredContent"), "status"))
        return error;   /* ours already */
    /* codebox's words, in the seed's dict */
    json_t *text = json_object_get (json_array_get (json_object_get (error, "content"), 0),
                                    "text");
    json_t *ours = gw_mcp_e2b_error ("Operation failed: %s", json_string_value (text));
    json_decref (error);
    return ours;
}

/* ---- the tools ---- */

/* What a run answers: E2B's logs and error, and the results beside. */
#define RUN_OUTPUT_SCHEMA(more) \
    "{\"type\": \"object\", \"properties\": {" \
    "\"logs\": {\"type\": \"object\", \"properties\": {" \
    "\"stdout\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}}, " \
    "\"stderr\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}}}}, " \
    "\"error\": {\"description\": \"null, {name, value, traceback} when the code raised, or " \
    "a message when the call failed\"}, " \
    "\"results\": {\"type\": \"array\", \"items\": {\"type\": \"object\"}}, " \
    "\"kernel_restarted\": {\"type\": \"boolean\"}" more "}}"

const gw_mcp_tool_t gw_mcp_e2b_execute_code = {
    "execute_code",
    "Execute Python code in a sandbox",
    "Execute Python code in a sandbox made with create_sandbox. Variables, imports and files "
    "persist between calls with the same session_id. Returns a dict with the logs (stdout "
    "and stderr) and the error, if any (name, value, traceback); results holds the value of "
    "the last expression and what was displayed, and plots come back as images.\n\n"
    "Args:\n    session_id: The sandbox's ID\n    code: The Python code to execute",
    "{\"type\": \"object\", \"properties\": {" GW_MCP_E2B_ID_PROP ", "
    "\"code\": {\"type\": \"string\", \"title\": \"Code\", \"description\": \"The Python code "
    "to execute.\"}}, \"required\": [\"session_id\", \"code\"]}",
    RUN_OUTPUT_SCHEMA (""),
    {.read_only = false, .destructive = true, .idempotent = false, .world = GW_MCP_WORLD_KERNEL},
    s_execute_code,
};

const gw_mcp_tool_t gw_mcp_e2b_create_run_close = {
    "create_run_close",
    "Create a sandbox, run code, close it",
    "Create a sandbox, run Python code in it and close it again, in one call: for one-off "
    "runs (nothing is kept afterwards). Returns what execute_code returns, and that the "
    "sandbox was closed.\n\n"
    "Args:\n    code: The Python code to execute",
    "{\"type\": \"object\", \"properties\": {\"code\": {\"type\": \"string\", \"title\": "
    "\"Code\", \"description\": \"The Python code to execute.\"}}, \"required\": [\"code\"]}",
    RUN_OUTPUT_SCHEMA (", \"sandbox_status\": {\"type\": \"string\"}, \"sandbox_closed\": "
                       "{\"type\": \"boolean\"}, \"sandbox_removed\": {\"type\": \"boolean\"}"),
    {.read_only = false, .destructive = true, .idempotent = false, .world = GW_MCP_WORLD_KERNEL},
    s_create_run_close,
};
