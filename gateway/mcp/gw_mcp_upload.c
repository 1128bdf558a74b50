/* gw_mcp_upload: the upload_file MCP tool: downloads an http(s) URL into
 * the session's input/ folder (gw_download does the transfer, on a worker
 * thread, with its SSRF check, size limit and timeout) and answers with
 * saved_path (the path kernel code opens), size and content_type.
 *
 * The tool takes the reply over: the call is registered in the MCP core's
 * call list (with no job), so the client leaving (as the transport sees
 * it), notifications/cancelled and the end of the MCP session end the
 * reply as they do for an execution, and SSE keep-alives flow while the
 * download runs. The download is then stopped at its next progress tick
 * (within about a second). The answer goes out when gw_download hands the
 * result back, unless the reply was ended first. A client of the plain
 * JSON mode that goes away is not seen until the answer is written (the
 * HTTP layer suspends its connection); the download then runs to its end
 * and its file stays in input/. gw_download_shutdown (run before the MCP
 * core is destroyed) answers the downloads still running.
 *
 * Threads: the loop thread only. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

#include "gw_artifacts.h"
#include "gw_id.h"
#include "gw_download.h"
#include "gw_mcp_call.h"
#include "gw_mcp_tools.h"
#include "gw_mcp_upload.h"
#include "gw_path.h"
#include "gw_sandbox.h"
#include "gw_session.h"
#include "jp_random.h"
#include "jp_time.h"
#include "jp_log.h"

/* One upload_file call while its download runs. */
typedef struct {
    gw_mcp_call_t *call;        /* in mcp->calls; job NULL */
    char session_id[GW_ID_SIZE];
    char tenant[GW_ID_SIZE];
    char visible_input[1040];
    char host[256];
    int64_t started_ms;
} s_upload_t;

static const char *const s_status_names[] = {
    "ok", "refused", "too-large", "timeout", "bad-url", "http-error", "network", "io",
    "shutdown", "cancelled",
};


/* Progress of the download: a notification when the caller asked for
 * them; false (stop) once the caller left or cancelled. Its progress is
 * the bytes so far; while no byte comes, the MCP core's heartbeats keep
 * the client waiting (and raise the value by a fraction each time, so a
 * byte count goes out only when it is above the last value sent). */
static bool
s_progress (long long bytes, long long total, void *arg)
{
    s_upload_t *up = arg;
    gw_mcp_call_t *call = up->call;
    if (!call->reply || call->cancelled)
        return false;
    if (!call->reply->can_stream || !call->progress_token || (double) bytes <= call->progress)
        return true;    /* progress must grow from one notification to the next */
    char text[128];
    int n;
    if (total > 0)
        n = snprintf (text, sizeof text, "downloaded %lld of %lld bytes", bytes, total);
    else
        n = snprintf (text, sizeof text, "downloaded %lld bytes", bytes);
    gw_mcp_call_progress (call, (double) bytes, total > 0 ? (double) total : 0, text,
                          (size_t) n);
    return true;
}

static void
s_done (const gw_download_result_t *result, void *arg)
{
    s_upload_t *up = arg;
    gw_mcp_call_t *call = up->call;
    int64_t ms = jp_time_now_ms () - up->started_ms;
    char saved[1300];
    snprintf (saved, sizeof saved, "%s/%s", up->visible_input, result->name);
    if (result->status == GW_DOWNLOAD_OK)
        jp_log_info ("download event=saved session=%s host=%s bytes=%lld ms=%lld "
                 "file=%s", up->session_id, up->host, result->size, (long long) ms,
                 result->name);
    else
        jp_log_warn ("download event=failed session=%s host=%s reason=%s http=%ld "
                 "ms=%lld%s%s", up->session_id, up->host,
                 (unsigned) result->status < sizeof s_status_names / sizeof s_status_names[0]
                     ? s_status_names[result->status] : "?",
                 result->http_code, (long long) ms, result->refused_ip[0] ? " refused=" : "",
                 result->refused_ip);
    if (call->reply && !call->cancelled) {
        json_t *answer;
        if (result->status == GW_DOWNLOAD_OK) {
            const char *type = result->content_type[0] ? result->content_type
                                                       : gw_mime_for_path (result->name);
            char text[2200];
            snprintf (text, sizeof text, "Downloaded %lld bytes to %s (%s). Code in the session "
                      "can open it as input/%s.", result->size, saved, type, result->name);
            answer = gw_mcp_tool_ok (json_pack ("{s:s, s:s, s:I, s:s, s:s}", "saved_path", saved,
                                                "filename", result->name, "size",
                                                (json_int_t) result->size, "content_type", type,
                                                "session_id", up->session_id),
                                     text);
        } else
            answer = gw_mcp_tool_error ("%s", result->message);
        gw_mcp_call_answer (call, answer);
    } else if (result->status == GW_DOWNLOAD_OK)
        jp_log_info ("download event=unanswered session=%s file=%s (the caller "
                 "left; the file stays in input/)", up->session_id, result->name);
    gw_mcp_call_drop (call);
    free (up);
}

