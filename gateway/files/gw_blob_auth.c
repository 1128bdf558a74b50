/* gw_blob_auth: Azure Blob account settings, names, Shared Key and SAS
 * signing. See gw_blob_auth.h.
 *
 * Threads: pure code; any thread. */
#include "gw_blob_auth.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "gw_base64.h"
#include "gw_url.h"

bool
gw_blob_container_valid (const char *name)
{
    size_t len = strlen (name);
    if (len < 3 || len > 63 || name[0] == '-' || name[len - 1] == '-' || strstr (name, "--"))
        return false;
    return strspn (name, "abcdefghijklmnopqrstuvwxyz0123456789-") == len;
}

static bool
s_account_valid (const char *name)
{
    size_t len = strlen (name);
    return len >= 3 && len <= 24 && strspn (name, "abcdefghijklmnopqrstuvwxyz0123456789") == len;
}

/* Decodes the base64 key into account. */
static int
s_set_key (gw_blob_account_t *account, const char *key, char *err, size_t err_len)
{
    uint8_t *raw = NULL;
    size_t len = 0;
    int rc = gw_base64_decode (key, strlen (key), &raw, &len);
    if (rc || len == 0 || len > sizeof account->key) {
        free (raw);
        snprintf (err, err_len, "the Azure Blob account key is %s (copy it from the storage "
                  "account's access keys)", rc || len == 0 ? "not valid base64" : "too long");
        return -EINVAL;
    }
    memcpy (account->key, raw, len);
    account->key_len = len;
    OPENSSL_cleanse (raw, len);
    free (raw);
    return 0;
}

/* Checks and stores an endpoint URL (no trailing '/'). */
static int
s_set_endpoint (gw_blob_account_t *account, const char *url, const char *what, char *err,
                size_t err_len)
{
    size_t len = strlen (url);
    while (len && url[len - 1] == '/')
        len--;
    const char *host = strncmp (url, "https://", 8) == 0 ? url + 8
                       : strncmp (url, "http://", 7) == 0 ? url + 7 : NULL;
    if (!host || (size_t) (host - url) >= len || host[0] == '/') {
        snprintf (err, err_len, "%s must be an http:// or https:// URL of the blob service, "
                  "like https://ACCOUNT.blob.core.windows.net", what);
        return -EINVAL;
    }
    if (strpbrk (url, "?#@ \t\r\n")) {
        snprintf (err, err_len, "%s must be the blob service's URL alone: no query (a SAS "
                  "token cannot sign read-only links; give the account key), no user, no "
                  "spaces", what);
        return -EINVAL;
    }
    if (len >= sizeof account->endpoint) {
        snprintf (err, err_len, "%s is too long", what);
        return -EINVAL;
    }
    memcpy (account->endpoint, url, len);
    account->endpoint[len] = '\0';
    return 0;
}

/* The account name a bare endpoint URL implies: its first host label, or
 * for an IP address or localhost its first path segment (emulator). */
static void
s_account_from_url (const char *url, char *out, size_t out_len)
{
    out[0] = '\0';
    const char *host = strstr (url, "://");
    if (!host)
        return;
    host += 3;
    size_t host_len = strcspn (host, "/:");
    bool ip = host[0] == '[' || strspn (host, "0123456789.") == host_len
              || (host_len == 9 && strncasecmp (host, "localhost", 9) == 0);
    const char *name = host;
    size_t name_len = strcspn (host, ".:/");
    if (ip) {
        name = strchr (host, '/');
        if (!name)
            return;
        name++;
        name_len = strcspn (name, "/");
    }
    if (name_len < out_len) {
        memcpy (out, name, name_len);
        out[name_len] = '\0';
    }
}

/* Cuts trailing white space (a connection string from a file often ends
 * in a newline). */
static void
s_trim_end (char *s)
{
    size_t len = strlen (s);
    while (len && isspace ((unsigned char) s[len - 1]))
        s[--len] = '\0';
}

