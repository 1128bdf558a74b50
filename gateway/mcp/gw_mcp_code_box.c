/* gw_mcp_code_box: the tool set "code-box" of CODEBOX_MCP_TOOLS: Code
 * Box's (CodeBoxMCP's) seven MCP tools with its names, argument names and
 * answers, so prompts and agents written for Code Box work unchanged on
 * codebox's sessions: exec_code(session_id, language, code),
 * exec_sql(session_id, query), upload_file(session_id, blob_url?,
 * filename?), list_artifacts(session_id), session_info(session_id),
 * list_sessions(), destroy_session(session_id); and its resource,
 * code-interpreter://usage-guide.
 *
 * The work is codebox's own tools' (gw_mcp_tools.c, gw_mcp_sql.c,
 * gw_mcp_upload.c), with their rules: the caller's tenant only, session
 * ids checked, downloads only from public http(s) addresses, SQL
 * read-only; the answers are reshaped into Code Box's dicts
 * (gw_mcp_code_box_shape.c), those that come later through the call's
 * hooks (result_fn for a run, shape for a query or a download). As in Code Box, exec_code, upload_file,
 * session_info and exec_sql make their session on first use;
 * list_artifacts and destroy_session do not. A session runs one kernel,
 * chosen by the language of its first exec_code: code in another language
 * needs another session_id (Code Box's Open Interpreter ran several in
 * one). input() is not answered (Code Box has no way to), so it raises.
 *
 * Threads: the loop thread only. */
#include "gw_mcp_code_box.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gw_artifacts.h"
#include "gw_mcp_call.h"
#include "gw_mcp_sql.h"
#include "gw_mcp_tool_sets.h"
#include "gw_mcp_tools.h"
#include "gw_mcp_upload.h"
#include "gw_session.h"
#include "gw_sessions.h"

#define SESSION_ID_PROP \
    "\"session_id\": {\"type\": \"string\", \"title\": \"Session Id\", \"x-mcp-header\": " \
    "\"Session-Id\", \"description\": \"Unique conversation/session identifier: 1-64 " \
    "characters of A-Z a-z 0-9 _ . - (for example 'user-42').\"}"

/* The session_id argument (NULL when absent; *error when not a string). */
static const char *
s_id (json_t *args, json_t **error)
{
    return gw_mcp_arg (args, "session_id", error);
}

/* The caller's session of args.session_id (made when create is set), or
 * NULL with *answer set to Code Box's error. */
static gw_session_t *
s_session (gw_mcp_ctx_t *ctx, json_t *args, bool create, json_t **answer)
{
    json_t *error = NULL;
    const char *id = s_id (args, &error);
    gw_session_t *session = gw_mcp_session (ctx, args, create, &error);
    if (!session)
        *answer = gw_mcp_code_box_error (error, id);
    return session;
}

/* Points the call that took ctx's reply at shape, for session id. */
static void
s_follow (gw_mcp_ctx_t *ctx, json_t *(*shape) (gw_mcp_call_t *, json_t *), const char *id)
{
    gw_mcp_call_t *call = gw_mcp_call_of (ctx->mcp, ctx->reply);
    if (!call)
        return;
    call->shape = shape;
    call->shape_arg = json_pack ("{s:s}", "session_id", id);
}

/* ---- exec_code ---- */

/* Code Box's language name as a kernel language: python for py and
 * python3, javascript for js and node; others as given. */
static const char *
s_language (const char *name)
{
    static const char *const aliases[][2] = {
        {"py", "python"}, {"python3", "python"}, {"js", "javascript"}, {"node", "javascript"},
        {"nodejs", "javascript"}, {"node.js", "javascript"},
    };
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcasecmp (name, aliases[i][0]) == 0)
            return aliases[i][1];
    return name;
}

/* True when s is only white space. */
static bool
s_blank (const char *s)
{
    while (*s && isspace ((unsigned char) *s))
        s++;
    return !*s;
}

/* The run's job is made: its call answers in Code Box's shape. */
static bool
s_on_job (gw_job_t *job, void *arg)
{
    gw_mcp_ctx_t *ctx = arg;
    gw_mcp_call_t *call = gw_mcp_call_start (ctx, job, false);
    if (!call)
        return false;
    call->result_fn = gw_mcp_code_box_exec_result;
    return true;
}

