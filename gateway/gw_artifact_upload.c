/* gw_artifact_upload: uploading an execution's new artifacts to Azure
 * Blob and holding its answer for them, briefly. See gw_artifact_upload.h.
 *
 * Threads: the loop thread only. */
#include "gw_artifact_upload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gw_artifacts.h"
#include "gw_blob.h"
#include "gw_server.h"
#include "gw_signed_url.h"
#include "jp_time.h"
#include "jp_log.h"

#define S_MAX_RECORDS 4096     /* upload outcomes kept per session before pruning */

/* Who an upload is for, found again by name when it is done (the session
 * or the job may be gone by then). */
typedef struct {
    char tenant[65];
    char session[65];
    char job[40];
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
    size_t prefix = strlen (s->visible_workdir);
    if (!path || strncmp (path, s->visible_workdir, prefix) != 0 || path[prefix] != '/')
        return NULL;
    return path + prefix + 1;
}

static void
s_record (gw_session_t *s, const char *rel, const char *status, const char *name,
          json_int_t size, const char *error)
{
    if (!s->uploads)
        s->uploads = json_object ();
    json_t *rec = json_pack ("{s:s, s:s, s:I}", "status", status, "name", name, "size", size);
    if (rec && error)
        json_object_set_new (rec, "error", json_string (error));
    if (rec)
        json_object_set_new (s->uploads, rel, rec);
}

/* Takes job off the session's waiting list and finishes it. */
static void
s_finish (gw_session_t *s, gw_job_t *job)
{
    for (gw_job_t **link = &s->finishing; *link; link = &(*link)->next_finishing)
        if (*link == job) {
            *link = job->next_finishing;
            break;
        }
    job->next_finishing = NULL;
    job->uploads_pending = 0;
    gw_artifact_upload_links (job->new_artifacts, s);
    gw_job_finish (job, job->finish_as);
}

/* An upload is done (from the worker, through gw_server_call). */
static void
s_done (gw_server_t *server, void *arg)
{
    gw_blob_upload_t *u = arg;
    s_owner_t *o = u->arg;
    gw_session_t *s = gw_server_find_session (server, o->session, o->tenant);
    if (s && s->created_ms == o->created_ms) {
        jp_log_warn ("blob event=%s session=%s path=%s bytes=%lld%s%s%s",
                 u->ok ? "uploaded" : "failed", s->id, o->rel, u->size,
                 u->ok ? "" : " why=\"", u->ok ? "" : u->error, u->ok ? "" : "\"");
        json_t *rec = json_object_get (s->uploads, o->rel);
        json_int_t size = json_integer_value (json_object_get (rec, "size"));
        s_record (s, o->rel, u->ok ? "uploaded" : "failed", u->name, u->ok ? u->size : size,
                  u->ok ? NULL : u->error);
        gw_job_t *job = gw_jobs_find (gw_server_jobs (server), o->job, o->tenant);
        if (job && !gw_job_finished (job) && job->uploads_pending > 0
            && --job->uploads_pending == 0)
            s_finish (s, job);
    }
    gw_blob_upload_free (u);
}

/* Keeps the outcomes bounded: past S_MAX_RECORDS, forgets those of files
 * that are gone (uploads under way are kept). */
static void
s_prune (gw_session_t *s)
{
    if (json_object_size (s->uploads) <= S_MAX_RECORDS)
        return;
    json_t *files = gw_artifacts_list (s->output_dir, "output");
    json_t *present = json_object ();
    size_t i;
    json_t *item;
    json_array_foreach (files, i, item)
        json_object_set (present, json_string_value (json_object_get (item, "path")),
                         json_true ());
    const char *rel;
    json_t *rec, *tmp;
    json_object_foreach_safe (s->uploads, tmp, rel, rec) {
        const char *status = json_string_value (json_object_get (rec, "status"));
        if (!json_object_get (present, rel) && strcmp (status, "uploading") != 0)
            json_object_del (s->uploads, rel);
    }
    json_decref (present);
    json_decref (files);
}

