/* gw_mcp_call: the calls that answer later (a tool call waiting for an
 * execution, a task's capture, a subscriptions/listen stream): their list
 * in gw_mcp_t, so keep-alives, a client leaving and notifications/cancelled
 * reach them; progress notifications while an execution runs (its output,
 * and a heartbeat); the response when it ends. Above the replies, below
 * tasks and tools: what a call's execution tells tasks (input() waits, new
 * files) goes through gw_mcp_t's on_input and on_new_files.
 *
 * Threads: the loop thread only. */
#include "gw_mcp_call.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_mcp_apps.h"
#include "gw_mcp_exec.h"
#include "gw_mcp_reply.h"
#include "gw_session.h"
#include "jp_time.h"

/* Frees a call and unhooks it from its job. */
static void
s_call_free (gw_mcp_call_t *call)
{
    if (call->job)
        gw_job_unobserve (call->job, &call->watch);
    json_decref (call->id);
    json_decref (call->progress_token);
    json_decref (call->task_ids);
    json_decref (call->shape_arg);
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
gw_mcp_call_answer (gw_mcp_call_t *call, json_t *result)
{
    gw_mcp_reply_t *reply = call->reply;
    call->reply = NULL;
    if (call->shape && result)
        result = call->shape (call, result);
    gw_mcp_respond (reply, call->id, result);
}

void
gw_mcp_call_drop (gw_mcp_call_t *call)
{
    s_call_unlink (call->mcp, call);
    s_call_free (call);
}

void
gw_mcp_call_cancel (gw_mcp_call_t *call)
{
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
gw_mcp_calls_destroy (gw_mcp_t *self)
{
    while (self->calls) {
        gw_mcp_call_t *call = self->calls;
        self->calls = call->next;
        call->cancelled = true;
        if (call->reply)
            call->reply->end (call->reply);
        s_call_free (call);
    }
}

gw_mcp_call_t *
gw_mcp_call_of (gw_mcp_t *self, const gw_mcp_reply_t *reply)
{
    for (gw_mcp_call_t *call = self->calls; call; call = call->next)
        if (call->reply == reply)
            return call;
    return NULL;
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
        if (self->on_input)
            self->on_input (call, job, item);   /* may free call */
        return;
    }
    if (event != GW_JOB_FINISHED) {
        call->job = NULL;   /* shutdown: gw_mcp_destroy ends the call */
        return;
    }
    /* finished: its result goes out now; nobody asks for it later */
    gw_job_set_transient (job);
    if (json_array_size (gw_job_new_artifacts (job)) && self->on_new_files)
        self->on_new_files (self, call->tenant);
    call->job = NULL;
    s_call_unlink (self, call);
    if (call->reply && !call->cancelled) {
        s_flush_progress (call);
        json_t *result = call->result_fn ? call->result_fn (self, job)
                                         : gw_mcp_exec_result (self, job);
        if (call->apps)     /* whichever set's shape: the view reads _meta */
            gw_mcp_apps_add_outputs (self, result, job);
        gw_mcp_call_answer (call, result);
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
    gw_mcp_call_attach (call, ctx);
    gw_mcp_call_watch (call, job, oneshot);
    return call;
}

void
gw_mcp_call_watch (gw_mcp_call_t *call, gw_job_t *job, bool oneshot)
{
    call->job = job;
    call->oneshot = oneshot;
    call->watch = (gw_job_observer_t) {.fn = s_on_job, .arg = call};
    gw_job_observe (job, &call->watch);
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
    call->apps = gw_mcp_apps_for_call (ctx);
    call->next = ctx->mcp->calls;
    ctx->mcp->calls = call;
    if (!ctx->mcp->next_keepalive)
        ctx->mcp->next_keepalive = jp_time_now_ms () + GW_MCP_PROBE_MS;
}

int64_t
gw_mcp_call_due (const gw_mcp_call_t *call)
{
    int64_t due = -1;
    if (call->pending_len && call->reply)
        due = call->last_progress_ms + GW_MCP_PROGRESS_MIN_MS;
    if (call->task_after_ms && (due < 0 || call->task_after_ms < due))
        due = call->task_after_ms;
    int64_t heartbeat = s_heartbeat_due (call);
    if (heartbeat >= 0 && (due < 0 || heartbeat < due))
        due = heartbeat;
    return due;
}

void
gw_mcp_call_tick (gw_mcp_call_t *call, int64_t now, bool keepalive)
{
    if (call->pending_len && now - call->last_progress_ms >= GW_MCP_PROGRESS_MIN_MS)
        s_flush_progress (call);
    int64_t heartbeat = s_heartbeat_due (call);
    if (heartbeat >= 0 && now >= heartbeat)
        s_heartbeat (call, now);
    if (keepalive && call->reply && call->reply->keepalive)
        call->reply->keepalive (call->reply);   /* may cancel (and keep) call */
}
