/* gw_blob: the Azure Blob upload worker. See gw_blob.h.
 *
 * Threads: new, submit and destroy in the loop thread; the worker is a
 * CZMQ actor (s_worker and everything it calls run on its thread), fed
 * uploads over the actor's pipe, which is its queue: no lock of ours, and
 * bounded by the pipe's high-water mark (submit never blocks the loop);
 * done callbacks in the loop thread (through gw_server_call). */
#include "gw_blob.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <czmq.h>
#include <curl/curl.h>

#include "gw_version.h"
#include "gw_path.h"
#include "gw_url.h"

#define S_CONNECT_TIMEOUT_S 10L
#define S_LOW_SPEED_BYTES 1024L     /* slower than this ... */
#define S_LOW_SPEED_S 30L           /* ... for this long ends a transfer */
#define S_ERROR_BODY_MAX 4096

struct gw_blob {
    gw_server_t *server;
    gw_blob_account_t account;
    char endpoint_path[512];    /* the endpoint URL's path ("" or "/account") */
    zactor_t *worker;           /* its pipe carries "UPLOAD" and the upload */
    atomic_bool abort;
    CURL *curl;                 /* the worker's, kept for connection reuse */
};

/* One request's answer, as the worker reads it. */
typedef struct {
    char error_code[128];       /* x-ms-error-code */
    char body[S_ERROR_BODY_MAX];
    size_t body_len;
    int fd;                     /* the file being sent, or -1 */
    long long offset, size;
} s_exchange_t;

gw_blob_upload_t *
gw_blob_upload_new (const char *dir, const char *path, const char *name,
                    const char *content_type, gw_server_call_fn *done, void *arg,
                    void (*free_arg) (void *))
{
    gw_blob_upload_t *u = calloc (1, sizeof *u);
    if (!u)
        return NULL;
    u->dir = strdup (dir);
    u->path = strdup (path);
    u->name = strdup (name);
    u->content_type = strdup (content_type ? content_type : "application/octet-stream");
    u->done = done;
    u->arg = arg;
    u->free_arg = free_arg;
    if (!u->dir || !u->path || !u->name || !u->content_type) {
        u->arg = NULL;      /* the caller still owns it */
        gw_blob_upload_free (u);
        return NULL;
    }
    return u;
}

void
gw_blob_upload_free (gw_blob_upload_t *u)
{
    if (!u)
        return;
    if (u->arg && u->free_arg)
        u->free_arg (u->arg);
    free (u->dir);
    free (u->path);
    free (u->name);
    free (u->content_type);
    free (u);
}

const gw_blob_account_t *
gw_blob_account (const gw_blob_t *self)
{
    return &self->account;
}

/* ---- the worker's side -------------------------------------------------- */

static size_t
s_on_header (char *data, size_t size, size_t n, void *arg)
{
    s_exchange_t *x = arg;
    size_t len = size * n;
    static const char name[] = "x-ms-error-code:";
    if (len > sizeof name && strncasecmp (data, name, sizeof name - 1) == 0) {
        const char *v = data + sizeof name - 1;
        size_t v_len = len - (sizeof name - 1);
        while (v_len && (*v == ' ' || *v == '\t')) {
            v++;
            v_len--;
        }
        while (v_len && (v[v_len - 1] == '\r' || v[v_len - 1] == '\n' || v[v_len - 1] == ' '))
            v_len--;
        if (v_len >= sizeof x->error_code)
            v_len = sizeof x->error_code - 1;
        memcpy (x->error_code, v, v_len);
        x->error_code[v_len] = '\0';
    }
    return len;
}

static size_t
s_on_body (char *data, size_t size, size_t n, void *arg)
{
    s_exchange_t *x = arg;
    size_t len = size * n;
    size_t room = sizeof x->body - 1 - x->body_len;
    size_t take = len < room ? len : room;
    memcpy (x->body + x->body_len, data, take);
    x->body_len += take;
    x->body[x->body_len] = '\0';
    return len;
}

