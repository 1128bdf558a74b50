/* gw_cmd_kernel_net: a kernel's way out to the network when
 * CODEBOX_NETWORK=on (see docs/SECURITY.md). Every kernel runs in a network
 * namespace of its own, with only its loopback; inside, `kernel-net-bridge`
 * (gw_cmd_kernel_net_bridge.c) listens on 127.0.0.1:GW_SANDBOX_NET_PORT,
 * which the kernel's HTTP_PROXY and HTTPS_PROXY name, and passes each
 * connection to a Unix socket in the kernel's runtime folder. Here, on the
 * host's network, a process forked by the kernel's relay (so: the kernel's
 * user, its memory cgroup, its address-space limit, gone with the relay)
 * serves that socket as an HTTP proxy with the gateway's rules:
 *  - CONNECT host:port (HTTPS and other TCP) and absolute-form http://
 *    requests; nothing else (the request head: gw_proxy_request.c);
 *  - the name is resolved here, and each address is checked before the
 *    connection: public addresses only, private ones too with
 *    CODEBOX_DOWNLOAD_ALLOW_PRIVATE=1, never loopback, link-local or an
 *    address of the host's own interfaces (so never the gateway, nor a
 *    service of the host's, whatever address it listens on);
 *  - a refusal answers 403 with the reason in the status line, so the
 *    kernel's error says why.
 * Each connection is a forked process (a slow name lookup or a stalled
 * peer holds only itself), at most NET_CONNECTIONS_MAX at a time.
 *
 * Threads: one per process; the serving process polls its socket, and
 * each connection's process its two sockets. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gw_byte_pair.h"
#include "gw_fs.h"
#include "gw_cmd_kernel_net.h"
#include "gw_proxy_request.h"
#include "jp_time.h"

#define NET_CONNECTIONS_MAX 64      /* connections of one kernel at a time */
#define NET_HEAD_WAIT_MS 30000      /* for a request head */
#define NET_CONNECT_WAIT_MS 15000   /* for each address tried */

/* Makes fd blocking or not. */
static void
s_blocking (int fd, bool blocking)
{
    int flags = fcntl (fd, F_GETFL);
    if (flags >= 0)
        fcntl (fd, F_SETFL, blocking ? flags & ~O_NONBLOCK : flags | O_NONBLOCK);
}

/* Answers an error with status and a one-line reason, as status line and
 * body both (http.client shows the status line of a failed CONNECT). */
static void
s_answer (int fd, int status, const char *why)
{
    char text[1280];
    int n = snprintf (text, sizeof text,
                      "HTTP/1.1 %d codebox: %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
                      "Content-Length: %zu\r\nConnection: close\r\n\r\ncodebox: %s\n",
                      status, why, strlen (why) + 10, why);
    if (n > 0)
        gw_fs_write_all (fd, text, (size_t) n < sizeof text ? (size_t) n : sizeof text - 1);
}

/* Reads the request head (until parsed or the deadline). */
static ssize_t
s_read_head (int fd, char *buf, size_t cap, char *out, size_t out_len, gw_proxy_request_t *req)
{
    size_t len = 0;
    int64_t deadline = jp_time_now_ms () + NET_HEAD_WAIT_MS;
    for (;;) {
        gw_proxy_request_parse (buf, len, out, out_len, req);
        if (req->kind != GW_PROXY_INCOMPLETE)
            return (ssize_t) len;
        int64_t left = deadline - jp_time_now_ms ();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (left <= 0 || poll (&p, 1, (int) left) <= 0)
            return -1;
        ssize_t r = read (fd, buf + len, cap - len);
        if (r <= 0)
            return -1;
        len += (size_t) r;
    }
}

