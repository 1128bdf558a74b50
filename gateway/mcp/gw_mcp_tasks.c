/* gw_mcp_tasks: what MCP 2026-07-28 adds for long work and for code that
 * asks questions:
 *
 * - Tasks (the io.modelcontextprotocol/tasks extension): a tool call of a
 *   client that declares the extension and still runs after
 *   GW_MCP_TASK_AFTER_MS is answered with a task (resultType "task") and
 *   goes on without the connection; tasks/get shows its status and, at the
 *   end, its result; tasks/cancel interrupts it; tasks/update answers the
 *   kernel's input(). Tasks belong to their tenant, are kept
 *   GW_MCP_TASK_TTL_MS after they end, and are bounded by count and by the
 *   bytes of their results: a tenant holds at most its share of the count
 *   (gw_config_share), and over a bound the tenant that holds the most
 *   loses its oldest ended task first.
 * - input() as a multi-round-trip request: for a client that declares
 *   elicitation, the call answers {"resultType":"input_required"} with one
 *   elicitation/create and an opaque requestState, while the kernel waits;
 *   the same tools/call sent again with inputResponses and that
 *   requestState feeds the answer to the kernel and waits for the end.
 * - subscriptions/listen: a stream that stays open and tells the tenant's
 *   resources list changes (new files under output/) and task status.
 *
 * Threads: the loop thread only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_job.h"
#include "gw_id.h"
#include "gw_mcp_apps.h"
#include "gw_mcp_call.h"
#include "gw_mcp_exec.h"
#include "gw_mcp_reply.h"
#include "gw_mcp_tasks.h"
#include "gw_session.h"
#include "jp_json.h"
#include "jp_log.h"
#include "jp_random.h"
#include "jp_time.h"

#define S_TASKS_MAX 1000                    /* kept in all; a tenant its share */
#define S_TASKS_PER_TENANT 100              /* running, per tenant */
#define S_TASK_BYTES_MAX ((size_t) 256 << 20)   /* of kept results */
#define S_INPUTS_MAX 1024                   /* input() waits remembered; a tenant its share */
#define S_LISTENERS_PER_TENANT 64           /* open subscriptions/listen */
#define S_INPUT_KEY "input"

typedef enum {
    S_WORKING,
    S_INPUT_REQUIRED,
    S_COMPLETED,
    S_FAILED,
    S_CANCELLED,
} s_status_t;

static const char *const s_status_names[] = {"working", "input_required", "completed",
                                             "failed", "cancelled"};

struct gw_mcp_task {
    gw_mcp_reply_t capture;     /* what the tool call answers into (first) */
    gw_mcp_t *mcp;
    char id[40];
    char tenant[GW_ID_SIZE];
    s_status_t status;
    char created[JP_DATE_LEN + 1], updated[JP_DATE_LEN + 1];
    int64_t ended_ms;           /* 0 while it runs */
    json_t *result;             /* the CallToolResult once completed */
    json_t *error;              /* {"code","message"} once failed */
    json_t *input_requests;     /* while input_required */
    gw_job_t *input_job;        /* whose input() waits (while input_required) */
    size_t bytes;
    gw_mcp_task_t *next;
};

/* A kernel's input() that an input_required result handed to a client. */
struct gw_mcp_input {
    char state[40];             /* the requestState: random, unguessable */
    char tenant[GW_ID_SIZE];
    char job_id[GW_JOB_ID_SIZE];
    bool oneshot;
    gw_mcp_input_t *next;
};

static bool
s_terminal (s_status_t status)
{
    return status >= S_COMPLETED;
}

/* Does a listener follow task_id? */
static bool
s_follows (const gw_mcp_call_t *call, const char *task_id)
{
    size_t i;
    json_t *v;
    json_array_foreach (call->task_ids, i, v)
        if (strcmp (json_string_value (v), task_id) == 0)
            return true;
    return false;
}

/* Tells the tenant's listeners that asked for kind (and, for tasks,
 * follow task_id) message (borrowed; its params gain each one's
 * subscription id). */
