/* gw_mcp_code_box: the tool set "code-box" of CODEBOX_MCP_TOOLS, Code
 * Box's (CodeBoxMCP's) seven tools and its usage guide resource (see
 * gw_mcp_code_box.c); the answers in Code Box's shape are
 * gw_mcp_code_box_shape.c's.
 *
 * Threads: the loop thread only. */
#ifndef GW_MCP_CODE_BOX_H
#define GW_MCP_CODE_BOX_H

#include <stdbool.h>

#include "gw_mcp_internal.h"

/* Code Box's tools, in its README's order; NULL-terminated. */
extern const gw_mcp_tool_t *const gw_mcp_code_box_tools[];

/* Code Box's resource, code-interpreter://usage-guide: appended to a
 * resources/list array when CODEBOX_MCP_TOOLS names code-box. */
void gw_mcp_code_box_resources (gw_mcp_t *mcp, json_t *resources);

/* resources/read of it: the contents item (new), or NULL when uri is not
 * it or the set is off. */
json_t *gw_mcp_code_box_read (gw_mcp_t *mcp, const char *uri);

/* ---- gw_mcp_code_box_shape.c: Code Box's answers ---- */

/* A result in Code Box's shape: structured (stolen), a dict with
 * "status", as both the content's one text item (JSON, indented as
 * Code Box's FastMCP writes it) and structuredContent; more (stolen, may
 * be NULL): content items that follow the text (images). */
json_t *gw_mcp_code_box_answer (json_t *structured, json_t *more, bool is_error);

/* Code Box's error answer {session_id?, status: "error", error: TEXT}
 * (isError). session_id may be NULL. */
json_t *gw_mcp_code_box_fail (const char *session_id, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* A codebox tool error (stolen) as Code Box's error answer. */
json_t *gw_mcp_code_box_error (json_t *tool_error, const char *session_id);

/* codebox's artifacts (borrowed) as Code Box lists them (new):
 * {filename, path, extension (".png"), size_bytes, mime, sas_url? (the
 * blob SAS URL when blob upload is on and the file went up), url?,
 * blob?}. */
json_t *gw_mcp_code_box_artifacts (json_t *artifacts);

/* exec_code's answer when its run ends (gw_mcp_call_t.result_fn). */
json_t *gw_mcp_code_box_exec_result (gw_mcp_t *mcp, gw_job_t *job);

/* The answers of the calls that end later without a run
 * (gw_mcp_call_t.shape); the call's shape_arg is {"session_id"}. */
json_t *gw_mcp_code_box_upload_shape (gw_mcp_call_t *call, json_t *result);
json_t *gw_mcp_code_box_sql_shape (gw_mcp_call_t *call, json_t *result);

#endif
