/* gw_mcp_tools: the built-in MCP tools: their schemas (what tools/list
 * shows an LLM) and their work: exec_code, run_python_code,
 * run_javascript_code, write_file, read_file, list_files, list_artifacts,
 * session_info, list_sessions, destroy_session, list_kernels; and what
 * every tool uses (its string arguments, its caller, the caller's session,
 * a one-shot session, a run handed to a call, its results). A tool that takes a session_id creates the session on first
 * use (but destroy_session). tools/list and tools/call over these and the
 * tools in files of their own are gw_mcp_tool_list.c's.
 *
 * Threads: the loop thread only. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw_artifacts.h"
#include "gw_id.h"
#include "gw_base64.h"
#include "gw_fs.h"
#include "gw_mcp_call.h"
#include "gw_mcp_exec.h"
#include "gw_mcp_reply.h"
#include "gw_mcp_tasks.h"
#include "gw_mcp_tools.h"
#include "gw_path.h"
#include "gw_sandbox.h"
#include "gw_session.h"
#include "gw_sessions.h"
#include "ks_search.h"
#include "jp_log.h"
#include "jp_utf8.h"

#define MAX_FILE_BYTES (64u << 20)

#define SESSION_ID_PROP \
    "\"session_id\": {\"type\": \"string\", \"x-mcp-header\": \"Session-Id\", " \
    "\"description\": \"Your session's name, 1-64 " \
    "characters of A-Z a-z 0-9 _ . - (for example 'main'). Reuse it so variables and " \
    "files persist; a new name starts a new session.\"}"

#define EXEC_OUTPUT_SCHEMA \
    "{\"type\": \"object\", \"properties\": {" \
    "\"status\": {\"type\": \"string\", \"enum\": [\"completed\", \"error\", \"timeout\", " \
    "\"cancelled\"]}, \"execution_count\": {\"type\": \"integer\"}, " \
    "\"stdout\": {\"type\": \"string\"}, \"stderr\": {\"type\": \"string\"}, " \
    "\"result\": {\"type\": [\"string\", \"null\"]}, " \
    "\"error\": {\"type\": [\"object\", \"null\"]}, \"displays\": {\"type\": \"array\"}, " \
    "\"new_artifacts\": {\"type\": \"array\"}, \"duration_ms\": {\"type\": \"integer\"}, " \
    "\"session_id\": {\"type\": \"string\"}}, \"required\": [\"status\"]}"

/* The annotations of this file's tools. Reading tools change nothing but
 * may create the session they name (empty) on first use. Code runs with
 * the session's rights: it can delete the session's files (and more
 * without a sandbox), and a run may not give the same result twice.
 * write_file overwrites a file and destroy_session deletes the session:
 * destructive, but the same call again changes nothing more. */
#define HINTS_READ \
    {.read_only = true, .destructive = false, .idempotent = true, .world = GW_MCP_WORLD_CLOSED}
#define HINTS_RUN \
    {.read_only = false, .destructive = true, .idempotent = false, .world = GW_MCP_WORLD_KERNEL}
#define HINTS_OVERWRITE \
    {.read_only = false, .destructive = true, .idempotent = true, .world = GW_MCP_WORLD_CLOSED}

typedef gw_mcp_tool_fn s_tool_fn;
typedef gw_mcp_tool_t s_tool_t;

static s_tool_fn s_exec_code, s_run_python, s_run_javascript, s_write_file, s_read_file,
    s_list_files, s_list_artifacts, s_session_info, s_list_sessions, s_destroy_session,
    s_list_kernels;