static void
s_notify (gw_mcp_t *self, const char *tenant, unsigned kind, const char *task_id,
          json_t *message)
{
    for (gw_mcp_call_t *call = self->calls; call; call = call->next) {
        if (!(call->listen & kind) || !call->reply || call->cancelled
            || strcmp (call->tenant, tenant) != 0 || (task_id && !s_follows (call, task_id)))
            continue;
        json_t *params = json_object_get (message, "params");
        json_object_set_new (params, "_meta", json_pack ("{s:O}", GW_MCP_META_SUBSCRIPTION,
                                                         call->id));
        call->reply->send (call->reply, message);
    }
}

void
gw_mcp_notify_resources_changed (gw_mcp_t *self, const char *tenant)
{
    json_t *msg = json_pack ("{s:s, s:s, s:{}}", "jsonrpc", "2.0", "method",
                             "notifications/resources/list_changed", "params");
    if (msg)
        s_notify (self, tenant, GW_MCP_LISTEN_RESOURCES, NULL, msg);
    json_decref (msg);
}

/* ---- input() waits ---- */

/* How many input() waits tenant has remembered. */
static size_t
s_inputs_of (gw_mcp_t *self, const char *tenant)
{
    size_t n = 0;
    for (gw_mcp_input_t *in = self->inputs; in; in = in->next)
        n += strcmp (in->tenant, tenant) == 0;
    return n;
}

/* Makes room for one more input() wait of tenant: a tenant at its share
 * of S_INPUTS_MAX forgets its own oldest; while the table is full, the
 * tenant that holds the most forgets its oldest (never another's while it
 * holds more). The list is newest first. */
static void
s_inputs_make_room (gw_mcp_t *self, const char *tenant)
{
    size_t share = (size_t) gw_config_share (gw_server_config (self->server), S_INPUTS_MAX);
    size_t n = 0, most = 0;
    const char *victim = s_inputs_of (self, tenant) >= share ? tenant : NULL;
    for (gw_mcp_input_t *in = self->inputs; in; in = in->next)
        n++;
    /* full (rare): the largest holder, counted the plain way */
    for (gw_mcp_input_t *in = self->inputs; !victim && n >= S_INPUTS_MAX && in; in = in->next) {
        size_t held = s_inputs_of (self, in->tenant);
        if (held > most) {
            most = held;
            victim = in->tenant;
        }
    }
    if (!victim)
        return;
    gw_mcp_input_t **oldest = NULL;
    for (gw_mcp_input_t **link = &self->inputs; *link; link = &(*link)->next)
        if (strcmp ((*link)->tenant, victim) == 0)
            oldest = link;
    if (oldest) {
        gw_mcp_input_t *old = *oldest;
        *oldest = old->next;
        free (old);
    }
}

/* ---- tasks ---- */

/* The task as tasks/get shows it (new). */
static json_t *
s_task_json (const gw_mcp_task_t *task, bool details)
{
    json_t *out = json_pack ("{s:s, s:s, s:s, s:s, s:I, s:i}", "taskId", task->id, "status",
                             s_status_names[task->status], "createdAt", task->created,
                             "lastUpdatedAt", task->updated, "ttlMs",
                             (json_int_t) GW_MCP_TASK_TTL_MS, "pollIntervalMs",
                             GW_MCP_TASK_POLL_MS);
    if (!out || !details)
        return out;
    if (task->status == S_COMPLETED && task->result)
        json_object_set (out, "result", task->result);
    else if (task->status == S_FAILED && task->error)
        json_object_set (out, "error", task->error);
    else if (task->status == S_INPUT_REQUIRED && task->input_requests)
        json_object_set (out, "inputRequests", task->input_requests);
    return out;
}

/* A task's status changed: the time, and the tenant's listeners. */
static void
s_task_changed (gw_mcp_task_t *task)
{
    jp_time_iso8601 (task->updated);
    if (s_terminal (task->status) && !task->ended_ms)
        task->ended_ms = jp_time_now_ms ();
    json_t *params = s_task_json (task, true);
    json_t *msg = params ? json_pack ("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method",
                                      "notifications/tasks", "params", params)
                         : NULL;
    if (msg)
        s_notify (task->mcp, task->tenant, GW_MCP_LISTEN_TASKS, task->id, msg);
    json_decref (msg);
}

