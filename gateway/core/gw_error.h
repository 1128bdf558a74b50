/* gw_error: the one table of client-facing errors: each has a code string
 * for {"error":{"code","message"}}, an HTTP status, and a JSON-RPC error
 * number for MCP. Internal negative codes become one of these in exactly
 * one place per transport. MCP answers its JSON-RPC errors from this table
 * (gw_mcp_respond_error): the number on the wire, and in MCP's stateless
 * era the HTTP status too; the rows after DRAINING are MCP's own (JSON-RPC
 * and MCP error numbers no REST route answers). Pure data; any thread. */
#ifndef GW_ERROR_H
#define GW_ERROR_H

/* X(ID, CODE, HTTP_STATUS, JSONRPC) */
#define GW_ERRORS(X) \
    X (OK, "ok", 200, 0) \
    X (BAD_REQUEST, "bad_request", 400, -32602) \
    X (INVALID_JSON, "invalid_json", 400, -32700) \
    X (INVALID_SESSION_ID, "invalid_session_id", 400, -32602) \
    X (INVALID_PATH, "invalid_path", 400, -32602) \
    X (UNAUTHORIZED, "unauthorized", 401, -32001) \
    X (FORBIDDEN, "forbidden", 403, -32001) \
    X (NOT_FOUND, "not_found", 404, -32601) \
    X (SESSION_NOT_FOUND, "session_not_found", 404, -32602) \
    X (REQUEST_NOT_FOUND, "request_not_found", 404, -32602) \
    X (KERNEL_NOT_FOUND, "kernel_not_found", 400, -32602) \
    X (METHOD_NOT_ALLOWED, "method_not_allowed", 405, -32601) \
    X (CONFLICT, "conflict", 409, -32602) \
    X (NOT_FINISHED, "not_finished", 409, -32602) \
    X (TOO_LARGE, "too_large", 413, -32602) \
    X (TOO_MANY_SESSIONS, "too_many_sessions", 429, -32000) \
    X (TOO_MANY_QUEUED, "too_many_queued", 429, -32000) \
    X (INTERNAL, "internal_error", 500, -32603) \
    X (NOT_IMPLEMENTED, "not_implemented", 501, -32601) \
    X (KERNEL_START_FAILED, "kernel_start_failed", 503, -32000) \
    X (SHUTTING_DOWN, "shutting_down", 503, -32000) \
    X (WRONG_NODE, "wrong_node", 421, -32000) \
    X (SESSION_LOST, "session_lost", 404, -32602) \
    X (DRAINING, "draining", 503, -32000) \
    X (INVALID_REQUEST, "invalid_request", 400, -32600) \
    X (RESOURCE_NOT_FOUND, "resource_not_found", 404, -32002) \
    X (HEADER_MISMATCH, "header_mismatch", 400, -32020) \
    X (MISSING_CAPABILITY, "missing_capability", 400, -32021) \
    X (UNSUPPORTED_VERSION, "unsupported_version", 400, -32022)

#define GW_ERROR_ID(id, code, http, rpc) GW_E_##id,
typedef enum { GW_ERRORS (GW_ERROR_ID) GW_E_COUNT } gw_error_t;
#undef GW_ERROR_ID

const char *gw_error_code (gw_error_t e);
/* The error whose code string is code, GW_E_INTERNAL when unknown. */
gw_error_t gw_error_from_code (const char *code);
int gw_error_http_status (gw_error_t e);
int gw_error_jsonrpc (gw_error_t e);

#endif