static const s_tool_t s_tools[] = {
    {"exec_code", "Run code in a session",
     "Run code in a persistent Jupyter kernel and return its stdout, stderr, result, "
     "errors with tracebacks, and any plots as images. Variables, imports and files persist "
     "between calls with the same session_id. The working directory is the session folder: "
     "read inputs from input/, save files for the user under output/. The session is "
     "created on first use, in Python unless you give language or kernel.",
     "{\"type\": \"object\", \"properties\": {" SESSION_ID_PROP ", "
     "\"code\": {\"type\": \"string\", \"description\": \"The code to run.\"}, "
     "\"language\": {\"type\": \"string\", \"description\": \"python or javascript (or any "
     "installed kernel's language); only used when the session is new.\"}, "
     "\"kernel\": {\"type\": \"string\", \"description\": \"A kernelspec name (see "
     "list_kernels); only used when the session is new.\"}, "
     "\"timeout\": {\"type\": \"integer\", \"minimum\": 1, \"description\": \"Seconds before "
     "the run is interrupted (the server's limit still applies).\"}}, "
     "\"required\": [\"session_id\", \"code\"]}",
     EXEC_OUTPUT_SCHEMA, HINTS_RUN, s_exec_code},
    {"run_python_code", "Run Python once",
     "Run Python code once in a fresh kernel that is discarded afterwards; nothing persists. "
     "Use exec_code with a session_id to keep state.",
     "{\"type\": \"object\", \"properties\": {\"code\": {\"type\": \"string\", "
     "\"description\": \"The Python code to run.\"}}, \"required\": [\"code\"]}",
     EXEC_OUTPUT_SCHEMA, HINTS_RUN, s_run_python},
    {"run_javascript_code", "Run JavaScript once",
     "Run JavaScript (Node.js) code once in a fresh kernel that is discarded afterwards; "
     "nothing persists. Use exec_code with language javascript to keep state.",
     "{\"type\": \"object\", \"properties\": {\"code\": {\"type\": \"string\", "
     "\"description\": \"The JavaScript code to run.\"}}, \"required\": [\"code\"]}",
     EXEC_OUTPUT_SCHEMA, HINTS_RUN, s_run_javascript},
    {"write_file", "Write a file into a session",
     "Write a file into the session folder (for example input/data.csv), creating folders "
     "as needed. Code in the session can then open it by that relative path.",
     "{\"type\": \"object\", \"properties\": {" SESSION_ID_PROP ", "
     "\"path\": {\"type\": \"string\", \"description\": \"Path relative to the session "
     "folder, such as input/data.csv.\"}, \"content\": {\"type\": \"string\", "
     "\"description\": \"The file's content.\"}, \"encoding\": {\"type\": \"string\", "
     "\"enum\": [\"utf-8\", \"base64\"], \"description\": \"utf-8 (default) or base64 for "
     "binary content.\"}}, \"required\": [\"session_id\", \"path\", \"content\"]}",
     "{\"type\": \"object\", \"properties\": {\"path\": {\"type\": \"string\"}, "
     "\"size\": {\"type\": \"integer\"}}}", HINTS_OVERWRITE, s_write_file},
    {"read_file", "Read a file of a session",
     "Read a file of the session folder: text comes back as text, PNG/JPEG/GIF/WebP as an "
     "image, other bytes as an embedded resource. Long text comes in pieces (32 KiB by "
     "default): the answer says the offset to read on from.",
     "{\"type\": \"object\", \"properties\": {" SESSION_ID_PROP ", "
     "\"path\": {\"type\": \"string\", \"description\": \"Path relative to the session "
     "folder, such as output/plot.png.\"}, \"offset\": {\"type\": \"integer\", \"minimum\": 0, "
     "\"description\": \"For text: the byte to start at (default 0).\"}, \"length\": "
     "{\"type\": \"integer\", \"minimum\": 1, \"description\": \"For text: how many bytes "
     "at most (default and most: the server's CODEBOX_MODEL_TEXT_BYTES).\"}}, "
     "\"required\": [\"session_id\", \"path\"]}",
     "{\"type\": \"object\", \"properties\": {\"path\": {\"type\": \"string\"}, "
     "\"size\": {\"type\": \"integer\"}, \"mime\": {\"type\": \"string\"}, "
     "\"offset\": {\"type\": \"integer\"}, \"length\": {\"type\": \"integer\"}, "
     "\"next_offset\": {\"type\": \"integer\"}}}",
     HINTS_READ, s_read_file},
    {"list_files", "List files of a session",
     "List the entries of a folder of the session (default: the session folder itself) "
     "with name, size and kind.",
     "{\"type\": \"object\", \"properties\": {" SESSION_ID_PROP ", "
     "\"path\": {\"type\": \"string\", \"description\": \"A folder relative to the session "
     "folder, such as output (default: the session folder).\"}}, "
     "\"required\": [\"session_id\"]}",
     "{\"type\": \"object\", \"properties\": {\"path\": {\"type\": \"string\"}, "
     "\"entries\": {\"type\": \"array\"}}}", HINTS_READ, s_list_files},
    {"list_artifacts", "List a session's artifacts",
     "List the files under the session's output/ folder (plots, CSVs, reports the code "
     "saved) with path, size and MIME type.",
     "{\"type\": \"object\", \"properties\": {" SESSION_ID_PROP "}, "
     "\"required\": [\"session_id\"]}",
     "{\"type\": \"object\", \"properties\": {\"artifacts\": {\"type\": \"array\"}}}",
     HINTS_READ, s_list_artifacts},
    {"session_info", "Describe a session",
     "Describe a session: its working folder, input and output folders, kernel, status and "
     "limits. Call it first to learn where files go.",
     "{\"type\": \"object\", \"properties\": {" SESSION_ID_PROP "}, "
     "\"required\": [\"session_id\"]}",
     "{\"type\": \"object\", \"properties\": {\"session_id\": {\"type\": \"string\"}, "
     "\"workdir\": {\"type\": \"string\"}, \"input_dir\": {\"type\": \"string\"}, "
     "\"output_dir\": {\"type\": \"string\"}, \"kernel\": {\"type\": \"string\"}}}",
     HINTS_READ, s_session_info},
    {"list_sessions", "List sessions", "List your live sessions with their age and idle time.",
     "{\"type\": \"object\", \"properties\": {\"scope\": {\"type\": \"string\", "
     "\"enum\": [\"all\", \"node\"], \"description\": \"all (default): every node's "
     "sessions where several codebox nodes share a directory; node: this node's only.\"}}}",
     "{\"type\": \"object\", \"properties\": {\"sessions\": {\"type\": \"array\"}}}",
     HINTS_READ, s_list_sessions},
    {"destroy_session", "End a session",
     "End a session: stop its kernel and delete its files. Its variables are lost.",
     "{\"type\": \"object\", \"properties\": {" SESSION_ID_PROP "}, "
     "\"required\": [\"session_id\"]}",
     "{\"type\": \"object\", \"properties\": {\"session_id\": {\"type\": \"string\"}, "
     "\"destroyed\": {\"type\": \"boolean\"}}}", HINTS_OVERWRITE,
     s_destroy_session},
    {"list_kernels", "List kernels",
     "List the installed kernels (languages) a session can use.",
     "{\"type\": \"object\", \"properties\": {}}",
     "{\"type\": \"object\", \"properties\": {\"kernels\": {\"type\": \"array\"}}}",
     HINTS_READ, s_list_kernels},
};