/* The call answered into the task. */
static void
s_capture_send (gw_mcp_reply_t *base, json_t *message)
{
    gw_mcp_task_t *task = (gw_mcp_task_t *) base;
    if (json_object_get (message, "method") || s_terminal (task->status))
        return;     /* notifications: progress goes nowhere once a task */
    json_t *result = json_object_get (message, "result");
    json_t *error = json_object_get (message, "error");
    if (result) {
        json_decref (task->result);
        task->result = json_incref (result);
        json_object_del (task->result, "resultType");
        size_t bytes = jp_json_size (result);
        task->bytes = bytes == (size_t) -1 ? 0 : bytes;
        task->status = S_COMPLETED;
    } else if (error) {
        task->error = json_incref (error);
        task->status = S_FAILED;
    }
}

static void
s_capture_end (gw_mcp_reply_t *base)
{
    gw_mcp_task_t *task = (gw_mcp_task_t *) base;
    if (!s_terminal (task->status))
        task->status = S_CANCELLED;     /* ended without an answer */
    json_decref (task->input_requests);
    task->input_requests = NULL;
    task->input_job = NULL;
    s_task_changed (task);
}

static void
s_task_free (gw_mcp_task_t *task)
{
    json_decref (task->result);
    json_decref (task->error);
    json_decref (task->input_requests);
    free (task);
}

/* Unlinks and frees the oldest ended task of tenant (the list is newest
 * first: its last ended one). Returns its bytes, or -1 when it has none. */
static long long
s_drop_oldest (gw_mcp_t *self, const char *tenant)
{
    gw_mcp_task_t **oldest = NULL;
    for (gw_mcp_task_t **link = &self->tasks; *link; link = &(*link)->next)
        if ((*link)->ended_ms && strcmp ((*link)->tenant, tenant) == 0)
            oldest = link;
    if (!oldest)
        return -1;
    gw_mcp_task_t *t = *oldest;
    *oldest = t->next;
    long long bytes = (long long) t->bytes;
    s_task_free (t);
    return bytes;
}

/* One tenant's ended tasks, while the kept ones are over a bound. */
typedef struct {
    const char *tenant;         /* a task's, valid until one is dropped */
    size_t count, bytes;
} s_holder_t;

/* The tenant that holds the most ended tasks (by_bytes: the most bytes of
 * results), copied into tenant; false when no task has ended (or out of
 * memory). */
static bool
s_largest_holder (gw_mcp_t *self, bool by_bytes, char *tenant, size_t tenant_len)
{
    s_holder_t *holders = NULL, *most = NULL;
    size_t n = 0, cap = 0;
    for (gw_mcp_task_t *t = self->tasks; t; t = t->next) {
        if (!t->ended_ms)
            continue;
        s_holder_t *h = NULL;
        for (size_t i = 0; i < n && !h; i++)
            h = strcmp (holders[i].tenant, t->tenant) == 0 ? &holders[i] : NULL;
        if (!h && n == cap) {
            size_t grown_cap = cap ? cap * 2 : 8;
            s_holder_t *grown = realloc (holders, grown_cap * sizeof *grown);
            if (!grown)
                break;
            holders = grown;
            cap = grown_cap;
        }
        if (!h) {
            h = &holders[n++];
            *h = (s_holder_t) {.tenant = t->tenant};
        }
        h->count++;
        h->bytes += t->bytes;
    }
    for (size_t i = 0; i < n; i++)
        if (!most || (by_bytes ? holders[i].bytes > most->bytes
                               : holders[i].count > most->count))
            most = &holders[i];
    if (most)
        snprintf (tenant, tenant_len, "%s", most->tenant);
    free (holders);
    return most != NULL;
}

