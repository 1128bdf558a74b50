/* gw_job: execution records, their results and their long polls.
 * Threads: the loop thread only. */
#include "gw_job_internal.h"
#include "gw_id.h"

#include <errno.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_ansi.h"
#include "jp_random.h"
#include "jp_time.h"

struct gw_jobs {
    gw_job_t **items;           /* in creation order */
    size_t n, cap;
    size_t max_bytes;           /* finished results kept, at most (0: no bound) */
    size_t max_count;           /* jobs kept, at most (GW_JOBS_MAX) */
    json_t *by_id;              /* id -> the job's address (an integer): a
                                   lookup does not compare every id kept */
    gw_job_observer_t *timed;   /* observers with a wait (until_ms), of any job */
};

gw_jobs_t *
gw_jobs_new (void)
{
    gw_jobs_t *self = calloc (1, sizeof (gw_jobs_t));
    if (self && !(self->by_id = json_object ())) {
        free (self);
        return NULL;
    }
    if (self)
        self->max_count = GW_JOBS_MAX;
    return self;
}

/* Takes observer off the store's list of waits, if it is on it. */
static void
s_untime (gw_job_observer_t *observer)
{
    gw_job_t *job = observer->timed_job;
    if (!job)
        return;
    if (observer->timed_prev)
        observer->timed_prev->timed_next = observer->timed_next;
    else
        job->store->timed = observer->timed_next;
    if (observer->timed_next)
        observer->timed_next->timed_prev = observer->timed_prev;
    observer->timed_job = NULL;
    observer->timed_prev = observer->timed_next = NULL;
}

/* Takes every observer off job and tells each event. */
static void
s_tell_all (gw_job_t *job, gw_job_event_t event)
{
    gw_job_observer_t *o = job->observers;
    job->observers = NULL;
    for (gw_job_observer_t *t = o; t; t = t->next)
        s_untime (t);
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
    observer->timed_job = NULL;
    observer->timed_prev = observer->timed_next = NULL;
    if (observer->until_ms > 0 && job->store) {
        gw_jobs_t *store = job->store;
        observer->timed_job = job;
        observer->timed_next = store->timed;
        if (store->timed)
            store->timed->timed_prev = observer;
        store->timed = observer;
    }
}

void
gw_job_unobserve (gw_job_t *job, gw_job_observer_t *observer)
{
    for (gw_job_observer_t **link = &job->observers; *link; link = &(*link)->next)
        if (*link == observer) {
            *link = observer->next;
            observer->next = NULL;
            s_untime (observer);
            return;
        }
}

void
gw_job_output (gw_job_t *job, json_t *item)
{
    for (gw_job_observer_t *o = job->observers; o; o = o->next)
        o->fn (job, GW_JOB_OUTPUT, item, o);
}

void
gw_job_allow_input (gw_job_t *job)
{
    job->allow_input = true;
}

json_t *
gw_job_input_waiting (const gw_job_t *job)
{
    return job->input;
}

int
gw_job_answer_input (gw_job_t *job, const char *value)
{
    if (!job->input || !job->exec)
        return -ENOENT;
    json_decref (job->input);
    job->input = NULL;
    return gw_execution_answer_input (job->exec, value);
}

void
gw_job_input (gw_job_t *job, json_t *item)
{
    json_decref (job->input);
    job->input = json_incref (item);
    for (gw_job_observer_t *o = job->observers, *next; o; o = next) {
        next = o->next;
        o->fn (job, GW_JOB_INPUT, item, o);
    }
}

static void
s_job_free (gw_job_t *job)
{
    if (job->store)
        json_object_del (job->store->by_id, job->id);
    json_decref (job->input);
    s_tell_all (job, GW_JOB_SHUTDOWN);
    gw_execution_destroy (&job->exec);
    gw_snapshot_destroy (&job->before);
    json_decref (job->new_artifacts);
    json_decref (job->results_extra);
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
    json_decref (self->by_id);
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
    char uuid[JP_UUID_LEN + 1];
    jp_random_uuid (uuid);
    snprintf (job->id, sizeof job->id, "%.64s~%s", session_id, uuid);
    snprintf (job->session_id, sizeof job->session_id, "%s", session_id);
    snprintf (job->tenant, sizeof job->tenant, "%s", tenant);
    job->session = session;
    job->status = GW_EXEC_QUEUED;
    job->timeout_ms = timeout_ms;
    job->created_ms = jp_time_now_ms ();
    if (json_object_set_new (self->by_id, job->id, json_integer ((json_int_t) (intptr_t) job))) {
        free (job->code);
        free (job);
        return NULL;
    }
    job->store = self;
    self->items[self->n++] = job;
    return job;
}