#define N_TOOLS (sizeof s_tools / sizeof s_tools[0])

json_t *
gw_mcp_tool_error (const char *fmt, ...)
{
    char message[1536];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (message, sizeof message, fmt, ap);
    va_end (ap);
    /* the same shape as an execution's error, so it matches every tool's
       outputSchema (exec tools require status and an error object) */
    return json_pack ("{s:[{s:s, s:s}], s:{s:s, s:{s:s, s:s}}, s:b}", "content", "type", "text",
                      "text", message, "structuredContent", "status", "error", "error", "ename",
                      "ToolError", "evalue", message, "isError", 1);
}

json_t *
gw_mcp_tool_ok (json_t *structured, const char *text)
{
    char *dumped = text ? NULL : json_dumps (structured, JSON_INDENT (1));
    json_t *result = json_pack ("{s:[{s:s, s:s}], s:o, s:b}", "content", "type", "text", "text",
                                text ? text : dumped ? dumped : "", "structuredContent",
                                structured, "isError", 0);
    free (dumped);
    return result;
}

const gw_mcp_tool_t *
gw_mcp_tools_builtin (size_t *n)
{
    *n = N_TOOLS;
    return s_tools;
}

/* A string argument, or NULL (with *error set when present but not a
 * string). */
const char *
gw_mcp_arg (json_t *args, const char *key, json_t **error)
{
    json_t *v = json_object_get (args, key);
    if (v && !json_is_string (v) && !json_is_null (v) && !*error)
        *error = gw_mcp_tool_error ("'%s' must be a string", key);
    return json_string_value (v);
}

