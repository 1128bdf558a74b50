/* gw_download: one worker thread per download, libcurl doing the HTTP,
 * the SSRF check in libcurl's open-socket hook (and again, on the address
 * actually connected to, in its pre-request hook), the size limit in the
 * write callback, and the file placed by an atomic no-replace rename. See
 * gw_download.h.
 *
 * Threads: the registry of downloads (gw_downloads_t) belongs to the loop
 * thread: gw_download_start, gw_downloads_stop, s_deliver and
 * s_on_progress run there. s_worker_main and the libcurl callbacks run in
 * the download's own thread and touch only their download's fields; the
 * loop sees the result after the worker's gw_server_call (the mailbox's
 * mutex orders the two) and joins the worker before reading it. A
 * plain thread, not a CZMQ actor: it spends its life inside libcurl, so
 * it could not read an actor's pipe; it is cancelled through a flag
 * libcurl's progress callback reads. */
#include "gw_download.h"
#include "gw_id.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "gw_version.h"
#include "gw_fs.h"
#include "gw_server.h"
#include "jp_time.h"

#define S_PROGRESS_MS 1000
#define S_MAX_SUFFIX 10000

/* Why a download was told to stop. */
enum { S_GO_ON = 0, S_SHUTDOWN, S_CANCELLED };

typedef struct s_download s_download_t;
struct s_download {
    s_download_t *next;
    uint64_t serial;
    gw_server_t *server;
    pthread_t thread;
    atomic_int abort;           /* S_GO_ON, or why to stop */
    /* the request (copies; the descriptors are ours) */
    char *url;
    int dirfd, fd;
    char tmp_name[64];
    char name[GW_DOWNLOAD_NAME_MAX + 1];
    bool name_from_url;
    long long max_bytes;
    long timeout_s;
    bool allow_private;
    char tenant[GW_ID_SIZE];
    gw_download_done_fn *done;
    gw_download_progress_fn *progress;
    void *arg;
    /* the worker's */
    long long received;
    int write_errno;
    bool too_large;
    int64_t last_progress_ms;
    atomic_llong bytes, total;
    gw_download_result_t result;
};

struct gw_downloads {
    gw_server_t *server;
    s_download_t *active;       /* running or waiting to be delivered */
    unsigned n_active;
    uint64_t next_serial;
};

static pthread_once_t s_curl_once = PTHREAD_ONCE_INIT;

static void
s_curl_init (void)
{
    curl_global_init (CURL_GLOBAL_DEFAULT);
}

/* ---- the loop thread's side --------------------------------------------- */

static s_download_t *
s_find (gw_downloads_t *self, uint64_t serial, s_download_t ***link_p)
{
    if (!self)
        return NULL;
    for (s_download_t **link = &self->active; *link; link = &(*link)->next)
        if ((*link)->serial == serial) {
            if (link_p)
                *link_p = link;
            return *link;
        }
    return NULL;
}

static void
s_free (s_download_t *d)
{
    if (d->fd >= 0)
        close (d->fd);
    if (d->dirfd >= 0)
        close (d->dirfd);
    free (d->url);
    free (d);
}

/* Joins the worker, unlinks the download, hands its result over, frees. */
static void
s_finish (gw_downloads_t *self, s_download_t **link)
{
    s_download_t *d = *link;
    pthread_join (d->thread, NULL);
    *link = d->next;
    self->n_active--;
    d->done (&d->result, d->arg);
    s_free (d);
}

/* A finished worker's result (arg is the serial; a download already
 * finished by gw_downloads_stop is not found, and nothing happens). */
static void
s_deliver (gw_server_t *server, void *arg)
{
    gw_downloads_t *self = gw_server_downloads (server);
    s_download_t **link;
    if (s_find (self, (uint64_t) (uintptr_t) arg, &link))
        s_finish (self, link);
}

