/* gw_mcp_internal: what the MCP core, its tools and its resources share:
 * the client and call records and the result builders. Not for other
 * modules. Threads: the loop thread only. */
#ifndef GW_MCP_INTERNAL_H
#define GW_MCP_INTERNAL_H

#include "gw_job.h"
#include "gw_server.h"
#include "gw_mcp.h"

#define GW_MCP_PROGRESS_MIN_MS 250      /* at most four progress notes a second */
/* While a call that carries a progressToken runs and its reply can stream,
   a notifications/progress goes out at least this often, output or not:
   a client that resets its request timeout on progress (the TypeScript
   SDK's resetTimeoutOnProgress, 60 s by default) then never gives up on a
   long silent run. Clients are promised one every 10 s; 5 s keeps a margin
   for a busy loop and a slow network. */
#define GW_MCP_HEARTBEAT_MS 5000
/* Progress is in seconds since the call started, in steps of this (a power
   of two, so the JSON number is short and exact); a value that would not
   grow is raised by one step. */
#define GW_MCP_PROGRESS_STEP 0.125
/* A streamed call writes an SSE comment this often: a client that left is
   noticed at the second failed write, so within about two seconds. */
#define GW_MCP_PROBE_MS 1000

/* _meta keys of the stateless era. */
#define GW_MCP_META_VERSION "io.modelcontextprotocol/protocolVersion"
#define GW_MCP_META_CAPABILITIES "io.modelcontextprotocol/clientCapabilities"
#define GW_MCP_META_CLIENT_INFO "io.modelcontextprotocol/clientInfo"
#define GW_MCP_META_LOG_LEVEL "io.modelcontextprotocol/logLevel"
#define GW_MCP_META_SERVER_INFO "io.modelcontextprotocol/serverInfo"
#define GW_MCP_META_SUBSCRIPTION "io.modelcontextprotocol/subscriptionId"
#define GW_MCP_TASKS_EXTENSION "io.modelcontextprotocol/tasks"

/* Error codes of the stateless era. */
#define GW_MCP_HEADER_MISMATCH (-32020)
#define GW_MCP_MISSING_CAPABILITY (-32021)
#define GW_MCP_UNSUPPORTED_VERSION (-32022)

/* How long clients may keep a list (ttlMs): what only an upgrade changes. */
#define GW_MCP_TTL_STATIC_MS 600000

#define GW_MCP_LOG_NONE 8           /* above emergency: nothing is sent */

struct gw_mcp_client {
    char id[40];
    char tenant[65];
    char version[16];
    int log_level;              /* syslog-style: 0 debug .. 7 emergency */
    bool initialized;
    bool ephemeral;             /* one stateless request's: not on the list */
    int64_t last_used_ms;       /* for the idle expiry of HTTP sessions */
    gw_mcp_client_t *next;
};

/* A tool call that waits for an execution. */
typedef struct gw_mcp_call gw_mcp_call_t;
struct gw_mcp_call {
    gw_mcp_t *mcp;
    gw_mcp_client_t *client;
    json_t *id;
    json_t *progress_token;
    gw_mcp_reply_t *reply;      /* NULL once ended */
    gw_job_t *job;
    gw_job_observer_t watch;    /* on job's observers while it runs */
    bool oneshot;               /* end the session when done */
    bool cancelled;
    void (*on_cancel) (void *arg);  /* told when the call is cancelled (no job) */
    void *cancel_arg;
    int64_t started_ms;         /* when the call was attached */
    double progress;            /* the last progress value sent (0: none yet) */
    double progress_total;      /* the last total sent with it (0: none) */
    int64_t last_progress_ms;   /* when the last progress went out (0: none yet) */
    char *pending;              /* output not yet sent as progress */
    size_t pending_len;
    char tenant[65];            /* the caller's */
    int64_t task_after_ms;      /* > 0: becomes a task then if still running */
    unsigned listen;            /* subscriptions/listen: GW_MCP_LISTEN_* it asked for */
    json_t *task_ids;           /* and the tasks it follows (GW_MCP_LISTEN_TASKS) */
    gw_mcp_call_t *next;
};