void
gw_artifact_upload_then_finish (gw_session_t *s, gw_job_t *job, gw_exec_status_t status)
{
    gw_blob_t *blob = gw_server_blob (s->server);
    if (blob && s->uploads)
        s_prune (s);
    int queued = 0;
    size_t i;
    json_t *item;
    json_array_foreach (blob ? job->new_artifacts : NULL, i, item) {
        const char *rel = s_rel (s, item);
        if (!rel)
            continue;
        json_int_t size = json_integer_value (json_object_get (item, "size"));
        char *name = NULL;
        if (asprintf (&name, "%s/%s/%s", s->tenant, s->id, rel) < 0)
            continue;
        if (strlen (name) > GW_BLOB_NAME_MAX) {
            s_record (s, rel, "failed", name, size, "the blob name would be longer than "
                      "Azure's 1024 characters; use a shorter path");
            free (name);
            continue;
        }
        s_owner_t *o = calloc (1, sizeof *o);
        gw_blob_upload_t *u = NULL;
        if (o && (o->rel = strdup (rel))) {
            snprintf (o->tenant, sizeof o->tenant, "%s", s->tenant);
            snprintf (o->session, sizeof o->session, "%s", s->id);
            snprintf (o->job, sizeof o->job, "%s", job->id);
            o->created_ms = s->created_ms;
            u = gw_blob_upload_new (s->workdir, rel, name,
                                    json_string_value (json_object_get (item, "mime")), s_done,
                                    o, s_owner_free);
        }
        if (!u) {
            if (o)
                s_owner_free (o);
            s_record (s, rel, "failed", name, size, "out of memory");
            free (name);
            continue;
        }
        s_record (s, rel, "uploading", name, size, NULL);
        free (name);
        gw_blob_submit (blob, u);
        queued++;
    }
    job->finish_as = status;
    if (!queued) {
        gw_artifact_upload_links (job->new_artifacts, s);
        gw_job_finish (job, status);
        return;
    }
    job->uploads_pending = queued;
    job->uploads_deadline_ms = jp_time_now_ms () + GW_ARTIFACT_UPLOAD_WAIT_MS;
    job->next_finishing = s->finishing;
    s->finishing = job;
}

int64_t
gw_artifact_upload_deadline (const gw_session_t *s)
{
    int64_t d = -1;
    for (const gw_job_t *job = s->finishing; job; job = job->next_finishing)
        if (d < 0 || job->uploads_deadline_ms < d)
            d = job->uploads_deadline_ms;
    return d;
}

void
gw_artifact_upload_tick (gw_session_t *s, int64_t now)
{
    gw_job_t *job = s->finishing;
    while (job) {
        gw_job_t *next = job->next_finishing;
        if (now >= job->uploads_deadline_ms)
            s_finish (s, job);
        job = next;
    }
}

void
gw_artifact_upload_end (gw_session_t *s)
{
    while (s->finishing)
        s_finish (s, s->finishing);
    json_decref (s->uploads);
    s->uploads = NULL;
}

void
gw_artifact_upload_links (json_t *artifacts, const gw_session_t *s)
{
    gw_signed_url_annotate (artifacts, s);
    gw_blob_t *blob = gw_server_blob (s->server);
    if (!blob || !s->uploads || !json_is_array (artifacts))
        return;
    const gw_blob_account_t *account = gw_blob_account (blob);
    time_t expires = time (NULL)
                     + (time_t) gw_config_int (gw_server_config (s->server),
                                               GW_SET_BLOB_SAS_EXPIRY_HOURS) * 3600;
    char expires_iso[32];
    gw_blob_iso_time (expires, expires_iso);
    size_t i;
    json_t *item;
    json_array_foreach (artifacts, i, item) {
        const char *rel = s_rel (s, item);
        json_t *rec = rel ? json_object_get (s->uploads, rel) : NULL;
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
