/* gw_rest_events: GET /execute/{rid}/events (see gw_rest_events.h). A
 * stream of a running job is a job observer: the core tells it each
 * output item (a stream item holds only its new text) and the end. A
 * finished job's stream is written whole at once and needs no state.
 * What a stream holds unread is bounded by gw_stream (a client that does
 * not read is cut); what is kept here is one small struct per open
 * stream, and streams are HTTP connections, which the HTTP edge bounds.
 *
 * Threads: the loop thread only. */
#include "gw_rest_events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_job.h"
#include "jp_json.h"
#include "jp_time.h"

typedef struct s_conn s_conn_t;

/* One open stream of a job that has not finished. */
struct s_conn {
    gw_rest_events_t *owner;
    gw_job_t *job;
    gw_stream_t *stream;
    gw_job_observer_t observer;     /* arg: this */
    size_t files;                   /* PNGs named so far: the next one's index */
    size_t events;                  /* output events written */
    s_conn_t *prev, *next;
};

struct gw_rest_events {
    gw_server_t *server;
    s_conn_t *conns;
    int64_t next_keepalive_ms;
};

static int64_t s_deadline (void *arg, int64_t now);
static void s_tick (void *arg, int64_t now);

static const gw_loop_source_t s_source = {
    .deadline = s_deadline,
    .tick = s_tick,
};

gw_rest_events_t *
gw_rest_events_new (gw_server_t *server)
{
    gw_rest_events_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->server = server;
    if (gw_loop_add_source (gw_server_loop (server), &s_source, self) < 0) {
        free (self);
        return NULL;
    }
    return self;
}

/* Writes one event NAME with value as its data (one line of JSON).
 * Returns 0, or -1 when value could not be written out (OOM). */
static int
s_write_event (gw_stream_t *stream, const char *name, const json_t *value)
{
    size_t len = 0;
    char *text = value ? jp_json_dump (value, &len) : NULL;
    if (!text)
        return -1;
    char head[32];
    int n = snprintf (head, sizeof head, "event: %s\ndata: ", name);
    gw_stream_write (stream, head, (size_t) n);
    gw_stream_write (stream, text, len);
    gw_stream_write (stream, "\n\n", 2);
    free (text);
    return 0;
}

/* Ends stream after what was written, noting the events for the access
 * log line. */
static void
s_close (gw_stream_t *stream, size_t events)
{
    char note[48];
    snprintf (note, sizeof note, " events=%zu", events);
    gw_stream_close_noted (stream, note);
}

/* Unlinks conn, closes its stream and frees it; unobserve when its job
 * still has it on its list (the job did not end it). */
static void
s_conn_free (s_conn_t *conn, bool unobserve)
{
    gw_rest_events_t *self = conn->owner;
    if (conn->prev)
        conn->prev->next = conn->next;
    else
        self->conns = conn->next;
    if (conn->next)
        conn->next->prev = conn->prev;
    if (unobserve)
        gw_job_unobserve (conn->job, &conn->observer);
    s_close (conn->stream, conn->events);
    gw_stream_unref (&conn->stream);
    free (conn);
}

/* Writes one stored or new output item as an output event. */
static void
s_write_output (s_conn_t *conn, json_t *item)
{
    json_t *client = gw_job_client_output (item, &conn->files);
    if (s_write_event (conn->stream, "output", client) == 0)
        conn->events++;
    json_decref (client);
}

/* What the job tells a stream: each new output, then its end. */
static void
s_on_job (gw_job_t *job, gw_job_event_t event, json_t *item, gw_job_observer_t *observer)
{
    s_conn_t *conn = observer->arg;
    if (event == GW_JOB_INPUT)
        return;                 /* REST executions' input() fails at once */
    if (event == GW_JOB_OUTPUT) {
        /* the job walks its list now: conn stays until the tick or the
           HTTP edge finds the client gone */
        if (!gw_stream_gone (conn->stream))
            s_write_output (conn, item);
        return;
    }
    if (event == GW_JOB_FINISHED && !gw_stream_gone (conn->stream)) {
        json_t *results = gw_job_results_json (job);
        s_write_event (conn->stream, "end", results);
        json_decref (results);
    }
    /* finished, or the server shuts down: the job has let go of conn */
    s_conn_free (conn, false);
}

