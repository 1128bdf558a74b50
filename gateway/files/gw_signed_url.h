/* gw_signed_url: time-limited, read-only links to a session's artifacts
 * that work without a bearer token, like an Azure SAS URL, served by the
 * gateway itself. On when CODEBOX_PUBLIC_URL is set.
 *
 *   PUBLIC_URL/signed/<tenant>/<session>/<expires>/<sig>/<path>
 *
 * expires is a UNIX time (now + CODEBOX_BLOB_SAS_EXPIRY_HOURS); sig is
 * HMAC-SHA256, as 64 lowercase hex digits, over
 * "codebox-signed-url-v1\n<tenant>\n<session>\n<path>\n<expires>" with the
 * server secret: CODEBOX_URL_SECRET, or 32 random bytes drawn once per
 * process (links then end with a restart). The signature and expiry sit
 * in the path rather than in a query string because the HTTP layer hands
 * the loop the path only. An expired, altered or malformed link is a 403.
 *
 * Threads: the pure functions may run anywhere; gw_signed_url_annotate
 * and gw_signed_url_handle are for the loop thread. */
#ifndef GW_SIGNED_URL_H
#define GW_SIGNED_URL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "gw_config.h"
#include "gw_id.h"
#include "gw_request.h"

typedef struct gw_server gw_server_t;
typedef struct gw_session gw_session_t;

#define GW_SIGNED_URL_PREFIX "/signed/"
#define GW_SIGNED_URL_SIG_LEN 64

/* Writes the hex signature of (tenant, session, path, expires) with key
 * into sig. Returns 0 or -EIO. */
int gw_signed_url_sign (const uint8_t *key, size_t key_len, const char *tenant,
                        const char *session, const char *path, long long expires,
                        char sig[GW_SIGNED_URL_SIG_LEN + 1]);

/* Checks a link's parts at time now. Returns 0 when sig is right and the
 * link has not expired; -EBADMSG for a wrong signature; -ETIME when it
 * expired (the signature is checked first); -EIO. */
int gw_signed_url_check (const uint8_t *key, size_t key_len, const char *tenant,
                         const char *session, const char *path, long long expires,
                         const char *sig, time_t now);

/* The link (a new string) for path (relative to the session folder) of
 * the session of tenant, under base (a URL; a trailing '/' is ignored),
 * valid until expires. The path is percent-encoded but for '/'. NULL on
 * OOM or when signing fails. */
char *gw_signed_url_make (const char *base, const uint8_t *key, size_t key_len,
                          const char *tenant, const char *session, const char *path,
                          long long expires);

/* Splits a request path "/signed/<tenant>/<session>/<expires>/<sig>/<path>"
 * (already percent-decoded). Fills the buffers and points *path into
 * req_path. Returns 0, or -EINVAL when it is not of that shape (ids not
 * valid names, expires not a number, sig not 64 hex digits, path not a
 * clean relative path). */
int gw_signed_url_parse (const char *req_path, char tenant[GW_ID_SIZE], char session[GW_ID_SIZE],
                         long long *expires, char sig[GW_SIGNED_URL_SIG_LEN + 1],
                         const char **path);

/* The server secret (CODEBOX_URL_SECRET, or the process's random one). */
void gw_signed_url_key (const gw_config_t *config, const uint8_t **key, size_t *key_len);

/* Adds "url" to each artifact of the array ({"path": the path as kernel
 * code sees it, ...}) of session, when CODEBOX_PUBLIC_URL is set. NULL
 * arrays and paths outside the session folder are left alone. */
void gw_signed_url_annotate (json_t *artifacts, const gw_session_t *session);

/* Answers GET /signed/...: the file's bytes, 403 for a link that is
 * expired, altered or malformed, 404 when the session or file is gone.
 * Needs no bearer token (the HTTP layer lets /signed/ through). */
/* Every artifact listing gets the signed links (a session hook). */
void gw_signed_url_attach (gw_server_t *server);

void gw_signed_url_handle (gw_server_t *server, gw_request_t *req);

#endif