/* A tool error when url is not an absolute http(s) URL with a host. */
static json_t *
s_check_url (const char *url, char *host, size_t host_len)
{
    if (strlen (url) > GW_DOWNLOAD_URL_MAX)
        return gw_mcp_tool_error ("the URL is longer than %d bytes", GW_DOWNLOAD_URL_MAX);
    CURLU *u = curl_url ();
    char *scheme = NULL, *h = NULL;
    json_t *error = NULL;
    if (!u)
        error = gw_mcp_tool_error ("out of memory");
    else if (curl_url_set (u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK
             || curl_url_get (u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK)
        error = gw_mcp_tool_error ("'%.200s' is not a valid URL; give an absolute http or https "
                                   "URL such as https://example.com/data.csv", url);
    else if (strcasecmp (scheme, "http") != 0 && strcasecmp (scheme, "https") != 0)
        error = gw_mcp_tool_error ("%s:// URLs are not allowed: only http and https URLs can be "
                                   "downloaded", scheme);
    else if (curl_url_get (u, CURLUPART_HOST, &h, 0) != CURLUE_OK || !h || !*h)
        error = gw_mcp_tool_error ("the URL has no host; give an absolute http or https URL");
    else
        snprintf (host, host_len, "%s", h);
    curl_free (scheme);
    curl_free (h);
    curl_url_cleanup (u);
    return error;
}

/* Opens the session's input/ folder (made again if code removed it),
 * never leaving the session folder. Returns its descriptor or -errno. */
static int
s_open_input (gw_session_t *session)
{
    int workdir = open (gw_session_workdir (session), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (workdir < 0)
        return -errno;
    bool made = mkdirat (workdir, "input", 0755) == 0;
    int fd = gw_path_open_beneath (workdir, "input", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    close (workdir);
    if (fd >= 0 && made)
        gw_sandbox_own_fd (gw_server_sandbox (gw_session_server (session)), fd);
    return fd;
}

static json_t *
s_upload_file (gw_mcp_ctx_t *ctx, json_t *args)
{
    json_t *error = NULL;
    const char *url = gw_mcp_arg (args, "url", &error);
    const char *blob_url = gw_mcp_arg (args, "blob_url", &error);     /* Code Box's name */
    const char *filename = gw_mcp_arg (args, "filename", &error);
    char host[256] = "";
    if (!error && url && blob_url && strcmp (url, blob_url) != 0)
        error = gw_mcp_tool_error ("give url or blob_url, not two different addresses");
    if (!url)
        url = blob_url;
    if (!error && !url)
        error = gw_mcp_tool_error ("url is required: the http or https address of the file "
                                   "(blob_url is taken too)");
    if (!error)
        error = s_check_url (url, host, sizeof host);
    gw_session_t *session = error ? NULL : gw_mcp_session (ctx, args, true, &error);
    if (error)
        return error;
    const gw_config_t *config = gw_server_config (ctx->mcp->server);

    /* the limit: the server's, lowered by the client's header and by the
       room left in the session's folder (its quota, its own file system's
       free space, as a PUT of REST measures it) */
    long long max = gw_caller_clamp (ctx->overrides ? ctx->overrides->max_download_size : 0,
                                       gw_config_int (config, GW_SET_MAX_DOWNLOAD_SIZE));
    long long room = gw_session_disk_room (session);
    if (room <= 0)
        return gw_mcp_tool_error ("the session folder is full (CODEBOX_DISK_QUOTA_MB is %lld "
                                  "MiB); delete files before downloading more",
                                  (long long) gw_config_int (config, GW_SET_DISK_QUOTA_MB));
    if (room < max)
        max = room;

    char name[GW_DOWNLOAD_NAME_MAX + 1] = "download";
    if (filename)
        gw_download_safe_name (filename, json_string_length (json_object_get (args, "filename")),
                               name, sizeof name);

    int dirfd = s_open_input (session);
    if (dirfd < 0)
        return gw_mcp_tool_error ("cannot open the session's input/ folder: %s",
                                  dirfd == -EXDEV || dirfd == -ELOOP
                                      ? "it leads outside the session folder"
                                      : strerror (-dirfd));
    uint8_t rnd[8];
    jp_random_bytes (rnd, sizeof rnd);
    char tmp[64];
    snprintf (tmp, sizeof tmp, ".upload-%02x%02x%02x%02x%02x%02x%02x%02x.part", rnd[0], rnd[1],
              rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
    int fd = openat (dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        int e = errno;
        close (dirfd);
        return gw_mcp_tool_error ("cannot create a file in input/: %s", strerror (e));
    }
    gw_sandbox_own_fd (gw_server_sandbox (ctx->mcp->server), fd);

    s_upload_t *up = calloc (1, sizeof *up);
    gw_mcp_call_t *call = up ? calloc (1, sizeof *call) : NULL;
    int rc = -ENOMEM;
    if (call) {
        up->call = call;
        snprintf (up->session_id, sizeof up->session_id, "%s", gw_session_id (session));
        snprintf (up->tenant, sizeof up->tenant, "%s", gw_session_tenant (session));
        snprintf (up->visible_input, sizeof up->visible_input, "%s", gw_session_visible_input (session));
        snprintf (up->host, sizeof up->host, "%s", host);
        up->started_ms = jp_time_now_ms ();
        gw_download_request_t request = {
            .url = url,
            .dirfd = dirfd,
            .fd = fd,
            .tmp_name = tmp,
            .name = name,
            .name_from_url = !filename,
            .max_bytes = max,
            .timeout_s = gw_config_int (config, GW_SET_DOWNLOAD_TIMEOUT),
            .allow_private = gw_config_bool (config, GW_SET_DOWNLOAD_ALLOW_PRIVATE),
            .tenant = gw_session_tenant (session),
        };
        gw_downloads_t *downloads = gw_server_downloads (ctx->mcp->server);
        rc = downloads ? gw_download_start (downloads, &request, s_done, s_progress, up)
                       : -ESHUTDOWN;
    }
    if (rc) {
        unlinkat (dirfd, tmp, 0);
        close (fd);
        close (dirfd);
        free (call);
        free (up);
        if (rc == -EAGAIN)
            return gw_mcp_tool_error ("%d downloads are already running; try again in a "
                                      "moment", GW_DOWNLOAD_MAX_ACTIVE);
        if (rc == -EDQUOT)      /* downloads exist: only they say so */
            return gw_mcp_tool_error ("tenant '%s' runs %ld downloads, its share of the %d "
                                      "the server runs at once (CODEBOX_TENANT_MAX_SESSIONS); "
                                      "try again when one has ended", gw_session_tenant (session),
                                      gw_downloads_share (gw_server_downloads (ctx->mcp->server)),
                                      GW_DOWNLOAD_MAX_ACTIVE);
        return gw_mcp_tool_error ("cannot start the download: %s", strerror (-rc));
    }
    /* the reply is ours now: answered in s_done */
    gw_mcp_call_attach (call, ctx);
    jp_log_info ("download event=started session=%s host=%s max_bytes=%lld",
             gw_session_id (session), host, max);
    return NULL;
}

const gw_mcp_tool_t gw_mcp_tool_upload_file = {
    "upload_file", "Download a URL into a session",
    "Download a file from an http or https URL into the session's input/ folder so code in "
    "the session can read it. Returns saved_path (the path code opens), size and "
    "content_type. Only public internet addresses are fetched; size and time are limited. "
    "An existing file is never replaced: a new one of the same name gets -1, -2... before "
    "its extension.",
    "{\"type\": \"object\", \"properties\": {\"session_id\": {\"type\": \"string\", "
    "\"x-mcp-header\": \"Session-Id\", "
    "\"description\": \"Your session's name, 1-64 characters of A-Z a-z 0-9 _ . - (for "
    "example 'main'); created on first use.\"}, \"url\": {\"type\": \"string\", "
    "\"description\": \"The http or https URL of the file.\"}, \"blob_url\": {\"type\": "
    "\"string\", \"description\": \"The same as url (Code Box's name for it, such as a blob "
    "SAS URL).\"}, \"filename\": {\"type\": "
    "\"string\", \"description\": \"Name to save it as in input/ (default: the last part of "
    "the URL's path).\"}}, \"required\": [\"session_id\"]}",
    "{\"type\": \"object\", \"properties\": {\"saved_path\": {\"type\": \"string\"}, "
    "\"filename\": {\"type\": \"string\"}, \"size\": {\"type\": \"integer\"}, "
    "\"content_type\": {\"type\": \"string\"}, \"session_id\": {\"type\": \"string\"}}}",
    /* fetches from the internet; never replaces a file, but each call adds one */
    {.read_only = false, .destructive = false, .idempotent = false, .world = GW_MCP_WORLD_OPEN},
    s_upload_file,
};
