/* gw_download: fetching a URL into a session's input/ folder for the
 * upload_file tool, safely.
 *
 * - Only http and https, on the first URL and on every redirect (at most
 *   GW_DOWNLOAD_MAX_REDIRECTS of them).
 * - Unless private addresses are allowed, every connection is checked on
 *   the address it is about to connect to (libcurl's open-socket hook, so
 *   every redirect hop and every address of a name is checked, and DNS
 *   rebinding between a check and the connect has no gap): loopback,
 *   private (RFC 1918, IPv6 ULA), link-local, CGNAT, multicast,
 *   unspecified, broadcast and reserved ranges are refused, in both IP
 *   families and inside IPv4-mapped, NAT64 and 6to4 IPv6 addresses. No
 *   proxy is used (a proxy would make the check meaningless).
 * - The size limit and the timeout hold while the bytes stream in: the
 *   transfer stops as soon as the size passes the limit.
 * - The bytes go to a hidden temporary file in the folder, which is then
 *   renamed (atomically, never over an existing file) to the sanitised
 *   name, with "-1", "-2"... before the extension on a collision.
 *
 * The transfer runs on a worker thread of its own; the loop thread gets
 * the result through gw_server_call. Pure helpers (address classes, names)
 * are in gw_download_policy.c.
 *
 * The downloads of a server are one object (gw_downloads_t), made by the
 * program's features and reached through gw_server_downloads.
 *
 * Threads: gw_download_start and gw_downloads_stop are for the loop
 * thread; done and progress run in the loop thread; the pure helpers may
 * run anywhere. */
#ifndef GW_DOWNLOAD_H
#define GW_DOWNLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

typedef struct gw_server gw_server_t;
typedef struct gw_downloads gw_downloads_t;

#define GW_DOWNLOAD_MAX_REDIRECTS 5
#define GW_DOWNLOAD_MAX_ACTIVE 16       /* downloads at once, all sessions; a tenant its share */
#define GW_DOWNLOAD_NAME_MAX 200        /* bytes of a saved file name */
#define GW_DOWNLOAD_URL_MAX 8192

/* ---- pure helpers (gw_download_policy.c) -------------------------------- */

/* What an address is, for the SSRF check. Only GW_ADDR_PUBLIC may be
 * fetched unless private addresses are allowed. */
typedef enum {
    GW_ADDR_PUBLIC = 0,
    GW_ADDR_LOOPBACK,           /* 127/8, ::1 */
    GW_ADDR_PRIVATE,            /* 10/8, 172.16/12, 192.168/16, fc00::/7, fec0::/10 */
    GW_ADDR_LINK_LOCAL,         /* 169.254/16, fe80::/10 */
    GW_ADDR_CGNAT,              /* 100.64/10 */
    GW_ADDR_MULTICAST,          /* 224/4, ff00::/8 */
    GW_ADDR_UNSPECIFIED,        /* 0/8, :: */
    GW_ADDR_BROADCAST,          /* 255.255.255.255 */
    GW_ADDR_RESERVED,           /* 240/4, 192.0.0/24, TEST-NETs, 198.18/15,
                                   2001:db8::/32, 100::/64, other non-unicast */
    GW_ADDR_INVALID,            /* not an IPv4 or IPv6 socket address */
} gw_addr_kind_t;

/* The class of a socket address (AF_INET or AF_INET6; len bytes). An
 * IPv6 address that carries an IPv4 one (::ffff:a.b.c.d, ::a.b.c.d,
 * 64:ff9b::/96, 2002::/16) is classed by the IPv4 address it carries. */
gw_addr_kind_t gw_download_classify (const struct sockaddr *addr, socklen_t len);

/* The same for an address in text ("10.0.0.1", "::1"); GW_ADDR_INVALID
 * when it is neither. */
gw_addr_kind_t gw_download_classify_text (const char *ip);

/* "a loopback address", "a private address"... (static). */
const char *gw_download_kind_text (gw_addr_kind_t kind);

/* Writes a safe file name made of len bytes of raw into out (out_len
 * bytes, at least GW_DOWNLOAD_NAME_MAX + 1): only the part after the last
 * '/' or '\', without control characters or NUL, invalid UTF-8 replaced
 * by '_', without leading dots or spaces or trailing spaces, at most
 * GW_DOWNLOAD_NAME_MAX bytes (cut on a character boundary, keeping a short
 * extension); "download" when nothing is left. */
