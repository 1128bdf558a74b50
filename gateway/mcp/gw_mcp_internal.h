/* gw_mcp_internal: the records every file of the MCP core shares: the
 * server (gw_mcp_t), its clients and calls, what a request knows of itself
 * (gw_mcp_ctx_t), what a tool is (gw_mcp_tool_t); and the protocol's
 * constants. Types only: each file's functions are in its own header
 * (gw_mcp_reply.h, gw_mcp_call.h, gw_mcp_tasks.h, ...), which a file above
 * includes; no file includes the header of a file above it. Not for other
 * modules. Threads: the loop thread only. */
#ifndef GW_MCP_INTERNAL_H
#define GW_MCP_INTERNAL_H

#include "gw_job.h"
#include "gw_id.h"
#include "gw_server.h"
#include "gw_mcp_sink.h"
#include "gw_request.h"

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

/* How long clients may keep a list (ttlMs): what only an upgrade changes. */
#define GW_MCP_TTL_STATIC_MS 600000

#define GW_MCP_LOG_NONE 8           /* above emergency: nothing is sent */

struct gw_mcp_client {
    char id[40];
    char tenant[GW_ID_SIZE];
    char version[16];
    int log_level;              /* syslog-style: 0 debug .. 7 emergency */
    bool initialized;
    bool ephemeral;             /* one stateless request's: not on the list */
    bool apps;                  /* declared MCP Apps at initialize (gw_mcp_apps.c) */
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
    bool apps;                  /* its caller declared MCP Apps: outputs in _meta */
    /* the response when its execution ends (new); NULL: codebox's own,
       gw_mcp_exec_result (a seed's tool set answers in its own shape) */
    json_t *(*result_fn) (gw_mcp_t *mcp, gw_job_t *job);
    bool cancelled;
    void (*on_cancel) (void *arg);  /* told when the call is cancelled (no job) */
    void *cancel_arg;
    int64_t started_ms;         /* when the call was attached */
    double progress;            /* the last progress value sent (0: none yet) */
    double progress_total;      /* the last total sent with it (0: none) */
    int64_t last_progress_ms;   /* when the last progress went out (0: none yet) */
    char *pending;              /* output not yet sent as progress */
    size_t pending_len;
    char tenant[GW_ID_SIZE];            /* the caller's */
    int64_t task_after_ms;      /* > 0: becomes a task then if still running */
    unsigned listen;            /* subscriptions/listen: GW_MCP_LISTEN_* it asked for */
    json_t *task_ids;           /* and the tasks it follows (GW_MCP_LISTEN_TASKS) */
    /* A tool set whose answers have a shape of their own (Code Box's),
       for answers other than an execution's (result_fn builds those):
       turns the call's result (stolen) into that shape (new) when the
       call answers (gw_mcp_call_answer; exec_sql's, upload_file's).
       NULL: the result as it is. shape_arg is the shape's (released with
       the call). */
    json_t *(*shape) (gw_mcp_call_t *call, json_t *result);
    json_t *shape_arg;
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
    struct gw_mcp_apps_view *apps_view;   /* the MCP Apps view, read once */
    gw_mcp_task_t *tasks;       /* newest first (gw_mcp_tasks.c) */
    gw_mcp_input_t *inputs;     /* input() waits handed to clients, newest first */
    /* What a call's execution tells the layer above the call list
       (gw_mcp_tasks.c; set by gw_mcp_new): it waits in input() (may free
       call), and a finished run left new files under output/. */
    void (*on_input) (gw_mcp_call_t *call, gw_job_t *job, json_t *prompt);
    void (*on_new_files) (gw_mcp_t *self, const char *tenant);
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

#endif
