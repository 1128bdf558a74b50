/* gw_artifact_upload: uploading an execution's new artifacts to Azure
 * Blob and holding its answer for them, briefly. See gw_artifact_upload.h.
 *
 * Threads: the loop thread only. */
#include "gw_artifact_upload.h"
#include "gw_id.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gw_artifacts.h"
#include "gw_blob.h"
#include "gw_server.h"
#include "gw_sessions.h"
#include "gw_signed_url.h"
#include "jp_time.h"
#include "jp_log.h"

#define S_MAX_RECORDS 4096     /* upload outcomes kept per session before pruning */

/* A job whose end waits for its uploads: the status it ends with, when
 * the wait ends, uploads not yet done. */
typedef struct s_held {
    gw_job_t *job;
    gw_exec_status_t finish_as;
    int64_t deadline_ms;
    int pending;
    struct s_held *next;
} s_held_t;

/* What the uploads know of one session: each path's last outcome and the
 * jobs held for their uploads. */
typedef struct s_state {
    gw_session_t *session;
    json_t *uploads;
    s_held_t *held;
    struct s_state *next;
} s_state_t;

struct gw_artifact_upload {
    gw_server_t *server;
    struct gw_blob *blob;
    s_state_t *states;
};

static const gw_session_hooks_t s_hooks;

/* The session's state; made when make is set (NULL on OOM). */
static s_state_t *
s_state (gw_artifact_upload_t *self, const gw_session_t *session, bool make)
{
    for (s_state_t *st = self->states; st; st = st->next)
        if (st->session == session)
            return st;
    if (!make)
        return NULL;
    s_state_t *st = calloc (1, sizeof *st);
    if (st) {
        st->session = (gw_session_t *) session;
        st->next = self->states;
        self->states = st;
    }
    return st;
}

/* Who an upload is for, found again by name when it is done (the session
 * or the job may be gone by then). */
typedef struct {
    struct gw_artifact_upload *self;
    char tenant[GW_ID_SIZE];
    char session[GW_ID_SIZE];
    char job[GW_JOB_ID_SIZE];
    int64_t created_ms;         /* tells a session from a later one of the same id */
    char *rel;
} s_owner_t;

static void
s_owner_free (void *arg)
{
    s_owner_t *o = arg;
    free (o->rel);
    free (o);
}

/* The path of an artifact relative to the session folder, or NULL. */
static const char *
s_rel (const gw_session_t *s, json_t *item)
{
    const char *path = json_string_value (json_object_get (item, "path"));
    size_t prefix = strlen (gw_session_visible_workdir (s));
    if (!path || strncmp (path, gw_session_visible_workdir (s), prefix) != 0 || path[prefix] != '/')
        return NULL;
    return path + prefix + 1;
}

static void
s_record (s_state_t *st, const char *rel, const char *status, const char *name,
          json_int_t size, const char *error)
{
    if (!st->uploads)
        st->uploads = json_object ();
    json_t *rec = json_pack ("{s:s, s:s, s:I}", "status", status, "name", name, "size", size);
    if (rec && error)
        json_object_set_new (rec, "error", json_string (error));
    if (rec)
        json_object_set_new (st->uploads, rel, rec);
}

/* Takes a held job off the state's list and finishes it. */
static void
s_finish (gw_artifact_upload_t *self, s_state_t *st, s_held_t *held)
{
    for (s_held_t **link = &st->held; *link; link = &(*link)->next)
        if (*link == held) {
            *link = held->next;
            break;
        }
    gw_job_t *job = held->job;
    gw_exec_status_t status = held->finish_as;
    free (held);
    gw_server_annotate (self->server, st->session, gw_job_new_artifacts (job));
    gw_job_finish (job, status);
}

