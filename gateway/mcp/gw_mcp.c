/* gw_mcp: JSON-RPC framing, lifecycle, method dispatch, tool calls that
 * wait for executions, progress and cancellation. Loop thread only. */
#include "gw_mcp.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gw_version.h"
#include "gw_mcp_internal.h"
#include "gw_sandbox.h"
#include "gw_session.h"
#include "jp_random.h"
#include "jp_time.h"
#include "jp_log.h"

const char *const gw_mcp_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
                                       NULL};

static const char *const s_levels[] = {"debug", "info", "notice", "warning", "error",
                                       "critical", "alert", "emergency", NULL};

gw_mcp_t *
gw_mcp_new (gw_server_t *server)
{
    gw_mcp_t *self = calloc (1, sizeof *self);
    if (self)
        self->server = server;
    return self;
}

/* Frees a call and unhooks it from its job. */
static void
s_call_free (gw_mcp_call_t *call)
{
    if (call->job)
        gw_job_unobserve (call->job, &call->watch);
    json_decref (call->id);
    json_decref (call->progress_token);
    json_decref (call->task_ids);
    free (call->pending);
    free (call);
}

/* Removes a call from the list. */
static void
s_call_unlink (gw_mcp_t *self, gw_mcp_call_t *call)
{
    for (gw_mcp_call_t **link = &self->calls; *link; link = &(*link)->next)
        if (*link == call) {
            *link = call->next;
            return;
        }
}

void
gw_mcp_call_drop (gw_mcp_call_t *call)
{
    s_call_unlink (call->mcp, call);
    s_call_free (call);
}

/* Ends a call's reply without a response and cancels its execution. */
static void
s_call_cancel (gw_mcp_t *self, gw_mcp_call_t *call)
{
    (void) self;
    if (call->cancelled)
        return;
    call->cancelled = true;
    if (call->reply) {
        gw_mcp_reply_t *reply = call->reply;
        call->reply = NULL;
        reply->end (reply);
    }
    /* a queued job ends at once, and its end frees the call */
    void (*on_cancel) (void *arg) = call->on_cancel;
    void *cancel_arg = call->cancel_arg;
    if (call->job && gw_job_session (call->job) && !gw_job_finished (call->job))
        gw_session_cancel (gw_job_session (call->job), call->job);
    if (on_cancel)
        on_cancel (cancel_arg);
}

void
gw_mcp_call_cancel (gw_mcp_call_t *call)
{
    s_call_cancel (call->mcp, call);
}

void
gw_mcp_destroy (gw_mcp_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gw_mcp_t *self = *self_p;
    while (self->calls) {
        gw_mcp_call_t *call = self->calls;
        self->calls = call->next;
        call->cancelled = true;
        if (call->reply)
            call->reply->end (call->reply);
        s_call_free (call);
    }
    while (self->clients) {
        gw_mcp_client_t *c = self->clients;
        self->clients = c->next;
        free (c);
    }
    gw_mcp_tasks_destroy (self);
    json_decref (self->tools);
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
        s_call_cancel (self, call);
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

/* Appends " key=value" to the reply's log fields: value (it comes from the
 * client) cut to 48 bytes at a character's start and quoted by jp_log_quote
 * when it needs it, so a method or tool name "x status=200" stays one
 * field (jp_log writes control characters as \xHH). */
static void
s_log_field (gw_mcp_reply_t *reply, const char *key, const char *value)
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
    used = jp_log_quote (reply->log, used, sizeof reply->log - 1, value ? value : "", len);
    reply->log[used] = '\0';
}

