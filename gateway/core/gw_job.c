/* gw_job: execution records, their results and their long polls.
 * Threads: the loop thread only. */
#include "gw_job_internal.h"

#include <stdlib.h>
#include <string.h>

#include "jp_random.h"
#include "jp_time.h"

struct gw_jobs {
    gw_job_t **items;
    size_t n, cap;
    size_t max_bytes;           /* finished results kept, at most (0: no bound) */
};

gw_jobs_t *
gw_jobs_new (void)
{
    return calloc (1, sizeof (gw_jobs_t));
}

/* Takes every observer off job and tells each event. */
static void
s_tell_all (gw_job_t *job, gw_job_event_t event)
{
    gw_job_observer_t *o = job->observers;
    job->observers = NULL;
    while (o) {
        gw_job_observer_t *next = o->next;
        o->next = NULL;
        o->fn (job, event, NULL, o);
        o = next;
    }
}

void
gw_job_observe (gw_job_t *job, gw_job_observer_t *observer)
{
    observer->next = job->observers;
    job->observers = observer;
}

void
gw_job_unobserve (gw_job_t *job, gw_job_observer_t *observer)
{
    for (gw_job_observer_t **link = &job->observers; *link; link = &(*link)->next)
        if (*link == observer) {
            *link = observer->next;
            observer->next = NULL;
            return;
        }
}

void
gw_job_output (gw_job_t *job, json_t *item)
{
    for (gw_job_observer_t *o = job->observers; o; o = o->next)
        o->fn (job, GW_JOB_OUTPUT, item, o);
}

static void
s_job_free (gw_job_t *job)
{
    s_tell_all (job, GW_JOB_SHUTDOWN);
    gw_execution_destroy (&job->exec);
    gw_snapshot_destroy (&job->before);
    json_decref (job->new_artifacts);
    free (job->code);
    free (job);
}

void
gw_jobs_destroy (gw_jobs_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gw_jobs_t *self = *self_p;
    for (size_t i = 0; i < self->n; i++)
        s_job_free (self->items[i]);
    free (self->items);
    free (self);
    *self_p = NULL;
}

gw_job_t *
gw_jobs_add (gw_jobs_t *self, gw_session_t *session, const char *session_id,
             const char *tenant, const char *code, long timeout_ms)
{
    if (self->n == self->cap) {
        size_t cap = self->cap ? self->cap * 2 : 64;
        gw_job_t **grown = realloc (self->items, cap * sizeof *grown);
        if (!grown)
            return NULL;
        self->items = grown;
        self->cap = cap;
    }
    gw_job_t *job = calloc (1, sizeof *job);
    if (!job || !(job->code = strdup (code))) {
        free (job);
        return NULL;
    }
    jp_random_uuid (job->id);
    snprintf (job->session_id, sizeof job->session_id, "%s", session_id);
    snprintf (job->tenant, sizeof job->tenant, "%s", tenant);
    job->session = session;
    job->status = GW_EXEC_QUEUED;
    job->timeout_ms = timeout_ms;
    job->created_ms = jp_time_now_ms ();
    self->items[self->n++] = job;
    return job;
}

gw_job_t *
gw_jobs_find (gw_jobs_t *self, const char *id, const char *tenant)
{
    for (size_t i = 0; i < self->n; i++)
        if (strcmp (self->items[i]->id, id) == 0 && strcmp (self->items[i]->tenant, tenant) == 0)
            return self->items[i];
    return NULL;
}

bool
gw_job_finished (const gw_job_t *job)
{
    return job->status >= GW_EXEC_COMPLETED;
}

void
gw_jobs_set_max_bytes (gw_jobs_t *self, size_t max_bytes)
{
    self->max_bytes = max_bytes;
}

/* The bytes a finished job's result holds. */
static size_t
s_job_bytes (const gw_job_t *job)
{
    return sizeof *job + (job->exec ? gw_execution_bytes (job->exec) : 0)
           + (job->code ? strlen (job->code) : 0);
}