/* The caller of a tool for the core: the client's tenant and limits. */
gw_caller_t
gw_mcp_caller (gw_mcp_ctx_t *ctx)
{
    gw_caller_t caller = {.tenant = ctx->client->tenant};
    if (ctx->overrides)
        caller.overrides = *ctx->overrides;
    return caller;
}

/* The session named by args.session_id, created when unknown and create
 * is set. NULL with *error (a tool result) set otherwise. */
gw_session_t *
gw_mcp_session (gw_mcp_ctx_t *ctx, json_t *args, bool create, json_t **error)
{
    const char *id = gw_mcp_arg (args, "session_id", error);
    if (*error)
        return NULL;
    if (!id) {
        *error = gw_mcp_tool_error ("session_id is required: pick a name such as 'main' and "
                                    "reuse it in every call");
        return NULL;
    }
    gw_caller_t caller = gw_mcp_caller (ctx);
    gw_sessions_where_t where;
    gw_session_t *session = gw_sessions_resolve (ctx->mcp->server, &caller, id, &where);
    if (where.e == GW_E_INVALID_SESSION_ID) {
        *error = gw_mcp_tool_error ("invalid session_id '%.80s': use 1-64 characters of A-Z "
                                    "a-z 0-9 _ . - not starting with '.'", id);
        return NULL;
    }
    if (where.e == GW_E_WRONG_NODE || (where.e == GW_E_SESSION_LOST && !create)) {
        *error = gw_mcp_tool_error ("%s", where.why);
        return NULL;
    }
    if (session || !create) {
        if (!session)
            *error = gw_mcp_tool_error ("no session '%s'; list_sessions shows yours", id);
        else
            gw_session_touch (session);
        return session;
    }
    const char *language = gw_mcp_arg (args, "language", error);
    const char *kernel = gw_mcp_arg (args, "kernel", error);
    if (*error)
        return NULL;
    gw_sessions_new_t opts = {.id = id, .kernel = kernel, .language = language,
                              .where = &where};
    gw_error_t e;
    char err[1200];
    session = gw_sessions_create (ctx->mcp->server, &caller, &opts, &e, err, sizeof err);
    if (!session) {
        *error = gw_mcp_tool_error ("cannot create session '%s': %s", id, err);
        return NULL;
    }
    char note[300];
    snprintf (note, sizeof note, "starting a %s kernel for the new session '%s'",
              gw_session_spec (session)->name, id);
    gw_mcp_log (ctx, "info", note);
    if (where.e == GW_E_SESSION_LOST) {
        /* the caller must know its state is gone before it builds on it */
        *error = gw_mcp_tool_error ("%s. A new, empty session '%s' was started on this node: "
                                    "run what it needs again.", where.why, id);
        return NULL;
    }
    return session;
}

/* The call that answers a job, made before the job is queued. */
typedef struct {
    gw_mcp_ctx_t *ctx;
    bool oneshot;
} s_run_t;

static bool
s_on_job (gw_job_t *job, void *arg)
{
    s_run_t *run = arg;
    return gw_mcp_call_start (run->ctx, job, run->oneshot) != NULL;
}

