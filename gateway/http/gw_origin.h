/* gw_origin: the browser boundary. A web page the user opens can send
 * requests to 127.0.0.1 (simple cross-origin POSTs need no preflight) and,
 * through DNS rebinding, make its own name point there. So every HTTP
 * request is judged by its Host and Origin headers before anything else:
 *
 *   Host   must be a loopback name or address (localhost, 127.0.0.0/8,
 *          [::1]), the host of CODEBOX_PUBLIC_URL, or the address the
 *          server is bound to when that is a specific one. Exact matches of
 *          the whole name, never prefixes. A request without Host (HTTP/1.0)
 *          passes.
 *   Origin absent: passes (curl, SDKs and agents send none). Otherwise it
 *          must be the gateway's own origin (http or https, a loopback name
 *          or address, the gateway's port), the origin of CODEBOX_PUBLIC_URL,
 *          or one of CODEBOX_ALLOWED_ORIGINS; those last ones get CORS
 *          headers. "null" and anything else is refused.
 *
 * Threads: built by the main thread, then read-only (libmicrohttpd's
 * threads judge requests with it). */
#ifndef GW_ORIGIN_H
#define GW_ORIGIN_H

#include <stdbool.h>
#include <stddef.h>

typedef struct gw_origin gw_origin_t;

typedef enum {
    GW_ORIGIN_REFUSED,          /* 403 */
    GW_ORIGIN_SAME,             /* no Origin, or the gateway's own: no CORS */
    GW_ORIGIN_CORS,             /* an allowed other origin: CORS headers */
} gw_origin_verdict_t;

/* public_url: CODEBOX_PUBLIC_URL or ""; allowed: CODEBOX_ALLOWED_ORIGINS
 * (comma-separated origins) or ""; bind_host: the --host as given (a
 * specific non-loopback address is accepted as Host). NULL with err set
 * when an allowed origin is not of the form scheme://host[:port]. */
gw_origin_t *gw_origin_new (const char *public_url, const char *allowed, const char *bind_host,
                            char *err, size_t err_len);
void gw_origin_destroy (gw_origin_t **self_p);

/* The port the gateway listens on (its own origins carry it). */
void gw_origin_set_port (gw_origin_t *self, int port);

/* Judges a request's Host and Origin (either may be NULL). On refusal
 * writes why into why. */
gw_origin_verdict_t gw_origin_check (const gw_origin_t *self, const char *host,
                                     const char *origin, char *why, size_t why_len);

/* Normalises an origin "scheme://host[:port]" into out: lower case, the
 * default port dropped, no trailing slash. Returns false when origin is
 * not of that form (a path, user info, another scheme than http/https). */
bool gw_origin_normalise (const char *origin, char *out, size_t out_len);

/* True when host (no port, IPv6 in brackets) is localhost, an address in
 * 127.0.0.0/8, or [::1]. */
bool gw_origin_is_loopback_host (const char *host);

#endif
