/* gw_mcp_tools: the built-in MCP tools, and what every tool uses: its
 * string arguments, its caller, the caller's session, a one-shot session,
 * a run, its results (see gw_mcp_tools.c).
 *
 * Threads: the loop thread only. */
#ifndef GW_MCP_TOOLS_H
#define GW_MCP_TOOLS_H

#include "gw_caller.h"
#include "gw_mcp_internal.h"

/* The built-in tools (exec_code ... list_kernels), *n of them. */
const gw_mcp_tool_t *gw_mcp_tools_builtin (size_t *n);

/* A string argument, or NULL (with *error set to a tool error when present
 * but not a string). */
const char *gw_mcp_arg (json_t *args, const char *key, json_t **error);

/* The caller's session named by args.session_id, created on first use
 * when create is set; NULL with *error (a tool result) otherwise. */
struct gw_session *gw_mcp_session (gw_mcp_ctx_t *ctx, json_t *args, bool create,
                                   json_t **error);

/* The caller of a tool for the core: the client's tenant (borrowed from
 * ctx's client) and the request's limits. */
gw_caller_t gw_mcp_caller (gw_mcp_ctx_t *ctx);

/* A one-shot run's session (run_python_code, execute_code): a fresh
 * kernel of language that no listing shows, ended when its run does. NULL
 * with *error (a tool result) when it cannot start. */
struct gw_session *gw_mcp_oneshot_session (gw_mcp_ctx_t *ctx, const char *language,
                                           json_t **error);

/* Queues code (borrowed) in session and hands ctx's reply to a call that
 * answers when the run ends (oneshot: the session ends with it). Returns
 * NULL (the reply taken over) or a tool error (new). timeout_s: 0 for the
 * session's limit. */
json_t *gw_mcp_run (gw_mcp_ctx_t *ctx, struct gw_session *session, const char *code,
                    long timeout_s, bool oneshot);

/* A tool result with isError and one text item (new). */
json_t *gw_mcp_tool_error (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* A tool result with structuredContent (stolen) and its text (new). */
json_t *gw_mcp_tool_ok (json_t *structured, const char *text);

#endif