/* Parses "Key=Value;Key=Value" into the fields codebox uses. */
static int
s_parse_connection_string (const char *text, gw_blob_account_t *account, char *err,
                           size_t err_len)
{
    char *copy = strdup (text);
    if (!copy) {
        snprintf (err, err_len, "out of memory");
        return -ENOMEM;
    }
    const char *protocol = "https", *suffix = "core.windows.net", *name = NULL, *key = NULL;
    const char *endpoint = NULL;
    bool dev = false, sas = false;
    int rc = 0;
    char *save = NULL;
    for (char *part = strtok_r (copy, ";", &save); part; part = strtok_r (NULL, ";", &save)) {
        while (isspace ((unsigned char) *part))
            part++;
        if (!*part)
            continue;
        char *eq = strchr (part, '=');
        if (!eq) {
            snprintf (err, err_len, "CODEBOX_BLOB_CONNECTION_STRING is not a connection "
                      "string: a part has no '=' (expected Key=Value;Key=Value...)");
            rc = -EINVAL;
            break;
        }
        *eq = '\0';
        char *value = eq + 1;
        s_trim_end (part);
        while (isspace ((unsigned char) *value))
            value++;
        s_trim_end (value);
        if (strcasecmp (part, "DefaultEndpointsProtocol") == 0)
            protocol = value;
        else if (strcasecmp (part, "AccountName") == 0)
            name = value;
        else if (strcasecmp (part, "AccountKey") == 0)
            key = value;
        else if (strcasecmp (part, "BlobEndpoint") == 0)
            endpoint = value;
        else if (strcasecmp (part, "EndpointSuffix") == 0)
            suffix = value;
        else if (strcasecmp (part, "UseDevelopmentStorage") == 0)
            dev = strcasecmp (value, "true") == 0;
        else if (strcasecmp (part, "SharedAccessSignature") == 0)
            sas = true;
    }
    if (!rc && dev) {
        name = name ? name : GW_BLOB_DEV_ACCOUNT;
        key = key ? key : GW_BLOB_DEV_KEY;
        endpoint = endpoint ? endpoint : GW_BLOB_DEV_ENDPOINT;
    }
    if (!rc && (!name || !key)) {
        snprintf (err, err_len, "CODEBOX_BLOB_CONNECTION_STRING needs AccountName and "
                  "AccountKey%s (codebox signs uploads and read-only links with the key)",
                  sas ? "; a SharedAccessSignature alone cannot make read-only links" : "");
        rc = -EINVAL;
    }
    if (!rc && !s_account_valid (name)) {
        snprintf (err, err_len, "the AccountName of CODEBOX_BLOB_CONNECTION_STRING is not a "
                  "storage account name (3-24 lowercase letters and digits)");
        rc = -EINVAL;
    }
    if (!rc) {
        snprintf (account->account, sizeof account->account, "%s", name);
        rc = s_set_key (account, key, err, err_len);
    }
    if (!rc && endpoint)
        rc = s_set_endpoint (account, endpoint, "the BlobEndpoint of "
                             "CODEBOX_BLOB_CONNECTION_STRING", err, err_len);
    else if (!rc) {
        if (strcasecmp (protocol, "https") != 0 && strcasecmp (protocol, "http") != 0) {
            snprintf (err, err_len, "DefaultEndpointsProtocol must be https or http");
            rc = -EINVAL;
        } else {
            char url[512];
            snprintf (url, sizeof url, "%s://%s.blob.%s",
                      strcasecmp (protocol, "https") == 0 ? "https" : "http", name, suffix);
            rc = s_set_endpoint (account, url, "the connection string's endpoint", err,
                                 err_len);
        }
    }
    OPENSSL_cleanse (copy, strlen (text));
    free (copy);
    return rc;
}

int
gw_blob_account_parse (const char *connection_string, const char *url, const char *key,
                       const char *container, gw_blob_account_t *account, char *err,
                       size_t err_len)
{
    memset (account, 0, sizeof *account);
    bool have_cs = connection_string && *connection_string;
    bool have_url = url && *url;
    if (!have_cs && !have_url)
        return 0;
    int rc = 0;
    if (have_cs)
        rc = s_parse_connection_string (connection_string, account, err, err_len);
    if (!rc && have_url)
        rc = s_set_endpoint (account, url, "CODEBOX_BLOB_URL", err, err_len);
    if (!rc && !have_cs) {
        s_account_from_url (account->endpoint, account->account, sizeof account->account);
        if (!s_account_valid (account->account)) {
            snprintf (err, err_len, "cannot tell the storage account from CODEBOX_BLOB_URL "
                      "(expected https://ACCOUNT.blob.core.windows.net, or "
                      "http://HOST:PORT/ACCOUNT for an emulator)");
            rc = -EINVAL;
        } else if (!key || !*key) {
            snprintf (err, err_len, "CODEBOX_BLOB_URL needs the account key: set "
                      "CODEBOX_BLOB_ACCOUNT_KEY, or use CODEBOX_BLOB_CONNECTION_STRING");
            rc = -EINVAL;
        } else
            rc = s_set_key (account, key, err, err_len);
    }
    if (!rc && (!container || !gw_blob_container_valid (container))) {
        snprintf (err, err_len, "CODEBOX_BLOB_CONTAINER must be 3-63 lowercase letters, "
                  "digits and single hyphens, starting and ending with a letter or digit");
        rc = -EINVAL;
    }
    if (!rc)
        snprintf (account->container, sizeof account->container, "%s", container);
    if (rc)
        OPENSSL_cleanse (account, sizeof *account);
    return rc ? -EINVAL : 1;
}

