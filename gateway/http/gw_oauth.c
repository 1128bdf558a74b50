/* gw_oauth: the issuer's keys, fetched and refreshed, and bearer JWTs
 * checked against them (see gw_oauth.h).
 *
 * Threads: gw_oauth_new and gw_oauth_destroy in the starting thread; the
 * refresh thread (s_refresher) fetches the keys every refresh_s seconds;
 * gw_oauth_check in any thread (the HTTP edge's, the loop thread), which
 * may fetch them itself for an unknown key id. The keys are swapped under
 * a write lock and read under a read lock; fetches are one at a time. */
#include "gw_oauth.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "gw_jwt.h"
#include "jp_log.h"
#include "jp_time.h"

#define S_MAX_DOC (1u << 20)        /* metadata and JWKS documents */
#define S_FETCH_TIMEOUT_S 10        /* in the refresh thread */
#define S_START_TIMEOUT_S 3         /* at start (an issuer down delays no start long) */
#define S_UNKNOWN_KID_TIMEOUT_S 2   /* in a caller's thread */
#define S_UNKNOWN_KID_GAP_MS 30000  /* at most one such fetch per gap */
#define S_RETRY_S 5                 /* while no keys were ever loaded */
#define S_LEEWAY_S 60

struct gw_oauth {
    char *issuer, *audience, *tenant_claim, *metadata_url;
    char *jwks_uri;             /* from the issuer's metadata (under fetch_lock) */
    long refresh_s;
    pthread_rwlock_t keys_lock;
    gw_jwks_t *keys;            /* NULL until a fetch succeeds */
    pthread_mutex_t fetch_lock; /* one fetch at a time; guards jwks_uri, last_unknown */
    int64_t last_unknown_ms;
    pthread_mutex_t stop_lock;
    pthread_cond_t stop_cond;
    bool stopping, started;
    pthread_t thread;
};

typedef struct {
    char *data;
    size_t len;
} s_doc_t;

static size_t
s_write (char *ptr, size_t size, size_t n, void *arg)
{
    s_doc_t *doc = arg;
    size_t add = size * n;
    if (doc->len + add > S_MAX_DOC)
        return 0;       /* too large: the transfer fails */
    char *grown = realloc (doc->data, doc->len + add + 1);
    if (!grown)
        return 0;
    memcpy (grown + doc->len, ptr, add);
    doc->data = grown;
    doc->len += add;
    doc->data[doc->len] = '\0';
    return add;
}

/* GETs url (http or https only, no redirects, bounded in time and size)
 * into doc. False with why. */