/* Queues code in session and hands the reply to a call. */
json_t *
gw_mcp_run (gw_mcp_ctx_t *ctx, gw_session_t *session, const char *code, long timeout_s,
            bool oneshot)
{
    gw_caller_t caller = gw_mcp_caller (ctx);
    s_run_t run = {.ctx = ctx, .oneshot = oneshot};
    gw_sessions_submit_t submit = {
        .timeout_s = timeout_s,
        .allow_input = gw_mcp_input_wanted (ctx),   /* input() asks the client (2026-07-28) */
        .on_job = s_on_job,
        .arg = &run,
    };
    gw_error_t e;
    char why[256];
    if (!gw_sessions_submit (ctx->mcp->server, &caller, session, code, &submit, &e, why,
                             sizeof why))
        return gw_mcp_tool_error ("%s", why);
    return NULL;
}

static json_t *
s_exec_code (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *error = NULL;
    const char *code = gw_mcp_arg (args, "code", &error);
    json_t *timeout = json_object_get (args, "timeout");
    if (!error && !code)
        error = gw_mcp_tool_error ("code is required: the source to run");
    if (!error && timeout && !json_is_null (timeout)
        && !(json_is_integer (timeout) && json_integer_value (timeout) > 0))
        error = gw_mcp_tool_error ("timeout must be a positive whole number of seconds");
    gw_session_t *session = error ? NULL : gw_mcp_session (ctx, args, true, &error);
    if (error)
        return error;
    const char *kernel = json_string_value (json_object_get (args, "kernel"));
    const char *language = json_string_value (json_object_get (args, "language"));
    if ((kernel && strcasecmp (kernel, gw_session_spec (session)->name) != 0)
        || (language && strcasecmp (language, gw_session_spec (session)->language) != 0))
        return gw_mcp_tool_error ("session '%s' runs %s (%s); use another session_id for "
                                  "another language", gw_session_id (session), gw_session_spec (session)->name,
                                  gw_session_spec (session)->language);
    return gw_mcp_run (ctx, session, code, json_is_integer (timeout) ? (long) json_integer_value (timeout)
                                                                 : 0, false);
}

/* run_python_code / run_javascript_code: a throw-away session. */
static json_t *
s_run_once (gw_mcp_ctx_t *ctx, json_t *args, const char *language)
{
    json_t *error = NULL;
    const char *code = gw_mcp_arg (args, "code", &error);
    if (error)
        return error;
    if (!code)
        return gw_mcp_tool_error ("code is required: the source to run");
    gw_session_t *session = gw_mcp_oneshot_session (ctx, language, &error);
    if (!session)
        return error;
    return gw_mcp_run (ctx, session, code, 0, true);
}

/* A one-shot run's session: a fresh kernel of language that no listing
 * shows. NULL with *error (a tool result) when it cannot start. */
gw_session_t *
gw_mcp_oneshot_session (gw_mcp_ctx_t *ctx, const char *language, json_t **error)
{
    char id[JP_UUID_LEN + 8];
    char uuid[JP_UUID_LEN + 1];
    jp_random_uuid (uuid);
    snprintf (id, sizeof id, "run-%s", uuid);
    gw_caller_t caller = gw_mcp_caller (ctx);
    gw_sessions_new_t opts = {.id = id, .language = language, .ephemeral = true};
    gw_error_t e;
    char err[1200];
    gw_session_t *session = gw_sessions_create (ctx->mcp->server, &caller, &opts, &e, err,
                                                sizeof err);
    if (!session)
        *error = gw_mcp_tool_error ("cannot start a %s kernel: %s", language, err);
    return session;
}

static json_t *
s_run_python (gw_mcp_ctx_t *ctx, json_t *args)
{
    return s_run_once (ctx, args, "python");
}

static json_t *
s_run_javascript (gw_mcp_ctx_t *ctx, json_t *args)
{
    return s_run_once (ctx, args, "javascript");
}

/* The client's path made relative to the session folder (a path codebox
 * handed out, such as /session/output/x.png, is taken back), or NULL with
 * *error set. "" is the session folder. */