static size_t
s_on_read (char *buf, size_t size, size_t n, void *arg)
{
    s_exchange_t *x = arg;
    long long want = (long long) (size * n);
    if (want > x->size - x->offset)
        want = x->size - x->offset;
    if (want <= 0)
        return 0;
    ssize_t got = pread (x->fd, buf, (size_t) want, x->offset);
    if (got <= 0)
        return CURL_READFUNC_ABORT;     /* shrunk or unreadable: fail, never send short */
    x->offset += got;
    return (size_t) got;
}

static int
s_on_progress (void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void) dt;
    (void) dn;
    (void) ut;
    (void) un;
    gw_blob_t *self = arg;
    return atomic_load (&self->abort) ? 1 : 0;
}

/* The <Message> of an Azure error body, cut at its first line. */
static void
s_azure_message (const char *body, char *out, size_t out_len)
{
    out[0] = '\0';
    const char *m = strstr (body, "<Message>");
    if (!m)
        return;
    m += 9;
    size_t len = strcspn (m, "<\r\n");
    if (len >= out_len)
        len = out_len - 1;
    memcpy (out, m, len);
    out[len] = '\0';
}

/* Sends one signed request (PUT): the blob when x->fd >= 0, else an empty
 * body (container creation). url_path is the URL's path as sent; query
 * its query string ("" or "?restype=container"), query_lines its
 * canonical form. Returns the HTTP status, or -1 with err set. */
