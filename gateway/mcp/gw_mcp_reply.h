/* gw_mcp_reply: how the MCP core answers one message through its reply
 * sink: the response, a JSON-RPC error (its number, and in the stateless
 * era its HTTP status, taken from gw_error's table: the one place an MCP
 * error crosses to the wire), the fields the transport's log line gets,
 * and notifications/message. The bottom of the MCP core: it calls no other
 * file of it.
 *
 * Threads: the loop thread only. */
#ifndef GW_MCP_REPLY_H
#define GW_MCP_REPLY_H

#include "gw_error.h"
#include "gw_mcp_internal.h"

/* Sends the response {"jsonrpc","id","result"} (result stolen; NULL: {})
 * and ends the reply: how a request is answered, now or later. The
 * stateless era's results get resultType "complete" unless they say. */
void gw_mcp_respond (gw_mcp_reply_t *reply, json_t *id, json_t *result);

/* Sends the error response {"code","message","data"?} for e (code: e's
 * JSON-RPC number in gw_error's table; data stolen, may be NULL) and ends
 * the reply. In the stateless era the reply's HTTP status becomes e's
 * unless already set. */
void gw_mcp_respond_error (gw_mcp_reply_t *reply, json_t *id, gw_error_t e, json_t *data,
                           const char *fmt, ...) __attribute__ ((format (printf, 5, 6)));

/* Appends " key=value" to the reply's log fields: value (it comes from the
 * client) cut to 48 bytes at a character's start and quoted when it needs
 * it, so a method or tool name "x status=200" stays one field. */
void gw_mcp_log_field (gw_mcp_reply_t *reply, const char *key, const char *value);

/* The rank of a log level name (0 debug .. 7 emergency), or -1 when
 * level is NULL or no level's name. */
int gw_mcp_log_rank (const char *level);

/* Sends a notifications/message to the reply's client at level (if the
 * client's level lets it through and the reply can stream). */
void gw_mcp_log (gw_mcp_ctx_t *ctx, const char *level, const char *text);

#endif