/* An upload is done (from the worker, through gw_server_call). */
static void
s_done (gw_server_t *server, void *arg)
{
    gw_blob_upload_t *u = arg;
    s_owner_t *o = u->arg;
    gw_artifact_upload_t *self = o->self;
    gw_session_t *s = gw_sessions_find (server, o->tenant, o->session);
    s_state_t *st = s && gw_session_created_ms (s) == o->created_ms && gw_server_has_hooks (server, &s_hooks,
                                                                              self)
                    ? s_state (self, s, false) : NULL;
    if (st) {
        if (u->ok)
            jp_log_warn ("blob event=uploaded session=%s path=%s bytes=%lld", gw_session_id (s),
                         o->rel, u->size);
        else
            jp_log_warn ("blob event=failed session=%s path=%s bytes=%lld why=%s",
                         gw_session_id (s), o->rel, u->size, u->error);
        json_t *rec = json_object_get (st->uploads, o->rel);
        json_int_t size = json_integer_value (json_object_get (rec, "size"));
        s_record (st, o->rel, u->ok ? "uploaded" : "failed", u->name, u->ok ? u->size : size,
                  u->ok ? NULL : u->error);
        gw_job_t *job = gw_jobs_find (gw_server_jobs (server), o->job, o->tenant);
        for (s_held_t *held = st->held; job && held; held = held->next)
            if (held->job == job) {
                if (--held->pending == 0)
                    s_finish (self, st, held);
                break;
            }
    }
    gw_blob_upload_free (u);
}

/* Keeps the outcomes bounded: past S_MAX_RECORDS, forgets those of files
 * that are gone (uploads under way are kept). */
static void
s_prune (s_state_t *st)
{
    if (json_object_size (st->uploads) <= S_MAX_RECORDS)
        return;
    json_t *files = gw_artifacts_list (gw_session_workdir (st->session), NULL,
                                       GW_SNAPSHOT_SESSION);
    json_t *present = json_object ();
    size_t i;
    json_t *item;
    json_array_foreach (files, i, item)
        json_object_set (present, json_string_value (json_object_get (item, "path")),
                         json_true ());
    const char *rel;
    json_t *rec, *tmp;
    json_object_foreach_safe (st->uploads, tmp, rel, rec) {
        const char *status = json_string_value (json_object_get (rec, "status"));
        if (!json_object_get (present, rel) && strcmp (status, "uploading") != 0)
            json_object_del (st->uploads, rel);
    }
    json_decref (present);
    json_decref (files);
}

/* The kernel is done with job: queues its new artifacts for upload and
 * holds its end for them (a session hook). Nothing to upload: not held. */
static bool
s_job_ending (void *arg, gw_session_t *s, gw_job_t *job, gw_exec_status_t status)
{
    gw_artifact_upload_t *self = arg;
    if (!json_array_size (gw_job_new_artifacts (job)))
        return false;
    s_state_t *st = s_state (self, s, true);
    if (!st)
        return false;
    if (st->uploads)
        s_prune (st);
    int queued = 0;
    size_t i;
    json_t *item;
    json_array_foreach (gw_job_new_artifacts (job), i, item) {
        const char *rel = s_rel (s, item);
        if (!rel)
            continue;
        json_int_t size = json_integer_value (json_object_get (item, "size"));
        char *name = NULL;
        if (asprintf (&name, "%s/%s/%s", gw_session_tenant (s), gw_session_id (s), rel) < 0)
            continue;
        if (strlen (name) > GW_BLOB_NAME_MAX) {
            s_record (st, rel, "failed", name, size, "the blob name would be longer than "
                      "Azure's 1024 characters; use a shorter path");
            free (name);
            continue;
        }
        s_owner_t *o = calloc (1, sizeof *o);
        gw_blob_upload_t *u = NULL;
        if (o && (o->rel = strdup (rel))) {
            o->self = self;
            snprintf (o->tenant, sizeof o->tenant, "%s", gw_session_tenant (s));
            snprintf (o->session, sizeof o->session, "%s", gw_session_id (s));
            snprintf (o->job, sizeof o->job, "%s", gw_job_id (job));
            o->created_ms = gw_session_created_ms (s);
            u = gw_blob_upload_new (gw_session_workdir (s), rel, name,
                                    json_string_value (json_object_get (item, "mime")), s_done,
                                    o, s_owner_free);
        }
        if (!u) {
            if (o)
                s_owner_free (o);
            s_record (st, rel, "failed", name, size, "out of memory");
            free (name);
            continue;
        }
        if (gw_blob_submit (self->blob, u) != 0) {
            gw_blob_upload_free (u);
            s_record (st, rel, "failed", name, size, "the upload queue is full; "
                      "the file stays in output/");
            free (name);
            continue;
        }
        s_record (st, rel, "uploading", name, size, NULL);
        free (name);
        queued++;
    }
    s_held_t *held = queued ? calloc (1, sizeof *held) : NULL;
    if (!held)
        return false;   /* nothing queued (or no memory to wait): it ends now */
    *held = (s_held_t) {job, status, jp_time_now_ms () + GW_ARTIFACT_UPLOAD_WAIT_MS, queued,
                        st->held};
    st->held = held;
    return true;
}