gw_job_t *
gw_jobs_find (gw_jobs_t *self, const char *id, const char *tenant)
{
    json_t *found = json_object_get (self->by_id, id);
    gw_job_t *job = found ? (gw_job_t *) (intptr_t) json_integer_value (found) : NULL;
    return job && strcmp (job->tenant, tenant) == 0 ? job : NULL;
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

void
gw_jobs_set_max_count (gw_jobs_t *self, size_t max_count)
{
    self->max_count = max_count;
}

/* The bytes a finished job's result holds. */
static size_t
s_job_bytes (const gw_job_t *job)
{
    return sizeof *job + (job->exec ? gw_execution_bytes (job->exec) : 0)
           + (job->code ? strlen (job->code) : 0);
}

/* A result that may go: finished, and nobody waits on it. */
static bool
s_evictable (const gw_job_t *job)
{
    return gw_job_finished (job) && !job->observers;
}

/* One tenant's evictable results, while the store is over a bound. */
typedef struct {
    char tenant[GW_ID_SIZE];
    size_t count, bytes;
    size_t next;                /* where its oldest may be, in items */
} s_holder_t;

/* The holder of tenant in holders (n of them), added if new (*cap grown);
 * NULL on OOM. */
static s_holder_t *
s_holder (s_holder_t **holders, size_t *n, size_t *cap, const char *tenant, size_t at)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp ((*holders)[i].tenant, tenant) == 0)
            return &(*holders)[i];
    if (*n == *cap) {
        size_t grown_cap = *cap ? *cap * 2 : 8;
        s_holder_t *grown = realloc (*holders, grown_cap * sizeof *grown);
        if (!grown)
            return NULL;
        *holders = grown;
        *cap = grown_cap;
    }
    (*holders)[*n] = (s_holder_t) {.next = at};
    snprintf ((*holders)[*n].tenant, sizeof (*holders)[*n].tenant, "%s", tenant);
    return &(*holders)[(*n)++];
}

/* While the store is over its count (jobs kept, running ones too) or its
 * bytes (of finished results), frees the oldest evictable result of the
 * tenant that holds the most of what is over (results, or bytes): one
 * tenant's flood of executions evicts its own results, never another's
 * while it holds more. Returns the bytes freed. */
static size_t
s_evict_fairly (gw_jobs_t *self)
{
    size_t bytes = 0;
    for (size_t i = 0; i < self->n; i++)
        if (gw_job_finished (self->items[i]))
            bytes += s_job_bytes (self->items[i]);
    size_t count = self->n;
    if (count <= self->max_count && (!self->max_bytes || bytes <= self->max_bytes))
        return 0;
    s_holder_t *holders = NULL;
    size_t n_holders = 0, cap = 0;
    for (size_t i = 0; i < self->n; i++) {
        gw_job_t *job = self->items[i];
        if (!s_evictable (job))
            continue;
        s_holder_t *h = s_holder (&holders, &n_holders, &cap, job->tenant, i);
        if (!h)
            break;              /* out of memory: the holders so far decide */
        h->count++;
        h->bytes += s_job_bytes (job);
    }
    size_t freed = 0;
    for (;;) {
        bool over_count = count > self->max_count;
        if (!over_count && !(self->max_bytes && bytes > self->max_bytes))
            break;
        s_holder_t *most = NULL;
        for (size_t i = 0; i < n_holders; i++) {
            s_holder_t *h = &holders[i];
            if (h->count && (!most || (over_count ? h->count > most->count
                                                  : h->bytes > most->bytes)))
                most = h;
        }
        if (!most)
            break;              /* what is left is running or waited on */
        size_t i = most->next;
        while (!self->items[i] || !s_evictable (self->items[i])
               || strcmp (self->items[i]->tenant, most->tenant) != 0)
            i++;
        gw_job_t *job = self->items[i];
        size_t size = s_job_bytes (job);
        most->next = i + 1;
        most->count--;
        most->bytes -= size;
        count--;
        bytes -= size;
        freed += size;
        self->items[i] = NULL;
        s_job_free (job);
    }
    free (holders);
    size_t kept = 0;
    for (size_t i = 0; i < self->n; i++)
        if (self->items[i])
            self->items[kept++] = self->items[i];
    self->n = kept;
    return freed;
}

