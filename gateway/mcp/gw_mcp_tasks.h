/* gw_mcp_tasks: tasks, input() as an input_required result, and
 * subscriptions/listen, for MCP 2026-07-28 (see gw_mcp_tasks.c).
 *
 * Threads: the loop thread only. */
#ifndef GW_MCP_TASKS_H
#define GW_MCP_TASKS_H

#include "gw_mcp_internal.h"

/* True when the request declared the tasks extension. */
bool gw_mcp_tasks_declared (const gw_mcp_ctx_t *ctx);
/* The call becomes a task: its client gets resultType "task" now. */
void gw_mcp_task_promote (gw_mcp_call_t *call);
/* tasks/get, tasks/update, tasks/cancel. */
void gw_mcp_tasks_request (gw_mcp_ctx_t *ctx, const char *method, json_t *params);
void gw_mcp_tasks_destroy (gw_mcp_t *self);

/* True when the request's client can answer input() (it declared
 * elicitation): the execution may then wait for it. */
bool gw_mcp_input_wanted (const gw_mcp_ctx_t *ctx);
/* The call's execution waits in input() (prompt: {"prompt","password"});
 * may free call. gw_mcp_t's on_input. */
void gw_mcp_input_asked (gw_mcp_call_t *call, gw_job_t *job, json_t *prompt);
/* A tools/call that carries requestState: answers the waiting input() and
 * waits for the end. False when there is nothing to resume. */
bool gw_mcp_input_resume (gw_mcp_ctx_t *ctx, json_t *params);
/* An elicitation result's answer: true when accepted, *value the line. */
bool gw_mcp_input_value (json_t *answer, const char **value);

/* subscriptions/listen: acknowledges and keeps the reply open. */
void gw_mcp_listen (gw_mcp_ctx_t *ctx, json_t *params);
/* Tells the tenant's listeners that resources/list changed. gw_mcp_t's
 * on_new_files. */
void gw_mcp_notify_resources_changed (gw_mcp_t *self, const char *tenant);

#endif