/* The earliest end of a wait of the session's jobs, or -1. */
static int64_t
s_deadline (void *arg, const gw_session_t *s)
{
    s_state_t *st = s_state (arg, s, false);
    int64_t d = -1;
    for (const s_held_t *held = st ? st->held : NULL; held; held = held->next)
        if (d < 0 || held->deadline_ms < d)
            d = held->deadline_ms;
    return d;
}

/* Finishes the jobs whose wait ended by now. */
static void
s_tick (void *arg, gw_session_t *s, int64_t now)
{
    s_state_t *st = s_state (arg, s, false);
    s_held_t *held = st ? st->held : NULL;
    while (held) {
        s_held_t *next = held->next;
        if (now >= held->deadline_ms)
            s_finish (arg, st, held);
        held = next;
    }
}

/* The session ends: its waiting jobs finish now, its outcomes go. */
static void
s_session_end (void *arg, gw_session_t *s)
{
    gw_artifact_upload_t *self = arg;
    for (s_state_t **link = &self->states; *link; link = &(*link)->next)
        if ((*link)->session == s) {
            s_state_t *st = *link;
            *link = st->next;
            while (st->held)
                s_finish (self, st, st->held);
            json_decref (st->uploads);
            free (st);
            return;
        }
}

/* For each artifact that was uploaded, is uploading or failed and is still
 * the same size: "blob" and (unless failed) the SAS "url". */
static void
s_annotate (void *arg, const gw_session_t *s, json_t *artifacts)
{
    gw_artifact_upload_t *self = arg;
    s_state_t *st = s_state (self, s, false);
    if (!st || !st->uploads || !json_is_array (artifacts))
        return;
    const gw_blob_account_t *account = gw_blob_account (self->blob);
    time_t expires = time (NULL)
                     + (time_t) gw_config_int (gw_server_config (gw_session_server (s)),
                                               GW_SET_BLOB_SAS_EXPIRY_HOURS) * 3600;
    char expires_iso[32];
    gw_blob_iso_time (expires, expires_iso);
    size_t i;
    json_t *item;
    json_array_foreach (artifacts, i, item) {
        const char *rel = s_rel (s, item);
        json_t *rec = rel ? json_object_get (st->uploads, rel) : NULL;
        if (!rec || json_integer_value (json_object_get (rec, "size"))
                        != json_integer_value (json_object_get (item, "size")))
            continue;
        const char *status = json_string_value (json_object_get (rec, "status"));
        const char *name = json_string_value (json_object_get (rec, "name"));
        json_t *info = json_pack ("{s:s, s:s}", "status", status, "name", name);
        if (!info)
            continue;
        if (strcmp (status, "failed") == 0)
            json_object_set (info, "error", json_object_get (rec, "error"));
        else {
            char *url = gw_blob_sas_url (account, name, expires);
            if (url) {
                json_object_set_new (item, "url", json_string (url));
                json_object_set_new (info, "url_expires_at", json_string (expires_iso));
            }
            free (url);
        }
        json_object_set_new (item, "blob", info);
    }
}

static const gw_session_hooks_t s_hooks = {
    .annotate = s_annotate,
    .job_ending = s_job_ending,
    .deadline = s_deadline,
    .tick = s_tick,
    .session_end = s_session_end,
};

gw_artifact_upload_t *
gw_artifact_upload_new (gw_server_t *server, struct gw_blob *blob)
{
    gw_artifact_upload_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->server = server;
    self->blob = blob;
    if (gw_server_add_hooks (server, &s_hooks, self) < 0) {
        free (self);
        return NULL;
    }
    return self;
}

void
gw_artifact_upload_destroy (gw_artifact_upload_t **self_p)
{
    gw_artifact_upload_t *self = *self_p;
    if (!self)
        return;
    gw_server_remove_hooks (self->server, &s_hooks, self);
    while (self->states) {
        s_state_t *st = self->states;
        self->states = st->next;
        while (st->held)
            s_finish (self, st, st->held);
        json_decref (st->uploads);
        free (st);
    }
    free (self);
    *self_p = NULL;
}
