/* gw_proxy_request: the pure part of the kernels' network proxy
 * (gateway/cmd/gw_cmd_kernel_net.c, CODEBOX_NETWORK=on): reading the head
 * of a request a kernel sends to its HTTP proxy, and which addresses that
 * proxy may connect to.
 *
 * Two kinds of request reach a forward proxy: `CONNECT host:port HTTP/1.1`
 * (HTTPS and any other TCP, the tunnel passes bytes unchanged) and a plain
 * HTTP request in absolute form (`GET http://host:port/path HTTP/1.1`),
 * which the proxy sends on in origin form (`GET /path HTTP/1.1`), without
 * the Proxy-* headers and with `Connection: close` (one request per
 * connection: the next one would name another host).
 *
 * No I/O, no allocation; any thread. */
#ifndef GW_PROXY_REQUEST_H
#define GW_PROXY_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

#include "gw_download.h"

#define GW_PROXY_HEAD_MAX 16384     /* bytes of a request head */
#define GW_PROXY_HOST_MAX 256       /* bytes of a host name, with its NUL */

typedef enum {
    GW_PROXY_INCOMPLETE = 0,        /* no end of head yet: read more */
    GW_PROXY_TUNNEL,                /* CONNECT: answer 200, then pass bytes */
    GW_PROXY_FORWARD,               /* absolute-form HTTP: send `rewritten` */
    GW_PROXY_BAD,                   /* answer 400 with `why` */
    GW_PROXY_UNSUPPORTED,           /* answer 501 with `why` (https:// not tunnelled...) */
} gw_proxy_kind_t;

typedef struct {
    gw_proxy_kind_t kind;
    char host[GW_PROXY_HOST_MAX];   /* without brackets for IPv6 literals */
    int port;
    size_t head_len;                /* bytes of the input the head took */
    size_t rewritten_len;           /* bytes of the head to send (FORWARD) */
    char why[160];
} gw_proxy_request_t;

/* Reads the request head in data (len bytes so far). For FORWARD, writes
 * the head to send into out (out_len bytes, at least len + 32); the bytes
 * after head_len (a body's start) go on as they are. */
void gw_proxy_request_parse (const char *data, size_t len, char *out, size_t out_len,
                             gw_proxy_request_t *req);

/* True when kernel code may reach an address of this kind: public ones;
 * with allow_private also private, carrier-grade NAT and reserved ones
 * (test networks stand for private ones in many labs). Never loopback,
 * link-local (cloud metadata), unspecified, multicast or broadcast: those
 * are the host's, not the network's. The caller also refuses the host's
 * own addresses, whatever their kind. */
bool gw_proxy_may_reach (gw_addr_kind_t kind, bool allow_private);

#endif
