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
 * Each path's last outcome is kept per session, so listing artifacts later
 * gives fresh SAS URLs for what was uploaded. It all comes through the
 * server's session hooks: the core does not know of it.
 *
 * Threads: the loop thread only (upload outcomes arrive through
 * gw_server_call). */
#ifndef GW_ARTIFACT_UPLOAD_H
#define GW_ARTIFACT_UPLOAD_H

#include <stdint.h>

#include <jansson.h>

#include "gw_job.h"
#include "gw_server.h"
#include "gw_session.h"

#define GW_ARTIFACT_UPLOAD_WAIT_MS 5000

typedef struct gw_artifact_upload gw_artifact_upload_t;
struct gw_blob;

/* Attaches the uploads to server (session hooks: a job's end, ticks, the
 * session's end, artifact listings) with blob as the uploader. Its state
 * (each session's outcomes, the jobs it holds) is its own. NULL on OOM. */
gw_artifact_upload_t *gw_artifact_upload_new (gw_server_t *server, struct gw_blob *blob);

/* Detaches from the server and frees (after the sessions ended; outcomes
 * that arrive later are dropped). */
void gw_artifact_upload_destroy (gw_artifact_upload_t **self_p);

#endif
