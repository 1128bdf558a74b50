/* gw_origin: Host and Origin checks against cross-origin requests and DNS
 * rebinding (see gw_origin.h). Threads: any, read-only after set-up. */
#include "gw_origin.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_ALLOWED 32
#define ORIGIN_LEN 300

struct gw_origin {
    int port;
    char public_origin[ORIGIN_LEN];     /* normalised, or "" */
    char public_host[ORIGIN_LEN];       /* host of the public URL, or "" */
    char bind_host[ORIGIN_LEN];         /* a specific bind address, or "" */
    char allowed[MAX_ALLOWED][ORIGIN_LEN];
    int n_allowed;
};

/* Splits "host[:port]" (host may be [IPv6]) into host (lower case) and
 * port (-1 when absent). False when malformed. */
static bool
s_split_authority (const char *text, size_t len, char *host, size_t host_len, int *port)
{
    *port = -1;
    if (len == 0)
        return false;
    size_t host_end;
    if (text[0] == '[') {
        const char *close = memchr (text, ']', len);
        if (!close)
            return false;
        host_end = (size_t) (close - text) + 1;
    } else {
        host_end = 0;
        while (host_end < len && text[host_end] != ':')
            host_end++;
    }
    if (host_end == 0 || host_end >= host_len)
        return false;
    for (size_t i = 0; i < host_end; i++) {
        unsigned char ch = (unsigned char) text[i];
        if (ch <= ' ' || ch == '/' || ch == '@' || ch == '\\' || ch >= 0x7f)
            return false;
        host[i] = (char) tolower (ch);
    }
    host[host_end] = '\0';
    if (host_end == len)
        return true;
    if (text[host_end] != ':' || host_end + 1 == len || len - host_end - 1 > 5)
        return false;
    int value = 0;
    for (size_t i = host_end + 1; i < len; i++) {
        if (!isdigit ((unsigned char) text[i]))
            return false;
        value = value * 10 + (text[i] - '0');
    }
    if (value > 65535)
        return false;
    *port = value;
    return true;
}

/* Parses "scheme://host[:port]" (an optional trailing "/" allowed). */
static bool
s_parse_origin (const char *origin, char *scheme, char *host, size_t host_len, int *port)
{
    const char *sep = strstr (origin, "://");
    if (!sep || sep - origin > 5)
        return false;
    size_t slen = (size_t) (sep - origin);
    memcpy (scheme, origin, slen);
    scheme[slen] = '\0';
    for (size_t i = 0; i < slen; i++)
        scheme[i] = (char) tolower ((unsigned char) scheme[i]);
    if (strcmp (scheme, "http") != 0 && strcmp (scheme, "https") != 0)
        return false;
    const char *auth = sep + 3;
    size_t len = strlen (auth);
    if (len && auth[len - 1] == '/')
        len--;
    if (memchr (auth, '/', len) || memchr (auth, '?', len) || memchr (auth, '#', len))
        return false;
    if (!s_split_authority (auth, len, host, host_len, port))
        return false;
    if (*port < 0)
        *port = strcmp (scheme, "https") == 0 ? 443 : 80;
    return true;
}

bool
gw_origin_normalise (const char *origin, char *out, size_t out_len)
{
    char scheme[8], host[ORIGIN_LEN];
    int port;
    if (!origin || !s_parse_origin (origin, scheme, host, sizeof host, &port))
        return false;
    bool default_port = (port == 80 && strcmp (scheme, "http") == 0)
                        || (port == 443 && strcmp (scheme, "https") == 0);
    int n = default_port ? snprintf (out, out_len, "%s://%s", scheme, host)
                         : snprintf (out, out_len, "%s://%s:%d", scheme, host, port);
    return n > 0 && (size_t) n < out_len;
}

bool
gw_origin_is_loopback_host (const char *host)
{
    if (strcmp (host, "localhost") == 0 || strcmp (host, "[::1]") == 0)
        return true;
    struct in_addr a;
    return inet_pton (AF_INET, host, &a) == 1 && (ntohl (a.s_addr) >> 24) == 127;
}