/* Sends a response {"jsonrpc","id","result"} (result stolen) and ends. */
void
gw_mcp_respond (gw_mcp_reply_t *reply, json_t *id, json_t *result)
{
    if (strstr (reply->log, " tool="))
        s_log_field (reply, "is_error",
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

/* The HTTP status of an error of the stateless era. */
static int
s_error_status (int code)
{
    return code == -32601 ? 404 : code == -32603 ? 500 : 400;
}

/* Sends an error response {"code","message","data"?} (data stolen) and
 * ends. */
static void
s_respond_error_data (gw_mcp_reply_t *reply, json_t *id, int code, json_t *data,
                      const char *message)
{
    char code_text[16];
    snprintf (code_text, sizeof code_text, "%d", code);
    s_log_field (reply, "error", code_text);
    if (reply->stateless && !reply->status)
        reply->status = s_error_status (code);
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

void
gw_mcp_respond_error (gw_mcp_reply_t *reply, json_t *id, int code, json_t *data,
                      const char *fmt, ...)
{
    char message[1024];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (message, sizeof message, fmt, ap);
    va_end (ap);
    s_respond_error_data (reply, id, code, data, message);
}

/* Sends an error response and ends. */
static void
s_respond_error (gw_mcp_reply_t *reply, json_t *id, int code, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));

static void
s_respond_error (gw_mcp_reply_t *reply, json_t *id, int code, const char *fmt, ...)
{
    char message[1024];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (message, sizeof message, fmt, ap);
    va_end (ap);
    s_respond_error_data (reply, id, code, NULL, message);
}

void
gw_mcp_log (gw_mcp_ctx_t *ctx, const char *level, const char *text)
{
    int rank = 0;
    while (s_levels[rank] && strcmp (s_levels[rank], level) != 0)
        rank++;
    if (!ctx->reply || !ctx->reply->can_stream || !ctx->client || rank < ctx->client->log_level)
        return;
    json_t *msg = json_pack ("{s:s, s:s, s:{s:s, s:s, s:s}}", "jsonrpc", "2.0", "method",
                             "notifications/message", "params", "level", level, "logger",
                             "codebox", "data", text);
    if (msg)
        ctx->reply->send (ctx->reply, msg);
    json_decref (msg);
}

const char gw_mcp_instructions[] =
    "Run code in persistent Jupyter kernels (Python, JavaScript, ...). Call session_info "
    "first, reuse one session_id so variables persist, save files for the user under "
    "output/, and read the codebox://guide resource for more.";

json_t *
gw_mcp_capabilities (gw_mcp_t *self, bool stateless)
{
    (void) self;
    if (!stateless)
        return json_pack ("{s:{s:b}, s:{s:b, s:b}, s:{s:b}, s:{}}", "tools", "listChanged", 0,
                          "resources", "subscribe", 0, "listChanged", 0, "prompts",
                          "listChanged", 0, "logging");
    /* 2026-07-28: lists change for subscriptions/listen as they do for
       anyone: resources when a run leaves new files under output/ */
    return json_pack ("{s:{s:b}, s:{s:b}, s:{s:b}, s:{}, s:{}, s:{s:{}}}", "tools",
                      "listChanged", 0, "resources", "listChanged", 1, "prompts",
                      "listChanged", 0, "completions", "logging", "extensions",
                      GW_MCP_TASKS_EXTENSION);
}

/* initialize: agree on a version; answer capabilities and server info. */
static json_t *
s_initialize (gw_mcp_t *self, gw_mcp_client_t *client, json_t *params)
{
    const char *asked = json_string_value (json_object_get (params, "protocolVersion"));
    const char *version = gw_mcp_versions[0];
    for (int i = 0; asked && gw_mcp_versions[i]; i++)
        if (strcmp (asked, gw_mcp_versions[i]) == 0)
            version = gw_mcp_versions[i];
    snprintf (client->version, sizeof client->version, "%s", version);
    client->initialized = true;
    return json_pack ("{s:s, s:o, s:{s:s, s:s, s:s}, s:s}", "protocolVersion", version,
                      "capabilities", gw_mcp_capabilities (self, false), "serverInfo", "name",
                      "codebox", "title", "codebox code interpreter", "version",
                      CODEBOX_VERSION, "instructions", gw_mcp_instructions);
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
            s_call_cancel (self, call);
            break;
        }
}

static bool
s_conformance (gw_mcp_t *self)
{
    return gw_config_bool (gw_server_config (self->server), GW_SET_MCP_CONFORMANCE);
}

json_t *
gw_mcp_tools (gw_mcp_t *self)
{
    if (!self->tools)
        self->tools = gw_mcp_tools_list (s_conformance (self),
                                         gw_sandbox_network (gw_server_sandbox (self->server)));
    return self->tools;
}

json_t *
gw_mcp_tool_find (gw_mcp_t *self, const char *name)
{
    size_t i;
    json_t *tool;
    json_array_foreach (json_object_get (gw_mcp_tools (self), "tools"), i, tool)
        if (name && strcmp (json_string_value (json_object_get (tool, "name")), name) == 0)
            return tool;
    return NULL;
}

/* Tools that run code, whose input() a client may answer. */
static bool
s_runs_code (const char *tool)
{
    return strcmp (tool, "exec_code") == 0 || strcmp (tool, "run_python_code") == 0
           || strcmp (tool, "run_javascript_code") == 0;
}

/* Tools whose calls may become tasks: they can run for minutes. */
static bool
s_task_capable (const char *tool)
{
    static const char *const names[] = {"exec_code", "run_python_code", "run_javascript_code",
                                        "install_package", "upload_file", "exec_sql", NULL};
    for (int i = 0; names[i]; i++)
        if (strcmp (names[i], tool) == 0)
            return true;
    return false;
}

/* tools/call, either era. */
static void
s_tools_call (gw_mcp_ctx_t *ctx, json_t *params)
{
    gw_mcp_reply_t *reply = ctx->reply;
    const char *name = json_string_value (json_object_get (params, "name"));
    json_t *args = json_object_get (params, "arguments");
    if (name)
        s_log_field (reply, "tool", name);
    if (!name) {
        s_respond_error (reply, ctx->id, -32602, "tools/call needs params.name");
        return;
    }
    if (args && !json_is_object (args)) {
        s_respond_error (reply, ctx->id, -32602, "arguments must be an object");
        return;
    }
    ctx->progress_token = json_object_get (json_object_get (params, "_meta"), "progressToken");
    /* an answer to a kernel's input() that an earlier call of this
       request returned as input_required */
    if (ctx->stateless && json_object_get (params, "requestState") && s_runs_code (name)
        && gw_mcp_input_resume (ctx, params))
        return;
    json_t *owned_args = args ? json_incref (args) : json_object ();
    int rpc_error = 0;
    char err[512] = "";
    json_t *result = gw_mcp_tools_call (ctx, name, owned_args, &rpc_error, err, sizeof err);
    json_decref (owned_args);
    gw_mcp_call_t *call = NULL;
    if (result)
        gw_mcp_respond (reply, ctx->id, result);
    else if (rpc_error)
        s_respond_error_data (reply, ctx->id, rpc_error, NULL, err);
    else if (gw_mcp_tasks_declared (ctx) && s_task_capable (name)
             && (call = gw_mcp_call_of (ctx->mcp, reply))) {
        /* still running: a task if it goes on past the first second */
        call->task_after_ms = jp_time_now_ms () + GW_MCP_TASK_AFTER_MS;
    }
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
        result = json_copy (gw_mcp_tools (self));
        ttl_ms = GW_MCP_TTL_STATIC_MS;
    } else if (strcmp (method, "tools/call") == 0) {
        s_tools_call (ctx, params);
        return true;
    } else if (strcmp (method, "resources/list") == 0) {
        result = gw_mcp_resources_list (ctx, json_string_value (json_object_get (params,
                                                                                 "cursor")));
        if (!result) {
            s_respond_error (reply, id, -32602, "invalid cursor");
            return true;
        }
        ttl_ms = 0;
        shared = false;
    } else if (strcmp (method, "resources/templates/list") == 0) {
        result = gw_mcp_resource_templates (s_conformance (self));
        ttl_ms = GW_MCP_TTL_STATIC_MS;
    } else if (strcmp (method, "resources/read") == 0) {
        const char *uri = json_string_value (json_object_get (params, "uri"));
        int code = -32602;
        char err[512] = "resources/read needs params.uri";
        result = uri ? gw_mcp_resources_read (ctx, uri, &code, err, sizeof err) : NULL;
        if (!result) {
            /* 2026-07-28: an unknown resource is -32602 with the uri (it
               was -32002 before) */
            if (ctx->stateless && code == -32002)
                code = -32602;
            json_t *data = uri && (code == -32602 || code == -32002)
                               ? json_pack ("{s:s}", "uri", uri) : NULL;
            s_respond_error_data (reply, id, code, data, err);
            return true;
        }
        ttl_ms = 0;
        shared = false;
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
            s_respond_error (reply, id, -32602, "%s", name ? err : "prompts/get needs "
                             "params.name");
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
    if (strcmp (method, "initialize") == 0)
        gw_mcp_respond (reply, id, s_initialize (ctx->mcp, client, params));
    else if (strcmp (method, "ping") == 0)
        gw_mcp_respond (reply, id, json_object ());
    else if (strcmp (method, "logging/setLevel") == 0) {
        const char *level = json_string_value (json_object_get (params, "level"));
        int rank = 0;
        while (level && s_levels[rank] && strcmp (s_levels[rank], level) != 0)
            rank++;
        if (!level || !s_levels[rank])
            s_respond_error (reply, id, -32602, "level must be one of debug, info, notice, "
                             "warning, error, critical, alert, emergency");
        else {
            client->log_level = rank;
            gw_mcp_respond (reply, id, json_object ());
        }
    } else if (strcmp (method, "resources/subscribe") == 0
               || strcmp (method, "resources/unsubscribe") == 0)
        gw_mcp_respond (reply, id, json_object ());
    else if (!s_common (ctx, method, params))
        s_respond_error (reply, id, -32601, "method not found: %s", method);
}

/* A request of the stateless era (2026-07-28): checked, then run with
 * the capabilities and log level it carries. */
static void
s_request_stateless (gw_mcp_ctx_t *ctx, const gw_mcp_in_t *in, const char *method,
                     json_t *params)
{
    gw_mcp_reply_t *reply = ctx->reply;
    gw_mcp_error_t err;
    if (gw_mcp_stateless_check (ctx->mcp, method, params, in->http, &err)) {
        reply->status = err.status;
        s_respond_error_data (reply, ctx->id, err.code, err.data, err.message);
        return;
    }
    json_t *meta = json_object_get (params, "_meta");
    ctx->capabilities = json_object_get (meta, GW_MCP_META_CAPABILITIES);
    /* no notifications/message unless the request asks for a level */
    const char *level = json_string_value (json_object_get (meta, GW_MCP_META_LOG_LEVEL));
    int rank = 0;
    while (level && s_levels[rank] && strcmp (s_levels[rank], level) != 0)
        rank++;
    ctx->client->log_level = level && s_levels[rank] ? rank : GW_MCP_LOG_NONE;
    if (strcmp (method, "server/discover") == 0)
        gw_mcp_respond (reply, ctx->id, gw_mcp_discover (ctx->mcp));
    else if (strcmp (method, "subscriptions/listen") == 0)
        gw_mcp_listen (ctx, params);
    else if (strncmp (method, "tasks/", 6) == 0)
        gw_mcp_tasks_request (ctx, method, params);
    else if (!s_common (ctx, method, params))
        s_respond_error (reply, ctx->id, -32601, "method not found: %s", method);
}

/* Dispatches one request. Ends reply on every path (maybe later). */
static void
s_request (gw_mcp_t *self, gw_mcp_client_t *client, json_t *id, const char *method,
           json_t *params, const gw_mcp_in_t *in, gw_mcp_reply_t *reply)
{
    if (params && !json_is_object (params)) {
        s_respond_error (reply, id, -32602, "params must be an object");
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
        s_respond_error (reply, NULL, -32700, "parse error: %s (line %d, column %d)", jerr.text,
                         jerr.line, jerr.column);
        return;
    }
    json_t *id = json_object_get (msg, "id");
    json_t *method_json = json_object_get (msg, "method");
    const char *method = json_string_value (method_json);
    if (method)
        s_log_field (reply, "rpc", method);
    if (method && !reply->stateless && json_is_object (msg))
        reply->stateless = gw_mcp_stateless_wanted (method, json_object_get (msg, "params"));
    bool valid_id = id && (json_is_string (id) || json_is_integer (id));
    if (!json_is_object (msg)) {
        s_respond_error (reply, NULL, -32600, "invalid request: send one JSON-RPC object "
                         "(batches are not supported)");
    } else if (!method && (json_object_get (msg, "result") || json_object_get (msg, "error"))) {
        reply->end (reply);     /* a response from the client: nothing to do */
    } else if (!method || strcmp (json_string_value (json_object_get (msg, "jsonrpc")) ?
                                  json_string_value (json_object_get (msg, "jsonrpc")) : "",
                                  "2.0") != 0) {
        s_respond_error (reply, valid_id ? id : NULL, -32600,
                         "invalid request: needs \"jsonrpc\": \"2.0\" and a \"method\"");
    } else if (!id) {
        s_notification (self, client, method, json_object_get (msg, "params"));
        reply->end (reply);
    } else if (!valid_id) {
        s_respond_error (reply, NULL, -32600, "invalid request: id must be a string or an integer");
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

gw_mcp_call_t *
gw_mcp_call_of (gw_mcp_t *self, const gw_mcp_reply_t *reply)
{
    for (gw_mcp_call_t *call = self->calls; call; call = call->next)
        if (call->reply == reply)
            return call;
    return NULL;
}

void
gw_mcp_reply_gone (gw_mcp_t *self, gw_mcp_reply_t *reply)
{
    gw_mcp_call_t *call = gw_mcp_call_of (self, reply);
    if (call) {
        jp_log_info ("mcp event=client-gone request=%s",
                     call->job ? gw_job_id (call->job) : "?");
        s_call_cancel (self, call);
    }
}

/* True when call can send progress: it carries a progressToken (a task
 * has none), its reply is open and can stream. */
static bool
s_streams_progress (const gw_mcp_call_t *call)
{
    return call->progress_token && call->reply && call->reply->can_stream && !call->cancelled;
}

/* The seconds since call started, in GW_MCP_PROGRESS_STEP steps. */
static double
s_seconds (const gw_mcp_call_t *call, int64_t now)
{
    int64_t ms = now > call->started_ms ? now - call->started_ms : 0;
    int64_t step_ms = (int64_t) (GW_MCP_PROGRESS_STEP * 1000);
    return (double) (ms / step_ms) * GW_MCP_PROGRESS_STEP;
}

/* A JSON number for v (new): an integer when v is whole (a byte count
 * stays 1048576, not 1048576.0). */
static json_t *
s_number (double v)
{
    if (v >= 0 && v < 9007199254740992.0 && v == (double) (json_int_t) v)
        return json_integer ((json_int_t) v);
    return json_real (v);
}

bool
gw_mcp_call_progress (gw_mcp_call_t *call, double value, double total, const char *message,
                      size_t len)
{
    if (!s_streams_progress (call))
        return false;
    /* the specification: progress grows with each notification */
    if (value <= call->progress)
        value = call->progress + GW_MCP_PROGRESS_STEP;
    json_t *msg = json_pack ("{s:s, s:s, s:{s:O, s:o, s:s%}}", "jsonrpc", "2.0", "method",
                             "notifications/progress", "params", "progressToken",
                             call->progress_token, "progress", s_number (value), "message",
                             message, len);
    if (msg && total > 0)
        json_object_set_new (json_object_get (msg, "params"), "total", s_number (total));
    if (!msg)
        return false;
    call->progress = value;
    call->progress_total = total;
    call->last_progress_ms = jp_time_now_ms ();
    call->reply->send (call->reply, msg);
    json_decref (msg);
    return true;
}

/* Sends the pending output as one notifications/progress. */
static void
s_flush_progress (gw_mcp_call_t *call)
{
    if (!call->pending_len)
        return;
    gw_mcp_call_progress (call, s_seconds (call, jp_time_now_ms ()), 0, call->pending,
                          call->pending_len);
    call->pending_len = 0;
}

/* When call's next heartbeat is due: GW_MCP_HEARTBEAT_MS after its last
 * progress, or after its start; -1 when it sends no progress. */
static int64_t
s_heartbeat_due (const gw_mcp_call_t *call)
{
    if (!s_streams_progress (call))
        return -1;
    return (call->last_progress_ms ? call->last_progress_ms : call->started_ms)
           + GW_MCP_HEARTBEAT_MS;
}

/* A progress notification without output: the call is still running.
 * Its total stays what the call's own progress last said (a download's
 * size). */
static void
s_heartbeat (gw_mcp_call_t *call, int64_t now)
{
    char text[64];
    int n = snprintf (text, sizeof text, "running, %lld s",
                      (long long) ((now - call->started_ms) / 1000));
    if (!gw_mcp_call_progress (call, s_seconds (call, now), call->progress_total, text,
                               (size_t) n))
        call->last_progress_ms = now;   /* out of memory: not again at once */
}

/* Follows an execution for a call: progress while it runs, the response
 * when it ends. */
static void
s_on_job (gw_job_t *job, gw_job_event_t event, json_t *item, gw_job_observer_t *watch)
{
    gw_mcp_call_t *call = watch->arg;
    gw_mcp_t *self = call->mcp;
    if (event == GW_JOB_OUTPUT) {
        if (!call->progress_token || !call->reply || !call->reply->can_stream)
            return;
        const char *type = json_string_value (json_object_get (item, "type"));
        const char *text = NULL;
        if (strcmp (type, "stream") == 0 || strcmp (type, "result") == 0)
            text = json_string_value (json_object_get (item, "content"));
        else if (strcmp (type, "error") == 0)
            text = json_string_value (json_object_get (item, "evalue"));
        else if (strcmp (type, "display") == 0)
            text = "[display]\n";
        size_t n = text ? strlen (text) : 0;
        char *grown = n ? realloc (call->pending, call->pending_len + n + 1) : NULL;
        if (grown) {
            memcpy (grown + call->pending_len, text, n);
            call->pending = grown;
            call->pending_len += n;
            grown[call->pending_len] = '\0';
        }
        if (jp_time_now_ms () - call->last_progress_ms >= GW_MCP_PROGRESS_MIN_MS)
            s_flush_progress (call);
        return;
    }
    if (event == GW_JOB_INPUT) {
        gw_mcp_input_asked (call, job, item);   /* may free call */
        return;
    }
    if (event != GW_JOB_FINISHED) {
        call->job = NULL;   /* shutdown: gw_mcp_destroy ends the call */
        return;
    }
    /* finished: its result goes out now; nobody asks for it later */
    gw_job_set_transient (job);
    if (json_array_size (gw_job_new_artifacts (job)))
        gw_mcp_notify_resources_changed (self, call->tenant);
    call->job = NULL;
    s_call_unlink (self, call);
    if (call->reply && !call->cancelled) {
        s_flush_progress (call);
        gw_mcp_respond (call->reply, call->id, gw_mcp_exec_result (self, job));
        call->reply = NULL;
    } else if (call->reply) {
        call->reply->end (call->reply);
        call->reply = NULL;
    }
    if (call->oneshot && gw_job_session (job))
        gw_session_end_later (gw_job_session (job));
    s_call_free (call);
}

gw_mcp_call_t *
gw_mcp_call_start (gw_mcp_ctx_t *ctx, gw_job_t *job, bool oneshot)
{
    gw_mcp_call_t *call = calloc (1, sizeof *call);
    if (!call)
        return NULL;
    call->job = job;
    call->oneshot = oneshot;
    gw_mcp_call_attach (call, ctx);
    call->watch = (gw_job_observer_t) {.fn = s_on_job, .arg = call};
    gw_job_observe (job, &call->watch);
    return call;
}

void
gw_mcp_call_attach (gw_mcp_call_t *call, gw_mcp_ctx_t *ctx)
{
    call->mcp = ctx->mcp;
    call->client = ctx->owner;
    snprintf (call->tenant, sizeof call->tenant, "%s", ctx->client->tenant);
    call->id = json_incref (ctx->id);
    call->progress_token = ctx->progress_token ? json_incref (ctx->progress_token) : NULL;
    call->reply = ctx->reply;
    call->started_ms = jp_time_now_ms ();
    call->next = ctx->mcp->calls;
    ctx->mcp->calls = call;
    if (!ctx->mcp->next_keepalive)
        ctx->mcp->next_keepalive = jp_time_now_ms () + GW_MCP_PROBE_MS;
}

int64_t
gw_mcp_deadline (gw_mcp_t *self)
{
    if (!self->calls)
        return -1;
    int64_t next = self->next_keepalive;
    for (gw_mcp_call_t *call = self->calls; call; call = call->next) {
        if (call->pending_len && call->reply) {
            int64_t due = call->last_progress_ms + GW_MCP_PROGRESS_MIN_MS;
            if (due < next)
                next = due;
        }
        if (call->task_after_ms && call->task_after_ms < next)
            next = call->task_after_ms;
        int64_t heartbeat = s_heartbeat_due (call);
        if (heartbeat >= 0 && heartbeat < next)
            next = heartbeat;
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
        if (call->pending_len && now - call->last_progress_ms >= GW_MCP_PROGRESS_MIN_MS)
            s_flush_progress (call);
        int64_t heartbeat = s_heartbeat_due (call);
        if (heartbeat >= 0 && now >= heartbeat)
            s_heartbeat (call, now);
        if (keepalive && call->reply && call->reply->keepalive)
            call->reply->keepalive (call->reply);   /* may cancel (and keep) call */
    }
    if (keepalive || !self->calls)
        self->next_keepalive = self->calls ? now + GW_MCP_PROBE_MS : 0;
}
