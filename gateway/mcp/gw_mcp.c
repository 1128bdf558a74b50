/* gw_mcp: the top of the MCP core: JSON-RPC framing, the clients (MCP
 * sessions), method dispatch for both eras, notifications/cancelled, and
 * the timers of the calls that answer later. What it dispatches to lives
 * below it: replies and errors (gw_mcp_reply.c), calls and progress
 * (gw_mcp_call.c), tools (gw_mcp_tool_list.c), resources and prompts,
 * tasks, the stateless era's checks; none of those calls back up here.
 * Loop thread only. */
#include "gw_mcp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_mcp_apps.h"
#include "gw_mcp_call.h"
#include "gw_mcp_info.h"
#include "gw_mcp_internal.h"
#include "gw_mcp_reply.h"
#include "gw_mcp_resources.h"
#include "gw_mcp_stateless.h"
#include "gw_mcp_tasks.h"
#include "gw_mcp_tool_list.h"
#include "jp_random.h"
#include "jp_time.h"
#include "jp_log.h"

gw_mcp_t *
gw_mcp_new (gw_server_t *server)
{
    gw_mcp_t *self = calloc (1, sizeof *self);
    if (self)
        *self = (gw_mcp_t) {.server = server, .on_input = gw_mcp_input_asked,
                            .on_new_files = gw_mcp_notify_resources_changed};
    return self;
}

void
gw_mcp_destroy (gw_mcp_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gw_mcp_t *self = *self_p;
    gw_mcp_calls_destroy (self);
    while (self->clients) {
        gw_mcp_client_t *c = self->clients;
        self->clients = c->next;
        free (c);
    }
    gw_mcp_tasks_destroy (self);
    json_decref (self->tools);
    gw_mcp_apps_destroy (self);
    free (self);
    *self_p = NULL;
}

gw_mcp_client_t *
gw_mcp_client_new (gw_mcp_t *self, const char *tenant)
{
    gw_mcp_client_t *c = calloc (1, sizeof *c);
    if (!c)
        return NULL;
    jp_random_uuid (c->id);
    snprintf (c->tenant, sizeof c->tenant, "%s", tenant);
    c->log_level = 1;   /* info */
    c->last_used_ms = jp_time_now_ms ();
    c->next = self->clients;
    self->clients = c;
    return c;
}

gw_mcp_client_t *
gw_mcp_client_find (gw_mcp_t *self, const char *id)
{
    for (gw_mcp_client_t *c = self->clients; c; c = c->next)
        if (strcmp (c->id, id) == 0)
            return c;
    return NULL;
}

void
gw_mcp_client_touch (gw_mcp_client_t *client)
{
    client->last_used_ms = jp_time_now_ms ();
}

size_t
gw_mcp_clients_expire (gw_mcp_t *self, int64_t now, int64_t idle_ms,
                       const gw_mcp_client_t *keep)
{
    size_t left = 0;
    gw_mcp_client_t *c = self->clients;
    while (c) {
        gw_mcp_client_t *next = c->next;
        bool busy = false;
        for (gw_mcp_call_t *call = self->calls; call && !busy; call = call->next)
            busy = call->client == c;
        if (c != keep && !busy && now - c->last_used_ms >= idle_ms) {
            jp_log_info ("mcp event=session-expired idle_s=%lld",
                         (long long) ((now - c->last_used_ms) / 1000));
            gw_mcp_client_end (self, c);
        } else
            left++;
        c = next;
    }
    return left;
}

int
gw_mcp_clients_admit (gw_mcp_t *self, const char *tenant, int64_t now, char *why,
                      size_t why_len)
{
    const gw_config_t *config = gw_server_config (self->server);
    long max = gw_config_int (config, GW_SET_MAX_MCP_SESSIONS);
    long share = gw_config_share (config, max);
    /* those past their idle time have expired, whoever's they are (the
       setting says so); no live one of another tenant ever goes here */
    size_t live = gw_mcp_clients_expire (
        self, now, gw_config_int (config, GW_SET_MCP_SESSION_IDLE_TIMEOUT) * 1000, NULL);
    long mine = 0;
    for (gw_mcp_client_t *c = self->clients; c; c = c->next)
        mine += strcmp (c->tenant, tenant) == 0;
    if (share < max && mine >= share) {
        snprintf (why, why_len, "tenant '%s' holds %ld MCP sessions, its share of the %ld of "
                  "CODEBOX_MAX_MCP_SESSIONS (CODEBOX_TENANT_MAX_SESSIONS)", tenant, mine, max);
        return -EBUSY;
    }
    if ((long) live >= max) {
        snprintf (why, why_len, "too many MCP sessions (%zu, CODEBOX_MAX_MCP_SESSIONS)", live);
        return -EBUSY;
    }
    return 0;
}