static const char *
s_session_path (gw_session_t *session, const char *path, json_t **error)
{
    if (*error || !path)
        return path;
    const char *rel = gw_path_in_session (path, gw_session_visible_workdir (session));
    if (!rel)
        *error = gw_mcp_tool_error ("'%s' is outside the session folder: give a path relative "
                                    "to it (output/plot.png) or under %s", path,
                                    gw_session_visible_workdir (session));
    return rel;
}

/* Checks a client path and opens the session folder. Returns the folder's
 * descriptor, or -1 with *error set. */
static int
s_open_workdir (gw_session_t *session, const char *path, json_t **error)
{
    char err[256];
    if (path && gw_path_check_relative (path, err, sizeof err)) {
        *error = gw_mcp_tool_error ("%s; paths are relative to the session folder, such as "
                                    "input/data.csv", err);
        return -1;
    }
    int dirfd = open (gw_session_workdir (session), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0)
        *error = gw_mcp_tool_error ("the session folder is gone: %s", strerror (errno));
    return dirfd;
}

/* A tool error for a failed open beneath the session folder. */
static json_t *
s_open_error (const char *path, int rc)
{
    if (rc == -ENOENT)
        return gw_mcp_tool_error ("no file '%s' in the session; list_files shows what is there",
                                  path);
    if (rc == -EXDEV || rc == -ELOOP)
        return gw_mcp_tool_error ("'%s' leads outside the session folder", path);
    if (rc == -EPERM || rc == -ENXIO)
        return gw_mcp_tool_error ("'%s' is not a regular file (a pipe or socket?)", path);
    return gw_mcp_tool_error ("cannot open '%s': %s", path, strerror (-rc));
}

static json_t *
s_write_file (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *error = NULL;
    const char *path = gw_mcp_arg (args, "path", &error);
    const char *content = gw_mcp_arg (args, "content", &error);
    const char *encoding = gw_mcp_arg (args, "encoding", &error);
    if (!error && (!path || !content))
        error = gw_mcp_tool_error ("path and content are required");
    if (!error && encoding && strcmp (encoding, "utf-8") != 0 && strcmp (encoding, "base64") != 0)
        error = gw_mcp_tool_error ("encoding must be utf-8 or base64");
    gw_session_t *session = error ? NULL : gw_mcp_session (ctx, args, true, &error);
    path = error ? path : s_session_path (session, path, &error);
    if (!error && !*path)
        error = gw_mcp_tool_error ("path names the session folder: give a file's path, such "
                                   "as output/result.txt");
    int dirfd = error ? -1 : s_open_workdir (session, path, &error);
    if (error)
        return error;
    size_t len = json_string_length (json_object_get (args, "content"));
    uint8_t *bytes = NULL;
    if (encoding && strcmp (encoding, "base64") == 0 && gw_base64_decode (content, len, &bytes, &len)) {
        close (dirfd);
        return gw_mcp_tool_error ("content is not valid base64");
    }
    json_t *result;
    /* what it makes is the kernel user's (as root), as an upload's is */
    uid_t uid = (uid_t) -1;
    gid_t gid = (gid_t) -1;
    gw_sandbox_owner (gw_server_sandbox (ctx->mcp->server), &uid, &gid);
    int fd = len > MAX_FILE_BYTES ? -EFBIG
             : gw_path_create_beneath (dirfd, path, O_WRONLY | O_TRUNC | O_CLOEXEC, 0644, uid, gid);
    if (fd < 0)
        result = fd == -EFBIG ? gw_mcp_tool_error ("content is larger than 64 MiB")
                              : s_open_error (path, fd);
    else {
        int rc = gw_fs_write_all (fd, bytes ? (const void *) bytes : content, len);
        close (fd);
        char full[2200];
        snprintf (full, sizeof full, "%s/%s", gw_session_visible_workdir (session), path);
        result = rc ? gw_mcp_tool_error ("cannot write '%s': %s", path, strerror (-rc))
                    : gw_mcp_tool_ok (json_pack ("{s:s, s:I}", "path", full, "size",
                                                 (json_int_t) len), NULL);
    }
    free (bytes);
    close (dirfd);
    return result;
}