static long
s_request (gw_blob_t *self, const char *url_path, const char *query, const char *query_lines,
           const char *content_type, bool blob, s_exchange_t *x, char *err, size_t err_len)
{
    CURL *curl = self->curl;
    curl_easy_reset (curl);
    char date[32], h_date[64], url[4096];
    gw_blob_http_date (time (NULL), date);
    snprintf (h_date, sizeof h_date, "x-ms-date:%s", date);
    const char *ms_blob[] = {"x-ms-blob-type:BlockBlob", h_date, "x-ms-version:" GW_BLOB_VERSION};
    const char *ms_plain[] = {h_date, "x-ms-version:" GW_BLOB_VERSION};
    char *to_sign = gw_blob_string_to_sign (&self->account, "PUT", blob ? x->size : 0,
                                            blob ? content_type : "", blob ? ms_blob : ms_plain,
                                            blob ? 3 : 2, url_path, query_lines);
    char *sig = to_sign ? gw_blob_hmac (&self->account, to_sign) : NULL;
    free (to_sign);
    if (!sig) {
        snprintf (err, err_len, "cannot sign the request (out of memory)");
        return -1;
    }
    /* the endpoint's scheme and host, then the path as signed */
    const char *host_end = strstr (self->account.endpoint, "://") + 3;
    host_end += strcspn (host_end, "/");
    snprintf (url, sizeof url, "%.*s%s%s", (int) (host_end - self->account.endpoint),
              self->account.endpoint, url_path, query);
    char h_auth[256], h_type[300];
    snprintf (h_auth, sizeof h_auth, "Authorization: SharedKey %s:%s", self->account.account,
              sig);
    free (sig);
    snprintf (h_type, sizeof h_type, "Content-Type: %s", content_type);
    struct curl_slist *headers = NULL, *h;
    const char *lines[] = {"x-ms-blob-type: BlockBlob", "x-ms-version: " GW_BLOB_VERSION,
                           h_auth, "Expect:", blob ? h_type : "Content-Type:"};
    char h_date_sent[64];
    snprintf (h_date_sent, sizeof h_date_sent, "x-ms-date: %s", date);
    bool ok = (headers = curl_slist_append (NULL, h_date_sent)) != NULL;
    for (size_t i = blob ? 0 : 1; ok && i < sizeof lines / sizeof *lines; i++) {
        h = curl_slist_append (headers, lines[i]);
        ok = h != NULL;
        if (ok)
            headers = h;
    }
    if (!ok) {
        curl_slist_free_all (headers);
        snprintf (err, err_len, "out of memory");
        return -1;
    }
    char errbuf[CURL_ERROR_SIZE] = "";
    curl_easy_setopt (curl, CURLOPT_URL, url);
    curl_easy_setopt (curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt (curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt (curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt (curl, CURLOPT_INFILESIZE_LARGE, (curl_off_t) (blob ? x->size : 0));
    curl_easy_setopt (curl, CURLOPT_READFUNCTION, s_on_read);
    curl_easy_setopt (curl, CURLOPT_READDATA, x);
    curl_easy_setopt (curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt (curl, CURLOPT_HEADERFUNCTION, s_on_header);
    curl_easy_setopt (curl, CURLOPT_HEADERDATA, x);
    curl_easy_setopt (curl, CURLOPT_WRITEFUNCTION, s_on_body);
    curl_easy_setopt (curl, CURLOPT_WRITEDATA, x);
    curl_easy_setopt (curl, CURLOPT_CONNECTTIMEOUT, S_CONNECT_TIMEOUT_S);
    curl_easy_setopt (curl, CURLOPT_LOW_SPEED_LIMIT, S_LOW_SPEED_BYTES);
    curl_easy_setopt (curl, CURLOPT_LOW_SPEED_TIME, S_LOW_SPEED_S);
    curl_easy_setopt (curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt (curl, CURLOPT_XFERINFOFUNCTION, s_on_progress);
    curl_easy_setopt (curl, CURLOPT_XFERINFODATA, self);
    curl_easy_setopt (curl, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt (curl, CURLOPT_USERAGENT, "codebox/" CODEBOX_VERSION);
    x->offset = 0;
    x->error_code[0] = '\0';
    x->body_len = 0;
    x->body[0] = '\0';
    CURLcode code = curl_easy_perform (curl);
    curl_slist_free_all (headers);
    long status = 0;
    curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &status);
    if (code != CURLE_OK) {
        if (atomic_load (&self->abort))
            snprintf (err, err_len, "the gateway is shutting down; the upload was stopped");
        else
            snprintf (err, err_len, "cannot reach Azure Blob Storage at %.200s: %.250s",
                      self->account.endpoint, *errbuf ? errbuf : curl_easy_strerror (code));
        return -1;
    }
    return status;
}

/* Puts the error of an Azure answer into err. */
static void
s_explain (long status, const s_exchange_t *x, const char *what, char *err, size_t err_len)
{
    char message[200];
    s_azure_message (x->body, message, sizeof message);
    snprintf (err, err_len, "Azure Blob Storage refused to %s: HTTP %ld%s%s%s%s", what, status,
              x->error_code[0] ? " " : "", x->error_code, message[0] ? ": " : "", message);
}

/* Creates the container; an existing one is fine. Returns 0 or -1. */
static int
s_create_container (gw_blob_t *self, s_exchange_t *x, char *err, size_t err_len)
{
    char path[700];
    snprintf (path, sizeof path, "%s/%s", self->endpoint_path, self->account.container);
    x->fd = -1;
    long status = s_request (self, path, "?restype=container", "\nrestype:container", "", false,
                             x, err, err_len);
    if (status == 201 || (status == 409 && strcmp (x->error_code, "ContainerAlreadyExists") == 0))
        return 0;
    if (status > 0)
        s_explain (status, x, "create the container", err, err_len);
    return -1;
}

/* Uploads one file; fills upload's outcome. */
static void
s_upload (gw_blob_t *self, gw_blob_upload_t *u)
{
    int dirfd = open (u->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int fd = dirfd < 0 ? -errno : gw_path_open_beneath (dirfd, u->path, O_RDONLY | O_CLOEXEC, 0);
    if (dirfd >= 0)
        close (dirfd);
    struct stat st;
    if (fd >= 0 && (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))) {
        close (fd);
        fd = -EINVAL;
    }
    if (fd < 0) {
        snprintf (u->error, sizeof u->error, "cannot open the file: %s", strerror (-fd));
        return;
    }
    if (st.st_size > GW_BLOB_MAX_BYTES) {
        snprintf (u->error, sizeof u->error, "the file is larger than a single blob upload "
                  "allows (%lld MiB)", GW_BLOB_MAX_BYTES >> 20);
        close (fd);
        return;
    }
    char *encoded = gw_url_encode (u->name, true);
    char *path = NULL;
    if (!encoded || asprintf (&path, "%s/%s/%s", self->endpoint_path, self->account.container,
                              encoded) < 0)
        path = NULL;
    free (encoded);
    s_exchange_t *x = calloc (1, sizeof *x);
    if (!path || !x) {
        snprintf (u->error, sizeof u->error, "out of memory");
        free (path);
        free (x);
        close (fd);
        return;
    }
    for (int attempt = 0; attempt < 2; attempt++) {
        x->fd = fd;
        x->size = st.st_size;
        long status = s_request (self, path, "", "", u->content_type, true, x, u->error,
                                 sizeof u->error);
        if (status == 201) {
            u->ok = true;
            u->size = st.st_size;
            u->error[0] = '\0';
            break;
        }
        if (status == 404 && strcmp (x->error_code, "ContainerNotFound") == 0 && attempt == 0) {
            if (s_create_container (self, x, u->error, sizeof u->error) == 0)
                continue;
            break;
        }
        if (status > 0)
            s_explain (status, x, "store the blob", u->error, sizeof u->error);
        break;
    }
    free (path);
    free (x);
    close (fd);
}

/* The actor: one upload at a time, in the order submitted, until $TERM.
 * Once destroy has asked to abort, what is still queued is dropped; its
 * "STOP" is answered with a signal once everything before it is gone. */
static void
s_worker (zsock_t *pipe, void *arg)
{
    gw_blob_t *self = arg;
    zsock_signal (pipe, 0);
    for (;;) {
        char *command = NULL;
        void *upload = NULL;
        if (zsock_recv (pipe, "sp", &command, &upload) < 0)
            break;
        bool term = !command || streq (command, "$TERM");
        bool stop = command && streq (command, "STOP");
        zstr_free (&command);
        if (term)
            break;
        if (stop) {
            zsock_signal (pipe, 0);
            continue;
        }
        gw_blob_upload_t *u = upload;
        if (!u)
            continue;
        if (atomic_load (&self->abort)) {
            gw_blob_upload_free (u);
            continue;
        }
        s_upload (self, u);
        if (gw_server_call (self->server, u->done, u) != 0)
            gw_blob_upload_free (u);    /* out of memory: nobody hears of it */
    }
}

/* ---- the loop's side ---------------------------------------------------- */

int
gw_blob_new (gw_server_t *server, const gw_config_t *config, gw_blob_t **out, char *err,
             size_t err_len)
{
    *out = NULL;
    gw_blob_account_t account;
    int rc = gw_blob_account_parse (gw_config_str (config, GW_SET_BLOB_CONNECTION_STRING),
                                    gw_config_str (config, GW_SET_BLOB_URL),
                                    gw_config_str (config, GW_SET_BLOB_ACCOUNT_KEY),
                                    gw_config_str (config, GW_SET_BLOB_CONTAINER), &account, err,
                                    err_len);
    if (rc <= 0)
        return rc;
    gw_blob_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, err_len, "out of memory");
        return -ENOMEM;
    }
    self->server = server;
    self->account = account;
    const char *host = strstr (account.endpoint, "://") + 3;
    snprintf (self->endpoint_path, sizeof self->endpoint_path, "%s", host + strcspn (host, "/"));
    atomic_init (&self->abort, false);
    self->curl = curl_easy_init ();
    if (self->curl)
        self->worker = zactor_new (s_worker, self);
    if (!self->worker) {
        snprintf (err, err_len, "cannot start the blob upload worker");
        gw_blob_destroy (&self);
        return -ENOMEM;
    }
    zsock_set_sndtimeo (zactor_sock (self->worker), 0);
    *out = self;
    return 0;
}

void
gw_blob_destroy (gw_blob_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gw_blob_t *self = *self_p;
    atomic_store (&self->abort, true);
    if (self->worker) {
        /* zactor_destroy sends $TERM without waiting for room, and returns
           at once if the pipe is full: first empty the queue (the worker
           drops it, aborting) and wait until it has */
        zsock_set_sndtimeo (zactor_sock (self->worker), -1);
        if (zsock_send (self->worker, "sp", "STOP", NULL) == 0)
            zsock_wait (self->worker);
    }
    zactor_destroy (&self->worker);     /* $TERM: waits for the worker's end */
    if (self->curl)
        curl_easy_cleanup (self->curl);
    memset (&self->account, 0, sizeof self->account);
    free (self);
    *self_p = NULL;
}

int
gw_blob_submit (gw_blob_t *self, gw_blob_upload_t *upload)
{
    if (zsock_send (self->worker, "sp", "UPLOAD", upload) != 0)
        return -EAGAIN;
    return 0;
}