/* A finished job's stream, written whole. Returns 0, or -1 on OOM
 * (nothing written). */
static int
s_write_finished (gw_stream_t *stream, gw_job_t *job)
{
    json_t *results = gw_job_results_json (job);
    if (!results)
        return -1;
    size_t i, events = 0;
    json_t *item;
    json_array_foreach (json_object_get (results, "output"), i, item)
        if (s_write_event (stream, "output", item) == 0)
            events++;
    s_write_event (stream, "end", results);
    json_decref (results);
    s_close (stream, events);
    return 0;
}

/* A stream of a job still queued or running: what it has, then what
 * comes. Returns 0, or -1 on OOM (nothing written). */
static int
s_open_running (gw_rest_events_t *self, gw_stream_t *stream, gw_job_t *job)
{
    s_conn_t *conn = calloc (1, sizeof *conn);
    if (!conn)
        return -1;
    *conn = (s_conn_t) {.owner = self, .job = job, .stream = gw_stream_ref (stream),
                        .next = self->conns};
    conn->observer = (gw_job_observer_t) {.fn = s_on_job, .arg = conn};
    if (!self->conns)
        self->next_keepalive_ms = jp_time_now_ms () + GW_REST_EVENTS_KEEPALIVE_MS;
    if (self->conns)
        self->conns->prev = conn;
    self->conns = conn;
    gw_execution_t *exec = gw_job_execution (job);
    size_t i;
    json_t *item;
    json_array_foreach (exec ? gw_execution_outputs (exec) : NULL, i, item)
        s_write_output (conn, item);
    gw_job_observe (job, &conn->observer);
    return 0;
}

void
gw_rest_events_handle (gw_rest_events_t *self, gw_request_t *req, const char *rid)
{
    gw_job_t *job = gw_jobs_find (gw_server_jobs (self->server), rid, req->tenant);
    if (!job) {
        gw_request_reply_error (req, GW_E_REQUEST_NOT_FOUND,
                                "no execution '%s' (results are kept for an hour)", rid);
        return;
    }
    gw_request_name_session (req, gw_job_session_id (job));
    gw_stream_t *stream = gw_stream_new ();
    if (!stream || (gw_job_finished (job) ? s_write_finished (stream, job)
                                          : s_open_running (self, stream, job)) < 0) {
        gw_stream_unref (&stream);
        gw_request_reply_error (req, GW_E_INTERNAL, "out of memory");
        return;
    }
    req->stream = stream;       /* our reference, now the HTTP edge's */
    req->status = 200;
    req->complete (req);
}

void
gw_rest_events_stream_gone (gw_rest_events_t *self, gw_stream_t *stream)
{
    for (s_conn_t *conn = self->conns; conn; conn = conn->next)
        if (conn->stream == stream) {
            s_conn_free (conn, true);
            return;
        }
}

static int64_t
s_deadline (void *arg, int64_t now)
{
    (void) now;
    gw_rest_events_t *self = arg;
    return self->conns ? self->next_keepalive_ms : -1;
}

/* The keep-alives: a comment on each open stream; a stream whose client
 * left is freed. */
static void
s_tick (void *arg, int64_t now)
{
    gw_rest_events_t *self = arg;
    if (!self->conns || now < self->next_keepalive_ms)
        return;
    self->next_keepalive_ms = now + GW_REST_EVENTS_KEEPALIVE_MS;
    for (s_conn_t *conn = self->conns, *next; conn; conn = next) {
        next = conn->next;
        if (gw_stream_gone (conn->stream))
            s_conn_free (conn, true);
        else
            gw_stream_write (conn->stream, ":\n\n", 3);
    }
}

void
gw_rest_events_close (gw_rest_events_t *self)
{
    while (self && self->conns)
        s_conn_free (self->conns, true);
}

void
gw_rest_events_destroy (gw_rest_events_t **self_p)
{
    gw_rest_events_t *self = *self_p;
    if (!self)
        return;
    gw_rest_events_close (self);
    gw_loop_remove_source (gw_server_loop (self->server), &s_source, self);
    free (self);
    *self_p = NULL;
}
