/* gw_mcp_tool_list: every MCP tool in one list: the tool sets that
 * CODEBOX_MCP_TOOLS names (gw_mcp_tool_sets.c) in the order it names them,
 * a tool whose name a set named before offers left out (codebox's own:
 * the built-in ones, gw_mcp_tools.c, and those in files of their own:
 * exec_sql, upload_file, install_package, create_session; codebox-ai's execute_code; e2b's
 * ten, gw_mcp_e2b.c; Code Box's seven, gw_mcp_code_box.c); and, in the
 * test build, the conformance fixtures; tools/list's result (built once)
 * and tools/call in either era: the tool's lookup, the answer to an
 * input() a call returned as input_required, and a call that runs long
 * becoming a task.
 *
 * Threads: the loop thread only. */
#include "gw_mcp_tool_list.h"

#include <stdio.h>
#include <string.h>

#include "gw_mcp_call.h"
#include "gw_mcp_code_box.h"
#include "gw_mcp_create.h"
#include "gw_mcp_codebox_ai.h"
#include "gw_mcp_e2b.h"
#include "gw_mcp_fixtures.h"
#include "gw_mcp_packages.h"
#include "gw_mcp_reply.h"
#include "gw_mcp_sql.h"
#include "gw_mcp_tasks.h"
#include "gw_mcp_tool_sets.h"
#include "gw_mcp_tools.h"
#include "gw_mcp_upload.h"
#include "gw_sandbox.h"
#include "jp_log.h"
#include "jp_time.h"

/* Tools defined in files of their own (SQL, downloads, packages, a session
 * with options). */
static const gw_mcp_tool_t *const s_more_tools[] = {
    &gw_mcp_tool_exec_sql,
    &gw_mcp_tool_upload_file,
    &gw_mcp_tool_install_package,
    &gw_mcp_tool_create_session,
    NULL,
};

/* The tool sets CODEBOX_MCP_TOOLS names, in its order (checked at
 * start). */
static gw_mcp_set_order_t
s_sets (gw_mcp_t *self)
{
    gw_mcp_set_order_t order;
    char err[256];
    if (gw_mcp_tool_sets_parse (gw_config_str (gw_server_config (self->server),
                                               GW_SET_MCP_TOOLS), &order, err, sizeof err)) {
        order.set[0] = GW_MCP_SET_CODEBOX;
        order.n = 1;
    }
    return order;
}

gw_mcp_set_t
gw_mcp_first_set (gw_mcp_t *self)
{
    return s_sets (self).set[0];
}

/* The i-th tool of one set, or NULL past its last. */
static const gw_mcp_tool_t *
s_set_tool (gw_mcp_set_t set, size_t i)
{
    if (set == GW_MCP_SET_CODEBOX) {
        size_t n;
        const gw_mcp_tool_t *builtin = gw_mcp_tools_builtin (&n);
        if (i < n)
            return &builtin[i];
        i -= n;
        for (size_t k = 0; s_more_tools[k]; k++, i--)
            if (i == 0)
                return s_more_tools[k];
        return NULL;
    }
    if (set == GW_MCP_SET_CODEBOX_AI)
        return i == 0 ? &gw_mcp_tool_execute_code : NULL;
    if (set == GW_MCP_SET_E2B)
        for (size_t k = 0; gw_mcp_e2b_tools[k]; k++)
            if (k == i)
                return gw_mcp_e2b_tools[k];
    if (set == GW_MCP_SET_CODE_BOX)
        for (size_t k = 0; gw_mcp_code_box_tools[k]; k++)
            if (k == i)
                return gw_mcp_code_box_tools[k];
    return NULL;
}

/* The tool of set named name, or NULL. */
static const gw_mcp_tool_t *
s_set_find (gw_mcp_set_t set, const char *name)
{
    const gw_mcp_tool_t *t;
    for (size_t i = 0; (t = s_set_tool (set, i)); i++)
        if (strcmp (t->name, name) == 0)
            return t;
    return NULL;
}

/* The set before the k-th of order that has a tool named name (which then
 * shadows the k-th's), or 0. */
static gw_mcp_set_t
s_shadowing_set (const gw_mcp_set_order_t *order, size_t k, const char *name)
{
    for (size_t j = 0; j < k; j++)
        if (s_set_find (order->set[j], name))
            return order->set[j];
    return 0;
}

/* The i-th tool the sets of order offer together, or NULL past the last:
 * each set's tools in turn, less those whose name a set named before it
 * already offers. */
static const gw_mcp_tool_t *
s_tool (const gw_mcp_set_order_t *order, size_t i)
{
    for (size_t k = 0; k < order->n; k++) {
        const gw_mcp_tool_t *t;
        for (size_t j = 0; (t = s_set_tool (order->set[k], j)); j++)
            if (!s_shadowing_set (order, k, t->name) && i-- == 0)
                return t;
    }
    return NULL;
}

void
gw_mcp_tool_sets_log_shadowed (const gw_mcp_set_order_t *order)
{
    for (size_t k = 1; k < order->n; k++) {
        const gw_mcp_tool_t *t;
        for (size_t j = 0; (t = s_set_tool (order->set[k], j)); j++) {
            gw_mcp_set_t by = s_shadowing_set (order, k, t->name);
            if (by)
                jp_log_warn ("config event=tool_shadowed name=CODEBOX_MCP_TOOLS tool=%s set=%s "
                             "by=%s (%s, named first, offers its own %s)", t->name,
                             gw_mcp_tool_set_name (order->set[k]), gw_mcp_tool_set_name (by),
                             gw_mcp_tool_set_name (by), t->name);
        }
    }
}

/* tools/list's result (new); kernel_network: kernel code may reach the
 * network (the openWorldHint of the tools that run code). */