/* Drops ended tasks past their time; then, while over the count or the
 * bytes, the oldest ended task of the tenant that holds the most (tasks,
 * or bytes), so one tenant's many tasks never push out another's results
 * while it holds more. */
static void
s_tasks_expire (gw_mcp_t *self, int64_t now)
{
    size_t count = 0, bytes = 0;
    for (gw_mcp_task_t **link = &self->tasks; *link;) {
        gw_mcp_task_t *t = *link;
        if (t->ended_ms && now - t->ended_ms >= GW_MCP_TASK_TTL_MS) {
            *link = t->next;
            s_task_free (t);
            continue;
        }
        count++;
        bytes += t->bytes;
        link = &t->next;
    }
    char tenant[GW_ID_SIZE];
    while (count > S_TASKS_MAX || bytes > S_TASK_BYTES_MAX) {
        if (!s_largest_holder (self, count <= S_TASKS_MAX, tenant, sizeof tenant))
            break;              /* what is left still runs */
        long long dropped = s_drop_oldest (self, tenant);
        if (dropped < 0)
            break;
        count--;
        bytes -= (size_t) dropped;
    }
}

static gw_mcp_task_t *
s_task_find (gw_mcp_t *self, const char *id, const char *tenant)
{
    for (gw_mcp_task_t *t = self->tasks; id && t; t = t->next)
        if (strcmp (t->id, id) == 0 && strcmp (t->tenant, tenant) == 0)
            return t;
    return NULL;
}

bool
gw_mcp_tasks_declared (const gw_mcp_ctx_t *ctx)
{
    return ctx->stateless
           && json_object_get (json_object_get (ctx->capabilities, "extensions"),
                               GW_MCP_TASKS_EXTENSION) != NULL;
}

void
gw_mcp_task_promote (gw_mcp_call_t *call)
{
    gw_mcp_t *self = call->mcp;
    call->task_after_ms = 0;
    if (!call->reply || call->cancelled)
        return;
    /* a tenant holds at most its share of the tasks kept (its oldest
       ended one makes room), and runs at most S_TASKS_PER_TENANT of them */
    s_tasks_expire (self, jp_time_now_ms ());
    size_t share = (size_t) gw_config_share (gw_server_config (self->server), S_TASKS_MAX);
    size_t running = 0, held = 0;
    for (gw_mcp_task_t *t = self->tasks; t; t = t->next)
        if (strcmp (t->tenant, call->tenant) == 0) {
            held++;
            running += !t->ended_ms;
        }
    if (running >= S_TASKS_PER_TENANT || running >= share
        || (held >= share && s_drop_oldest (self, call->tenant) < 0))
        return;     /* the call just goes on as a plain one */
    gw_mcp_task_t *task = calloc (1, sizeof *task);
    if (!task)
        return;
    task->capture = (gw_mcp_reply_t) {.send = s_capture_send, .end = s_capture_end,
        .stateless = true};
    task->mcp = self;
    jp_random_uuid (task->id);
    snprintf (task->tenant, sizeof task->tenant, "%s", call->tenant);
    jp_time_iso8601 (task->created);
    memcpy (task->updated, task->created, sizeof task->updated);
    task->next = self->tasks;
    self->tasks = task;
    /* the client gets the task now; the call answers into it from here */
    json_t *created = s_task_json (task, false);
    json_object_set_new (created, "resultType", json_string ("task"));
    gw_mcp_reply_t *client = call->reply;
    call->reply = &task->capture;
    call->client = NULL;        /* it outlives the connection */
    json_decref (call->progress_token);
    call->progress_token = NULL;
    jp_log_info ("mcp event=task-created task=%s request=%s", task->id,
                 call->job ? gw_job_id (call->job) : "?");
    gw_mcp_respond (client, call->id, created);
}