static json_t *
s_exec_code (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *error = NULL;
    const char *id = s_id (args, &error);
    const char *language = gw_mcp_arg (args, "language", &error);
    const char *code = gw_mcp_arg (args, "code", &error);
    if (error)
        return gw_mcp_code_box_error (error, id);
    if (!language || s_blank (language))
        return gw_mcp_code_box_fail (id, "language is required: the code's language, such as "
                                     "python or javascript");
    if (!code || s_blank (code))
        return gw_mcp_code_box_fail (id, "Code is empty: give the code to run in code");
    language = s_language (language);
    /* a new session gets a kernel of that language */
    json_t *opts = json_pack ("{s:O?, s:s}", "session_id", json_object_get (args, "session_id"),
                              "language", language);
    json_t *answer = NULL;
    gw_session_t *session = opts ? s_session (ctx, opts, true, &answer) : NULL;
    json_decref (opts);
    if (!session)
        return answer ? answer : gw_mcp_code_box_fail (id, "out of memory");
    const ks_spec_t *spec = gw_session_spec (session);
    if (strcasecmp (language, spec->language) != 0)
        return gw_mcp_code_box_fail (id, "Language '%s' is not enabled in session '%s': it runs "
                                     "%s (%s). Use another session_id for %s code.", language,
                                     id, spec->language, spec->name, language);
    gw_caller_t caller = gw_mcp_caller (ctx);
    gw_sessions_submit_t submit = {.allow_input = false, .on_job = s_on_job, .arg = ctx};
    gw_error_t e;
    char why[256];
    if (!gw_sessions_submit (ctx->mcp->server, &caller, session, code, &submit, &e, why,
                             sizeof why))
        return gw_mcp_code_box_fail (id, "%s", why);
    return NULL;    /* answered when the run ends */
}

/* ---- upload_file, exec_sql: codebox's, answering in Code Box's shape ---- */

static json_t *
s_upload_file (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *error = NULL;
    const char *id = s_id (args, &error);
    const char *blob_url = gw_mcp_arg (args, "blob_url", &error);
    const char *url = gw_mcp_arg (args, "url", &error);
    const char *filename = gw_mcp_arg (args, "filename", &error);
    if (error)
        return gw_mcp_code_box_error (error, id);
    if (blob_url && !*blob_url)
        blob_url = NULL;                /* Code Box's default, "" */
    if (!blob_url)
        blob_url = url && *url ? url : NULL;
    if (!blob_url)
        return gw_mcp_code_box_fail (id, "Provide 'blob_url': the public or SAS URL (http or "
                                     "https) of the file to download into the session.");
    json_t *mine = json_pack ("{s:O?, s:s}", "session_id", json_object_get (args, "session_id"),
                              "url", blob_url);
    if (mine && filename && *filename)
        json_object_set (mine, "filename", json_object_get (args, "filename"));
    json_t *result = mine ? gw_mcp_tool_upload_file.fn (ctx, mine)
                          : gw_mcp_code_box_fail (id, "out of memory");
    json_decref (mine);
    if (result)
        return gw_mcp_code_box_error (result, id);
    s_follow (ctx, gw_mcp_code_box_upload_shape, id);
    return NULL;
}

static json_t *
s_exec_sql (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *error = NULL;
    const char *id = s_id (args, &error);
    const char *query = gw_mcp_arg (args, "query", &error);
    if (error)
        return gw_mcp_code_box_error (error, id);
    if (!query || s_blank (query))
        return gw_mcp_code_box_fail (id, "Query is empty: give one read-only SELECT statement "
                                     "in query");
    json_t *result = gw_mcp_tool_exec_sql.fn (ctx, args);
    if (result)
        return gw_mcp_code_box_error (result, id);
    s_follow (ctx, gw_mcp_code_box_sql_shape, id);
    return NULL;
}

/* ---- the session tools ---- */

static json_t *
s_list_artifacts (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *answer = NULL;
    gw_session_t *session = s_session (ctx, args, false, &answer);
    if (!session)
        return answer;
    json_t *list = gw_artifacts_list (gw_session_workdir (session),
                                      gw_session_visible_workdir (session), GW_SNAPSHOT_SESSION);
    gw_server_annotate (ctx->mcp->server, session, list);
    json_t *shaped = gw_mcp_code_box_artifacts (list);
    json_decref (list);
    return gw_mcp_code_box_answer (json_pack ("{s:s, s:s, s:o, s:I}", "session_id",
                                              gw_session_id (session), "status", "success",
                                              "artifacts", shaped, "count",
                                              (json_int_t) json_array_size (shaped)),
                                   NULL, false);
}

/* True when artifacts go to Azure Blob (gw_blob is on). */
static bool
s_blob_on (const gw_config_t *config)
{
    return *gw_config_str (config, GW_SET_BLOB_CONNECTION_STRING)
           || *gw_config_str (config, GW_SET_BLOB_URL);
}