void
gw_mcp_client_end (gw_mcp_t *self, gw_mcp_client_t *client)
{
    /* a cancel may free the call (and change the list): look again each time */
    for (;;) {
        gw_mcp_call_t *call = self->calls;
        while (call && call->client != client)
            call = call->next;
        if (!call)
            break;
        call->client = NULL;
        gw_mcp_call_cancel (call);
    }
    for (gw_mcp_client_t **link = &self->clients; *link; link = &(*link)->next)
        if (*link == client) {
            *link = client->next;
            break;
        }
    free (client);
}

const char *
gw_mcp_client_id (const gw_mcp_client_t *client)
{
    return client->id;
}

const char *
gw_mcp_client_tenant (const gw_mcp_client_t *client)
{
    return client->tenant;
}

const char *
gw_mcp_client_version (const gw_mcp_client_t *client)
{
    return client->version;
}

/* Handles a notification (no response). */
static void
s_notification (gw_mcp_t *self, gw_mcp_client_t *client, const char *method, json_t *params)
{
    if (!client || strcmp (method, "notifications/cancelled") != 0)
        return;     /* initialized, roots changes...: nothing to do */
    json_t *rid = json_object_get (params, "requestId");
    for (gw_mcp_call_t *call = self->calls; rid && call; call = call->next)
        if (call->client == client && json_equal (call->id, rid) && !call->cancelled) {
            jp_log_info ("mcp event=cancelled request=%s",
                     call->job ? gw_job_id (call->job) : "?");
            gw_mcp_call_cancel (call);
            break;
        }
}

static bool
s_conformance (gw_mcp_t *self)
{
    return gw_config_bool (gw_server_config (self->server), GW_SET_MCP_CONFORMANCE);
}

/* The methods of both eras: tools, resources, prompts, completion.
 * Returns false when method is none of them. */
static bool
s_common (gw_mcp_ctx_t *ctx, const char *method, json_t *params)
{
    gw_mcp_t *self = ctx->mcp;
    gw_mcp_reply_t *reply = ctx->reply;
    json_t *id = ctx->id;
    json_t *result = NULL;
    /* how long a 2026-07-28 client may keep a list or read (-1: not
       cacheable), and whether it is the same for every caller */
    long ttl_ms = -1;
    bool shared = true;
    if (strcmp (method, "tools/list") == 0) {
        /* the cached list's own entries, in a top level of this answer */
        /* for a caller that declared MCP Apps the code tools point at the
           view: that caller's list only */
        shared = !gw_mcp_apps_declared (ctx);
        result = json_copy (shared ? gw_mcp_tools (self) : gw_mcp_apps_tools (self, gw_mcp_tools (self)));
        ttl_ms = GW_MCP_TTL_STATIC_MS;
    } else if (strcmp (method, "tools/call") == 0) {
        gw_mcp_tools_request (ctx, params);
        return true;
    } else if (strcmp (method, "resources/list") == 0) {
        result = gw_mcp_resources_list (ctx, json_string_value (json_object_get (params,
                                                                                 "cursor")));
        if (!result) {
            gw_mcp_respond_error (reply, id, GW_E_BAD_REQUEST, NULL, "invalid cursor");
            return true;
        }
        ttl_ms = 0;
        shared = false;
    } else if (strcmp (method, "resources/templates/list") == 0) {
        result = gw_mcp_resource_templates (s_conformance (self));
        ttl_ms = GW_MCP_TTL_STATIC_MS;
    } else if (strcmp (method, "resources/read") == 0) {
        const char *uri = json_string_value (json_object_get (params, "uri"));
        gw_error_t e = GW_E_BAD_REQUEST;
        char err[512] = "resources/read needs params.uri";
        result = uri ? gw_mcp_resources_read (ctx, uri, &e, err, sizeof err) : NULL;
        if (!result) {
            /* 2026-07-28: an unknown resource is -32602 with the uri (it
               was -32002 before) */
            if (ctx->stateless && e == GW_E_RESOURCE_NOT_FOUND)
                e = GW_E_BAD_REQUEST;
            json_t *data = uri && (e == GW_E_BAD_REQUEST || e == GW_E_RESOURCE_NOT_FOUND)
                               ? json_pack ("{s:s}", "uri", uri) : NULL;
            gw_mcp_respond_error (reply, id, e, data, "%s", err);
            return true;
        }
        /* the MCP Apps view is one file, read once, the same for everyone:
           hosts may keep it (sessions' files change, so they may not) */
        bool view = strcmp (uri, GW_MCP_APPS_URI) == 0;
        ttl_ms = view ? GW_MCP_TTL_STATIC_MS : 0;
        shared = view;
    } else if (strcmp (method, "prompts/list") == 0) {
        result = gw_mcp_prompts_list (s_conformance (self));
        ttl_ms = GW_MCP_TTL_STATIC_MS;
    } else if (strcmp (method, "prompts/get") == 0) {
        char err[256] = "";
        const char *name = json_string_value (json_object_get (params, "name"));
        result = name ? gw_mcp_prompts_get (name, params,
                                            s_conformance (self), err, sizeof err)
                      : NULL;
        if (!result) {
            gw_mcp_respond_error (reply, id, GW_E_BAD_REQUEST, NULL, "%s",
                                  name ? err : "prompts/get needs params.name");
            return true;
        }
    } else if (strcmp (method, "completion/complete") == 0)
        result = json_pack ("{s:{s:[], s:i, s:b}}", "completion", "values", "total", 0,
                            "hasMore", 0);
    else
        return false;
    if (ctx->stateless && ttl_ms >= 0 && result)
        gw_mcp_cacheable (result, ttl_ms, shared);
    gw_mcp_respond (reply, id, result);
    return true;
}