/* True when len bytes are valid UTF-8 without NUL. */
static bool
s_is_text (const char *data, size_t len)
{
    return !memchr (data, '\0', len) && jp_utf8_valid (data, len);
}

static json_t *
s_read_file (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *error = NULL;
    const char *path = gw_mcp_arg (args, "path", &error);
    if (!error && !path)
        error = gw_mcp_tool_error ("path is required, such as output/plot.png");
    gw_session_t *session = error ? NULL : gw_mcp_session (ctx, args, true, &error);
    path = error ? path : s_session_path (session, path, &error);
    if (!error && !*path)
        error = gw_mcp_tool_error ("path names the session folder; list_files shows what it "
                                   "holds");
    int dirfd = error ? -1 : s_open_workdir (session, path, &error);
    if (error)
        return error;
    int fd = gw_path_open_beneath (dirfd, path, O_RDONLY | O_CLOEXEC, 0);
    close (dirfd);
    if (fd < 0)
        return s_open_error (path, fd);
    struct stat st;
    if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode)) {
        close (fd);
        return gw_mcp_tool_error ("'%s' is not a file; list_files shows a folder", path);
    }
    char *data;
    size_t len;
    int rc = gw_fs_read_fd (fd, MAX_FILE_BYTES, &data, &len);
    close (fd);
    if (rc)
        return rc == -EFBIG ? gw_mcp_tool_error ("'%s' is larger than 64 MiB", path)
                            : gw_mcp_tool_error ("cannot read '%s': %s", path, strerror (-rc));
    const char *mime = gw_mime_for_path (path);
    json_t *structured = json_pack ("{s:s, s:I, s:s}", "path", path, "size", (json_int_t) len,
                                    "mime", mime);
    json_t *item;
    bool image = strcmp (mime, "image/png") == 0 || strcmp (mime, "image/jpeg") == 0
                 || strcmp (mime, "image/gif") == 0 || strcmp (mime, "image/webp") == 0;
    char uri[1200];
    snprintf (uri, sizeof uri, "artifact://%s/%s", gw_session_id (session), path);
    if (!image && s_is_text (data, len)) {
        item = gw_mcp_text_piece (data, len, args, (size_t) gw_config_int (
                                      gw_server_config (ctx->mcp->server), GW_SET_MODEL_TEXT_BYTES),
                                  path, structured);
        if (!item) {
            free (data);
            json_decref (structured);
            return gw_mcp_tool_error ("offset must be 0 or more and length 1 or more (bytes)");
        }
    } else {
        char *b64 = gw_base64_encode ((const uint8_t *) data, len);
        item = image ? json_pack ("{s:s, s:s, s:s}", "type", "image", "data", b64 ? b64 : "",
                                  "mimeType", mime)
                     : json_pack ("{s:s, s:{s:s, s:s, s:s}}", "type", "resource", "resource",
                                  "uri", uri, "mimeType", mime, "blob", b64 ? b64 : "");
        free (b64);
    }
    free (data);
    return json_pack ("{s:[o], s:o, s:b}", "content", item, "structuredContent", structured,
                      "isError", 0);
}

