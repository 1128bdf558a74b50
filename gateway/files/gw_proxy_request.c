/* gw_proxy_request: the head of a request to the kernels' HTTP proxy and
 * the proxy's address rule. See gw_proxy_request.h. No I/O; any thread. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gw_proxy_request.h"

bool
gw_proxy_may_reach (gw_addr_kind_t kind, bool allow_private)
{
    switch (kind) {
    case GW_ADDR_PUBLIC:
        return true;
    case GW_ADDR_PRIVATE:
    case GW_ADDR_CGNAT:
    case GW_ADDR_RESERVED:
        return allow_private;
    default:
        return false;
    }
}

static gw_proxy_kind_t
s_fail (gw_proxy_request_t *req, gw_proxy_kind_t kind, const char *why)
{
    req->kind = kind;
    snprintf (req->why, sizeof req->why, "%s", why);
    return kind;
}

/* The end of the head (just past its empty line) in data, or 0. */
static size_t
s_head_end (const char *data, size_t len)
{
    for (size_t i = 0; i + 1 < len; i++) {
        if (data[i] != '\n')
            continue;
        if (data[i + 1] == '\n')
            return i + 2;
        if (i + 2 < len && data[i + 1] == '\r' && data[i + 2] == '\n')
            return i + 3;
    }
    return 0;
}

/* Reads "host:port" or "[v6]:port" (n bytes at s) into req; default_port
 * when the port is left out (0: the port is required). Returns 0 or -1. */
static int
s_authority (const char *s, size_t n, int default_port, gw_proxy_request_t *req)
{
    const char *host = s, *colon = NULL;
    size_t host_len;
    if (n && s[0] == '[') {
        const char *close = memchr (s, ']', n);
        if (!close)
            return -1;
        host = s + 1;
        host_len = (size_t) (close - host);
        size_t rest = n - (size_t) (close + 1 - s);
        if (rest && close[1] != ':')
            return -1;
        colon = rest ? close + 1 : NULL;
        for (size_t i = 0; i < host_len; i++)
            if (!isxdigit ((unsigned char) host[i]) && host[i] != ':' && host[i] != '.')
                return -1;
    } else {
        colon = memchr (s, ':', n);
        host_len = colon ? (size_t) (colon - s) : n;
        for (size_t i = 0; i < host_len; i++)
            if (!isalnum ((unsigned char) s[i]) && !strchr (".-_", s[i]))
                return -1;
    }
    if (host_len == 0 || host_len >= sizeof req->host)
        return -1;
    memcpy (req->host, host, host_len);
    req->host[host_len] = '\0';
    long port = default_port;
    if (colon) {
        size_t digits = n - (size_t) (colon + 1 - s);
        if (digits == 0 || digits > 5)
            return -1;
        port = 0;
        for (size_t i = 0; i < digits; i++) {
            if (!isdigit ((unsigned char) colon[1 + i]))
                return -1;
            port = port * 10 + (colon[1 + i] - '0');
        }
    }
    if (port < 1 || port > 65535)
        return -1;
    req->port = (int) port;
    return 0;
}

/* True for a header the proxy does not send on. */
static bool
s_dropped_header (const char *line, size_t len)
{
    static const char *const names[] = {"proxy-connection", "proxy-authorization",
                                        "connection", "keep-alive"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n = strlen (names[i]);
        if (len > n && line[n] == ':' && strncasecmp (line, names[i], n) == 0)
            return true;
    }
    return false;
}

/* Appends n bytes to out; false when out_len would be passed. */
static bool
s_put (char *out, size_t out_len, size_t *at, const char *s, size_t n)
{
    if (*at + n > out_len)
        return false;
    memcpy (out + *at, s, n);
    *at += n;
    return true;
}

/* The origin-form head of an absolute-form request: the request line with
 * path, the headers but the dropped ones, Host if missing, Connection:
 * close. */
