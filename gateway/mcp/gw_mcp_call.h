/* gw_mcp_call: the calls of the MCP core that answer later, and their
 * progress (see gw_mcp_call.c).
 *
 * Threads: the loop thread only. */
#ifndef GW_MCP_CALL_H
#define GW_MCP_CALL_H

#include "gw_mcp_internal.h"

/* Takes ctx's request over with call (zeroed, or with its own fields set):
 * the request id, progress token and reply, and a place in the core's list
 * so keep-alives, a client leaving and notifications/cancelled reach it. */
void gw_mcp_call_attach (gw_mcp_call_t *call, gw_mcp_ctx_t *ctx);

/* Watches job for ctx's request; the response (gw_mcp_exec_result, or
 * the call's result_fn when its caller sets one before the job can end)
 * goes out when it ends, progress while it runs; oneshot: the job's
 * session ends with it. NULL on OOM. */
gw_mcp_call_t *gw_mcp_call_start (gw_mcp_ctx_t *ctx, gw_job_t *job, bool oneshot);

/* Watches job for call, attached already and waiting for something
 * else until now (execute_code's install): as gw_mcp_call_start. */
void gw_mcp_call_watch (gw_mcp_call_t *call, gw_job_t *job, bool oneshot);

/* Answers call with result (stolen; through call->shape when set) and
 * leaves it without a reply. call must have its reply. */
void gw_mcp_call_answer (gw_mcp_call_t *call, json_t *result);

/* Takes a call out of the core's list and frees it (for tools whose calls
 * wait for something other than an execution). */
void gw_mcp_call_drop (gw_mcp_call_t *call);

/* Cancels a call: ends its reply without a response, stops its execution
 * (kernel interrupt), tells its on_cancel. */
void gw_mcp_call_cancel (gw_mcp_call_t *call);

/* The call that answers through reply (a tool that took its request
 * over, or a task's capture), or NULL. */
gw_mcp_call_t *gw_mcp_call_of (gw_mcp_t *self, const gw_mcp_reply_t *reply);

/* Sends a notifications/progress for call when it carries a progressToken
 * and its reply can stream: value (raised by GW_MCP_PROGRESS_STEP above the
 * last value sent when it would not grow), total when > 0, and message
 * (len bytes). Counts as the call's latest sign of life: the next
 * heartbeat is GW_MCP_HEARTBEAT_MS after it. Returns true when it went
 * out. */
bool gw_mcp_call_progress (gw_mcp_call_t *call, double value, double total,
                           const char *message, size_t len);

/* When call next needs gw_mcp_call_tick (pending output, its heartbeat)
 * or becomes a task (task_after_ms); -1: never. */
int64_t gw_mcp_call_due (const gw_mcp_call_t *call);

/* call's timers at now: pending output goes out as progress, a heartbeat
 * when due; with keepalive, the reply's keepalive (which may cancel, but
 * not free, call). */
void gw_mcp_call_tick (gw_mcp_call_t *call, int64_t now, bool keepalive);

/* Ends every call's reply and frees the calls (the core's end). */
void gw_mcp_calls_destroy (gw_mcp_t *self);

#endif