static void
s_on_progress (gw_server_t *server, void *arg)
{
    s_download_t *d = s_find (gw_server_downloads (server), (uint64_t) (uintptr_t) arg, NULL);
    if (d && d->progress
        && !d->progress (atomic_load (&d->bytes), atomic_load (&d->total), d->arg))
        atomic_store (&d->abort, S_CANCELLED);
}

/* ---- the worker's side -------------------------------------------------- */

static void
s_refuse (s_download_t *d, const char *ip, gw_addr_kind_t kind)
{
    if (d->result.refused_ip[0])
        return;             /* keep the first */
    snprintf (d->result.refused_ip, sizeof d->result.refused_ip, "%s", ip);
    d->result.refused_kind = kind;
}

/* libcurl's open-socket hook: every connection of the transfer, every
 * address tried, every redirect hop comes here with the address it is
 * about to connect to. */
static curl_socket_t
s_open_socket (void *arg, curlsocktype purpose, struct curl_sockaddr *address)
{
    s_download_t *d = arg;
    if (atomic_load (&d->abort) || purpose != CURLSOCKTYPE_IPCXN)
        return CURL_SOCKET_BAD;
    if (!d->allow_private) {
        socklen_t len = address->addrlen;
        struct sockaddr_storage ss = {0};
        if (len > sizeof ss)
            len = sizeof ss;
        memcpy (&ss, &address->addr, len);
        gw_addr_kind_t kind = gw_download_classify ((struct sockaddr *) &ss, len);
        if (kind != GW_ADDR_PUBLIC) {
            char ip[INET6_ADDRSTRLEN] = "?";
            const void *raw = ss.ss_family == AF_INET
                                  ? (const void *) &((struct sockaddr_in *) &ss)->sin_addr
                                  : (const void *) &((struct sockaddr_in6 *) &ss)->sin6_addr;
            if (ss.ss_family == AF_INET || ss.ss_family == AF_INET6)
                inet_ntop (ss.ss_family, raw, ip, sizeof ip);
            s_refuse (d, ip, kind);
            return CURL_SOCKET_BAD;
        }
    }
    return socket (address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

/* libcurl's pre-request hook: the address the request goes to on the
 * connection actually used (new or reused), checked once more. */
static int
s_prereq (void *arg, char *primary_ip, char *local_ip, int primary_port, int local_port)
{
    (void) local_ip;
    (void) primary_port;
    (void) local_port;
    s_download_t *d = arg;
    if (d->allow_private)
        return CURL_PREREQFUNC_OK;
    gw_addr_kind_t kind = gw_download_classify_text (primary_ip);
    if (kind == GW_ADDR_PUBLIC)
        return CURL_PREREQFUNC_OK;
    s_refuse (d, primary_ip ? primary_ip : "?", kind);
    return CURL_PREREQFUNC_ABORT;
}

static size_t
s_write (char *data, size_t size, size_t n, void *arg)
{
    s_download_t *d = arg;
    size_t len = size * n;
    if (d->received + (long long) len > d->max_bytes) {
        d->too_large = true;
        return 0;           /* stops the transfer now */
    }
    int rc = gw_fs_write_all (d->fd, data, len);
    if (rc) {
        d->write_errno = -rc;
        return 0;
    }
    d->received += (long long) len;
    atomic_store (&d->bytes, d->received);
    return len;
}

static int
s_xferinfo (void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
            curl_off_t ulnow)
{
    (void) dlnow;
    (void) ultotal;
    (void) ulnow;
    s_download_t *d = arg;
    if (atomic_load (&d->abort))
        return 1;
    int64_t now = jp_time_now_ms ();
    if (d->progress && now - d->last_progress_ms >= S_PROGRESS_MS) {
        d->last_progress_ms = now;
        atomic_store (&d->total, (long long) dltotal);
        gw_server_call (d->server, s_on_progress, (void *) (uintptr_t) d->serial);
    }
    return 0;
}

static void
s_result (s_download_t *d, gw_download_status_t status, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static void
s_result (s_download_t *d, gw_download_status_t status, const char *fmt, ...)
{
    d->result.status = status;
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (d->result.message, sizeof d->result.message, fmt, ap);
    va_end (ap);
}

/* The host part of the URL, for messages (never user:password). */
static void
s_host_of (const char *url, char *out, size_t len)
{
    snprintf (out, len, "?");
    CURLU *u = curl_url ();
    char *host = NULL;
    if (u && curl_url_set (u, CURLUPART_URL, url, 0) == CURLUE_OK
        && curl_url_get (u, CURLUPART_HOST, &host, 0) == CURLUE_OK)
        snprintf (out, len, "%s", host);
    curl_free (host);
    curl_url_cleanup (u);
}

/* Turns libcurl's outcome into the result's status and sentence. */
static void
s_explain (s_download_t *d, CURL *curl, CURLcode code, const char *errbuf)
{
    char host[256];
    s_host_of (d->url, host, sizeof host);
    long http = 0;
    curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &http);
    d->result.http_code = http;
    int abort_why = atomic_load (&d->abort);
    if (abort_why == S_SHUTDOWN)
        s_result (d, GW_DOWNLOAD_SHUTDOWN, "the gateway is shutting down; try again when it "
                  "is back");
    else if (abort_why == S_CANCELLED)
        s_result (d, GW_DOWNLOAD_CANCELLED, "the download was cancelled");
    else if (d->result.refused_ip[0])
        s_result (d, GW_DOWNLOAD_REFUSED,
                  "refused to connect to %s: it is %s, and upload_file only fetches from "
                  "public internet addresses (this guards the server's own network). Use a "
                  "public URL, or ask the operator to set CODEBOX_DOWNLOAD_ALLOW_PRIVATE=1 "
                  "to allow private and local addresses", d->result.refused_ip,
                  gw_download_kind_text (d->result.refused_kind));
    else if (d->too_large || code == CURLE_FILESIZE_EXCEEDED)
        s_result (d, GW_DOWNLOAD_TOO_LARGE, "the file is larger than the limit of %lld bytes "
                  "(CODEBOX_MAX_DOWNLOAD_SIZE, the X-Codebox-Max-Download-Size header or the "
                  "session's disk quota); the download was stopped. Fetch a smaller file",
                  d->max_bytes);
    else if (d->write_errno)
        s_result (d, GW_DOWNLOAD_IO, "cannot write the file into input/: %s",
                  strerror (d->write_errno));
    else if (code == CURLE_OPERATION_TIMEDOUT)
        s_result (d, GW_DOWNLOAD_TIMEOUT, "the download from %s did not finish within %ld "
                  "seconds (CODEBOX_DOWNLOAD_TIMEOUT) and was stopped; try a faster source or "
                  "a smaller file", host, d->timeout_s);
    else if (code == CURLE_TOO_MANY_REDIRECTS)
        s_result (d, GW_DOWNLOAD_BAD_URL, "more than %d redirects from %s; give the final URL",
                  GW_DOWNLOAD_MAX_REDIRECTS, host);
    else if (code == CURLE_UNSUPPORTED_PROTOCOL)
        s_result (d, GW_DOWNLOAD_BAD_URL, "the URL (or a redirect) is not http or https; only "
                  "http and https URLs can be downloaded");
    else if (code == CURLE_URL_MALFORMAT)
        s_result (d, GW_DOWNLOAD_BAD_URL, "the URL is malformed (%s)", errbuf);
    else if (code == CURLE_HTTP_RETURNED_ERROR)
        s_result (d, GW_DOWNLOAD_HTTP_ERROR, "the server at %s answered HTTP %ld; check the URL",
                  host, http);
    else if (code == CURLE_COULDNT_RESOLVE_HOST)
        s_result (d, GW_DOWNLOAD_NETWORK, "cannot resolve the host name %s; check the URL",
                  host);
    else
        s_result (d, GW_DOWNLOAD_NETWORK, "the download from %s failed: %s", host,
                  *errbuf ? errbuf : curl_easy_strerror (code));
}

/* Renames the temporary file to name, or name-1, name-2... whichever is
 * free, never replacing a file. */
static void
s_place (s_download_t *d)
{
    char name[GW_DOWNLOAD_NAME_MAX + 1];
    snprintf (name, sizeof name, "%s", d->name);
    for (unsigned n = 1; n <= S_MAX_SUFFIX; n++) {
        int rc = renameat2 (d->dirfd, d->tmp_name, d->dirfd, name, RENAME_NOREPLACE);
        if (rc < 0 && (errno == EINVAL || errno == ENOSYS)) {
            /* no RENAME_NOREPLACE on this file system: a hard link fails
               the same way on an existing name */
            rc = linkat (d->dirfd, d->tmp_name, d->dirfd, name, 0);
            if (rc == 0)
                unlinkat (d->dirfd, d->tmp_name, 0);
        }
        if (rc == 0) {
            snprintf (d->result.name, sizeof d->result.name, "%s", name);
            return;
        }
        if (errno != EEXIST) {
            s_result (d, GW_DOWNLOAD_IO, "cannot save the file as input/%s: %s", name,
                      strerror (errno));
            return;
        }
        gw_download_suffixed (d->name, n, name, sizeof name);
    }
    s_result (d, GW_DOWNLOAD_IO, "too many files named like input/%s; remove some", d->name);
}

static void
s_transfer (s_download_t *d)
{
    char errbuf[CURL_ERROR_SIZE] = "";
    CURL *curl = curl_easy_init ();
    if (!curl) {
        s_result (d, GW_DOWNLOAD_IO, "out of memory");
        return;
    }
    curl_easy_setopt (curl, CURLOPT_URL, d->url);
    curl_easy_setopt (curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt (curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt (curl, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt (curl, CURLOPT_MAXREDIRS, (long) GW_DOWNLOAD_MAX_REDIRECTS);
    curl_easy_setopt (curl, CURLOPT_TIMEOUT_MS, d->timeout_s * 1000L);
    curl_easy_setopt (curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt (curl, CURLOPT_PROXY, "");         /* never a proxy from the environment */
    curl_easy_setopt (curl, CURLOPT_OPENSOCKETFUNCTION, s_open_socket);
    curl_easy_setopt (curl, CURLOPT_OPENSOCKETDATA, d);
    curl_easy_setopt (curl, CURLOPT_PREREQFUNCTION, s_prereq);
    curl_easy_setopt (curl, CURLOPT_PREREQDATA, d);
    curl_easy_setopt (curl, CURLOPT_WRITEFUNCTION, s_write);
    curl_easy_setopt (curl, CURLOPT_WRITEDATA, d);
    curl_easy_setopt (curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t) d->max_bytes);
    curl_easy_setopt (curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt (curl, CURLOPT_XFERINFOFUNCTION, s_xferinfo);
    curl_easy_setopt (curl, CURLOPT_XFERINFODATA, d);
    curl_easy_setopt (curl, CURLOPT_FAILONERROR, 1L);
    curl_easy_setopt (curl, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt (curl, CURLOPT_USERAGENT, "codebox/" CODEBOX_VERSION);
    CURLcode code = curl_easy_perform (curl);
    if (code != CURLE_OK)
        s_explain (d, curl, code, errbuf);
    else {
        const char *type = NULL;
        char *final_url = NULL;
        curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &d->result.http_code);
        curl_easy_getinfo (curl, CURLINFO_CONTENT_TYPE, &type);
        curl_easy_getinfo (curl, CURLINFO_EFFECTIVE_URL, &final_url);
        size_t k = 0;
        for (; type && *type && k + 1 < sizeof d->result.content_type; type++)
            if (*type >= 0x20 && *type < 0x7f)      /* printable ASCII only */
                d->result.content_type[k++] = *type;
        d->result.content_type[k] = '\0';
        if (d->name_from_url && final_url)
            gw_download_name_from_url (final_url, d->name, sizeof d->name);
        d->result.size = d->received;
        d->result.status = GW_DOWNLOAD_OK;
        s_place (d);
    }
    curl_easy_cleanup (curl);
}

static void *
s_worker_main (void *arg)
{
    s_download_t *d = arg;
    s_transfer (d);
    if (d->result.status != GW_DOWNLOAD_OK)
        unlinkat (d->dirfd, d->tmp_name, 0);
    close (d->fd);
    d->fd = -1;
    close (d->dirfd);
    d->dirfd = -1;
    /* hand the result back; the loop joins this thread */
    for (int i = 0; i < 200; i++) {
        if (gw_server_call (d->server, s_deliver, (void *) (uintptr_t) d->serial) == 0)
            break;
        nanosleep (&(struct timespec) {.tv_nsec = 10 * 1000 * 1000}, NULL);
    }
    return NULL;
}

/* ---- public ------------------------------------------------------------- */

gw_downloads_t *
gw_downloads_new (gw_server_t *server)
{
    gw_downloads_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->server = server;
    self->next_serial = 1;
    return self;
}

void
gw_downloads_destroy (gw_downloads_t **self_p)
{
    gw_downloads_t *self = *self_p;
    if (!self)
        return;
    gw_downloads_stop (self);
    free (self);
    *self_p = NULL;
}

long
gw_downloads_share (gw_downloads_t *self)
{
    return gw_config_share (gw_server_config (self->server), GW_DOWNLOAD_MAX_ACTIVE);
}

int
gw_download_start (gw_downloads_t *self, const gw_download_request_t *request,
                   gw_download_done_fn *done, gw_download_progress_fn *progress, void *arg)
{
    if (self->n_active >= GW_DOWNLOAD_MAX_ACTIVE)
        return -EAGAIN;
    const char *tenant = request->tenant ? request->tenant : "";
    long mine = 0;
    for (s_download_t *d = self->active; d; d = d->next)
        mine += strcmp (d->tenant, tenant) == 0;
    if (mine >= gw_downloads_share (self))
        return -EDQUOT;
    pthread_once (&s_curl_once, s_curl_init);
    s_download_t *d = calloc (1, sizeof *d);
    if (!d || !(d->url = strdup (request->url))) {
        free (d);
        return -ENOMEM;
    }
    snprintf (d->tenant, sizeof d->tenant, "%s", tenant);
    d->serial = self->next_serial++;
    d->server = self->server;
    d->dirfd = request->dirfd;
    d->fd = request->fd;
    snprintf (d->tmp_name, sizeof d->tmp_name, "%s", request->tmp_name);
    snprintf (d->name, sizeof d->name, "%s", request->name);
    d->name_from_url = request->name_from_url;
    d->max_bytes = request->max_bytes;
    d->timeout_s = request->timeout_s;
    d->allow_private = request->allow_private;
    d->done = done;
    d->progress = progress;
    d->arg = arg;
    d->last_progress_ms = jp_time_now_ms ();
    atomic_init (&d->abort, S_GO_ON);
    atomic_init (&d->bytes, 0);
    atomic_init (&d->total, 0);
    int rc = pthread_create (&d->thread, NULL, s_worker_main, d);
    if (rc) {
        free (d->url);
        free (d);
        return -rc;
    }
    d->next = self->active;
    self->active = d;
    self->n_active++;
    return 0;
}

void
gw_downloads_stop (gw_downloads_t *self)
{
    if (!self)
        return;
    for (s_download_t *d = self->active; d; d = d->next)
        atomic_store (&d->abort, S_SHUTDOWN);
    while (self->active)
        s_finish (self, &self->active);
}