#define GW_MCP_LISTEN_RESOURCES 1u
#define GW_MCP_LISTEN_TASKS 2u

/* A call of a client that declared tasks becomes one when it runs longer
 * than this; tasks are kept this long after they end; clients are told to
 * poll this often. */
#define GW_MCP_TASK_AFTER_MS 1000
#define GW_MCP_TASK_TTL_MS (3600 * 1000)
#define GW_MCP_TASK_POLL_MS 500

typedef struct gw_mcp_task gw_mcp_task_t;
typedef struct gw_mcp_input gw_mcp_input_t;

struct gw_mcp {
    gw_server_t *server;
    gw_mcp_client_t *clients;
    gw_mcp_call_t *calls;
    int64_t next_keepalive;
    json_t *tools;              /* tools/list's result, built once */
    gw_mcp_task_t *tasks;       /* newest first (gw_mcp_tasks.c) */
    gw_mcp_input_t *inputs;     /* input() waits handed to clients, newest first */
};

/* What a tool call knows of its request. */
typedef struct {
    gw_mcp_t *mcp;
    gw_mcp_client_t *client;
    json_t *id;
    json_t *progress_token;
    gw_mcp_reply_t *reply;
    const gw_overrides_t *overrides;
    json_t *params;             /* the request's (borrowed) */
    gw_mcp_client_t *owner;     /* whose calls are cancelled with it: the MCP session
                                   or stdio's client; NULL for stateless HTTP */
    bool stateless;             /* 2026-07-28: capabilities come with the request */
    json_t *capabilities;       /* the client's (borrowed; stateless era), or NULL */
} gw_mcp_ctx_t;

/* An error found before a request runs. */
typedef struct {
    int code;                   /* JSON-RPC code; 0: none */
    int status;                 /* HTTP status */
    char message[512];
    json_t *data;               /* new, or NULL */
} gw_mcp_error_t;

/* True when a message not known to be of either era (stdio) is of the
 * stateless one: server/discover, or _meta carries a protocol version. */
bool gw_mcp_stateless_wanted (const char *method, json_t *params);

/* Checks a stateless request before it runs, in the specification's order:
 * MCP-Protocol-Version present (HTTP), _meta complete (-32602), header and
 * _meta agree (-32020), version supported (-32022), Mcp-Method agrees,
 * the method exists in the era (-32601, 404), Mcp-Name and Mcp-Param-*
 * agree (-32020). http NULL: no header checks. Returns 0, or err->code. */
int gw_mcp_stateless_check (gw_mcp_t *self, const char *method, json_t *params,
                            const gw_request_t *http, gw_mcp_error_t *err);

/* server/discover's result (new). */
json_t *gw_mcp_discover (gw_mcp_t *self);

/* The server's capabilities (new); stateless: the 2026-07-28 set. */
json_t *gw_mcp_capabilities (gw_mcp_t *self, bool stateless);

/* What the server tells clients at initialize and discover. */
extern const char gw_mcp_instructions[];

/* Marks a list or read result cacheable: ttlMs, and cacheScope public
 * (the same for every caller) or private. */
void gw_mcp_cacheable (json_t *result, long ttl_ms, bool shared);

/* The tools/list entry of tool name (borrowed from the cached list), or
 * NULL. */
json_t *gw_mcp_tool_find (gw_mcp_t *self, const char *name);

/* What a tool's annotations tell a host about it (the MCP ToolAnnotations
 * hints; every tool states all four). */
typedef enum {
    GW_MCP_WORLD_CLOSED,        /* works only on codebox's own sessions and files */
    GW_MCP_WORLD_OPEN,          /* reaches the internet (downloads, package indexes) */
    GW_MCP_WORLD_KERNEL,        /* runs kernel code: open when kernels may reach the
                                   network (CODEBOX_NETWORK=on, or no sandbox) */
} gw_mcp_world_t;

