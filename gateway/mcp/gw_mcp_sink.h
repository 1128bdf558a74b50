/* gw_mcp_sink: what a transport gives the MCP core with each message it
 * hands in (gw_mcp_handle_text): a reply sink, gw_mcp_reply_t, through
 * which the core sends the notifications and the response and which it
 * ends exactly once; and the names of the core's records. Public: the
 * transports (stdio, Streamable HTTP, HTTP+SSE) implement the sink; every
 * file of the core below gw_mcp.c sees it here, not through gw_mcp.h.
 *
 * Threads: the loop thread only. */
#ifndef GW_MCP_SINK_H
#define GW_MCP_SINK_H

#include <stdbool.h>

#include <jansson.h>

typedef struct gw_mcp gw_mcp_t;
typedef struct gw_mcp_client gw_mcp_client_t;
typedef struct gw_mcp_reply gw_mcp_reply_t;

/* Where the messages answering one incoming message go. */
struct gw_mcp_reply {
    /* Sends one message (borrowed): a notification, or the response. */
    void (*send) (gw_mcp_reply_t *self, json_t *message);
    /* No more messages; the transport may free the reply after this. */
    void (*end) (gw_mcp_reply_t *self);
    /* Optional, every GW_MCP_PROBE_MS of a long call: writes a keep-alive
     * (an SSE comment), or looks whether the client is still there (and
     * calls gw_mcp_reply_gone if not). */
    void (*keepalive) (gw_mcp_reply_t *self);
    /* True when notifications may go out before the response. */
    bool can_stream;
    /* Set by the core: the message is of the stateless 2026-07-28 era
       (results carry resultType; errors choose an HTTP status). */
    bool stateless;
    /* Set by the core with an error of the stateless era: the HTTP status
       to answer with (0: the transport's default). */
    int status;
    /* What the transport's log line says of this message, written by the
       core: " rpc=METHOD", then " tool=NAME" and " is_error=true|false"
       for tools/call, or " error=CODE" (never arguments or code). */
    char log[160];
};

#endif