static json_t *
s_list (const gw_mcp_set_order_t *sets, bool conformance, bool kernel_network)
{
    json_t *tools = json_array ();
    const gw_mcp_tool_t *t;
    for (size_t i = 0; (t = s_tool (sets, i)); i++) {
        const gw_mcp_hints_t *h = &t->hints;
        bool open_world = h->world == GW_MCP_WORLD_OPEN
                          || (h->world == GW_MCP_WORLD_KERNEL && kernel_network);
        /* all five stated: hosts' directories want them explicit, and the
           specification's defaults (destructive, open world) are wrong
           for most of these tools */
        json_t *tool = json_pack ("{s:s, s:s, s:s, s:o, s:{s:s, s:b, s:b, s:b, s:b}}", "name",
                                  t->name, "title", t->title, "description", t->description,
                                  "inputSchema", json_loads (t->input_schema, 0, NULL),
                                  "annotations", "title", t->title, "readOnlyHint",
                                  h->read_only, "destructiveHint", h->destructive,
                                  "idempotentHint", h->idempotent, "openWorldHint", open_world);
        if (tool && t->output_schema)
            json_object_set_new (tool, "outputSchema", json_loads (t->output_schema, 0, NULL));
        json_array_append_new (tools, tool);
    }
    if (conformance)
        gw_mcp_conformance_tools (tools);
    return json_pack ("{s:o}", "tools", tools);
}

static bool
s_conformance (gw_mcp_t *self)
{
    return gw_config_bool (gw_server_config (self->server), GW_SET_MCP_CONFORMANCE);
}

json_t *
gw_mcp_tools (gw_mcp_t *self)
{
    if (!self->tools) {
        gw_mcp_set_order_t sets = s_sets (self);
        self->tools = s_list (&sets, s_conformance (self),
                              gw_sandbox_network (gw_server_sandbox (self->server)));
    }
    return self->tools;
}

json_t *
gw_mcp_tool_find (gw_mcp_t *self, const char *name)
{
    size_t i;
    json_t *tool;
    json_array_foreach (json_object_get (gw_mcp_tools (self), "tools"), i, tool)
        if (name && strcmp (json_string_value (json_object_get (tool, "name")), name) == 0)
            return tool;
    return NULL;
}

json_t *
gw_mcp_tools_call (gw_mcp_ctx_t *ctx, const char *name, json_t *args, gw_error_t *e, char *err,
                   size_t err_len)
{
    *e = GW_E_OK;
    const gw_mcp_tool_t *t;
    gw_mcp_set_order_t sets = s_sets (ctx->mcp);
    for (size_t i = 0; (t = s_tool (&sets, i)); i++)
        if (strcmp (t->name, name) == 0)
            return t->fn (ctx, args);
    if (s_conformance (ctx->mcp)) {
        bool handled = false;
        json_t *result = gw_mcp_conformance_call (ctx, name, args, &handled);
        if (result || handled)
            return result;
    }
    *e = GW_E_BAD_REQUEST;
    snprintf (err, err_len, "unknown tool '%s'; call tools/list to see the tools", name);
    return NULL;
}

/* Tools that run code, whose input() a client may answer. */
static bool
s_runs_code (const char *tool)
{
    return strcmp (tool, "exec_code") == 0 || strcmp (tool, "run_python_code") == 0
           || strcmp (tool, "run_javascript_code") == 0 || strcmp (tool, "execute_code") == 0;
}

/* Tools whose calls may become tasks: they can run for minutes. */
static bool
s_task_capable (const char *tool)
{
    static const char *const names[] = {"exec_code", "run_python_code", "run_javascript_code",
                                        "install_package", "upload_file", "exec_sql",
                                        "execute_code", "create_run_close", NULL};
    for (int i = 0; names[i]; i++)
        if (strcmp (names[i], tool) == 0)
            return true;
    return false;
}

void
gw_mcp_tools_request (gw_mcp_ctx_t *ctx, json_t *params)
{
    gw_mcp_reply_t *reply = ctx->reply;
    const char *name = json_string_value (json_object_get (params, "name"));
    json_t *args = json_object_get (params, "arguments");
    if (name)
        gw_mcp_log_field (reply, "tool", name);
    if (!name) {
        gw_mcp_respond_error (reply, ctx->id, GW_E_BAD_REQUEST, NULL,
                              "tools/call needs params.name");
        return;
    }
    if (args && !json_is_object (args)) {
        gw_mcp_respond_error (reply, ctx->id, GW_E_BAD_REQUEST, NULL,
                              "arguments must be an object");
        return;
    }
    ctx->progress_token = json_object_get (json_object_get (params, "_meta"), "progressToken");
    /* an answer to a kernel's input() that an earlier call of this
       request returned as input_required */
    if (ctx->stateless && json_object_get (params, "requestState") && s_runs_code (name)
        && gw_mcp_input_resume (ctx, params))
        return;
    json_t *owned_args = args ? json_incref (args) : json_object ();
    gw_error_t e = GW_E_OK;
    char err[512] = "";
    json_t *result = gw_mcp_tools_call (ctx, name, owned_args, &e, err, sizeof err);
    json_decref (owned_args);
    gw_mcp_call_t *call = NULL;
    if (result)
        gw_mcp_respond (reply, ctx->id, result);
    else if (e != GW_E_OK)
        gw_mcp_respond_error (reply, ctx->id, e, NULL, "%s", err);
    else if (gw_mcp_tasks_declared (ctx) && s_task_capable (name)
             && (call = gw_mcp_call_of (ctx->mcp, reply))) {
        /* still running: a task if it goes on past the first second */
        call->task_after_ms = jp_time_now_ms () + GW_MCP_TASK_AFTER_MS;
    }
}

