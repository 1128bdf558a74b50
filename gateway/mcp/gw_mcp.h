/* gw_mcp: the MCP server core, whatever the transport: JSON-RPC 2.0
 * framing and errors; both eras of the protocol: the stateful one
 * (initialize and version negotiation for 2025-11-25, 2025-06-18,
 * 2025-03-26 and 2024-11-05, ping, logging/setLevel) and the stateless
 * 2026-07-28 (server/discover, every request carrying its version and
 * capabilities in _meta, the standard HTTP headers checked against the
 * body: gw_mcp_stateless.c); tools, resources, prompts, progress,
 * cancellation, tasks (gw_mcp_tasks.c), kernel input() as an
 * input_required result, and subscriptions/listen. A transport (stdio,
 * Streamable HTTP, HTTP+SSE) gives each incoming message with a reply
 * sink; the core sends notifications and the response through it and ends
 * it exactly once, at once or when a tool call finishes.
 *
 * Threads: the loop thread only. */
#ifndef GW_MCP_H
#define GW_MCP_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "gw_mcp_sink.h"
#include "gw_request.h"

typedef struct gw_server gw_server_t;

gw_mcp_t *gw_mcp_new (gw_server_t *server);
/* Cancels every call, ends every reply, frees. */
void gw_mcp_destroy (gw_mcp_t **self_p);

/* A new client (an MCP session) of tenant, with a fresh random id. */
gw_mcp_client_t *gw_mcp_client_new (gw_mcp_t *self, const char *tenant);
gw_mcp_client_t *gw_mcp_client_find (gw_mcp_t *self, const char *id);
/* Notes that a client was used now (its idle time starts again). */
void gw_mcp_client_touch (gw_mcp_client_t *client);
/* Ends the clients without a running call idle for idle_ms or more, except
 * keep (may be NULL); returns how many are left. */
size_t gw_mcp_clients_expire (gw_mcp_t *self, int64_t now, int64_t idle_ms,
                              const gw_mcp_client_t *keep);
/* Whether tenant may have one more client (an MCP session over Streamable
 * HTTP or /sse; both transports ask here): first those of every tenant
 * idle past CODEBOX_MCP_SESSION_IDLE_TIMEOUT expire; then a tenant holding
 * its share of CODEBOX_MAX_MCP_SESSIONS (gw_config_share) is refused, and
 * so is anyone while the table is full. Never ends another tenant's live
 * client. Returns 0, or -EBUSY with a sentence in why. */
int gw_mcp_clients_admit (gw_mcp_t *self, const char *tenant, int64_t now, char *why,
                          size_t why_len);
/* Ends a client: cancels its calls, forgets it. */
void gw_mcp_client_end (gw_mcp_t *self, gw_mcp_client_t *client);
const char *gw_mcp_client_id (const gw_mcp_client_t *client);
const char *gw_mcp_client_tenant (const gw_mcp_client_t *client);
/* The protocol version agreed at initialize ("" before). */
const char *gw_mcp_client_version (const gw_mcp_client_t *client);

/* What the transport knows of one message besides its text. */
typedef struct {
    const gw_overrides_t *overrides;    /* the caller's lowered limits, or NULL */
    /* HTTP: the request, whose headers (MCP-Protocol-Version, Mcp-Method,
       Mcp-Name, Mcp-Param-*) the 2026-07-28 rules check; read only during
       gw_mcp_handle_text. NULL on stdio and the 2024 SSE transport. */
    const gw_request_t *http;
    /* HTTP without an MCP session: the 2026-07-28 rules apply whatever the
       body says (client is then NULL). */
    bool stateless;
    const char *tenant;                 /* with stateless: the caller's */
} gw_mcp_in_t;

/* Handles one message's text. Parse errors answer -32700. client is the
 * MCP session (2025 era), or NULL with in->stateless. */
void gw_mcp_handle_text (gw_mcp_t *self, gw_mcp_client_t *client, const char *text,
                         size_t len, const gw_mcp_in_t *in, gw_mcp_reply_t *reply);

/* True when text is a JSON-RPC request (has "method" and "id"), so the
 * transport knows whether to expect a response. */
bool gw_mcp_is_request (const char *text, size_t len, bool *is_initialize);

/* The transport lost the reply's peer: cancels its call; the reply is
 * ended (without a response) before this returns. */
void gw_mcp_reply_gone (gw_mcp_t *self, gw_mcp_reply_t *reply);

/* Timers: the next time tick must run (-1: none), and the tick. */
int64_t gw_mcp_deadline (gw_mcp_t *self);
void gw_mcp_tick (gw_mcp_t *self, int64_t now);

#endif