size_t
gw_jobs_expire (gw_jobs_t *self, int64_t now)
{
    /* first what had its time, or that nobody will ask for */
    size_t kept = 0, freed = 0;
    for (size_t i = 0; i < self->n; i++) {
        gw_job_t *job = self->items[i];
        if (s_evictable (job)
            && (job->transient || now - job->finished_ms > GW_JOB_KEEP_MS)) {
            freed += s_job_bytes (job);
            s_job_free (job);
        } else
            self->items[kept++] = job;
    }
    self->n = kept;
    /* then, over a bound, the largest holder's oldest */
    return freed + s_evict_fairly (self);
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
    for (gw_job_observer_t *o = self->timed; o;) {
        if (o->until_ms > now) {
            if (next < 0 || o->until_ms < next)
                next = o->until_ms;
            o = o->timed_next;
            continue;
        }
        /* its owner may change any list when told: start over after */
        gw_job_t *job = o->timed_job;
        gw_job_unobserve (job, o);
        o->fn (job, GW_JOB_WAIT_OVER, NULL, o);
        o = self->timed;
        next = -1;
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
    json_decref (job->input);
    job->input = NULL;
    free (job->code);           /* a queue of big cells must not outlive it */
    job->code = NULL;
    s_tell_all (job, GW_JOB_FINISHED);
}

json_t *
gw_job_status_json (const gw_job_t *job)
{
    json_t *body = json_pack ("{s:s, s:s}", "request_id", job->id, "status",
                              gw_job_client_status (job));
    const char *reason = gw_job_reason (job);
    if (body && reason)
        json_object_set_new (body, "reason", json_string (reason));
    return body;
}

const char *
gw_job_client_status (const gw_job_t *job)
{
    switch (job->status) {
    case GW_EXEC_QUEUED: return "queued";
    case GW_EXEC_RUNNING: return "running";
    case GW_EXEC_COMPLETED: return "completed";
    default: return "error";
    }
}

/* The last error output of the job (borrowed), or NULL. */
static json_t *
s_last_error (const gw_job_t *job)
{
    json_t *outputs = job->exec ? gw_execution_outputs (job->exec) : NULL;
    for (size_t i = json_array_size (outputs); i > 0; i--) {
        json_t *item = json_array_get (outputs, i - 1);
        const char *type = json_string_value (json_object_get (item, "type"));
        if (type && strcmp (type, "error") == 0)
            return item;
    }
    return NULL;
}

const char *
gw_job_reason (const gw_job_t *job)
{
    if (job->status <= GW_EXEC_COMPLETED)
        return NULL;
    if (job->reason)
        return job->reason;
    return job->status == GW_EXEC_TIMEOUT ? "timeout"
           : job->status == GW_EXEC_CANCELLED ? "cancelled" : NULL;
}

/* The error a reason stands for: the gateway's name for it and what it
 * says when the gateway added no error of that name. */
static const struct {
    const char *reason, *ename, *evalue;
} s_reasons[] = {
    {"timeout", "TimeoutError", "the execution did not finish within its timeout and was "
     "interrupted"},
    {"cpu_time", "CpuTimeExceeded", "the execution used more CPU time than allowed and was "
     "interrupted"},
    {"cancelled", "Cancelled", "the execution was cancelled"},
    {"kernel_died", "KernelDied", "the kernel died; it was restarted and its state is lost"},
};

/* The error output named ename (borrowed), or NULL. */
static json_t *
s_error_named (const gw_job_t *job, const char *ename)
{
    json_t *outputs = job->exec ? gw_execution_outputs (job->exec) : NULL;
    size_t i;
    json_t *item;
    json_array_foreach (outputs, i, item) {
        const char *name = json_string_value (json_object_get (item, "ename"));
        const char *type = json_string_value (json_object_get (item, "type"));
        if (type && name && strcmp (type, "error") == 0 && strcmp (name, ename) == 0)
            return item;
    }
    return NULL;
}

static json_t *s_plain_output (json_t *item);

/* The results' "error": null, or what failed: the gateway's error for a
 * timeout, cancel or dead kernel (with "reason"), else the code's last
 * exception. */
static json_t *
s_error_json (const gw_job_t *job)
{
    if (job->status <= GW_EXEC_COMPLETED)
        return json_null ();
    const char *reason = gw_job_reason (job);
    json_t *last = s_last_error (job), *error = NULL;
    for (size_t i = 0; reason && !error && i < sizeof s_reasons / sizeof s_reasons[0]; i++) {
        if (strcmp (reason, s_reasons[i].reason) != 0)
            continue;
        json_t *own = s_error_named (job, s_reasons[i].ename);
        error = own ? s_plain_output (own)
                    : json_pack ("{s:s, s:s, s:[]}", "ename", s_reasons[i].ename, "evalue",
                                 s_reasons[i].evalue, "traceback");
        if (!own && last && error) {    /* where the code was when it stopped */
            json_t *plain = s_plain_output (last);
            json_object_set (error, "traceback", json_object_get (plain, "traceback"));
            json_decref (plain);
        }
    }
    if (!error)
        error = last ? s_plain_output (last)
                     : json_pack ("{s:s, s:s, s:[]}", "ename", "Error", "evalue",
                                  "the execution failed", "traceback");
    if (!error)
        return json_null ();
    json_object_del (error, "type");
    if (reason)
        json_object_set_new (error, "reason", json_string (reason));
    return error;
}

/* An output item as clients get it: tracebacks without ANSI colours. */
static json_t *
s_plain_output (json_t *item)
{
    json_t *traceback = json_object_get (item, "traceback");
    if (!json_is_array (traceback))
        return json_incref (item);
    json_t *copy = json_copy (item);
    json_t *lines = json_array ();
    size_t i;
    json_t *line;
    json_array_foreach (traceback, i, line)
        json_array_append_new (lines, gw_ansi_strip_json (json_string_value (line)));
    json_object_set_new (copy, "traceback", lines);
    return copy;
}

/* The base64 PNG of a stored output item (borrowed), or NULL. */
static json_t *
s_png (json_t *item)
{
    json_t *png = json_object_get (json_object_get (item, "data"), "image/png");
    return json_is_string (png) ? png : NULL;
}

json_t *
gw_job_client_output (json_t *item, size_t *files)
{
    json_t *plain = s_plain_output (item);
    if (plain && json_object_get (plain, "metadata")) {    /* the notebook's only */
        json_t *copy = json_copy (plain);
        json_decref (plain);
        plain = copy;
        json_object_del (plain, "metadata");
    }
    if (!plain || !s_png (item))
        return plain;
    /* the item and its data copied, so the stored ones keep the image */
    json_t *copy = json_copy (plain);
    json_t *data = copy ? json_copy (json_object_get (plain, "data")) : NULL;
    json_decref (plain);
    if (!data) {
        json_decref (copy);
        return NULL;
    }
    json_object_del (data, "image/png");
    json_object_set_new (copy, "data", data);
    json_object_set_new (copy, "file", json_integer ((json_int_t) (*files)++));
    return copy;
}

/* The base64 PNGs among the stored outputs, in order (new array): what
 * the client items' "file" indexes point into. */
static json_t *
s_files (json_t *outputs)
{
    json_t *files = json_array ();
    size_t i;
    json_t *item;
    json_array_foreach (outputs, i, item)
        if (s_png (item))
            json_array_append (files, s_png (item));
    return files;
}

json_t *
gw_job_results_json (gw_job_t *job)
{
    json_t *stored = job->exec ? gw_execution_outputs (job->exec) : NULL;
    json_t *outputs = json_array ();
    size_t i, files = 0;
    json_t *item;
    json_array_foreach (stored, i, item)
        json_array_append_new (outputs, gw_job_client_output (item, &files));
    json_t *artifacts = job->new_artifacts ? json_incref (job->new_artifacts) : json_array ();
    json_t *error = s_error_json (job);
    json_t *result = json_pack (
        "{s:s, s:s, s:o, s:i, s:o, s:o, s:o, s:I, s:s, s:b}", "request_id", job->id, "status",
        gw_job_client_status (job), "error", error, "execution_count",
        job->exec ? gw_execution_count (job->exec) : 0, "files", s_files (stored), "output",
        outputs, "new_artifacts", artifacts, "duration_ms",
        (json_int_t) (job->exec ? gw_execution_duration_ms (job->exec) : 0), "session_id",
        job->session_id, "kernel_restarted", job->kernel_restarted);
    if (result && job->exec && gw_execution_truncated (job->exec))
        json_object_set_new (result, "truncated", json_true ());
    if (result && gw_job_reason (job))
        json_object_set_new (result, "reason", json_string (gw_job_reason (job)));
    if (result && job->results_extra)
        json_object_update_missing (result, job->results_extra);
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