/* True when addr is one of the host's own (any interface, any family). */
static bool
s_own_address (const struct sockaddr *addr, const struct ifaddrs *list)
{
    for (const struct ifaddrs *i = list; i; i = i->ifa_next) {
        const struct sockaddr *a = i->ifa_addr;
        if (!a || a->sa_family != addr->sa_family)
            continue;
        if (a->sa_family == AF_INET
            && ((const struct sockaddr_in *) a)->sin_addr.s_addr
                   == ((const struct sockaddr_in *) addr)->sin_addr.s_addr)
            return true;
        if (a->sa_family == AF_INET6
            && memcmp (&((const struct sockaddr_in6 *) a)->sin6_addr,
                       &((const struct sockaddr_in6 *) addr)->sin6_addr, 16) == 0)
            return true;
    }
    /* an IPv4-mapped IPv6 address of an own IPv4 address */
    if (addr->sa_family == AF_INET6) {
        const uint8_t *b = ((const struct sockaddr_in6 *) addr)->sin6_addr.s6_addr;
        static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        if (memcmp (b, mapped, 12) == 0) {
            struct sockaddr_in v4 = {.sin_family = AF_INET};
            memcpy (&v4.sin_addr, b + 12, 4);
            return s_own_address ((struct sockaddr *) &v4, list);
        }
    }
    return false;
}

/* Connects to addr within NET_CONNECT_WAIT_MS. Returns the socket or
 * -errno. */
