/* gw_bind: --host and --port to a listening socket (see gw_bind.h).
 * Threads: the main thread. */
#include "gw_bind.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
gw_bind_port (const char *text)
{
    if (!text || !*text || strlen (text) > 5)
        return -1;
    long value = 0;
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        value = value * 10 + (*p - '0');
    }
    return value <= 65535 ? (int) value : -1;
}

/* Copies a literal address into out. True when text is one. */
static bool
s_literal (const char *text, int port, gw_bind_t *out)
{
    struct sockaddr_in *v4 = (struct sockaddr_in *) &out->addr;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *) &out->addr;
    memset (&out->addr, 0, sizeof out->addr);
    if (inet_pton (AF_INET, text, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons ((uint16_t) port);
        out->len = sizeof *v4;
        snprintf (out->display, sizeof out->display, "%s", text);
        return true;
    }
    if (inet_pton (AF_INET6, text, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons ((uint16_t) port);
        out->len = sizeof *v6;
        snprintf (out->display, sizeof out->display, "[%s]", text);
        return true;
    }
    return false;
}

int
gw_bind_resolve (const char *host, int port, gw_bind_t *out, char *err, size_t err_len)
{
    char text[256];
    size_t n = strlen (host);
    if (n >= sizeof text || n == 0) {
        snprintf (err, err_len, "--host '%s' is not an address or a name", host);
        return -1;
    }
    /* [::1] as URLs write it */
    if (host[0] == '[' && host[n - 1] == ']') {
        memcpy (text, host + 1, n - 2);
        text[n - 2] = '\0';
        if (!s_literal (text, port, out) || out->addr.ss_family != AF_INET6) {
            snprintf (err, err_len, "--host '%s' is not an IPv6 address", host);
            return -1;
        }
        return 0;
    }
    if (s_literal (host, port, out))
        return 0;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *found = NULL;
    int rc = getaddrinfo (host, NULL, &hints, &found);
    if (rc) {
        snprintf (err, err_len, "--host '%s' cannot be resolved: %s", host, gai_strerror (rc));
        return -1;
    }
    const struct addrinfo *pick = NULL;
    for (const struct addrinfo *a = found; a && !pick; a = a->ai_next)
        if (a->ai_family == AF_INET)
            pick = a;
    for (const struct addrinfo *a = found; a && !pick; a = a->ai_next)
        if (a->ai_family == AF_INET6)
            pick = a;
    if (!pick) {
        freeaddrinfo (found);
        snprintf (err, err_len, "--host '%s' has no IPv4 or IPv6 address", host);
        return -1;
    }
    memset (&out->addr, 0, sizeof out->addr);
    memcpy (&out->addr, pick->ai_addr, pick->ai_addrlen);
    out->len = pick->ai_addrlen;
    if (pick->ai_family == AF_INET)
        ((struct sockaddr_in *) &out->addr)->sin_port = htons ((uint16_t) port);
    else
        ((struct sockaddr_in6 *) &out->addr)->sin6_port = htons ((uint16_t) port);
    snprintf (out->display, sizeof out->display, "%s", host);
    freeaddrinfo (found);
    return 0;
}

bool
gw_bind_is_loopback (const struct sockaddr *addr)
{
    if (addr->sa_family == AF_INET) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *) addr;
        return (ntohl (v4->sin_addr.s_addr) >> 24) == 127;
    }
    if (addr->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *) addr)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK (a))
            return true;
        return IN6_IS_ADDR_V4MAPPED (a) && a->s6_addr[12] == 127;
    }
    return false;
}

int
gw_bind_listen (const gw_bind_t *b, char *err, size_t err_len)
{
    int fd = socket (b->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1, e = 0;
    if (fd < 0)
        e = errno;
    else if (setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0
             || (b->addr.ss_family == AF_INET6
                 && setsockopt (fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) < 0)
             || bind (fd, (const struct sockaddr *) &b->addr, b->len) < 0
             || listen (fd, 511) < 0)
        e = errno;
    if (e) {
        if (fd >= 0)
            close (fd);
        int port = ntohs (b->addr.ss_family == AF_INET
                              ? ((const struct sockaddr_in *) &b->addr)->sin_port
                              : ((const struct sockaddr_in6 *) &b->addr)->sin6_port);
        snprintf (err, err_len, "cannot listen on %s:%d: %s%s", b->display, port, strerror (e),
                  e == EADDRINUSE ? " (another server has this port: stop it or choose "
                                    "another with --port)" : "");
        return -e;
    }
    return fd;
}