typedef struct {
    bool read_only;             /* changes nothing in its environment */
    bool destructive;           /* may delete or overwrite what is there */
    bool idempotent;            /* calling it again with the same arguments does
                                   nothing more */
    gw_mcp_world_t world;       /* openWorldHint */
} gw_mcp_hints_t;

/* One tool: what tools/list shows and the function that runs it. The
 * function returns the CallToolResult (new), or NULL after taking the
 * reply over (gw_mcp_call_start, or its own later answer). */
typedef json_t *(gw_mcp_tool_fn) (gw_mcp_ctx_t *ctx, json_t *args);
typedef struct {
    const char *name;
    const char *title;          /* also annotations.title */
    const char *description;
    const char *input_schema;   /* JSON text */
    const char *output_schema;  /* JSON text, or NULL */
    gw_mcp_hints_t hints;
    gw_mcp_tool_fn *fn;
} gw_mcp_tool_t;

/* Tools defined in files of their own. */
extern const gw_mcp_tool_t gw_mcp_tool_upload_file;    /* gw_mcp_upload.c */
extern const gw_mcp_tool_t gw_mcp_tool_install_package;    /* gw_mcp_packages.c */

/* A string argument, or NULL (with *error set to a tool error when present
 * but not a string). */
const char *gw_mcp_arg (json_t *args, const char *key, json_t **error);

/* The caller's session named by args.session_id, created on first use
 * when create is set; NULL with *error (a tool result) otherwise. */
struct gw_session *gw_mcp_session (gw_mcp_ctx_t *ctx, json_t *args, bool create,
                                   json_t **error);

/* Tools defined in files of their own. */
extern const gw_mcp_tool_t gw_mcp_tool_exec_sql;

/* tools/list's result (new); kernel_network: kernel code may reach the
 * network (the openWorldHint of the tools that run code). */
json_t *gw_mcp_tools_list (bool conformance, bool kernel_network);

/* Runs a tool. Returns its CallToolResult (new); or NULL when it took the
 * reply over to answer later (through gw_mcp_call_start), with *rpc_error
 * 0; or NULL with *rpc_error and err set for a JSON-RPC error (unknown
 * tool). */
json_t *gw_mcp_tools_call (gw_mcp_ctx_t *ctx, const char *name, json_t *args,
                           int *rpc_error, char *err, size_t err_len);

/* Takes ctx's request over with call (zeroed, or with its own fields set):
 * the request id, progress token and reply, and a place in the core's list
 * so keep-alives, a client leaving and notifications/cancelled reach it. */
void gw_mcp_call_attach (gw_mcp_call_t *call, gw_mcp_ctx_t *ctx);

/* Takes a call out of the core's list and frees it (for tools whose calls
 * wait for something other than an execution). */
void gw_mcp_call_drop (gw_mcp_call_t *call);

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

/* Cancels a call: ends its reply without a response, stops its execution
 * (kernel interrupt), tells its on_cancel. */
void gw_mcp_call_cancel (gw_mcp_call_t *call);

/* Sends an error response {"code","message","data"?} (data stolen, may be
 * NULL) and ends the reply. */
void gw_mcp_respond_error (gw_mcp_reply_t *reply, json_t *id, int code, json_t *data,
                           const char *fmt, ...) __attribute__ ((format (printf, 5, 6)));

/* tools/list's result (borrowed, built once). */
json_t *gw_mcp_tools (gw_mcp_t *self);

/* Tasks, input() and listening (gw_mcp_tasks.c). */
/* True when the request declared the tasks extension. */
bool gw_mcp_tasks_declared (const gw_mcp_ctx_t *ctx);
/* The call becomes a task: its client gets resultType "task" now. */
void gw_mcp_task_promote (gw_mcp_call_t *call);
/* tasks/get, tasks/update, tasks/cancel. */
void gw_mcp_tasks_request (gw_mcp_ctx_t *ctx, const char *method, json_t *params);
void gw_mcp_tasks_destroy (gw_mcp_t *self);
/* True when the request's client can answer input() (it declared
 * elicitation): the execution may then wait for it. */
