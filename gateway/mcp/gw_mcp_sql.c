/* gw_mcp_sql: the exec_sql MCP tool, on top of gw_sql (which classifies,
 * runs on its worker threads and answers in the loop thread; POST /sql is
 * gw_rest_sql.c). Rows come back inline when few; otherwise as a CSV under
 * the session's input/ with the first rows. A call that is cancelled
 * (notifications/cancelled, tasks/cancel, a client that left) cancels
 * its query.
 *
 * Threads: the loop thread only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_mcp_call.h"
#include "gw_mcp_sql.h"
#include "gw_mcp_tools.h"
#include "gw_session.h"
#include "gw_sql.h"

/* A short text rendering of a result: columns, rows as JSON lines, the
 * CSV path when rows went there. New string. */
static char *
s_render (json_t *result)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream (&text, &len);
    if (!out)
        return NULL;
    json_t *columns = json_object_get (result, "columns");
    size_t i;
    json_t *c;
    fprintf (out, "columns:");
    json_array_foreach (columns, i, c)
        fprintf (out, "%s%s", i ? ", " : " ", json_string_value (json_object_get (c, "name")));
    fprintf (out, "\n");
    json_t *row;
    json_array_foreach (json_object_get (result, "rows"), i, row) {
        char *line = json_dumps (row, JSON_COMPACT | JSON_REAL_PRECISION (15));
        fprintf (out, "%s\n", line ? line : "?");
        free (line);
    }
    fprintf (out, "(%lld rows)\n", (long long) json_integer_value (json_object_get (result, "row_count")));
    const char *csv = json_string_value (json_object_get (result, "csv_path"));
    if (csv)
        fprintf (out, "All rows are in %s (shown: the first ones). Load it with pandas: "
                 "pd.read_csv(%s)\n", csv, csv);
    const char *note = json_string_value (json_object_get (result, "note"));
    if (note)
        fprintf (out, "%s\n", note);
    fclose (out);
    return text;
}

/* A call waiting for its query. */
typedef struct {
    gw_mcp_call_t *call;
    gw_sql_t *sql;
    uint64_t query_id;
} s_sql_call_t;

/* The call was cancelled (notifications/cancelled, tasks/cancel, or its
 * client left): so is its query, which frees its worker; s_mcp_done
 * still comes, with the "cancelled" error. */
static void
s_cancel (void *arg)
{
    s_sql_call_t *sc = arg;
    gw_sql_cancel (sc->sql, sc->query_id);
}

/* The query ended: answer the call (a plain one, or a task's), unless it
 * was cancelled or its client left. */
static void
s_mcp_done (json_t *result, void *arg)
{
    s_sql_call_t *sc = arg;
    gw_mcp_call_t *call = sc->call;
    free (sc);
    json_t *error = json_object_get (result, "error");
    json_t *tool;
    if (error)
        tool = gw_mcp_tool_error ("%s", json_string_value (json_object_get (error, "message")));
    else {
        char *text = s_render (result);
        tool = gw_mcp_tool_ok (json_incref (result), text ? text : "");
        free (text);
    }
    if (call->reply && !call->cancelled)
        gw_mcp_call_answer (call, tool);
    else
        json_decref (tool);
    gw_mcp_call_drop (call);
    json_decref (result);
}

static json_t *
s_exec_sql (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *error = NULL;
    const char *query = gw_mcp_arg (args, "query", &error);
    json_t *rows = json_object_get (args, "max_inline_rows");
    if (!error && !query)
        error = gw_mcp_tool_error ("query is required: one read-only SQL statement");
    if (!error && query && strlen (query) != json_string_length (json_object_get (args, "query")))
        error = gw_mcp_tool_error ("the query holds a NUL character");
    if (!error && rows && !json_is_null (rows)
        && !(json_is_integer (rows) && json_integer_value (rows) > 0))
        error = gw_mcp_tool_error ("max_inline_rows must be a positive whole number");
    gw_session_t *session = error ? NULL : gw_mcp_session (ctx, args, true, &error);
    if (error)
        return error;
    gw_server_t *server = ctx->mcp->server;
    /* on the core's call list: keep-alives, a client leaving, and a task
       when it runs long */
    gw_mcp_call_t *call = calloc (1, sizeof *call);
    s_sql_call_t *sc = call ? calloc (1, sizeof *sc) : NULL;
    if (!sc) {
        free (call);
        return gw_mcp_tool_error ("out of memory");
    }
    *sc = (s_sql_call_t) {.call = call, .sql = gw_server_sql (server)};
    long max_rows = gw_caller_clamp (json_is_integer (rows) ? (long) json_integer_value (rows) : 0,
                                       ctx->overrides ? ctx->overrides->sql_max_inline_rows : 0);
    gw_sql_request_t r;
    char key[140];
    gw_sql_request_for (&r, server, session, key, sizeof key, NULL, query, max_rows,
               ctx->overrides ? ctx->overrides->exec_timeout : 0);
    r.query_id = &sc->query_id;
    gw_mcp_call_attach (call, ctx);
    if (gw_sql_query (sc->sql, &r, s_mcp_done, sc) != 0) {
        call->reply = NULL;
        gw_mcp_call_drop (call);
        free (sc);
        return gw_mcp_tool_error ("the SQL workers are not running");
    }
    call->on_cancel = s_cancel;
    call->cancel_arg = sc;
    return NULL;    /* answered by s_mcp_done, in a later turn of the loop */
}

const gw_mcp_tool_t gw_mcp_tool_exec_sql = {
    "exec_sql", "Query the database (read-only)",
    "Run one read-only SQL statement (SELECT, WITH ... SELECT, VALUES, EXPLAIN, SHOW) on the "
    "configured database; writes are refused. A few rows come back inline; a larger result "
    "is saved as a CSV under the session's input/ folder (its path is in the answer) so you "
    "can load it in exec_code, with the first rows shown. Without a configured database this "
    "is a small sample shop (tables categories, products, customers, orders, order_items).",
    "{\"type\": \"object\", \"properties\": {"
    "\"session_id\": {\"type\": \"string\", \"x-mcp-header\": \"Session-Id\", "
    "\"description\": \"Your session's name; the CSV of "
    "a large result goes to its input/ folder.\"}, "
    "\"query\": {\"type\": \"string\", \"description\": \"One read-only SQL statement.\"}, "
    "\"max_inline_rows\": {\"type\": \"integer\", \"minimum\": 1, \"description\": \"Rows to "
    "return inline at most (the server's limit still applies).\"}}, "
    "\"required\": [\"session_id\", \"query\"]}",
    "{\"type\": \"object\", \"properties\": {\"columns\": {\"type\": \"array\"}, "
    "\"rows\": {\"type\": \"array\"}, \"row_count\": {\"type\": \"integer\"}, "
    "\"csv_path\": {\"type\": \"string\"}}}",
    /* read-only by construction (writes are refused; a large result's CSV
       is a new file in input/); the configured database is not the open
       world */
    {.read_only = true, .destructive = false, .idempotent = true, .world = GW_MCP_WORLD_CLOSED},
    s_exec_sql,
};
