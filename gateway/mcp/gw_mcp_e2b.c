/* gw_mcp_e2b: the tool set "e2b" of CODEBOX_MCP_TOOLS: the ten tools of
 * the E2B sandbox MCP server ("MCP Code Sandbox Server", chrishayuk's
 * mcp-code-sandbox, whose backend is E2B), with its tool names, argument
 * names and result shapes, so prompts and agents written for it work
 * unchanged on codebox's sessions. A sandbox is a session of the caller's
 * tenant; its ID (the seed's session_id) is the session's id.
 *
 * This file: the set's list, the sandbox tools and the file tools.
 * - create_sandbox(session_id) makes a Python session of that id;
 *   close_sandbox(session_id) ends it (its kernel and files);
 *   get_sandbox_status(session_id?) reports one, or all of the caller's.
 *   The first two answer the seed's sentences as text (its tools return
 *   strings; closing one that is not there is not an error, as there).
 * - list_files(session_id, path="/"), read_file(session_id, file_path),
 *   write_file(session_id, file_path, content), upload_file(session_id,
 *   file_name, file_content, destination_path="/") are codebox's own file
 *   tools (gw_mcp_tools.c) underneath, with their rules: paths are relative
 *   to the session folder ("/" is that folder, as the sandbox's root is
 *   the seed's), and one that leads outside it is refused. The seed's
 *   upload_file takes the file's content, not a path on the server, so
 *   nothing of the host is ever read for a caller.
 * The tools that run code are gw_mcp_e2b_run.c's and gw_mcp_e2b_install.c's.
 *
 * Unlike codebox's own tools, these make no session on first use: the
 * seed answers "No sandbox found ..." to an ID create_sandbox did not
 * make, and so do these (as a tool error).
 *
 * Threads: the loop thread only. */
#include "gw_mcp_e2b.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_mcp_e2b_install.h"
#include "gw_mcp_e2b_run.h"
#include "gw_mcp_reply.h"
#include "gw_mcp_tools.h"
#include "gw_path.h"
#include "gw_session.h"
#include "gw_sessions.h"

/* What the seed's string tools answer: text, also as structuredContent
 * {"result": text} (FastMCP's wrapping of a string), or {"error": text}
 * with isError. */
