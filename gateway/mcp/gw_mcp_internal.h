/* gw_mcp_internal: what the MCP core, its tools and its resources share:
 * the client and call records and the result builders. Not for other
 * modules. Threads: the loop thread only. */
#ifndef GW_MCP_INTERNAL_H
#define GW_MCP_INTERNAL_H

#include "gw_job.h"
#include "gw_server.h"
#include "gw_mcp.h"

#define GW_MCP_PROGRESS_MIN_MS 250      /* at most four progress notes a second */
/* A streamed call writes an SSE comment this often: a client that left is
   noticed at the second failed write, so within about two seconds. */
#define GW_MCP_PROBE_MS 1000

struct gw_mcp_client {
    char id[40];
    char tenant[65];
    char version[16];
    int log_level;              /* syslog-style: 0 debug .. 7 emergency */
    bool initialized;
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
    double progress;
    int64_t last_progress_ms;
    char *pending;              /* output not yet sent as progress */
    size_t pending_len;
    gw_mcp_call_t *next;
};

struct gw_mcp {
    gw_server_t *server;
    gw_mcp_client_t *clients;
    gw_mcp_call_t *calls;
    int64_t next_keepalive;
};

/* What a tool call knows of its request. */
typedef struct {
    gw_mcp_t *mcp;
    gw_mcp_client_t *client;
    json_t *id;
    json_t *progress_token;
    gw_mcp_reply_t *reply;
    const gw_overrides_t *overrides;
} gw_mcp_ctx_t;

/* One tool: what tools/list shows and the function that runs it. The
 * function returns the CallToolResult (new), or NULL after taking the
 * reply over (gw_mcp_call_start, or its own later answer). */
typedef json_t *(gw_mcp_tool_fn) (gw_mcp_ctx_t *ctx, json_t *args);
typedef struct {
    const char *name;
    const char *title;
    const char *description;
    const char *input_schema;   /* JSON text */
    const char *output_schema;  /* JSON text, or NULL */
    bool read_only;
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

/* tools/list's result (new). */
json_t *gw_mcp_tools_list (bool conformance);

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

/* Watches job for ctx's request; the response goes out when it ends. */
gw_mcp_call_t *gw_mcp_call_start (gw_mcp_ctx_t *ctx, gw_job_t *job, bool oneshot);

/* Sends the response {"jsonrpc","id","result"} (result stolen) and ends
 * the reply: how a tool that answers later answers. */
void gw_mcp_respond (gw_mcp_reply_t *reply, json_t *id, json_t *result);

/* A tool result with isError and one text item (new). */
json_t *gw_mcp_tool_error (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* A tool result with structuredContent (stolen) and its text (new). */
json_t *gw_mcp_tool_ok (json_t *structured, const char *text);

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
json_t *gw_mcp_prompts_get (const char *name, json_t *args, bool conformance, char *err,
                            size_t err_len);

/* Sends a notifications/message to the reply's client at level (if the
 * client's level lets it through and the reply can stream). */
void gw_mcp_log (gw_mcp_ctx_t *ctx, const char *level, const char *text);

/* Conformance fixtures (CODEBOX_MCP_CONFORMANCE=1 only): adds the
 * fixture tools to tools; runs one (NULL when name is not a fixture);
 * adds the fixture resources, templates and prompts. The fixtures exist
 * only in the test build build/codebox-conformance
 * (tests/mcp/fixtures/); the production binary has the empty ones of
 * gw_mcp_fixtures.c. */
void gw_mcp_conformance_tools (json_t *tools);
json_t *gw_mcp_conformance_call (gw_mcp_ctx_t *ctx, const char *name, json_t *args);
void gw_mcp_conformance_resources (json_t *resources, json_t *templates);
json_t *gw_mcp_conformance_read (const char *uri);
void gw_mcp_conformance_prompts (json_t *prompts);
json_t *gw_mcp_conformance_prompt (const char *name, json_t *args);

/* The usage guide for agents (static text). */
extern const char gw_mcp_guide[];

#endif