static int
s_connect (const struct addrinfo *ai)
{
    int fd = socket (ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                     ai->ai_protocol);
    if (fd < 0)
        return -errno;
    if (connect (fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS) {
        int e = errno;
        close (fd);
        return -e;
    }
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int e = 0;
    socklen_t len = sizeof e;
    if (poll (&p, 1, NET_CONNECT_WAIT_MS) <= 0)
        e = ETIMEDOUT;
    else if (getsockopt (fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0)
        e = errno;
    if (e) {
        close (fd);
        return -e;
    }
    s_blocking (fd, true);     /* the head goes with gw_fs_write_all */
    return fd;
}

/* Resolves req's host and connects to its first address the rules allow.
 * Returns the socket, or -1 after answering the client why not. */
static int
s_open (int client, const gw_proxy_request_t *req, bool allow_private)
{
    char port[8], why[512];
    snprintf (port, sizeof port, "%d", req->port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    int rc = getaddrinfo (req->host, port, &hints, &res);
    if (rc) {
        snprintf (why, sizeof why, "cannot resolve %s (%s)", req->host, gai_strerror (rc));
        s_answer (client, 502, why);
        return -1;
    }
    struct ifaddrs *own = NULL;
    getifaddrs (&own);
    int fd = -1, refused = 0, failed = 0;
    why[0] = '\0';
    for (const struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        char ip[INET6_ADDRSTRLEN] = "?";
        const void *raw = ai->ai_family == AF_INET
                              ? (const void *) &((struct sockaddr_in *) ai->ai_addr)->sin_addr
                              : (const void *) &((struct sockaddr_in6 *) ai->ai_addr)->sin6_addr;
        if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
            continue;
        inet_ntop (ai->ai_family, raw, ip, sizeof ip);
        gw_addr_kind_t kind = gw_download_classify (ai->ai_addr, ai->ai_addrlen);
        bool is_own = s_own_address (ai->ai_addr, own);
        bool allowed = gw_proxy_may_reach (kind, allow_private);
        if (!allowed || is_own) {
            bool literal = strcmp (req->host, ip) == 0;
            if (!refused++ && !failed)
                snprintf (why, sizeof why, "%s%s%s%s is %s: kernel code reaches %s", req->host,
                          literal ? "" : " (", literal ? "" : ip, literal ? "" : ")",
                          allowed ? "an address of this host" : gw_download_kind_text (kind),
                          allow_private ? "public and private addresses only, never this host"
                                        : "public addresses only");
            continue;
        }
        int c = s_connect (ai);
        if (c >= 0)
            fd = c;
        else if (!failed++)
            snprintf (why, sizeof why, "cannot connect to %s port %d (%s): %s", req->host,
                      req->port, ip, strerror (-c));
    }
    if (own)
        freeifaddrs (own);
    freeaddrinfo (res);
    if (fd < 0)
        s_answer (client, failed ? 502 : 403, why[0] ? why : "no address to connect to");
    return fd;
}

/* Passes bytes both ways until both sides are done (takes both). */
static void
s_pass (int a, int b)
{
    gw_byte_pair_t pair;
    if (gw_byte_pair_init (&pair, a, b) < 0)
        return;
    for (bool more = true; more;) {
        struct pollfd p[2];
        int dir[2], n = gw_byte_pair_poll (&pair, p, dir);
        if (n == 0 || poll (p, (nfds_t) n, -1) < 0)
            break;
        for (int i = 0; i < n && more; i++)
            if (p[i].revents)
                more = gw_byte_pair_pump (&pair, dir[i], &p[i]);
    }
    gw_byte_pair_clear (&pair);
}

/* One client connection, in its own process. */
static void
s_serve_one (int client, bool allow_private)
{
    char *head = malloc (GW_PROXY_HEAD_MAX), *out = malloc (GW_PROXY_HEAD_MAX + 512);
    gw_proxy_request_t req;
    ssize_t len = head && out ? s_read_head (client, head, GW_PROXY_HEAD_MAX, out,
                                             GW_PROXY_HEAD_MAX + 512, &req) : -1;
    if (len < 0)
        goto done;
    if (req.kind == GW_PROXY_BAD || req.kind == GW_PROXY_UNSUPPORTED) {
        s_answer (client, req.kind == GW_PROXY_BAD ? 400 : 501, req.why);
        goto done;
    }
    int remote = s_open (client, &req, allow_private);
    if (remote < 0)
        goto done;
    if (req.kind == GW_PROXY_TUNNEL)
        gw_fs_write_all (client, "HTTP/1.1 200 Connection established\r\n\r\n", 39);
    else
        gw_fs_write_all (remote, out, req.rewritten_len);
    /* what came after the head (a body's start, a TLS hello) */
    if ((size_t) len > req.head_len)
        gw_fs_write_all (remote, head + req.head_len, (size_t) len - req.head_len);
    s_pass (client, remote);    /* closes both */
    client = -1;
done:
    if (client >= 0)
        close (client);
    free (head);
    free (out);
}

int
gw_kernel_net_serve (const char *socket_path, bool allow_private)
{
    prctl (PR_SET_PDEATHSIG, SIGKILL);      /* gone with the relay */
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen (socket_path) >= sizeof addr.sun_path) {
        fprintf (stderr, "kernel-net: socket path too long: %s\n", socket_path);
        return -1;
    }
    strcpy (addr.sun_path, socket_path);
    int listener = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    unlink (socket_path);
    mode_t old = umask (0077);      /* the kernel's user only */
    int rc = listener < 0 ? -1 : bind (listener, (struct sockaddr *) &addr, sizeof addr);
    umask (old);
    if (rc < 0 || listen (listener, 64) < 0) {
        fprintf (stderr, "kernel-net: cannot listen on %s: %s\n", socket_path, strerror (errno));
        return -1;
    }
    int children = 0;
    for (;;) {
        while (children > 0 && waitpid (-1, NULL, WNOHANG) > 0)
            children--;
        struct pollfd p = {.fd = listener, .events = POLLIN};
        if (poll (&p, 1, children ? 500 : -1) <= 0)
            continue;
        int client = accept4 (listener, NULL, NULL, SOCK_CLOEXEC);
        if (client < 0)
            continue;
        if (children >= NET_CONNECTIONS_MAX) {
            s_answer (client, 503, "too many connections of this kernel at once");
            close (client);
            continue;
        }
        pid_t pid = fork ();
        if (pid == 0) {
            close (listener);
            prctl (PR_SET_PDEATHSIG, SIGKILL);
            s_serve_one (client, allow_private);
            _exit (0);
        }
        if (pid > 0)
            children++;
        close (client);
    }
}