static json_t *
s_session_info (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *answer = NULL;
    gw_session_t *session = s_session (ctx, args, true, &answer);
    if (!session)
        return answer;
    const gw_config_t *config = gw_server_config (ctx->mcp->server);
    const gw_limits_t *limits = gw_session_limits (session);
    gw_overrides_t none = {0};
    const gw_overrides_t *o = ctx->overrides ? ctx->overrides : &none;
    bool blob = s_blob_on (config);
    json_t *effective = json_pack (
        "{s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "session_ttl", (json_int_t) limits->ttl_s,
        "idle_timeout", (json_int_t) limits->idle_s, "exec_timeout",
        (json_int_t) gw_sessions_exec_timeout (session, o, 0), "download_timeout",
        (json_int_t) gw_config_int (config, GW_SET_DOWNLOAD_TIMEOUT), "max_download_size",
        (json_int_t) gw_caller_clamp (o->max_download_size,
                                      gw_config_int (config, GW_SET_MAX_DOWNLOAD_SIZE)),
        "blob_sas_expiry_hours", (json_int_t) gw_config_int (config, GW_SET_BLOB_SAS_EXPIRY_HOURS),
        "sql_max_inline_rows", (json_int_t) gw_caller_clamp (
            o->sql_max_inline_rows, gw_config_int (config, GW_SET_SQL_MAX_INLINE_ROWS)));
    json_t *info = gw_session_json (session, false);   /* the paths code sees */
    json_t *dict = json_pack (
        "{s:s, s:s, s:O?, s:O?, s:O?, s:b, s:o, s:o, s:s, s:s}", "session_id",
        gw_session_id (session), "status", "success", "workdir",
        json_object_get (info, "workdir"), "input_dir", json_object_get (info, "input_dir"),
        "output_dir", json_object_get (info, "output_dir"), "blob_upload_enabled", blob,
        "blob_container", blob ? json_string (gw_config_str (config, GW_SET_BLOB_CONTAINER))
                               : json_null (),
        "effective_config", effective, "kernel", gw_session_spec (session)->name, "language",
        gw_session_spec (session)->language);
    json_decref (info);
    return dict ? gw_mcp_code_box_answer (dict, NULL, false)
                : gw_mcp_code_box_fail (gw_session_id (session), "out of memory");
}

static json_t *
s_list_sessions (gw_mcp_ctx_t *ctx, json_t *args)
{
    (void) args;
    gw_caller_t caller = gw_mcp_caller (ctx);
    json_t *sessions = gw_sessions_list (ctx->mcp->server, &caller, true);
    return gw_mcp_code_box_answer (json_pack ("{s:s, s:o, s:I}", "status", "success",
                                              "sessions", sessions, "count",
                                              (json_int_t) json_array_size (sessions)),
                                   NULL, false);
}

static json_t *
s_destroy_session (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *answer = NULL;
    gw_session_t *session = s_session (ctx, args, false, &answer);
    if (!session)
        return answer;
    char id[GW_ID_SIZE];
    snprintf (id, sizeof id, "%s", gw_session_id (session));
    gw_sessions_end (ctx->mcp->server, session);
    char message[GW_ID_SIZE + 64];
    snprintf (message, sizeof message, "Session '%s' destroyed.", id);
    return gw_mcp_code_box_answer (json_pack ("{s:s, s:s, s:s}", "session_id", id, "status",
                                              "success", "message", message),
                                   NULL, false);
}

/* ---- the tools as tools/list shows them ---- */

/* The annotations, as codebox's own tools of the same work have them. */
#define HINTS_READ \
    {.read_only = true, .destructive = false, .idempotent = true, .world = GW_MCP_WORLD_CLOSED}

static const gw_mcp_tool_t s_tool_exec_code = {
    "exec_code", "Execute code in a session",
    "Execute code in a stateful interpreter session. Sessions are created automatically on "
    "first use: pass any session_id and run code; variables, imports, files and the working "
    "directory persist across calls with the same session_id.\n\n"
    "Files the code saves (plots, Excel, CSV, HTML...) under the session's output directory "
    "are detected as artifacts. When Azure Blob Storage is configured each new artifact is "
    "uploaded and its SAS URL is in new_artifacts[].sas_url.\n\n"
    "Returns: session_id, status (success or error), output (stdout/stderr text and "
    "tracebacks), error (when status is error), new_artifacts (files made by this call: "
    "filename, path, extension, size_bytes, sas_url when blob storage is on) and "
    "all_artifacts. Images the code displays also come back as images.\n\n"
    "Args:\n    session_id: Unique conversation/session identifier (created if new).\n"
    "    language: Programming language (python, or javascript).\n"
    "    code: The code to execute.",
    "{\"type\": \"object\", \"properties\": {" SESSION_ID_PROP ", "
    "\"language\": {\"type\": \"string\", \"title\": \"Language\", \"description\": "
    "\"Programming language, e.g. python or javascript; a new session's kernel speaks "
    "it.\"}, "
    "\"code\": {\"type\": \"string\", \"title\": \"Code\", \"description\": \"The code to "
    "execute.\"}}, \"required\": [\"session_id\", \"language\", \"code\"]}",
    NULL,
    {.read_only = false, .destructive = true, .idempotent = false, .world = GW_MCP_WORLD_KERNEL},
    s_exec_code,
};