/* tasks/update: the answers to a task's input requests. */
static void
s_task_update (gw_mcp_ctx_t *ctx, gw_mcp_task_t *task, json_t *params)
{
    json_t *answer = json_object_get (json_object_get (params, "inputResponses"), S_INPUT_KEY);
    if (task->status == S_INPUT_REQUIRED && answer && task->input_job) {
        const char *value = NULL;
        bool accepted = gw_mcp_input_value (answer, &value);
        gw_job_t *job = task->input_job;
        json_decref (task->input_requests);
        task->input_requests = NULL;
        task->input_job = NULL;
        task->status = S_WORKING;
        if (accepted)
            gw_job_answer_input (job, value);
        else if (gw_job_session (job))
            gw_session_cancel (gw_job_session (job), job);
        s_task_changed (task);
    }
    gw_mcp_respond (ctx->reply, ctx->id, json_object ());
}

void
gw_mcp_tasks_request (gw_mcp_ctx_t *ctx, const char *method, json_t *params)
{
    gw_mcp_t *self = ctx->mcp;
    if (!gw_mcp_tasks_declared (ctx)) {
        gw_mcp_respond_error (ctx->reply, ctx->id, GW_E_MISSING_CAPABILITY,
                              json_pack ("{s:{s:{s:{}}}}", "requiredCapabilities",
                                         "extensions", GW_MCP_TASKS_EXTENSION),
                              "%s needs the client capability extensions[\"%s\"]", method,
                              GW_MCP_TASKS_EXTENSION);
        return;
    }
    s_tasks_expire (self, jp_time_now_ms ());
    const char *id = json_string_value (json_object_get (params, "taskId"));
    gw_mcp_task_t *task = s_task_find (self, id, ctx->client->tenant);
    if (!task) {
        gw_mcp_respond_error (ctx->reply, ctx->id, GW_E_BAD_REQUEST, NULL,
                              "unknown or expired taskId '%.64s'", id ? id : "");
        return;
    }
    if (strcmp (method, "tasks/get") == 0)
        gw_mcp_respond (ctx->reply, ctx->id, s_task_json (task, true));
    else if (strcmp (method, "tasks/update") == 0)
        s_task_update (ctx, task, params);
    else {
        /* tasks/cancel: the kernel is interrupted; the task ends cancelled */
        gw_mcp_call_t *call = gw_mcp_call_of (self, &task->capture);
        if (call && !s_terminal (task->status)) {
            jp_log_info ("mcp event=task-cancelled task=%s", task->id);
            gw_mcp_call_cancel (call);
        }
        gw_mcp_respond (ctx->reply, ctx->id, json_object ());
    }
}

void
gw_mcp_tasks_destroy (gw_mcp_t *self)
{
    while (self->tasks) {
        gw_mcp_task_t *t = self->tasks;
        self->tasks = t->next;
        s_task_free (t);
    }
    while (self->inputs) {
        gw_mcp_input_t *in = self->inputs;
        self->inputs = in->next;
        free (in);
    }
}

/* ---- input() ---- */

bool
gw_mcp_input_value (json_t *answer, const char **value)
{
    const char *action = json_string_value (json_object_get (answer, "action"));
    json_t *content = json_object_get (answer, "content");
    *value = json_string_value (json_object_get (content, "value"));
    if (action && strcmp (action, "accept") == 0 && !*value && json_is_object (content)) {
        /* a form with another field name: its first string */
        const char *key;
        json_t *v;
        json_object_foreach (content, key, v)
            if (json_is_string (v) && !*value)
                *value = json_string_value (v);
    }
    if (!*value)
        *value = "";
    return action && strcmp (action, "accept") == 0;
}

/* The elicitation that asks the user for what input() waits on (new). */
static json_t *
s_input_requests (json_t *prompt)
{
    const char *text = json_string_value (json_object_get (prompt, "prompt"));
    bool password = json_is_true (json_object_get (prompt, "password"));
    char message[512];
    snprintf (message, sizeof message, "%s", text && *text ? text
              : "The code is waiting for input (input()).");
    return json_pack ("{s:{s:s, s:{s:s, s:s, s:{s:s, s:{s:{s:s, s:s, s:s}}, s:[s]}}}}",
                      S_INPUT_KEY, "method", "elicitation/create", "params", "mode", "form",
                      "message", message, "requestedSchema", "type", "object", "properties",
                      "value", "type", "string", "title", password ? "Password" : "Answer",
                      "description", "The line input() returns", "required", "value");
}