/* A request of the stateful era (2025-11-25 and before). */
static void
s_request_stateful (gw_mcp_ctx_t *ctx, const char *method, json_t *params)
{
    gw_mcp_client_t *client = ctx->client;
    gw_mcp_reply_t *reply = ctx->reply;
    json_t *id = ctx->id;
    if (strcmp (method, "initialize") == 0) {
        client->apps = gw_mcp_apps_in_capabilities (json_object_get (params, "capabilities"));
        gw_mcp_respond (reply, id, gw_mcp_initialize (client, params,
                                                        gw_mcp_instructions (
                                                            gw_mcp_first_set (ctx->mcp))));
    }
    else if (strcmp (method, "ping") == 0)
        gw_mcp_respond (reply, id, json_object ());
    else if (strcmp (method, "logging/setLevel") == 0) {
        const char *level = json_string_value (json_object_get (params, "level"));
        int rank = gw_mcp_log_rank (level);
        if (rank < 0)
            gw_mcp_respond_error (reply, id, GW_E_BAD_REQUEST, NULL, "level must be one of "
                                  "debug, info, notice, warning, error, critical, alert, "
                                  "emergency");
        else {
            client->log_level = rank;
            gw_mcp_respond (reply, id, json_object ());
        }
    } else if (strcmp (method, "resources/subscribe") == 0
               || strcmp (method, "resources/unsubscribe") == 0)
        gw_mcp_respond (reply, id, json_object ());
    else if (!s_common (ctx, method, params))
        gw_mcp_respond_error (reply, id, GW_E_NOT_FOUND, NULL, "method not found: %s", method);
}

/* A request of the stateless era (2026-07-28): checked, then run with
 * the capabilities and log level it carries. */
static void
s_request_stateless (gw_mcp_ctx_t *ctx, const gw_mcp_in_t *in, const char *method,
                     json_t *params)
{
    gw_mcp_reply_t *reply = ctx->reply;
    gw_mcp_error_t err;
    if (gw_mcp_stateless_check (ctx->mcp, method, params, in->http, &err) != GW_E_OK) {
        gw_mcp_respond_error (reply, ctx->id, err.e, err.data, "%s", err.message);
        return;
    }
    json_t *meta = json_object_get (params, "_meta");
    ctx->capabilities = json_object_get (meta, GW_MCP_META_CAPABILITIES);
    /* no notifications/message unless the request asks for a level */
    const char *level = json_string_value (json_object_get (meta, GW_MCP_META_LOG_LEVEL));
    int rank = gw_mcp_log_rank (level);
    ctx->client->log_level = rank >= 0 ? rank : GW_MCP_LOG_NONE;
    if (strcmp (method, "server/discover") == 0)
        gw_mcp_respond (reply, ctx->id,
                        gw_mcp_discover (gw_mcp_instructions (gw_mcp_first_set (ctx->mcp))));
    else if (strcmp (method, "subscriptions/listen") == 0)
        gw_mcp_listen (ctx, params);
    else if (strncmp (method, "tasks/", 6) == 0)
        gw_mcp_tasks_request (ctx, method, params);
    else if (!s_common (ctx, method, params))
        gw_mcp_respond_error (reply, ctx->id, GW_E_NOT_FOUND, NULL, "method not found: %s",
                              method);
}

/* Dispatches one request. Ends reply on every path (maybe later). */
static void
s_request (gw_mcp_t *self, gw_mcp_client_t *client, json_t *id, const char *method,
           json_t *params, const gw_mcp_in_t *in, gw_mcp_reply_t *reply)
{
    if (params && !json_is_object (params)) {
        gw_mcp_respond_error (reply, id, GW_E_BAD_REQUEST, NULL, "params must be an object");
        return;
    }
    gw_mcp_ctx_t ctx = {.mcp = self, .client = client, .id = id, .reply = reply,
        .overrides = in->overrides, .params = params, .owner = client};
    if (!reply->stateless) {
        s_request_stateful (&ctx, method, params);
        return;
    }
    /* a stateless request has a client of its own for this call only
       (the stdio transport's, or the HTTP caller's tenant) */
    gw_mcp_client_t own = {.ephemeral = true, .initialized = true};
    snprintf (own.tenant, sizeof own.tenant, "%s",
              client ? client->tenant : in->tenant ? in->tenant : "default");
    snprintf (own.version, sizeof own.version, "%s", gw_mcp_stateless_versions[0]);
    ctx.client = &own;
    ctx.stateless = true;
    s_request_stateless (&ctx, in, method, params);
}

