/* gw_rest_notebook: a session's record of cells over REST: the notebook,
 * the archive (streamed: gw_archive), the replay (one execution of the
 * cells that succeeded). Same tenant scoping as every /sessions/{id}
 * route: another tenant's session is a 404.
 *
 * Threads: the loop thread only (the archive is read there too, inside
 * gw_http_run). */
#include "gw_rest.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_archive.h"
#include "gw_notebook.h"
#include "gw_sessions.h"
#include "jp_json.h"
#include "jp_log.h"

void
gw_rest_notebook (gw_server_t *server, gw_request_t *req, const char *id)
{
    gw_session_t *session = gw_rest_session_or_reply (server, req, id);
    if (!session)
        return;
    size_t len = 0;
    int err = 0;
    char *text = gw_notebook_of_session (session, &len, &err);
    if (!text) {
        gw_request_reply_error (req, GW_E_INTERNAL, "cannot read the record of session '%s': %s",
                                id, strerror (-err));
        return;
    }
    gw_request_reply_raw (req, 200, text, len, GW_NOTEBOOK_MIME);
}

/* An archive on its way, with what its log line says. */
typedef struct {
    gw_archive_t *archive;
    char session[GW_ID_SIZE];
    long long bytes;
} s_sending_t;

static ssize_t
s_archive_read (void *arg, char *buf, size_t max)
{
    s_sending_t *s = arg;
    ssize_t n = gw_archive_read (s->archive, buf, max);
    if (n > 0)
        s->bytes += n;
    return n;
}

static void
s_archive_free (void *arg)
{
    s_sending_t *s = arg;
    long entries, left_out;
    gw_archive_counts (s->archive, &entries, &left_out);
    jp_log_info ("archive event=done session=%s entries=%ld left_out=%ld bytes=%lld", s->session,
                 entries, left_out, s->bytes);
    gw_archive_destroy (&s->archive);
    free (s);
}

void
gw_rest_archive (gw_server_t *server, gw_request_t *req, const char *id)
{
    gw_session_t *session = gw_rest_session_or_reply (server, req, id);
    if (!session)
        return;
    size_t nb_len = 0, info_len = 0;
    int err = 0;
    char *notebook = gw_notebook_of_session (session, &nb_len, &err);
    gw_session_record_t *record = gw_session_cell_record (session);
    json_t *settings = record ? json_incref (gw_session_record_info (record))
                              : gw_session_settings_json (session);
    char *info = settings ? jp_json_dump (settings, &info_len) : NULL;
    json_decref (settings);
    /* the folder's files are bounded as the session's disk is */
    uint64_t quota = (uint64_t) gw_config_int (gw_server_config (server),
                                               GW_SET_DISK_QUOTA_MB) << 20;
    gw_archive_t *archive = notebook && info ? gw_archive_new (gw_session_workdir (session),
                                                               "session", quota, &err)
                                             : NULL;
    /* each add takes its data, even when it fails */
    int rc = archive ? gw_archive_add (archive, "notebook.ipynb", notebook, nb_len) : -EIO;
    if (!archive)
        free (notebook);
    if (rc == 0)
        rc = gw_archive_add (archive, "session.json", info, info_len);
    else
        free (info);
    if (rc == 0)
        rc = gw_archive_leave_out (archive, ".tmp");    /* the kernel's /tmp: scratch */
    s_sending_t *sending = rc ? NULL : calloc (1, sizeof *sending);
    if (!sending) {
        gw_archive_destroy (&archive);
        gw_request_reply_error (req, GW_E_INTERNAL, "cannot archive session '%s': %s", id,
                                strerror (err ? -err : ENOMEM));
        return;
    }
    sending->archive = archive;
    snprintf (sending->session, sizeof sending->session, "%s", gw_session_id (session));
    char disposition[GW_ID_SIZE + 48];
    snprintf (disposition, sizeof disposition, "attachment; filename=\"%s.tar.gz\"",
              gw_session_id (session));
    gw_request_set_header (req, "Content-Disposition", disposition);
    gw_request_reply_reader (req, 200, s_archive_read, s_archive_free, sending,
                             "application/gzip");
}

/* The replay's wished timeout from the body ({"timeout"?: seconds}), 0
 * for none, or -1 after answering 400. */
static long
s_replay_timeout (gw_request_t *req)
{
    json_t *body = req->body_len ? json_loadb (req->body, req->body_len, 0, NULL) : json_object ();
    json_t *timeout = json_object_get (body, "timeout");
    long seconds = json_is_integer (timeout) ? (long) json_integer_value (timeout) : 0;
    bool ok = json_is_object (body) && (!timeout || json_is_null (timeout) || seconds > 0);
    json_decref (body);
    if (ok)
        return seconds;
    gw_request_reply_error (req, GW_E_BAD_REQUEST, "send no body, or {\"timeout\"?: positive "
                            "integer seconds}");
    return -1;
}

void
gw_rest_replay (gw_server_t *server, gw_request_t *req, const char *id)
{
    gw_session_t *session = gw_rest_session_or_reply (server, req, id);
    long timeout = session ? s_replay_timeout (req) : -1;
    if (timeout < 0)
        return;
    char *text = NULL;
    size_t len = 0;
    int cells = 0, skipped = 0;
    int err = gw_session_record_read (gw_session_cell_record (session), &text, &len);
    char *code = err ? NULL : gw_session_record_replay_code (text, len, &cells, &skipped);
    free (text);
    if (!code) {
        gw_request_reply_error (req, GW_E_INTERNAL, "cannot read the record of session '%s': %s",
                                id, strerror (err ? -err : ENOMEM));
        return;
    }
    json_t *replay = json_pack ("{s:i, s:i}", "cells", cells, "skipped", skipped);
    json_t *extra = json_pack ("{s:O}", "replay", replay);
    gw_caller_t caller = gw_request_caller (req);
    gw_sessions_submit_t submit = {.timeout_s = timeout, .replay = true, .results_extra = extra};
    gw_error_t e;
    char why[256];
    gw_job_t *job = gw_sessions_submit (server, &caller, session, code, &submit, &e, why,
                                        sizeof why);
    free (code);
    json_decref (extra);
    if (!job) {
        json_decref (replay);
        gw_request_reply_error (req, e, "%s", why);
        return;
    }
    jp_log_info ("session event=replay session=%s request=%s cells=%d skipped=%d",
                 gw_session_id (session), gw_job_id (job), cells, skipped);
    gw_request_reply_json (req, 202, json_pack ("{s:s, s:s, s:s, s:o}", "request_id",
                                                gw_job_id (job), "status", "queued",
                                                "session_id", gw_session_id (session), "replay",
                                                replay));
}