static const gw_mcp_tool_t s_tool_exec_sql = {
    "exec_sql", "Execute a read-only SQL query",
    "Execute a read-only SQL query (SELECT or WITH ... SELECT) on the configured database; "
    "anything that writes is refused. Small results (up to SQL_MAX_INLINE_ROWS, 30 by "
    "default) come back inline: delivery inline, columns, rows (one object per row) and "
    "row_count. Larger results are saved as a CSV file in the session's input directory: "
    "delivery file, file_path and file_name, to load in exec_code with "
    "pd.read_csv(file_path).\n\n"
    "Args:\n    session_id: Unique session identifier (the CSV of a large result goes to its "
    "input directory).\n    query: SQL SELECT query to execute.",
    "{\"type\": \"object\", \"properties\": {" SESSION_ID_PROP ", "
    "\"query\": {\"type\": \"string\", \"title\": \"Query\", \"description\": \"SQL SELECT "
    "query to execute.\"}}, \"required\": [\"session_id\", \"query\"]}",
    NULL, HINTS_READ, s_exec_sql,
};

static const gw_mcp_tool_t s_tool_upload_file = {
    "upload_file", "Upload a file into a session",
    "Upload a file (Excel, CSV, ...) into the session's input directory by downloading it "
    "from a URL (public http or https, or an Azure Blob SAS URL). The session is created if "
    "it does not exist.\n\n"
    "Returns: session_id, status, saved_path (open it in exec_code), size_bytes, message.\n\n"
    "Args:\n    session_id: Unique conversation/session identifier (created if new).\n"
    "    blob_url: Public URL or Azure Blob SAS URL to the file.\n"
    "    filename: Name for the saved file (e.g. sales.xlsx); if omitted, taken from the URL.",
    "{\"type\": \"object\", \"properties\": {" SESSION_ID_PROP ", "
    "\"blob_url\": {\"type\": \"string\", \"title\": \"Blob Url\", \"default\": \"\", "
    "\"description\": \"Public URL or Azure Blob SAS URL to the file.\"}, "
    "\"filename\": {\"type\": \"string\", \"title\": \"Filename\", \"default\": \"\", "
    "\"description\": \"Name for the saved file; if omitted, inferred from the URL.\"}}, "
    "\"required\": [\"session_id\"]}",
    NULL,
    {.read_only = false, .destructive = false, .idempotent = false, .world = GW_MCP_WORLD_OPEN},
    s_upload_file,
};

static const gw_mcp_tool_t s_tool_list_artifacts = {
    "list_artifacts", "List a session's artifacts",
    "List all generated artifacts (plots, CSVs, HTML...) of the session: filename, path, "
    "extension, size_bytes, and sas_url when blob storage is on.\n\n"
    "Returns: session_id, status, artifacts, count.\n\n"
    "Args:\n    session_id: Unique conversation/session identifier.",
    "{\"type\": \"object\", \"properties\": {" SESSION_ID_PROP "}, "
    "\"required\": [\"session_id\"]}",
    NULL, HINTS_READ, s_list_artifacts,
};

static const gw_mcp_tool_t s_tool_session_info = {
    "session_info", "Describe a session",
    "Return the session's paths and storage capabilities; the session is created if it does "
    "not exist. Call this first to learn the absolute paths of the input and output "
    "directories before writing or reading files.\n\n"
    "Returns: session_id, status, workdir, input_dir, output_dir, blob_upload_enabled, "
    "blob_container, effective_config.\n\n"
    "Args:\n    session_id: Unique conversation/session identifier (created if new).",
    "{\"type\": \"object\", \"properties\": {" SESSION_ID_PROP "}, "
    "\"required\": [\"session_id\"]}",
    NULL, HINTS_READ, s_session_info,
};