static void
s_rewrite (const char *data, size_t method_len, const char *path, size_t path_len,
           const char *version, const char *headers, const char *end, char *out, size_t out_len,
           gw_proxy_request_t *req)
{
    size_t at = 0;
    bool ok = s_put (out, out_len, &at, data, method_len) && s_put (out, out_len, &at, " ", 1)
              && s_put (out, out_len, &at, path, path_len) && s_put (out, out_len, &at, " ", 1)
              && s_put (out, out_len, &at, version, 8) && s_put (out, out_len, &at, "\r\n", 2);
    bool has_host = false, dropping = false;
    for (const char *line = headers; ok && line < end;) {
        const char *nl = memchr (line, '\n', (size_t) (end - line));
        size_t len = (size_t) (nl - line);
        size_t text = len && line[len - 1] == '\r' ? len - 1 : len;
        if (text == 0)
            break;          /* the empty line: the head ends */
        bool folded = line[0] == ' ' || line[0] == '\t';
        if (!folded)
            dropping = s_dropped_header (line, text);
        if (!folded && text > 5 && strncasecmp (line, "host:", 5) == 0)
            has_host = true;
        if (!dropping)
            ok = s_put (out, out_len, &at, line, text) && s_put (out, out_len, &at, "\r\n", 2);
        line = nl + 1;
    }
    if (ok && !has_host) {
        char host[GW_PROXY_HOST_MAX + 32];
        bool v6 = strchr (req->host, ':') != NULL;
        int n = snprintf (host, sizeof host, "Host: %s%s%s:%d\r\n", v6 ? "[" : "", req->host,
                          v6 ? "]" : "", req->port);
        ok = s_put (out, out_len, &at, host, (size_t) n);
    }
    ok = ok && s_put (out, out_len, &at, "Connection: close\r\n\r\n", 21);
    if (!ok) {
        s_fail (req, GW_PROXY_BAD, "the request head is too long");
        return;
    }
    req->kind = GW_PROXY_FORWARD;
    req->rewritten_len = at;
}

void
gw_proxy_request_parse (const char *data, size_t len, char *out, size_t out_len,
                        gw_proxy_request_t *req)
{
    memset (req, 0, sizeof *req);
    size_t end = s_head_end (data, len < GW_PROXY_HEAD_MAX ? len : GW_PROXY_HEAD_MAX);
    if (!end) {
        if (len >= GW_PROXY_HEAD_MAX)
            s_fail (req, GW_PROXY_BAD, "the request head is longer than 16 KiB");
        return;     /* INCOMPLETE */
    }
    req->head_len = end;
    /* request line: METHOD SP TARGET SP HTTP/1.x */
    const char *nl = memchr (data, '\n', end);
    size_t line = (size_t) (nl - data);
    if (line && data[line - 1] == '\r')
        line--;
    const char *sp1 = memchr (data, ' ', line);
    const char *sp2 = sp1 ? memchr (sp1 + 1, ' ', line - (size_t) (sp1 + 1 - data)) : NULL;
    const char *version = sp2 ? sp2 + 1 : NULL;
    if (!sp1 || !sp2 || sp1 == data || sp2 == sp1 + 1
        || (size_t) (data + line - version) != 8
        || (strncmp (version, "HTTP/1.1", 8) != 0 && strncmp (version, "HTTP/1.0", 8) != 0)) {
        s_fail (req, GW_PROXY_BAD, "not an HTTP/1.x request line");
        return;
    }
    size_t method_len = (size_t) (sp1 - data);
    for (size_t i = 0; i < method_len; i++)
        if (!isupper ((unsigned char) data[i])) {
            s_fail (req, GW_PROXY_BAD, "not an HTTP method");
            return;
        }
    const char *target = sp1 + 1;
    size_t target_len = (size_t) (sp2 - target);
    if (method_len == 7 && strncmp (data, "CONNECT", 7) == 0) {
        if (s_authority (target, target_len, 0, req) < 0)
            s_fail (req, GW_PROXY_BAD, "CONNECT names host:port");
        else
            req->kind = GW_PROXY_TUNNEL;
        return;
    }
    if (target_len >= 8 && strncasecmp (target, "https://", 8) == 0) {
        s_fail (req, GW_PROXY_UNSUPPORTED,
                "https:// goes through CONNECT (HTTPS_PROXY), not as a plain request");
        return;
    }
    if (target_len < 7 || strncasecmp (target, "http://", 7) != 0) {
        s_fail (req, GW_PROXY_BAD, "a proxy request names an absolute http:// URL or CONNECT "
                "host:port");
        return;
    }
    const char *authority = target + 7;
    size_t rest = target_len - 7, auth_len = strcspn (authority, "/?# ");
    if (auth_len > rest)
        auth_len = rest;
    if (memchr (authority, '@', auth_len) || s_authority (authority, auth_len, 80, req) < 0) {
        s_fail (req, GW_PROXY_BAD, "the URL's host is not a plain host[:port]");
        return;
    }
    const char *path = authority + auth_len;
    size_t path_len = rest - auth_len;
    if (path_len == 0)
        path = "/", path_len = 1;
    else if (path[0] != '/')
        path_len = 0;   /* "?q" or "#f" after the host: origin form needs a "/" */
    if (path_len == 0) {
        s_fail (req, GW_PROXY_BAD, "the URL's path must start with /");
        return;
    }
    s_rewrite (data, method_len, path, path_len, version, nl + 1, data + end, out, out_len,
               req);
}