void gw_download_safe_name (const char *raw, size_t len, char *out, size_t out_len);

/* The safe name (as above) of a URL's last path segment, percent-decoded;
 * "download" when the path ends in '/' or has none. */
void gw_download_name_from_url (const char *url, char *out, size_t out_len);

/* name with "-n" before its extension ("data.csv", 2 -> "data-2.csv";
 * "README" -> "README-2"), kept within GW_DOWNLOAD_NAME_MAX bytes. */
void gw_download_suffixed (const char *name, unsigned n, char *out, size_t out_len);

/* ---- the transfer (gw_download.c) --------------------------------------- */

typedef struct {
    const char *url;            /* http(s) URL, checked by the caller */
    int dirfd;                  /* the folder to save into (stolen: closed by the download) */
    int fd;                     /* a temporary file in it, open for writing (stolen) */
    const char *tmp_name;       /* the temporary file's name in dirfd */
    const char *name;           /* safe name to save as (gw_download_safe_name) */
    bool name_from_url;         /* name only a fallback: use the final URL's last segment */
    long long max_bytes;
    long timeout_s;
    bool allow_private;
    const char *tenant;         /* whose: a tenant runs at most its share of
                                   GW_DOWNLOAD_MAX_ACTIVE at once (NULL: "") */
} gw_download_request_t;

typedef enum {
    GW_DOWNLOAD_OK = 0,
    GW_DOWNLOAD_REFUSED,        /* the SSRF check refused an address */
    GW_DOWNLOAD_TOO_LARGE,
    GW_DOWNLOAD_TIMEOUT,
    GW_DOWNLOAD_BAD_URL,        /* a scheme or redirect that is not http(s), too many redirects */
    GW_DOWNLOAD_HTTP_ERROR,     /* the server answered 4xx/5xx */
    GW_DOWNLOAD_NETWORK,        /* name resolution, connection, TLS */
    GW_DOWNLOAD_IO,             /* writing or renaming the file */
    GW_DOWNLOAD_SHUTDOWN,       /* the gateway is stopping */
    GW_DOWNLOAD_CANCELLED,      /* progress asked to stop (the caller left) */
} gw_download_status_t;

typedef struct {
    gw_download_status_t status;
    char message[1024];         /* a sentence saying what happened and what to do */
    char name[GW_DOWNLOAD_NAME_MAX + 1];   /* the saved file's name in the folder */
    char content_type[256];     /* as the server said ("" when it did not) */
    long long size;
    long http_code;
    char refused_ip[64];        /* GW_DOWNLOAD_REFUSED: the address */
    gw_addr_kind_t refused_kind;
} gw_download_result_t;

/* Gets the result (borrowed; valid during the call) in the loop thread. */
typedef void (gw_download_done_fn) (const gw_download_result_t *result, void *arg);
/* Bytes received so far and the announced total (0: unknown), about once
 * a second while the transfer runs, in the loop thread. Returns false to
 * cancel the download (done then gets GW_DOWNLOAD_CANCELLED). */
typedef bool (gw_download_progress_fn) (long long bytes, long long total, void *arg);

/* The registry of a server's running downloads. NULL when out of memory. */
gw_downloads_t *gw_downloads_new (gw_server_t *server);

/* Stops what runs (gw_downloads_stop) and frees. */
void gw_downloads_destroy (gw_downloads_t **self_p);

/* Starts a download on a worker thread of its own. On success the
 * download owns request->dirfd and request->fd and will call done exactly
 * once (progress, when not NULL, before it); returns 0. Otherwise returns
 * -EAGAIN (GW_DOWNLOAD_MAX_ACTIVE already running), -EDQUOT (the tenant
 * runs its share of them, gw_downloads_share) or another negative errno,
 * and the caller still owns the descriptors. */
/* The downloads one tenant may run at once: its share of
 * GW_DOWNLOAD_MAX_ACTIVE (gw_config_share). */
long gw_downloads_share (gw_downloads_t *self);

int gw_download_start (gw_downloads_t *self, const gw_download_request_t *request,
                       gw_download_done_fn *done, gw_download_progress_fn *progress, void *arg);

/* Stops every download (each is told to abort and is joined) and calls
 * each one's done at once, with its result or GW_DOWNLOAD_SHUTDOWN. Call
 * it in the loop thread after gw_server_run returns and before anything
 * that done uses (the MCP core) is destroyed, and before gw_server_destroy. */
void gw_downloads_stop (gw_downloads_t *self);

#endif