bool
gw_mcp_input_wanted (const gw_mcp_ctx_t *ctx)
{
    return ctx->stateless && json_is_object (json_object_get (ctx->capabilities, "elicitation"));
}

void
gw_mcp_input_asked (gw_mcp_call_t *call, gw_job_t *job, json_t *prompt)
{
    gw_mcp_t *self = call->mcp;
    if (!call->reply)
        return;
    for (gw_mcp_task_t *task = self->tasks; task; task = task->next)
        if (call->reply == &task->capture) {
            /* a task waits: tasks/get shows the question, tasks/update answers */
            json_decref (task->input_requests);
            task->input_requests = s_input_requests (prompt);
            task->input_job = job;
            task->status = S_INPUT_REQUIRED;
            s_task_changed (task);
            return;
        }
    /* a plain call: the client gets the question as its result; the kernel
       waits for the same call to come back with the answer */
    s_inputs_make_room (self, call->tenant);
    gw_mcp_input_t *in = calloc (1, sizeof *in);
    if (!in)
        return;
    jp_random_uuid (in->state);
    snprintf (in->tenant, sizeof in->tenant, "%s", call->tenant);
    snprintf (in->job_id, sizeof in->job_id, "%s", gw_job_id (job));
    in->oneshot = call->oneshot;
    in->next = self->inputs;
    self->inputs = in;
    json_t *result = json_pack ("{s:s, s:o, s:s}", "resultType", "input_required",
                                "inputRequests", s_input_requests (prompt), "requestState",
                                in->state);
    gw_mcp_reply_t *reply = call->reply;
    json_t *id = json_incref (call->id);
    call->reply = NULL;
    call->oneshot = false;      /* the call that gets the answer ends it */
    gw_mcp_call_drop (call);
    gw_mcp_respond (reply, id, result);
    json_decref (id);
}

bool
gw_mcp_input_resume (gw_mcp_ctx_t *ctx, json_t *params)
{
    gw_mcp_t *self = ctx->mcp;
    const char *state = json_string_value (json_object_get (params, "requestState"));
    if (!state)
        return false;   /* nothing to resume: the call runs afresh */
    gw_mcp_input_t **link = &self->inputs;
    while (*link && !(strcmp ((*link)->state, state) == 0
                      && strcmp ((*link)->tenant, ctx->client->tenant) == 0))
        link = &(*link)->next;
    gw_mcp_input_t *in = *link;
    gw_job_t *job = in ? gw_jobs_find (gw_server_jobs (self->server), in->job_id,
                                       ctx->client->tenant) : NULL;
    if (!job) {
        gw_mcp_respond_error (ctx->reply, ctx->id, GW_E_BAD_REQUEST, NULL,
                              "unknown or expired requestState: run the code again");
        return true;
    }
    json_t *answer = json_object_get (json_object_get (params, "inputResponses"), S_INPUT_KEY);
    json_t *waiting = gw_job_input_waiting (job);
    if (!gw_job_finished (job) && waiting && !json_is_object (answer)) {
        /* no usable answer: ask again, same state */
        json_t *result = json_pack ("{s:s, s:o, s:s}", "resultType", "input_required",
                                    "inputRequests", s_input_requests (waiting),
                                    "requestState", in->state);
        gw_mcp_respond (ctx->reply, ctx->id, result);
        return true;
    }
    *link = in->next;
    bool oneshot = in->oneshot;
    free (in);
    if (!gw_job_finished (job) && waiting) {
        const char *value;
        if (gw_mcp_input_value (answer, &value))
            gw_job_answer_input (job, value);
        else if (gw_job_session (job))
            gw_session_cancel (gw_job_session (job), job);
    }
    if (gw_job_finished (job)) {
        json_t *result = gw_mcp_exec_result (self, job);
        if (gw_mcp_apps_for_call (ctx))
            gw_mcp_apps_add_outputs (self, result, job);
        gw_mcp_respond (ctx->reply, ctx->id, result);
        if (oneshot && gw_job_session (job))
            gw_session_end_later (gw_job_session (job));
        return true;
    }
    if (!gw_mcp_call_start (ctx, job, oneshot))
        gw_mcp_respond_error (ctx->reply, ctx->id, GW_E_INTERNAL, NULL, "out of memory");
    return true;
}