size_t
gw_jobs_expire (gw_jobs_t *self, int64_t now)
{
    /* the newest finished results are kept up to max_bytes: count from
       the newest, and everything older than where the sum passes it goes */
    size_t oldest_kept = 0, sum = 0;
    for (size_t i = self->n; self->max_bytes && i-- > 0;) {
        if (!gw_job_finished (self->items[i]))
            continue;
        sum += s_job_bytes (self->items[i]);
        if (sum > self->max_bytes) {
            oldest_kept = i + 1;
            break;
        }
    }
    size_t kept = 0, freed = 0;
    for (size_t i = 0; i < self->n; i++) {
        gw_job_t *job = self->items[i];
        /* the store is in creation order, so the oldest go first */
        bool drop = gw_job_finished (job)
            && (job->transient || now - job->finished_ms > GW_JOB_KEEP_MS
                || self->n - (i - kept) > GW_JOBS_MAX || i < oldest_kept);
        if (drop && !job->observers) {
            freed += s_job_bytes (job);
            s_job_free (job);
        } else
            self->items[kept++] = job;
    }
    self->n = kept;
    return freed;
}

void
gw_jobs_detach_session (gw_jobs_t *self, const gw_session_t *session)
{
    for (size_t i = 0; i < self->n; i++)
        if (self->items[i]->session == session)
            self->items[i]->session = NULL;
}

int64_t
gw_jobs_expire_waits (gw_jobs_t *self, int64_t now)
{
    int64_t next = -1;
    for (size_t i = 0; i < self->n; i++) {
        gw_job_t *job = self->items[i];
        gw_job_observer_t **link = &job->observers;
        while (*link) {
            gw_job_observer_t *o = *link;
            if (o->until_ms > 0 && o->until_ms <= now) {
                *link = o->next;
                o->next = NULL;
                o->fn (job, GW_JOB_WAIT_OVER, NULL, o);
                continue;
            }
            if (o->until_ms > 0 && (next < 0 || o->until_ms < next))
                next = o->until_ms;
            link = &o->next;
        }
    }
    return next;
}

void
gw_jobs_shutdown (gw_jobs_t *self)
{
    for (size_t i = 0; i < self->n; i++)
        s_tell_all (self->items[i], GW_JOB_SHUTDOWN);
}

void
gw_job_finish (gw_job_t *job, gw_exec_status_t status)
{
    if (gw_job_finished (job))
        return;
    job->status = status;
    job->held = false;
    job->finished_ms = jp_time_now_ms ();
    free (job->code);           /* a queue of big cells must not outlive it */
    job->code = NULL;
    s_tell_all (job, GW_JOB_FINISHED);
}

json_t *
gw_job_status_json (const gw_job_t *job)
{
    return json_pack ("{s:s, s:s}", "request_id", job->id, "status",
                      gw_exec_status_name (job->status));
}

/* The base64 PNGs among the outputs, in order (new array). */
static json_t *
s_files (json_t *outputs)
{
    json_t *files = json_array ();
    size_t i;
    json_t *item;
    json_array_foreach (outputs, i, item) {
        json_t *png = json_object_get (json_object_get (item, "data"), "image/png");
        if (json_is_string (png))
            json_array_append (files, png);
    }
    return files;
}

json_t *
gw_job_results_json (gw_job_t *job)
{
    json_t *outputs = job->exec ? json_incref (gw_execution_outputs (job->exec)) : json_array ();
    json_t *artifacts = job->new_artifacts ? json_incref (job->new_artifacts) : json_array ();
    json_t *result = json_pack (
        "{s:s, s:s, s:i, s:o, s:o, s:o, s:I, s:s, s:b}", "request_id", job->id, "status",
        gw_exec_status_name (job->status), "execution_count",
        job->exec ? gw_execution_count (job->exec) : 0, "files", s_files (outputs), "output",
        outputs, "new_artifacts", artifacts, "duration_ms",
        (json_int_t) (job->exec ? gw_execution_duration_ms (job->exec) : 0), "session_id",
        job->session_id, "kernel_restarted", job->kernel_restarted);
    if (result && job->exec && gw_execution_truncated (job->exec))
        json_object_set_new (result, "truncated", json_true ());
    return result;
}

const char *
gw_job_id (const gw_job_t *job)
{
    return job->id;
}

const char *
gw_job_session_id (const gw_job_t *job)
{
    return job->session_id;
}

gw_session_t *
gw_job_session (const gw_job_t *job)
{
    return job->session;
}

gw_exec_status_t
gw_job_status (const gw_job_t *job)
{
    return job->status;
}

gw_execution_t *
gw_job_execution (const gw_job_t *job)
{
    return job->exec;
}

bool
gw_job_kernel_restarted (const gw_job_t *job)
{
    return job->kernel_restarted;
}

json_t *
gw_job_new_artifacts (const gw_job_t *job)
{
    return job->new_artifacts;
}

void
gw_job_set_transient (gw_job_t *job)
{
    job->transient = true;
}
