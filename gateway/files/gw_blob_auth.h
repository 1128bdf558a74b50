/* gw_blob_auth: the pure parts of Azure Blob Storage access: the account
 * from CODEBOX_BLOB_CONNECTION_STRING / CODEBOX_BLOB_URL /
 * CODEBOX_BLOB_ACCOUNT_KEY, blob names and their URLs, Shared Key
 * authorisation of a request (HMAC-SHA256 with the account key over the
 * canonical "string to sign") and read-only service SAS URLs for one blob
 * (signed version GW_BLOB_VERSION).
 *
 * Pure code (OpenSSL for HMAC); any thread. */
#ifndef GW_BLOB_AUTH_H
#define GW_BLOB_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define GW_BLOB_VERSION "2020-12-06"    /* x-ms-version and the SAS's sv */
#define GW_BLOB_NAME_MAX 1024           /* Azure's limit on a blob name */
/* The storage emulator's well-known development account (public). */
#define GW_BLOB_DEV_ACCOUNT "devstoreaccount1"
#define GW_BLOB_DEV_KEY \
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
#define GW_BLOB_DEV_ENDPOINT "http://127.0.0.1:10000/devstoreaccount1"

typedef struct {
    char account[64];
    uint8_t key[128];
    size_t key_len;
    char endpoint[512];         /* the blob service's base URL, no trailing '/' */
    char container[64];
} gw_blob_account_t;

/* Fills account from the settings. connection_string (may be empty) is an
 * Azure connection string: AccountName, AccountKey, BlobEndpoint or
 * DefaultEndpointsProtocol + EndpointSuffix, or UseDevelopmentStorage=true.
 * url (may be empty) is the blob service endpoint and wins over the
 * connection string's; with no connection string the account name is the
 * URL's first host label (or, for an IP address or localhost, its first
 * path segment, as the emulator has it) and key (base64) is needed.
 * container must be a valid container name. Returns 1 when blob upload is
 * configured, 0 when it is off (no connection string and no URL), -EINVAL
 * with a sentence in err (never holding the key) when it is wrong. */
int gw_blob_account_parse (const char *connection_string, const char *url, const char *key,
                           const char *container, gw_blob_account_t *account, char *err,
                           size_t err_len);

/* True when name is a valid container name: 3-63 of [a-z0-9-], starting
 * and ending with a letter or digit, no "--". */
bool gw_blob_container_valid (const char *name);

/* The blob's URL without a query (new string): endpoint/container/name,
 * the name percent-encoded but for '/' (gw_url_encode). */
char *gw_blob_url (const gw_blob_account_t *account, const char *name);

/* The Shared Key string to sign of a request (new string) for version
 * 2015-02-21 and later: verb, the standard headers given (content_length
 * 0 is written empty), x-ms-* headers (ms_headers: "name:value" with
 * lowercase names, sorted, no spaces around ':'), then the canonical
 * resource "/<account><url_path>" and query (query_lines: "\nname:value"
 * lines, lowercase names, sorted; "" for none). url_path is the request
 * path as sent (percent-encoded). NULL on OOM. */
char *gw_blob_string_to_sign (const gw_blob_account_t *account, const char *verb,
                              long long content_length, const char *content_type,
                              const char *const *ms_headers, size_t n_ms_headers,
                              const char *url_path, const char *query_lines);

/* base64(HMAC-SHA256(account key, message)) as a new string, or NULL. */
char *gw_blob_hmac (const gw_blob_account_t *account, const char *message);

/* The time t as x-ms-date wants it: "Sun, 22 Nov 2026 12:00:00 GMT". */
void gw_blob_http_date (time_t t, char out[32]);
/* The time t as a SAS wants it: "2026-11-22T12:00:00Z". */
void gw_blob_iso_time (time_t t, char out[32]);

/* A read-only (sp=r) service SAS URL for blob name valid until expires
 * (new string), or NULL. */
char *gw_blob_sas_url (const gw_blob_account_t *account, const char *name, time_t expires);

/* The SAS's string to sign (new string), for tests. */
char *gw_blob_sas_string_to_sign (const gw_blob_account_t *account, const char *name,
                                  const char *expiry_iso);

#endif
