/* gw_cmd_kernel_net_bridge: `codebox kernel-net-bridge SOCKET PORT --
 * ARGV...`, run inside a kernel's sandbox when CODEBOX_NETWORK=on. The
 * sandbox's network namespace has only its loopback; this listens there
 * on PORT (127.0.0.1 and ::1), the address the kernel's HTTP_PROXY and
 * HTTPS_PROXY name, and passes each connection's bytes, unchanged, to the
 * Unix socket SOCKET (in the kernel's runtime folder, bound into the
 * sandbox), where the kernel's network proxy applies the gateway's rules
 * (gw_cmd_kernel_net.c). It starts ARGV (the kernel, or the kernel-proxy
 * in front of it) as its child, ignores SIGINT (the kernel gets it
 * directly) and exits with the kernel's status.
 *
 * Threads: one; the main thread polls the listeners, the connections and
 * the kernel's pidfd. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gw_byte_pair.h"
#include "gw_cli.h"
#include "gw_kernel_child.h"
#include "gw_cmd_kernel_net.h"

#define BRIDGE_PAIRS_MAX 64         /* connections at a time */

typedef gw_byte_pair_t s_pair_t;

static void
s_pair_close (s_pair_t **pair_p)
{
    if (*pair_p) {
        gw_byte_pair_clear (*pair_p);
        free (*pair_p);
        *pair_p = NULL;
    }
}

/* Opens a listener on addr (nonblocking). Returns it or -1. */
static int
s_listen (const struct sockaddr *addr, socklen_t len)
{
    int fd = socket (addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    if (fd < 0)
        return -1;
    setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (addr->sa_family == AF_INET6)
        setsockopt (fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (bind (fd, addr, len) < 0 || listen (fd, 64) < 0) {
        close (fd);
        return -1;
    }
    return fd;
}

/* Accepts one connection and pairs it with a new connection to the
 * proxy's socket; a connection over the bound, or when the proxy cannot be
 * reached, is closed. */
static void
s_accept (int listener, const struct sockaddr_un *proxy, s_pair_t **pairs)
{
    int client = accept4 (listener, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (client < 0)
        return;
    int slot = -1;
    for (int i = 0; i < BRIDGE_PAIRS_MAX && slot < 0; i++)
        if (!pairs[i])
            slot = i;
    int up = slot < 0 ? -1 : socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (up < 0 || connect (up, (const struct sockaddr *) proxy, sizeof *proxy) < 0) {
        if (up >= 0)
            close (up);
        close (client);
        return;
    }
    s_pair_t *pair = malloc (sizeof *pair);
    if (!pair) {
        close (up);
        close (client);
        return;
    }
    if (gw_byte_pair_init (pair, client, up) < 0) {     /* closes both */
        free (pair);
        return;
    }
    pairs[slot] = pair;
}

/* Bridges until the kernel (pidfd) ends; returns its wait status. */
static int
s_run (const int *listeners, int n_listeners, const struct sockaddr_un *proxy, pid_t kernel,
       int pidfd)
{
    s_pair_t *pairs[BRIDGE_PAIRS_MAX] = {0};
    int status = 0;
    for (;;) {
        struct pollfd p[3 + 2 * BRIDGE_PAIRS_MAX];
        int who[3 + 2 * BRIDGE_PAIRS_MAX], n = 0;   /* -1: pidfd, -2: listener, else 2*pair+d */
        p[n] = (struct pollfd) {.fd = pidfd, .events = POLLIN}, who[n++] = -1;
        for (int i = 0; i < n_listeners; i++)
            p[n] = (struct pollfd) {.fd = listeners[i], .events = POLLIN}, who[n++] = -2;
        for (int i = 0; i < BRIDGE_PAIRS_MAX; i++) {
            int dir[2], k = pairs[i] ? gw_byte_pair_poll (pairs[i], &p[n], dir) : 0;
            for (int j = 0; j < k; j++)
                who[n + j] = 2 * i + dir[j];
            n += k;
        }
        if (poll (p, (nfds_t) n, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (p[0].revents) {
            waitpid (kernel, &status, 0);
            break;
        }
        for (int k = 1; k < n; k++) {
            if (!p[k].revents)
                continue;
            if (who[k] == -2) {
                s_accept (p[k].fd, proxy, pairs);
                continue;
            }
            int i = who[k] / 2, d = who[k] % 2;
            if (pairs[i] && !gw_byte_pair_pump (pairs[i], d, &p[k]))
                s_pair_close (&pairs[i]);
        }
    }
    for (int i = 0; i < BRIDGE_PAIRS_MAX; i++)
        s_pair_close (&pairs[i]);
    return status;
}

int
gw_cmd_kernel_net_bridge (int argc, char **argv)
{
    struct sockaddr_un proxy = {.sun_family = AF_UNIX};
    long port = argc >= 5 ? strtol (argv[2], NULL, 10) : 0;
    if (argc < 5 || strcmp (argv[3], "--") != 0 || port < 1 || port > 65535
        || strlen (argv[1]) >= sizeof proxy.sun_path) {
        fprintf (stderr, "usage: codebox kernel-net-bridge SOCKET PORT -- ARGV...\n");
        return GW_EXIT_USAGE;
    }
    strcpy (proxy.sun_path, argv[1]);
    struct sockaddr_in v4 = {.sin_family = AF_INET, .sin_port = htons ((uint16_t) port),
                             .sin_addr.s_addr = htonl (INADDR_LOOPBACK)};
    struct sockaddr_in6 v6 = {.sin6_family = AF_INET6, .sin6_port = htons ((uint16_t) port),
                              .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    int listeners[2], n = 0;
    if ((listeners[n] = s_listen ((struct sockaddr *) &v4, sizeof v4)) >= 0)
        n++;
    if ((listeners[n] = s_listen ((struct sockaddr *) &v6, sizeof v6)) >= 0)
        n++;
    if (n == 0)     /* the kernel runs all the same, without network */
        fprintf (stderr, "kernel-net-bridge: cannot listen on port %ld: %s\n", port,
                 strerror (errno));
    pid_t kernel = gw_kernel_start (argv + 4, "kernel-net-bridge");
    if (kernel < 0)
        return GW_EXIT_KERNEL;
    signal (SIGINT, SIG_IGN);   /* the kernel is signalled directly */
    signal (SIGPIPE, SIG_IGN);
    int pidfd = (int) syscall (SYS_pidfd_open, kernel, 0);
    int status = 0;
    if (pidfd < 0)
        waitpid (kernel, &status, 0);
    else
        status = s_run (listeners, n, &proxy, kernel, pidfd);
    return gw_kernel_exit_as (status);
}