gw_origin_t *
gw_origin_new (const char *public_url, const char *allowed, const char *bind_host, char *err,
               size_t err_len)
{
    gw_origin_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, err_len, "out of memory");
        return NULL;
    }
    if (public_url && *public_url) {
        /* the public URL may carry a path: its origin is what comes before */
        char copy[ORIGIN_LEN];
        snprintf (copy, sizeof copy, "%s", public_url);
        char *sep = strstr (copy, "://");
        char *path = sep ? strchr (sep + 3, '/') : NULL;
        if (path)
            *path = '\0';
        char scheme[8];
        int port;
        if (!gw_origin_normalise (copy, self->public_origin, sizeof self->public_origin)
            || !s_parse_origin (copy, scheme, self->public_host, sizeof self->public_host,
                                &port)) {
            snprintf (err, err_len, "CODEBOX_PUBLIC_URL '%s' is not an http(s) URL", public_url);
            gw_origin_destroy (&self);
            return NULL;
        }
    }
    for (const char *p = allowed; p && *p;) {
        size_t len = strcspn (p, ",");
        char one[ORIGIN_LEN];
        while (len && isspace ((unsigned char) *p)) {
            p++;
            len--;
        }
        size_t keep = len;
        while (keep && isspace ((unsigned char) p[keep - 1]))
            keep--;
        if (keep) {
            snprintf (one, sizeof one, "%.*s", (int) (keep < sizeof one - 1 ? keep
                                                                              : sizeof one - 1),
                      p);
            if (self->n_allowed == MAX_ALLOWED
                || !gw_origin_normalise (one, self->allowed[self->n_allowed], ORIGIN_LEN)) {
                snprintf (err, err_len, "CODEBOX_ALLOWED_ORIGINS: '%s' is not an origin like "
                          "https://app.example.com (at most %d)", one, MAX_ALLOWED);
                gw_origin_destroy (&self);
                return NULL;
            }
            self->n_allowed++;
        }
        p += len;
        if (*p == ',')
            p++;
    }
    if (bind_host && *bind_host) {
        int port;
        char host[ORIGIN_LEN];
        if (s_split_authority (bind_host, strlen (bind_host), host, sizeof host, &port)
            && port < 0 && strcmp (host, "0.0.0.0") != 0 && strcmp (host, "[::]") != 0
            && strcmp (host, "::") != 0)
            snprintf (self->bind_host, sizeof self->bind_host, "%s", host);
    }
    return self;
}

void
gw_origin_destroy (gw_origin_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free (*self_p);
    *self_p = NULL;
}

void
gw_origin_set_port (gw_origin_t *self, int port)
{
    self->port = port;
}

/* True when host (lower case, no port) may be in a Host header. */
static bool
s_host_ok (const gw_origin_t *self, const char *host)
{
    if (gw_origin_is_loopback_host (host))
        return true;
    if (self->public_host[0] && strcmp (host, self->public_host) == 0)
        return true;
    if (self->bind_host[0] && strcmp (host, self->bind_host) == 0)
        return true;
    /* a bare IPv6 bind address is written in brackets in Host */
    if (self->bind_host[0] && host[0] == '[' && strlen (host) == strlen (self->bind_host) + 2
        && strncmp (host + 1, self->bind_host, strlen (self->bind_host)) == 0)
        return true;
    return false;
}

gw_origin_verdict_t
gw_origin_check (const gw_origin_t *self, const char *host, const char *origin, char *why,
                 size_t why_len)
{
    if (host) {
        char name[ORIGIN_LEN];
        int port;
        if (!s_split_authority (host, strlen (host), name, sizeof name, &port)
            || !s_host_ok (self, name)) {
            snprintf (why, why_len, "Host '%.100s' is not this gateway's (a loopback name, "
                      "or the host of CODEBOX_PUBLIC_URL): refused against DNS rebinding",
                      host);
            return GW_ORIGIN_REFUSED;
        }
    }
    if (!origin)
        return GW_ORIGIN_SAME;
    char normal[ORIGIN_LEN], scheme[8], name[ORIGIN_LEN];
    int port;
    if (strcmp (origin, "null") != 0 && gw_origin_normalise (origin, normal, sizeof normal)
        && s_parse_origin (origin, scheme, name, sizeof name, &port)) {
        if (gw_origin_is_loopback_host (name) && port == self->port)
            return GW_ORIGIN_SAME;
        if (self->public_origin[0] && strcmp (normal, self->public_origin) == 0)
            return GW_ORIGIN_SAME;
        for (int i = 0; i < self->n_allowed; i++)
            if (strcmp (normal, self->allowed[i]) == 0)
                return GW_ORIGIN_CORS;
    }
    snprintf (why, why_len, "Origin '%.100s' may not use this gateway: only its own origin, "
              "CODEBOX_PUBLIC_URL's and CODEBOX_ALLOWED_ORIGINS are allowed", origin);
    return GW_ORIGIN_REFUSED;
}