/* ---- subscriptions/listen ---- */

void
gw_mcp_listen (gw_mcp_ctx_t *ctx, json_t *params)
{
    json_t *asked = json_object_get (params, "notifications");
    json_t *task_ids = json_object_get (asked, "taskIds");
    if (!json_is_object (asked) || (task_ids && !json_is_array (task_ids))) {
        gw_mcp_respond_error (ctx->reply, ctx->id, GW_E_BAD_REQUEST, NULL,
                              "subscriptions/listen needs params.notifications, a filter "
                              "such as {\"resourcesListChanged\": true}");
        return;
    }
    if (json_array_size (task_ids) && !gw_mcp_tasks_declared (ctx)) {
        gw_mcp_respond_error (ctx->reply, ctx->id, GW_E_MISSING_CAPABILITY,
                              json_pack ("{s:{s:{s:{}}}}", "requiredCapabilities",
                                         "extensions", GW_MCP_TASKS_EXTENSION),
                              "taskIds needs the client capability extensions[\"%s\"]",
                              GW_MCP_TASKS_EXTENSION);
        return;
    }
    if (!ctx->reply->can_stream) {
        gw_mcp_respond_error (ctx->reply, ctx->id, GW_E_INVALID_REQUEST, NULL,
                              "subscriptions/listen streams: send Accept: text/event-stream");
        return;
    }
    size_t open = 0;
    for (gw_mcp_call_t *c = ctx->mcp->calls; c; c = c->next)
        open += c->listen && !c->cancelled && strcmp (c->tenant, ctx->client->tenant) == 0;
    if (open >= S_LISTENERS_PER_TENANT) {
        gw_mcp_respond_error (ctx->reply, ctx->id, GW_E_INTERNAL, NULL,
                              "subscription limit reached (%d open for this tenant): close "
                              "one first",
                              S_LISTENERS_PER_TENANT);
        return;
    }
    /* only what the capabilities say changes: resources (new files under
       output/) and the caller's own tasks */
    unsigned kinds = 0;
    json_t *honored = json_object ();
    if (json_is_true (json_object_get (asked, "resourcesListChanged"))) {
        kinds |= GW_MCP_LISTEN_RESOURCES;
        json_object_set_new (honored, "resourcesListChanged", json_true ());
    }
    json_t *followed = json_array ();
    size_t i;
    json_t *v;
    json_array_foreach (task_ids, i, v)
        if (json_is_string (v) && s_task_find (ctx->mcp, json_string_value (v),
                                               ctx->client->tenant)
            && json_array_size (followed) < 256)
            json_array_append (followed, v);
    if (json_array_size (followed)) {
        kinds |= GW_MCP_LISTEN_TASKS;
        json_object_set (honored, "taskIds", followed);
    }
    json_t *ack = json_pack ("{s:s, s:s, s:{s:{s:O}, s:o}}", "jsonrpc", "2.0", "method",
                             "notifications/subscriptions/acknowledged", "params", "_meta",
                             GW_MCP_META_SUBSCRIPTION, ctx->id, "notifications", honored);
    if (ack)
        ctx->reply->send (ctx->reply, ack);
    json_decref (ack);
    gw_mcp_call_t *call = kinds ? calloc (1, sizeof *call) : NULL;
    if (!call) {
        /* nothing to follow: the subscription ends at once */
        json_decref (followed);
        gw_mcp_respond (ctx->reply, ctx->id, json_pack ("{s:{s:O}}", "_meta",
                                                        GW_MCP_META_SUBSCRIPTION, ctx->id));
        return;
    }
    gw_mcp_call_attach (call, ctx);   /* dropped by gw_mcp_tick once cancelled */
    call->listen = kinds;
    call->task_ids = followed;
}