char *
gw_blob_url (const gw_blob_account_t *account, const char *name)
{
    char *encoded = gw_url_encode (name, true);
    char *url = NULL;
    if (encoded && asprintf (&url, "%s/%s/%s", account->endpoint, account->container,
                             encoded) < 0)
        url = NULL;
    free (encoded);
    return url;
}

char *
gw_blob_string_to_sign (const gw_blob_account_t *account, const char *verb,
                        long long content_length, const char *content_type,
                        const char *const *ms_headers, size_t n_ms_headers,
                        const char *url_path, const char *query_lines)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    if (!f)
        return NULL;
    char length[24] = "";
    if (content_length > 0)
        snprintf (length, sizeof length, "%lld", content_length);
    /* verb, Content-Encoding, -Language, -Length, -MD5, -Type, Date,
       If-Modified-Since, If-Match, If-None-Match, If-Unmodified-Since, Range */
    fprintf (f, "%s\n\n\n%s\n\n%s\n\n\n\n\n\n\n", verb, length,
             content_type ? content_type : "");
    for (size_t i = 0; i < n_ms_headers; i++)
        fprintf (f, "%s\n", ms_headers[i]);
    fprintf (f, "/%s%s%s", account->account, url_path, query_lines ? query_lines : "");
    if (fclose (f) != 0) {
        free (text);
        return NULL;
    }
    return text;
}

char *
gw_blob_hmac (const gw_blob_account_t *account, const char *message)
{
    uint8_t mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    if (!account->key_len
        || !HMAC (EVP_sha256 (), account->key, (int) account->key_len,
                  (const unsigned char *) message, strlen (message), mac, &mac_len))
        return NULL;
    return gw_base64_encode (mac, mac_len);
}

void
gw_blob_http_date (time_t t, char out[32])
{
    static const char *const days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    struct tm tm;
    gmtime_r (&t, &tm);
    /* day and month names by hand: strftime's follow the locale */
    char clock[16];
    if (!strftime (clock, sizeof clock, "%Y %H:%M:%S", &tm))
        clock[0] = '\0';
    snprintf (out, 32, "%.3s, %02u %.3s %.13s GMT", days[tm.tm_wday % 7],
              (unsigned) tm.tm_mday % 100u, months[tm.tm_mon % 12], clock);
}

void
gw_blob_iso_time (time_t t, char out[32])
{
    struct tm tm;
    gmtime_r (&t, &tm);
    if (!strftime (out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm))
        out[0] = '\0';
}

char *
gw_blob_sas_string_to_sign (const gw_blob_account_t *account, const char *name,
                            const char *expiry_iso)
{
    /* version 2020-12-06 and later: sp, st, se, canonicalised resource,
       si, sip, spr, sv, sr, snapshot time, ses, rscc, rscd, rsce, rscl,
       rsct; the resource names the blob unencoded */
    char *text = NULL;
    if (asprintf (&text, "r\n\n%s\n/blob/%s/%s/%s\n\n\n\n%s\nb\n\n\n\n\n\n\n", expiry_iso,
                  account->account, account->container, name, GW_BLOB_VERSION) < 0)
        return NULL;
    return text;
}

char *
gw_blob_sas_url (const gw_blob_account_t *account, const char *name, time_t expires)
{
    char expiry[32];
    gw_blob_iso_time (expires, expiry);
    char *to_sign = gw_blob_sas_string_to_sign (account, name, expiry);
    char *sig = to_sign ? gw_blob_hmac (account, to_sign) : NULL;
    char *sig_q = sig ? gw_url_encode (sig, false) : NULL;
    char *expiry_q = gw_url_encode (expiry, false);
    char *base = gw_blob_url (account, name);
    char *url = NULL;
    if (sig_q && expiry_q && base
        && asprintf (&url, "%s?sv=%s&se=%s&sr=b&sp=r&sig=%s", base, GW_BLOB_VERSION, expiry_q,
                     sig_q) < 0)
        url = NULL;
    free (to_sign);
    free (sig);
    free (sig_q);
    free (expiry_q);
    free (base);
    return url;
}