bool gw_mcp_input_wanted (const gw_mcp_ctx_t *ctx);
/* The call's execution waits in input() (prompt: {"prompt","password"}). */
void gw_mcp_input_asked (gw_mcp_call_t *call, gw_job_t *job, json_t *prompt);
/* A tools/call that carries requestState: answers the waiting input() and
 * waits for the end. False when there is nothing to resume. */
bool gw_mcp_input_resume (gw_mcp_ctx_t *ctx, json_t *params);
/* An elicitation result's answer: true when accepted, *value the line. */
bool gw_mcp_input_value (json_t *answer, const char **value);
/* subscriptions/listen: acknowledges and keeps the reply open. */
void gw_mcp_listen (gw_mcp_ctx_t *ctx, json_t *params);
/* Tells the tenant's listeners that resources/list changed. */
void gw_mcp_notify_resources_changed (gw_mcp_t *self, const char *tenant);

/* Watches job for ctx's request; the response goes out when it ends. */
gw_mcp_call_t *gw_mcp_call_start (gw_mcp_ctx_t *ctx, gw_job_t *job, bool oneshot);

/* Sends the response {"jsonrpc","id","result"} (result stolen) and ends
 * the reply: how a tool that answers later answers. */
void gw_mcp_respond (gw_mcp_reply_t *reply, json_t *id, json_t *result);

/* A tool result with isError and one text item (new). */
json_t *gw_mcp_tool_error (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* A tool result with structuredContent (stolen) and its text (new). */
json_t *gw_mcp_tool_ok (json_t *structured, const char *text);

/* The text item of a text file of len bytes for read_file (new), as the
 * model's budget allows: the whole when it fits in limit bytes and args
 * name no piece; else the piece args.offset/args.length (bytes; length at
 * most limit, cut on a line or character) with a marker saying where to
 * read on. Adds offset, length and next_offset (when more follows) to
 * structured. NULL when offset or length is not a fitting integer. */
json_t *gw_mcp_text_piece (const char *data, size_t len, json_t *args, size_t limit,
                           const char *path, json_t *structured);

/* The CallToolResult of a finished execution (new). */
json_t *gw_mcp_exec_result (gw_mcp_t *mcp, gw_job_t *job);

/* resources/list, resources/templates/list, resources/read (new results,
 * or NULL with *code and err set). */
json_t *gw_mcp_resources_list (gw_mcp_ctx_t *ctx, const char *cursor);
json_t *gw_mcp_resource_templates (bool conformance);
json_t *gw_mcp_resources_read (gw_mcp_ctx_t *ctx, const char *uri, int *code, char *err,
                               size_t err_len);

/* prompts/list and prompts/get. */
json_t *gw_mcp_prompts_list (bool conformance);
json_t *gw_mcp_prompts_get (const char *name, json_t *params, bool conformance, char *err,
                            size_t err_len);

/* Sends a notifications/message to the reply's client at level (if the
 * client's level lets it through and the reply can stream). */
void gw_mcp_log (gw_mcp_ctx_t *ctx, const char *level, const char *text);

/* Conformance fixtures (CODEBOX_MCP_CONFORMANCE=1 only): adds the
 * fixture tools to tools; runs one (its CallToolResult; or NULL with
 * *handled set when the fixture took the reply over, as a tool function
 * may; NULL with *handled false when name is not a fixture); adds the
 * fixture resources, templates and prompts. The fixtures exist
 * only in the test build build/codebox-conformance
 * (tests/mcp/fixtures/); the production binary has the empty ones of
 * gw_mcp_fixtures.c. */
void gw_mcp_conformance_tools (json_t *tools);
json_t *gw_mcp_conformance_call (gw_mcp_ctx_t *ctx, const char *name, json_t *args,
                                 bool *handled);
void gw_mcp_conformance_resources (json_t *resources, json_t *templates);
json_t *gw_mcp_conformance_read (const char *uri);
void gw_mcp_conformance_prompts (json_t *prompts);
json_t *gw_mcp_conformance_prompt (const char *name, json_t *args, json_t *params);

/* The usage guide for agents (static text). */
extern const char gw_mcp_guide[];

#endif
