/* gw_artifact_upload: Azure Blob upload of the artifacts each execution
 * makes, when blob upload is on (gw_blob). As the kernel finishes a job,
 * each of its new artifacts is queued for upload as the blob
 * "<tenant>/<session>/<path in the session folder>" (output/plot.png...),
 * and the job's answer waits for them, at most GW_ARTIFACT_UPLOAD_WAIT_MS,
 * while the session goes on with its next job. Artifacts then carry
 *   "url":  a read-only SAS URL, valid CODEBOX_BLOB_SAS_EXPIRY_HOURS
 *           (when uploaded, or still uploading when the wait ran out)
 *   "blob": {"status": "uploaded" | "uploading" | "failed", "name": NAME,
 *            "url_expires_at"?: ISO 8601, "error"?: TEXT}
 * A failed upload is reported there and changes nothing else: the local
 * file stays, and so does the gateway's own signed link if there is one.
 * Each path's last outcome is kept on the session, so listing artifacts
 * later gives fresh SAS URLs for what was uploaded.
 *
 * Threads: the loop thread only (upload outcomes arrive through
 * gw_server_call). */
#ifndef GW_ARTIFACT_UPLOAD_H
#define GW_ARTIFACT_UPLOAD_H

#include <stdint.h>

#include <jansson.h>

#include "gw_job.h"
#include "gw_session.h"

#define GW_ARTIFACT_UPLOAD_WAIT_MS 5000

/* Finishes job with status once its new artifacts are uploaded or the
 * wait ran out; at once when blob upload is off or there is nothing new. */
void gw_artifact_upload_then_finish (gw_session_t *session, gw_job_t *job,
                                     gw_exec_status_t status);

/* The earliest end of a wait of the session's jobs, or -1. */
int64_t gw_artifact_upload_deadline (const gw_session_t *session);

/* Finishes the jobs whose wait ended by now. */
void gw_artifact_upload_tick (gw_session_t *session, int64_t now);

/* The session ends: finishes its waiting jobs now, forgets its outcomes. */
void gw_artifact_upload_end (gw_session_t *session);

/* Adds the links to each artifact of the array (as listed, with "path" as
 * kernel code sees it and "size"): the gateway's signed "url" when
 * CODEBOX_PUBLIC_URL is set (gw_signed_url), then, for one that was
 * uploaded, is uploading or failed and is still the same size, "blob" and
 * (unless failed) the SAS "url" in its place. Every artifact list goes
 * through here. */
void gw_artifact_upload_links (json_t *artifacts, const gw_session_t *session);

#endif