static json_t *
s_list_files (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *error = NULL;
    const char *path = gw_mcp_arg (args, "path", &error);
    gw_session_t *session = error ? NULL : gw_mcp_session (ctx, args, true, &error);
    path = error ? path : s_session_path (session, path, &error);
    bool top = !path || !*path || strcmp (path, ".") == 0 || strcmp (path, "./") == 0;
    int workdir = error ? -1 : s_open_workdir (session, top ? NULL : path, &error);
    if (error)
        return error;
    int fd = top ? dup (workdir)
                 : gw_path_open_beneath (workdir, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    close (workdir);
    if (fd < 0)
        return fd == -ENOTDIR ? gw_mcp_tool_error ("'%s' is a file, not a folder", path)
                              : s_open_error (path, fd);
    DIR *dir = fdopendir (fd);
    if (!dir) {
        close (fd);
        return gw_mcp_tool_error ("cannot list '%s': %s", path, strerror (errno));
    }
    json_t *entries = json_array ();
    struct dirent *e;
    while ((e = readdir (dir)) && json_array_size (entries) < 10000) {
        if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
            continue;
        struct stat st;
        if (fstatat (dirfd (dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        const char *kind = S_ISREG (st.st_mode) ? "file" : S_ISDIR (st.st_mode) ? "directory"
                           : S_ISLNK (st.st_mode) ? "symlink" : "other";
        json_t *name = json_string (e->d_name);
        if (name)
            json_array_append_new (entries, json_pack ("{s:o, s:I, s:s}", "name", name, "size",
                                                       (json_int_t) st.st_size, "kind", kind));
    }
    closedir (dir);
    return gw_mcp_tool_ok (json_pack ("{s:s, s:o}", "path", top ? "." : path, "entries",
                                      entries), NULL);
}

static json_t *
s_list_artifacts (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *error = NULL;
    gw_session_t *session = gw_mcp_session (ctx, args, true, &error);
    if (error)
        return error;
    json_t *list = gw_artifacts_list (gw_session_workdir (session),
                                      gw_session_visible_workdir (session), GW_SNAPSHOT_SESSION);
    gw_server_annotate (gw_session_server (session), session, list);
    return gw_mcp_tool_ok (json_pack ("{s:o}", "artifacts", list), NULL);
}

static json_t *
s_session_info (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *error = NULL;
    gw_session_t *session = gw_mcp_session (ctx, args, true, &error);
    if (error)
        return error;
    return gw_mcp_tool_ok (gw_session_json (session, true), NULL);
}

static json_t *
s_list_sessions (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *error = NULL;
    const char *scope = gw_mcp_arg (args, "scope", &error);
    if (!error && scope && strcmp (scope, "all") != 0 && strcmp (scope, "node") != 0)
        error = gw_mcp_tool_error ("scope must be all or node");
    if (error)
        return error;
    gw_caller_t caller = gw_mcp_caller (ctx);
    bool all = !scope || strcmp (scope, "all") == 0;
    return gw_mcp_tool_ok (json_pack ("{s:o}", "sessions",
                                      gw_sessions_list (ctx->mcp->server, &caller, all)), NULL);
}

static json_t *
s_destroy_session (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *error = NULL;
    gw_session_t *session = gw_mcp_session (ctx, args, false, &error);
    if (error)
        return error;
    char id[GW_ID_SIZE];
    snprintf (id, sizeof id, "%s", gw_session_id (session));
    gw_sessions_end (ctx->mcp->server, session);
    return gw_mcp_tool_ok (json_pack ("{s:s, s:b}", "session_id", id, "destroyed", 1), NULL);
}

static json_t *
s_list_kernels (gw_mcp_ctx_t *ctx, json_t *args)
{
    (void) args;
    const gw_config_t *c = gw_server_config (ctx->mcp->server);
    ks_spec_t **specs;
    size_t n;
    if (ks_search_all (gw_config_str (c, GW_SET_KERNEL_PATH), &specs, &n, NULL, NULL))
        return gw_mcp_tool_error ("out of memory");
    json_t *list = json_array ();
    for (size_t i = 0; i < n; i++)
        json_array_append_new (list, json_pack ("{s:s, s:s, s:s, s:s}", "name", specs[i]->name,
                                                "language", specs[i]->language, "display_name",
                                                specs[i]->display_name, "path",
                                                specs[i]->resource_dir));
    ks_search_free (specs, n);
    return gw_mcp_tool_ok (json_pack ("{s:o, s:s}", "kernels", list, "default",
                                      gw_config_str (c, GW_SET_DEFAULT_KERNEL)),
                           NULL);
}