static bool
s_fetch (const char *url, long timeout_s, s_doc_t *doc, char *why, size_t why_len)
{
    CURL *curl = curl_easy_init ();
    if (!curl) {
        snprintf (why, why_len, "out of memory");
        return false;
    }
    curl_easy_setopt (curl, CURLOPT_URL, url);
    curl_easy_setopt (curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt (curl, CURLOPT_TIMEOUT, timeout_s);
    curl_easy_setopt (curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt (curl, CURLOPT_WRITEFUNCTION, s_write);
    curl_easy_setopt (curl, CURLOPT_WRITEDATA, doc);
    curl_easy_setopt (curl, CURLOPT_HTTPHEADER, NULL);
    CURLcode rc = curl_easy_perform (curl);
    long status = 0;
    curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup (curl);
    if (rc != CURLE_OK)
        snprintf (why, why_len, "%.300s: %s", url, curl_easy_strerror (rc));
    else if (status != 200)
        snprintf (why, why_len, "%.300s: HTTP %ld", url, status);
    return rc == CURLE_OK && status == 200;
}

/* GETs url as a JSON object. NULL with why. */
static json_t *
s_fetch_json (const char *url, long timeout_s, char *why, size_t why_len)
{
    s_doc_t doc = {NULL, 0};
    json_t *json = NULL;
    if (s_fetch (url, timeout_s, &doc, why, why_len)
        && (!(json = json_loadb (doc.data ? doc.data : "", doc.len, 0, NULL))
            || !json_is_object (json))) {
        snprintf (why, why_len, "%.300s: not a JSON object", url);
        json_decref (json);
        json = NULL;
    }
    free (doc.data);
    return json;
}

/* The issuer's metadata URLs, in the order tried: RFC 8414's (the
 * well-known part before the issuer's path), OpenID discovery's (after
 * it), then OpenID's before it. */
static int
s_metadata_urls (const char *issuer, char urls[3][1200])
{
    const char *host = strstr (issuer, "://");
    const char *path = host ? strchr (host + 3, '/') : NULL;
    size_t origin = path ? (size_t) (path - issuer) : strlen (issuer);
    const char *rest = path && strcmp (path, "/") != 0 ? path : "";
    size_t rest_len = strlen (rest);
    if (rest_len && rest[rest_len - 1] == '/')
        rest_len--;
    snprintf (urls[0], sizeof urls[0], "%.*s/.well-known/oauth-authorization-server%.*s",
              (int) origin, issuer, (int) rest_len, rest);
    snprintf (urls[1], sizeof urls[1], "%.*s%.*s/.well-known/openid-configuration",
              (int) origin, issuer, (int) rest_len, rest);
    snprintf (urls[2], sizeof urls[2], "%.*s/.well-known/openid-configuration%.*s",
              (int) origin, issuer, (int) rest_len, rest);
    return rest_len ? 3 : 2;
}

static bool
s_http_url (const char *s)
{
    return s && (strncmp (s, "https://", 8) == 0 || strncmp (s, "http://", 7) == 0)
           && strlen (s) < 1000;
}

/* Finds the jwks_uri in the issuer's metadata (fetch_lock held). */
static bool
s_discover (gw_oauth_t *self, long timeout_s, char *why, size_t why_len)
{
    char urls[3][1200];
    int n = s_metadata_urls (self->issuer, urls);
    for (int i = 0; i < n; i++) {
        json_t *meta = s_fetch_json (urls[i], timeout_s, why, why_len);
        if (!meta)
            continue;
        const char *issuer = json_string_value (json_object_get (meta, "issuer"));
        const char *jwks = json_string_value (json_object_get (meta, "jwks_uri"));
        if (!issuer || strcmp (issuer, self->issuer) != 0)
            snprintf (why, why_len, "%.200s names the issuer %.120s, not %.120s", urls[i],
                      issuer ? issuer : "(none)", self->issuer);
        else if (!s_http_url (jwks))
            snprintf (why, why_len, "%.200s has no http(s) jwks_uri", urls[i]);
        else {
            free (self->jwks_uri);
            self->jwks_uri = strdup (jwks);
        }
        json_decref (meta);
        if (self->jwks_uri)
            return true;
    }
    return false;
}

/* Fetches the keys (discovering jwks_uri first when needed) and swaps
 * them in. Takes fetch_lock. */
static bool
s_load_keys (gw_oauth_t *self, long timeout_s)
{
    char why[512] = "";
    bool ok = false;
    pthread_mutex_lock (&self->fetch_lock);
    if (self->jwks_uri || s_discover (self, timeout_s, why, sizeof why)) {
        s_doc_t doc = {NULL, 0};
        gw_jwks_t *keys = s_fetch (self->jwks_uri, timeout_s, &doc, why, sizeof why)
                              ? gw_jwks_parse (doc.data ? doc.data : "", doc.len, why, sizeof why)
                              : NULL;
        if (keys) {
            pthread_rwlock_wrlock (&self->keys_lock);
            gw_jwks_t *old = self->keys;
            self->keys = keys;
            pthread_rwlock_unlock (&self->keys_lock);
            gw_jwks_destroy (&old);
            ok = true;
        }
        free (doc.data);
    }
    pthread_mutex_unlock (&self->fetch_lock);
    if (!ok)
        jp_log_warn ("oauth event=keys-not-loaded issuer=%s why=\"%s\"", self->issuer, why);
    return ok;
}

static void *
s_refresher (void *arg)
{
    gw_oauth_t *self = arg;
    pthread_rwlock_rdlock (&self->keys_lock);
    bool have = self->keys != NULL;
    pthread_rwlock_unlock (&self->keys_lock);
    pthread_mutex_lock (&self->stop_lock);
    while (!self->stopping) {
        struct timespec at;
        clock_gettime (CLOCK_REALTIME, &at);
        at.tv_sec += have ? self->refresh_s : S_RETRY_S;
        pthread_cond_timedwait (&self->stop_cond, &self->stop_lock, &at);
        if (self->stopping)
            break;
        pthread_mutex_unlock (&self->stop_lock);
        have = s_load_keys (self, S_FETCH_TIMEOUT_S) || have;
        pthread_mutex_lock (&self->stop_lock);
    }
    pthread_mutex_unlock (&self->stop_lock);
    return NULL;
}

/* RFC 9728's metadata URL of a resource: the well-known part between its
 * origin and its path. */
static char *
s_metadata_url (const char *resource)
{
    const char *host = strstr (resource, "://");
    const char *path = host ? strchr (host + 3, '/') : NULL;
    size_t origin = path ? (size_t) (path - resource) : strlen (resource);
    char *url = NULL;
    if (asprintf (&url, "%.*s/.well-known/oauth-protected-resource%s", (int) origin, resource,
                  path && strcmp (path, "/") != 0 ? path : "") < 0)
        return NULL;
    return url;
}

gw_oauth_t *
gw_oauth_new (const gw_oauth_settings_t *s, char *err, size_t err_len)
{
    if (!s_http_url (s->issuer)) {
        snprintf (err, err_len, "CODEBOX_OAUTH_ISSUER must be an http(s) URL");
        return NULL;
    }
    char *audience = NULL;
    if (s->audience && *s->audience)
        audience = strdup (s->audience);
    else if (s->public_url && s_http_url (s->public_url)) {
        size_t len = strlen (s->public_url);
        while (len && s->public_url[len - 1] == '/')
            len--;
        if (asprintf (&audience, "%.*s/mcp", (int) len, s->public_url) < 0)
            audience = NULL;
    }
    else {
        snprintf (err, err_len, "CODEBOX_OAUTH_ISSUER needs CODEBOX_PUBLIC_URL (the address "
                  "clients reach codebox at) or CODEBOX_OAUTH_AUDIENCE");
        return NULL;
    }
    if (!audience || !s_http_url (audience)) {
        snprintf (err, err_len, "CODEBOX_OAUTH_AUDIENCE must be an http(s) URL (the resource "
                  "clients ask tokens for, this server's /mcp)");
        free (audience);
        return NULL;
    }
    gw_oauth_t *self = calloc (1, sizeof *self);
    if (!self) {
        free (audience);
        snprintf (err, err_len, "out of memory");
        return NULL;
    }
    self->issuer = strdup (s->issuer);
    self->audience = audience;
    self->tenant_claim = strdup (s->tenant_claim && *s->tenant_claim ? s->tenant_claim : "sub");
    self->metadata_url = s_metadata_url (audience);
    self->refresh_s = s->refresh_s > 0 ? s->refresh_s : 300;
    pthread_rwlock_init (&self->keys_lock, NULL);
    pthread_mutex_init (&self->fetch_lock, NULL);
    pthread_mutex_init (&self->stop_lock, NULL);
    pthread_cond_init (&self->stop_cond, NULL);
    if (!self->issuer || !self->tenant_claim || !self->metadata_url) {
        gw_oauth_destroy (&self);
        snprintf (err, err_len, "out of memory");
        return NULL;
    }
    curl_global_init (CURL_GLOBAL_DEFAULT);
    if (s_load_keys (self, S_START_TIMEOUT_S))
        jp_log_info ("oauth event=keys-loaded issuer=%s jwks_uri=%s", self->issuer,
                     self->jwks_uri);
    self->started = pthread_create (&self->thread, NULL, s_refresher, self) == 0;
    return self;
}

void
gw_oauth_destroy (gw_oauth_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gw_oauth_t *self = *self_p;
    if (self->started) {
        pthread_mutex_lock (&self->stop_lock);
        self->stopping = true;
        pthread_cond_signal (&self->stop_cond);
        pthread_mutex_unlock (&self->stop_lock);
        pthread_join (self->thread, NULL);
    }
    gw_jwks_destroy (&self->keys);
    pthread_rwlock_destroy (&self->keys_lock);
    pthread_mutex_destroy (&self->fetch_lock);
    pthread_mutex_destroy (&self->stop_lock);
    pthread_cond_destroy (&self->stop_cond);
    free (self->issuer);
    free (self->audience);
    free (self->tenant_claim);
    free (self->metadata_url);
    free (self->jwks_uri);
    free (self);
    *self_p = NULL;
}

static gw_jwt_verdict_t
s_verify (gw_oauth_t *self, const char *token, char *tenant, size_t tenant_len, char *why,
          size_t why_len)
{
    gw_jwt_expect_t expect = {self->issuer, self->audience, self->tenant_claim,
                              (int64_t) time (NULL), S_LEEWAY_S};
    pthread_rwlock_rdlock (&self->keys_lock);
    gw_jwt_verdict_t v = self->keys ? gw_jwt_verify (self->keys, token, &expect, tenant,
                                                     tenant_len, why, why_len)
                                    : GW_JWT_UNKNOWN_KEY;
    if (!self->keys)
        snprintf (why, why_len, "the issuer's keys are not loaded yet");
    pthread_rwlock_unlock (&self->keys_lock);
    return v;
}

bool
gw_oauth_check (gw_oauth_t *self, const char *token, char *tenant, size_t tenant_len,
                char *why, size_t why_len)
{
    gw_jwt_verdict_t v = s_verify (self, token, tenant, tenant_len, why, why_len);
    if (v == GW_JWT_UNKNOWN_KEY) {
        /* a key the issuer may have added since: fetched here, at most
           once per gap, whatever tokens name */
        int64_t now = jp_time_now_ms ();
        bool fetch = false;
        pthread_mutex_lock (&self->fetch_lock);
        if (now - self->last_unknown_ms >= S_UNKNOWN_KID_GAP_MS) {
            self->last_unknown_ms = now;
            fetch = true;
        }
        pthread_mutex_unlock (&self->fetch_lock);
        if (fetch && s_load_keys (self, S_UNKNOWN_KID_TIMEOUT_S))
            v = s_verify (self, token, tenant, tenant_len, why, why_len);
    }
    return v == GW_JWT_OK;
}

json_t *
gw_oauth_resource_metadata (const gw_oauth_t *self)
{
    return json_pack ("{s:s, s:[s], s:[s], s:s}", "resource", self->audience,
                      "authorization_servers", self->issuer, "bearer_methods_supported",
                      "header", "resource_name", "codebox");
}

void
gw_oauth_challenge (const gw_oauth_t *self, const char *error_description, char *out,
                    size_t out_len)
{
    int n = snprintf (out, out_len, "Bearer resource_metadata=\"%s\"", self->metadata_url);
    if (!error_description || n < 0 || (size_t) n >= out_len)
        return;
    char clean[200];
    size_t j = 0;
    for (size_t i = 0; error_description[i] && j < sizeof clean - 1; i++) {
        unsigned char ch = (unsigned char) error_description[i];
        clean[j++] = ch == '"' || ch == '\\' || ch < 0x20 || ch >= 0x7f ? '\'' : (char) ch;
    }
    clean[j] = '\0';
    snprintf (out + n, out_len - (size_t) n,
              ", error=\"invalid_token\", error_description=\"%s\"", clean);
}

bool
gw_oauth_metadata_path (const char *path)
{
    return strcmp (path, "/.well-known/oauth-protected-resource") == 0
           || strcmp (path, "/.well-known/oauth-protected-resource/mcp") == 0;
}
