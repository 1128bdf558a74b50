/* gw_mcp_reply: responses, JSON-RPC errors from gw_error's table, log
 * fields and notifications/message (see gw_mcp_reply.h). Loop thread
 * only. */
#include "gw_mcp_reply.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "jp_log.h"

static const char *const s_levels[] = {"debug", "info", "notice", "warning", "error",
                                       "critical", "alert", "emergency", NULL};

void
gw_mcp_log_field (gw_mcp_reply_t *reply, const char *key, const char *value)
{
    size_t used = strlen (reply->log);
    int n = snprintf (reply->log + used, sizeof reply->log - used, " %s=", key);
    if (n < 0 || (size_t) n >= sizeof reply->log - used)
        return;
    used += (size_t) n;
    size_t len = value ? strnlen (value, 49) : 0;
    if (len > 48)
        for (len = 48; len > 0 && ((unsigned char) value[len] & 0xC0) == 0x80; len--)
            ;
    /* jp_log writes control characters as \xHH */
    used = jp_log_quote (reply->log, used, sizeof reply->log - 1, value ? value : "", len);
    reply->log[used] = '\0';
}

void
gw_mcp_respond (gw_mcp_reply_t *reply, json_t *id, json_t *result)
{
    if (strstr (reply->log, " tool="))
        gw_mcp_log_field (reply, "is_error",
                          json_is_true (json_object_get (result, "isError")) ? "true" : "false");
    if (!result)
        result = json_object ();
    if (reply->stateless && result && !json_object_get (result, "resultType"))
        json_object_set_new (result, "resultType", json_string ("complete"));
    json_t *msg = json_pack ("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null (),
                             "result", result);
    if (msg)
        reply->send (reply, msg);
    json_decref (msg);
    reply->end (reply);
}

void
gw_mcp_respond_error (gw_mcp_reply_t *reply, json_t *id, gw_error_t e, json_t *data,
                      const char *fmt, ...)
{
    char message[1024];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (message, sizeof message, fmt, ap);
    va_end (ap);
    int code = gw_error_jsonrpc (e);
    char code_text[16];
    snprintf (code_text, sizeof code_text, "%d", code);
    gw_mcp_log_field (reply, "error", code_text);
    if (reply->stateless && !reply->status)
        reply->status = gw_error_http_status (e);
    json_t *msg = json_pack ("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
                             id ? id : json_null (), "error", "code", code, "message", message);
    if (msg && data)
        json_object_set (json_object_get (msg, "error"), "data", data);
    json_decref (data);
    if (msg)
        reply->send (reply, msg);
    json_decref (msg);
    reply->end (reply);
}

int
gw_mcp_log_rank (const char *level)
{
    for (int rank = 0; level && s_levels[rank]; rank++)
        if (strcmp (s_levels[rank], level) == 0)
            return rank;
    return -1;
}

void
gw_mcp_log (gw_mcp_ctx_t *ctx, const char *level, const char *text)
{
    int rank = gw_mcp_log_rank (level);
    if (rank < 0)
        rank = GW_MCP_LOG_NONE;     /* not a level's name: above them all */
    if (!ctx->reply || !ctx->reply->can_stream || !ctx->client || rank < ctx->client->log_level)
        return;
    json_t *msg = json_pack ("{s:s, s:s, s:{s:s, s:s, s:s}}", "jsonrpc", "2.0", "method",
                             "notifications/message", "params", "level", level, "logger",
                             "codebox", "data", text);
    if (msg)
        ctx->reply->send (ctx->reply, msg);
    json_decref (msg);
}