static const gw_mcp_tool_t s_tool_list_sessions = {
    "list_sessions", "List sessions",
    "List all active interpreter sessions with session_id, age_seconds, idle_seconds and "
    "workdir.\n\nReturns: status, sessions, count.",
    "{\"type\": \"object\", \"properties\": {}}",
    NULL, HINTS_READ, s_list_sessions,
};

static const gw_mcp_tool_t s_tool_destroy_session = {
    "destroy_session", "Destroy a session",
    "Explicitly destroy a session: stop its interpreter and delete its files. Call it when "
    "done to free resources.\n\nReturns: session_id, status, message.\n\n"
    "Args:\n    session_id: Unique conversation/session identifier.",
    "{\"type\": \"object\", \"properties\": {" SESSION_ID_PROP "}, "
    "\"required\": [\"session_id\"]}",
    NULL,
    {.read_only = false, .destructive = true, .idempotent = true, .world = GW_MCP_WORLD_CLOSED},
    s_destroy_session,
};

const gw_mcp_tool_t *const gw_mcp_code_box_tools[] = {
    &s_tool_exec_code, &s_tool_exec_sql, &s_tool_upload_file, &s_tool_list_artifacts,
    &s_tool_session_info, &s_tool_list_sessions, &s_tool_destroy_session, NULL,
};

/* ---- the usage guide ---- */

#define S_GUIDE_URI "code-interpreter://usage-guide"

static const char s_guide[] =
    "# Usage Guide\n\n"
    "## Tools\n"
    "| Tool | What it does |\n|---|---|\n"
    "| `exec_code` | Runs code in a kernel that keeps its state between calls |\n"
    "| `exec_sql` | Runs one read-only SQL query |\n"
    "| `upload_file` | Downloads a file from a URL into the session's `input/` folder |\n"
    "| `list_artifacts` | Lists the files the session's code wrote |\n"
    "| `session_info` | Tells the session's folders and limits |\n"
    "| `list_sessions` | Lists your sessions |\n"
    "| `destroy_session` | Ends a session and deletes its files |\n\n"
    "## Sessions\n"
    "- Pick a `session_id` and reuse it: the session is made on its first call, and its "
    "variables, imports and files stay between calls.\n"
    "- A session runs one language, chosen by its first `exec_code`; use another "
    "`session_id` for another language.\n"
    "- Call `session_info` first to learn `workdir`, `input_dir` and `output_dir`. The code's "
    "working directory is `workdir`, so relative paths such as `output/plot.png` work.\n\n"
    "## Files and artifacts\n"
    "- `upload_file` saves into `input/`; open the returned `saved_path` in `exec_code`.\n"
    "- Save results (plots, CSV, Excel, HTML) under `output/`: each `exec_code` answer lists "
    "them in `new_artifacts`, with a `sas_url` to download each when blob storage is "
    "configured.\n\n"
    "## SQL\n"
    "- `exec_sql` only reads: writes are refused. A few rows come back inline; more go to a "
    "CSV under `input/` (`file_path`), to load with `pd.read_csv`.\n\n"
    "## Good habits\n"
    "1. Reuse what is already in memory instead of importing and loading again.\n"
    "2. On an error, fix the failing part and run only that again.\n"
    "3. If a session is gone (expired or destroyed), start it again and redo its setup.\n"
    "4. Call `destroy_session` when done.\n";

/* True when CODEBOX_MCP_TOOLS names code-box. */
static bool
s_on (gw_mcp_t *mcp)
{
    gw_mcp_set_order_t order;
    char err[256];
    if (gw_mcp_tool_sets_parse (gw_config_str (gw_server_config (mcp->server),
                                               GW_SET_MCP_TOOLS), &order, err, sizeof err))
        return false;
    for (size_t i = 0; i < order.n; i++)
        if (order.set[i] == GW_MCP_SET_CODE_BOX)
            return true;
    return false;
}

void
gw_mcp_code_box_resources (gw_mcp_t *mcp, json_t *resources)
{
    if (s_on (mcp))
        json_array_append_new (resources, json_pack (
            "{s:s, s:s, s:s, s:s}", "uri", S_GUIDE_URI, "name", "get_usage_guide",
            "description", "Usage guide and best practices for the code interpreter tools.",
            "mimeType", "text/plain"));
}

json_t *
gw_mcp_code_box_read (gw_mcp_t *mcp, const char *uri)
{
    if (strcmp (uri, S_GUIDE_URI) != 0 || !s_on (mcp))
        return NULL;
    return json_pack ("{s:s, s:s, s:s}", "uri", uri, "mimeType", "text/plain", "text", s_guide);
}