void
gw_mcp_handle_text (gw_mcp_t *self, gw_mcp_client_t *client, const char *text, size_t len,
                    const gw_mcp_in_t *in, gw_mcp_reply_t *reply)
{
    json_error_t jerr;
    reply->stateless = in->stateless;
    json_t *msg = json_loadb (text, len, 0, &jerr);
    if (!msg) {
        gw_mcp_respond_error (reply, NULL, GW_E_INVALID_JSON, NULL,
                              "parse error: %s (line %d, column %d)", jerr.text, jerr.line,
                              jerr.column);
        return;
    }
    json_t *id = json_object_get (msg, "id");
    json_t *method_json = json_object_get (msg, "method");
    const char *method = json_string_value (method_json);
    if (method)
        gw_mcp_log_field (reply, "rpc", method);
    if (method && !reply->stateless && json_is_object (msg))
        reply->stateless = gw_mcp_stateless_wanted (method, json_object_get (msg, "params"));
    bool valid_id = id && (json_is_string (id) || json_is_integer (id));
    if (!json_is_object (msg)) {
        gw_mcp_respond_error (reply, NULL, GW_E_INVALID_REQUEST, NULL, "invalid request: send "
                              "one JSON-RPC object (batches are not supported)");
    } else if (!method && (json_object_get (msg, "result") || json_object_get (msg, "error"))) {
        reply->end (reply);     /* a response from the client: nothing to do */
    } else if (!method || strcmp (json_string_value (json_object_get (msg, "jsonrpc")) ?
                                  json_string_value (json_object_get (msg, "jsonrpc")) : "",
                                  "2.0") != 0) {
        gw_mcp_respond_error (reply, valid_id ? id : NULL, GW_E_INVALID_REQUEST, NULL,
                              "invalid request: needs \"jsonrpc\": \"2.0\" and a \"method\"");
    } else if (!id) {
        s_notification (self, client, method, json_object_get (msg, "params"));
        reply->end (reply);
    } else if (!valid_id) {
        gw_mcp_respond_error (reply, NULL, GW_E_INVALID_REQUEST, NULL,
                              "invalid request: id must be a string or an integer");
    } else
        s_request (self, client, id, method, json_object_get (msg, "params"), in, reply);
    json_decref (msg);
}

bool
gw_mcp_is_request (const char *text, size_t len, bool *is_initialize)
{
    json_t *msg = json_loadb (text, len, 0, NULL);
    const char *method = json_string_value (json_object_get (msg, "method"));
    bool request = method && json_object_get (msg, "id");
    *is_initialize = request && strcmp (method, "initialize") == 0;
    bool parse_error = !msg || !json_is_object (msg);
    json_decref (msg);
    return request || parse_error;  /* a parse error is answered too */
}

void
gw_mcp_reply_gone (gw_mcp_t *self, gw_mcp_reply_t *reply)
{
    gw_mcp_call_t *call = gw_mcp_call_of (self, reply);
    if (call) {
        jp_log_info ("mcp event=client-gone request=%s",
                     call->job ? gw_job_id (call->job) : "?");
        gw_mcp_call_cancel (call);
    }
}

int64_t
gw_mcp_deadline (gw_mcp_t *self)
{
    if (!self->calls)
        return -1;
    int64_t next = self->next_keepalive;
    for (gw_mcp_call_t *call = self->calls; call; call = call->next) {
        int64_t due = gw_mcp_call_due (call);
        if (due >= 0 && due < next)
            next = due;
    }
    return next;
}

void
gw_mcp_tick (gw_mcp_t *self, int64_t now)
{
    bool keepalive = self->next_keepalive && now >= self->next_keepalive;
    for (gw_mcp_call_t *call = self->calls, *next; call; call = next) {
        next = call->next;
        if (call->listen && call->cancelled) {
            gw_mcp_call_drop (call);    /* a listener whose client left */
            continue;
        }
        if (call->task_after_ms && now >= call->task_after_ms)
            gw_mcp_task_promote (call);
        gw_mcp_call_tick (call, now, keepalive);
    }
    if (keepalive || !self->calls)
        self->next_keepalive = self->calls ? now + GW_MCP_PROBE_MS : 0;
}