static json_t *
s_said (bool is_error, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

static json_t *
s_said (bool is_error, const char *fmt, ...)
{
    char text[1536];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    return json_pack ("{s:[{s:s, s:s}], s:{s:s}, s:b}", "content", "type", "text", "text", text,
                      "structuredContent", is_error ? "error" : "result", text, "isError",
                      is_error);
}

/* args.session_id of a string tool, or NULL with *said set. */
static const char *
s_id (json_t *args, json_t **said)
{
    const char *id = json_string_value (json_object_get (args, "session_id"));
    if (!id)
        *said = s_said (true, "session_id is required: a unique name for the sandbox, such as "
                        "'main'");
    return id;
}

/* ---- sandboxes ---- */

static json_t *
s_create_sandbox (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *said = NULL;
    const char *id = s_id (args, &said);
    if (!id)
        return said;
    gw_caller_t caller = gw_mcp_caller (ctx);
    gw_sessions_where_t where;
    if (gw_sessions_resolve (ctx->mcp->server, &caller, id, &where))
        return s_said (false, "Sandbox with session ID %s already exists.", id);
    if (where.e == GW_E_INVALID_SESSION_ID)
        return s_said (true, "Failed to create sandbox: the session ID '%.80s' cannot be used; "
                       "use 1-64 characters of A-Z a-z 0-9 _ . - not starting with '.'", id);
    if (where.e == GW_E_WRONG_NODE)
        return s_said (true, "Failed to create sandbox: %s", where.why);
    gw_sessions_new_t opts = {.id = id, .language = "python", .where = &where};
    gw_error_t e;
    char err[1200];
    gw_session_t *session = gw_sessions_create (ctx->mcp->server, &caller, &opts, &e, err,
                                                sizeof err);
    if (!session)
        return s_said (true, "Failed to create sandbox: %s", err);
    char note[300];
    snprintf (note, sizeof note, "starting a %s kernel for the sandbox '%s'",
              gw_session_spec (session)->name, id);
    gw_mcp_log (ctx, "info", note);
    if (where.e == GW_E_SESSION_LOST)
        return s_said (false, "Sandbox created successfully with session ID: %s (%s; this "
                       "sandbox is new and empty)", id, where.why);
    return s_said (false, "Sandbox created successfully with session ID: %s", id);
}

static json_t *
s_close_sandbox (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *said = NULL;
    const char *id = s_id (args, &said);
    if (!id)
        return said;
    gw_caller_t caller = gw_mcp_caller (ctx);
    gw_sessions_where_t where;
    gw_session_t *session = gw_sessions_resolve (ctx->mcp->server, &caller, id, &where);
    if (where.e == GW_E_INVALID_SESSION_ID)
        return s_said (true, "'%.80s' cannot be a sandbox's session ID: they are 1-64 "
                       "characters of A-Z a-z 0-9 _ . - not starting with '.'", id);
    if (where.e == GW_E_WRONG_NODE)
        return s_said (true, "%s", where.why);
    if (!session)
        /* the seed's words: not an error, so that a client does not retry */
        return s_said (false, "Sandbox with session ID %s is not active or has already been "
                       "closed.", id);
    gw_sessions_end (ctx->mcp->server, session);
    return s_said (false, "Sandbox with session ID %s has been successfully closed and all "
                   "resources freed.", id);
}

static json_t *
s_get_sandbox_status (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *error = NULL;
    const char *id = gw_mcp_e2b_arg (args, "session_id", &error);
    if (error)
        return error;
    if (id) {
        gw_session_t *session = gw_mcp_e2b_sandbox (ctx, args, &error);
        if (!session)
            return error;
        return gw_mcp_e2b_result (json_pack ("{s:s, s:s, s:s, s:s, s:s, s:s}", "status",
                                             "active", "session_id", id, "interpreter_type",
                                             "codebox", "kernel",
                                             gw_session_spec (session)->name, "state",
                                             gw_session_status (session), "workdir",
                                             gw_session_visible_workdir (session)),
                                  NULL, false);
    }
    gw_caller_t caller = gw_mcp_caller (ctx);
    json_t *sessions = gw_sessions_list (ctx->mcp->server, &caller, true);
    json_t *ids = json_array ();
    size_t i;
    json_t *item;
    json_array_foreach (sessions, i, item)
        if (!json_is_true (json_object_get (item, "lost")))
            json_array_append (ids, json_object_get (item, "session_id"));
    json_decref (sessions);
    return gw_mcp_e2b_result (json_pack ("{s:I, s:o, s:s}", "active_sandbox_count",
                                         (json_int_t) json_array_size (ids), "active_sessions",
                                         ids, "interpreter_type", "codebox"),
                              NULL, false);
}

/* ---- files: codebox's own file tools underneath ---- */

/* Runs codebox's own tool name with args (stolen): its result (new). */
static json_t *
s_codebox (gw_mcp_ctx_t *ctx, const char *name, json_t *args)
{
    size_t n;
    const gw_mcp_tool_t *tools = gw_mcp_tools_builtin (&n);
    json_t *result = NULL;
    for (size_t i = 0; i < n && !result; i++)
        if (strcmp (tools[i].name, name) == 0)
            result = tools[i].fn (ctx, args);
    json_decref (args);
    return result ? result : gw_mcp_e2b_error ("out of memory");
}

/* The text of a result's first content item (borrowed), or "". */
static const char *
s_text_of (json_t *result)
{
    const char *text = json_string_value (
        json_object_get (json_array_get (json_object_get (result, "content"), 0), "text"));
    return text ? text : "";
}

/* When codebox's result (stolen) is an error, the seed's error with its
 * words after what (new); else NULL and *ok the result. */
static json_t *
s_failed (json_t *result, const char *what, json_t **ok)
{
    *ok = result;
    if (!json_is_true (json_object_get (result, "isError")))
        return NULL;
    json_t *error = gw_mcp_e2b_error ("%s: %s", what, s_text_of (result));
    json_decref (result);
    *ok = NULL;
    return error;
}

/* A copy of args' session_id for codebox's tool (new object). */
static json_t *
s_args (json_t *args)
{
    return json_pack ("{s:O}", "session_id", json_object_get (args, "session_id"));
}

static json_t *
s_list_files (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *error = NULL;
    const char *path = gw_mcp_e2b_arg (args, "path", &error);
    gw_session_t *session = error ? NULL : gw_mcp_e2b_sandbox (ctx, args, &error);
    if (error)
        return error;
    path = path ? path : "/";
    json_t *call = s_args (args);
    json_object_set_new (call, "path", json_string (path));
    json_t *listed;
    if ((error = s_failed (s_codebox (ctx, "list_files", call), "Error listing files",
                           &listed)))
        return error;
    json_t *structured = json_object_get (listed, "structuredContent");
    const char *rel = json_string_value (json_object_get (structured, "path"));
    size_t rel_len = rel ? strlen (rel) : 0;
    while (rel_len && rel[rel_len - 1] == '/')
        rel_len--;
    bool top = !rel || strcmp (rel, ".") == 0;
    /* E2B's EntryInfo: name, type (file or dir), path; and the size */
    json_t *files = json_array ();
    size_t i;
    json_t *entry;
    json_array_foreach (json_object_get (structured, "entries"), i, entry) {
        const char *name = json_string_value (json_object_get (entry, "name"));
        const char *kind = json_string_value (json_object_get (entry, "kind"));
        char full[4400];
        snprintf (full, sizeof full, "%s/%.*s%s%s", gw_session_visible_workdir (session),
                  top ? 0 : (int) rel_len, top ? "" : rel, top ? "" : "/", name);
        json_array_append_new (files, json_pack ("{s:s, s:s, s:s, s:O}", "name", name, "type",
                                                 strcmp (kind, "directory") == 0 ? "dir"
                                                                                  : kind,
                                                 "path", full, "size",
                                                 json_object_get (entry, "size")));
    }
    json_decref (listed);
    return gw_mcp_e2b_result (json_pack ("{s:s, s:o}", "path", path, "files", files), NULL,
                              false);
}

static json_t *
s_read_file (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *error = NULL;
    const char *path = gw_mcp_e2b_arg (args, "file_path", &error);
    gw_session_t *session = error ? NULL : gw_mcp_e2b_sandbox (ctx, args, &error);
    if (!error && !path)
        error = gw_mcp_e2b_error ("file_path is required: the path of the file to read, such "
                                  "as data.csv");
    if (error || !session)
        return error;
    json_t *call = s_args (args);
    json_object_set_new (call, "path", json_string (path));
    /* beyond the seed: where a long text goes on (read_file's marker says) */
    for (int k = 0; k < 2; k++) {
        const char *key = k ? "length" : "offset";
        if (json_object_get (args, key))
            json_object_set (call, key, json_object_get (args, key));
    }
    json_t *read;
    if ((error = s_failed (s_codebox (ctx, "read_file", call), "Error reading file", &read)))
        return error;
    json_t *structured = json_object_get (read, "structuredContent");
    json_t *item = json_array_get (json_object_get (read, "content"), 0);
    const char *type = json_string_value (json_object_get (item, "type"));
    json_t *dict, *extra = NULL;
    if (strcmp (type, "text") == 0) {
        dict = json_pack ("{s:s, s:O}", "path", path, "content", json_object_get (item, "text"));
        json_t *next = json_object_get (structured, "next_offset");
        if (next)
            json_object_set (dict, "next_offset", next);
    } else {
        bool image = strcmp (type, "image") == 0;
        dict = json_pack ("{s:s, s:O, s:O, s:s}", "path", path, "mime",
                          json_object_get (structured, "mime"), "size",
                          json_object_get (structured, "size"), "message", image
                          ? "The file is an image: it is attached as image content."
                          : "The file is binary: it is attached as an embedded resource.");
        extra = json_pack ("[O]", item);
    }
    json_decref (read);
    return gw_mcp_e2b_result (dict, extra, false);
}

/* Writes content to path (relative to the session folder) with codebox's
 * write_file: the seed's {"path", "message"} (with where the file is, as
 * code in the sandbox opens it), or its error after what. */
static json_t *
s_write (gw_mcp_ctx_t *ctx, json_t *args, const char *path, json_t *content, const char *what,
         const char *message)
{
    json_t *call = s_args (args);
    json_object_set_new (call, "path", json_string (path));
    json_object_set (call, "content", content);
    json_t *written, *error;
    if ((error = s_failed (s_codebox (ctx, "write_file", call), what, &written)))
        return error;
    json_t *structured = json_object_get (written, "structuredContent");
    json_t *dict = json_pack ("{s:O, s:s, s:O}", "path", json_object_get (structured, "path"),
                              "message", message, "size", json_object_get (structured, "size"));
    json_decref (written);
    return gw_mcp_e2b_result (dict, NULL, false);
}

static json_t *
s_write_file (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *error = NULL;
    const char *path = gw_mcp_e2b_arg (args, "file_path", &error);
    const char *content = gw_mcp_e2b_arg (args, "content", &error);
    if (!error && !gw_mcp_e2b_sandbox (ctx, args, &error))
        return error;
    if (!error && (!path || !content))
        error = gw_mcp_e2b_error ("file_path and content are required: the file's path, such "
                                  "as data.csv, and the text to write into it");
    if (error)
        return error;
    return s_write (ctx, args, path, json_object_get (args, "content"), "Error writing file",
                    "File written successfully");
}

static json_t *
s_upload_file (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *error = NULL;
    const char *name = gw_mcp_e2b_arg (args, "file_name", &error);
    const char *content = gw_mcp_e2b_arg (args, "file_content", &error);
    const char *dest = gw_mcp_e2b_arg (args, "destination_path", &error);
    gw_session_t *session = error ? NULL : gw_mcp_e2b_sandbox (ctx, args, &error);
    if (!error && (!name || !*name || !content))
        error = gw_mcp_e2b_error ("file_name and file_content are required: the name of the "
                                  "file to create and its content (text); upload_file takes "
                                  "the content itself, never a path on the server");
    if (error || !session)
        return error;
    /* the seed joins destination_path (default "/": the sandbox's root,
       here the session folder) and file_name */
    const char *rel = gw_path_in_session (dest ? dest : "/", gw_session_visible_workdir (session));
    if (!rel)
        return gw_mcp_e2b_error ("Error uploading file: '%s' is outside the sandbox's folder; "
                                 "give a folder relative to it (such as input), or / for the "
                                 "folder itself", dest);
    char path[4400];
    size_t rel_len = strlen (rel);
    snprintf (path, sizeof path, "%s%s%s", rel, rel_len && rel[rel_len - 1] != '/' ? "/" : "",
              name);
    return s_write (ctx, args, path, json_object_get (args, "file_content"),
                    "Error uploading file", "File uploaded successfully");
}

/* ---- the set ---- */

/* Reading tools change nothing; writing ones overwrite a file (the same
 * call again changes nothing more). */
#define HINTS_READ \
    {.read_only = true, .destructive = false, .idempotent = true, .world = GW_MCP_WORLD_CLOSED}
#define HINTS_WRITE \
    {.read_only = false, .destructive = true, .idempotent = true, .world = GW_MCP_WORLD_CLOSED}

/* What the seed's string tools answer (FastMCP's wrapping), or an error. */
#define SAID_SCHEMA \
    "{\"type\": \"object\", \"properties\": {\"result\": {\"type\": \"string\"}, " \
    "\"error\": {\"type\": \"string\"}}}"

#define WRITE_SCHEMA \
    "{\"type\": \"object\", \"properties\": {\"path\": {\"type\": \"string\"}, " \
    "\"message\": {\"type\": \"string\"}, \"size\": {\"type\": \"integer\"}, " \
    "\"error\": {\"type\": \"string\"}}}"

#define PATH_PROP(name, title, what) \
    "\"" name "\": {\"type\": \"string\", \"title\": \"" title "\", \"description\": \"" what \
    " Relative to the sandbox's folder, where code runs ('/' is that folder).\"}"

static const gw_mcp_tool_t s_create_sandbox_tool = {
    "create_sandbox",
    "Create a sandbox",
    "Create a new sandbox for running Python code: a persistent Python kernel with a folder "
    "of its own. Give it a unique ID and pass that ID to the other tools.\n\n"
    "Args:\n    session_id: A unique identifier for the sandbox\n\n"
    "Returns: a message saying that the sandbox was created",
    "{\"type\": \"object\", \"properties\": {\"session_id\": {\"type\": \"string\", "
    "\"title\": \"Session Id\", \"x-mcp-header\": \"Session-Id\", \"description\": \"A "
    "unique identifier for the sandbox: 1-64 characters of A-Z a-z 0-9 _ . -\"}}, "
    "\"required\": [\"session_id\"]}",
    SAID_SCHEMA,
    /* a second call says it exists, and changes nothing */
    {.read_only = false, .destructive = false, .idempotent = true, .world = GW_MCP_WORLD_CLOSED},
    s_create_sandbox,
};

static const gw_mcp_tool_t s_close_sandbox_tool = {
    "close_sandbox",
    "Close a sandbox",
    "Close a sandbox and free its resources: its kernel stops and its files are deleted.\n\n"
    "Args:\n    session_id: The sandbox's ID\n\n"
    "Returns: a message saying that the sandbox was closed",
    "{\"type\": \"object\", \"properties\": {" GW_MCP_E2B_ID_PROP "}, "
    "\"required\": [\"session_id\"]}",
    SAID_SCHEMA, HINTS_WRITE, s_close_sandbox,
};

static const gw_mcp_tool_t s_get_sandbox_status_tool = {
    "get_sandbox_status",
    "Get sandbox status",
    "Get the status of one sandbox, or without session_id the number and IDs of your "
    "active sandboxes.\n\n"
    "Args:\n    session_id: Optional: the sandbox to report",
    "{\"type\": \"object\", \"properties\": {\"session_id\": {\"anyOf\": [{\"type\": "
    "\"string\"}, {\"type\": \"null\"}], \"default\": null, \"title\": \"Session Id\", "
    "\"description\": \"The sandbox to report (default: all of yours).\"}}}",
    "{\"type\": \"object\", \"properties\": {\"status\": {\"type\": \"string\"}, "
    "\"session_id\": {\"type\": \"string\"}, \"interpreter_type\": {\"type\": \"string\"}, "
    "\"kernel\": {\"type\": \"string\"}, \"state\": {\"type\": \"string\"}, "
    "\"workdir\": {\"type\": \"string\"}, \"active_sandbox_count\": {\"type\": \"integer\"}, "
    "\"active_sessions\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}}, "
    "\"error\": {\"type\": \"string\"}}}",
    HINTS_READ, s_get_sandbox_status,
};

static const gw_mcp_tool_t s_list_files_tool = {
    "list_files",
    "List files in a sandbox",
    "List the files in a folder of the sandbox.\n\n"
    "Args:\n    session_id: The sandbox's ID\n    path: The folder to list (default: the "
    "sandbox's folder, '/')",
    "{\"type\": \"object\", \"properties\": {" GW_MCP_E2B_ID_PROP ", "
    "\"path\": {\"type\": \"string\", \"default\": \"/\", \"title\": \"Path\", \"description\": "
    "\"The folder to list. Relative to the sandbox's folder ('/' is that folder).\"}}, "
    "\"required\": [\"session_id\"]}",
    "{\"type\": \"object\", \"properties\": {\"path\": {\"type\": \"string\"}, "
    "\"files\": {\"type\": \"array\", \"items\": {\"type\": \"object\"}}, "
    "\"error\": {\"type\": \"string\"}}}",
    HINTS_READ, s_list_files,
};

static const gw_mcp_tool_t s_read_file_tool = {
    "read_file",
    "Read a file in a sandbox",
    "Read the contents of a file in the sandbox. Text comes back as content; an image is "
    "attached as an image. A long text comes in pieces: next_offset says where to go on "
    "(pass it as offset).\n\n"
    "Args:\n    session_id: The sandbox's ID\n    file_path: The path of the file to read",
    "{\"type\": \"object\", \"properties\": {" GW_MCP_E2B_ID_PROP ", "
    PATH_PROP ("file_path", "File Path", "The path of the file to read.") ", "
    "\"offset\": {\"type\": \"integer\", \"minimum\": 0, \"description\": \"For a long text: "
    "the byte to start at (default 0).\"}, \"length\": {\"type\": \"integer\", \"minimum\": 1, "
    "\"description\": \"For a long text: how many bytes at most.\"}}, "
    "\"required\": [\"session_id\", \"file_path\"]}",
    "{\"type\": \"object\", \"properties\": {\"path\": {\"type\": \"string\"}, "
    "\"content\": {\"type\": \"string\"}, \"next_offset\": {\"type\": \"integer\"}, "
    "\"mime\": {\"type\": \"string\"}, \"size\": {\"type\": \"integer\"}, "
    "\"message\": {\"type\": \"string\"}, \"error\": {\"type\": \"string\"}}}",
    HINTS_READ, s_read_file,
};

static const gw_mcp_tool_t s_write_file_tool = {
    "write_file",
    "Write a file in a sandbox",
    "Write text to a file in the sandbox (its folders are made as needed); code in the "
    "sandbox can then open it.\n\n"
    "Args:\n    session_id: The sandbox's ID\n    file_path: The path of the file to write\n"
    "    content: The text to write into it",
    "{\"type\": \"object\", \"properties\": {" GW_MCP_E2B_ID_PROP ", "
    PATH_PROP ("file_path", "File Path", "The path of the file to write.") ", "
    "\"content\": {\"type\": \"string\", \"title\": \"Content\", \"description\": \"The text "
    "to write.\"}}, \"required\": [\"session_id\", \"file_path\", \"content\"]}",
    WRITE_SCHEMA, HINTS_WRITE, s_write_file,
};

static const gw_mcp_tool_t s_upload_file_tool = {
    "upload_file",
    "Upload a file to a sandbox",
    "Upload a file to the sandbox: give its name and its content (text), and the folder to "
    "put it in.\n\n"
    "Args:\n    session_id: The sandbox's ID\n    file_name: The name of the file to create\n"
    "    file_content: The content of the file\n    destination_path: The folder to create "
    "it in (default: the sandbox's folder, '/')",
    "{\"type\": \"object\", \"properties\": {" GW_MCP_E2B_ID_PROP ", "
    "\"file_name\": {\"type\": \"string\", \"title\": \"File Name\", \"description\": \"The "
    "name of the file to create, such as data.csv.\"}, "
    "\"file_content\": {\"type\": \"string\", \"title\": \"File Content\", \"description\": "
    "\"The content of the file (text).\"}, "
    "\"destination_path\": {\"type\": \"string\", \"default\": \"/\", \"title\": "
    "\"Destination Path\", \"description\": \"The folder to create it in. Relative to the "
    "sandbox's folder ('/' is that folder).\"}}, "
    "\"required\": [\"session_id\", \"file_name\", \"file_content\"]}",
    WRITE_SCHEMA, HINTS_WRITE, s_upload_file,
};

const gw_mcp_tool_t *const gw_mcp_e2b_tools[] = {
    &s_create_sandbox_tool,
    &s_close_sandbox_tool,
    &s_get_sandbox_status_tool,
    &gw_mcp_e2b_execute_code,
    &gw_mcp_e2b_install_package,
    &gw_mcp_e2b_create_run_close,
    &s_list_files_tool,
    &s_read_file_tool,
    &s_write_file_tool,
    &s_upload_file_tool,
    NULL,
};
