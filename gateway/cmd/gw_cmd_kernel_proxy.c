/* gw_cmd_kernel_proxy: `codebox kernel-proxy GATEWAY_CONN KERNEL_CONN --
 * ARGV...`, run inside a kernel's sandbox when the kernel speaks only TCP
 * and the sandbox has no network (a private network namespace): it starts
 * the kernel on the namespace's own loopback (KERNEL_CONN, tcp), listens
 * on the gateway's Unix sockets (GATEWAY_CONN, ipc, in the shared runtime
 * folder) and, for each connection there, makes one to the kernel's port
 * of that channel and passes the bytes both ways unchanged
 * (gw_byte_pair). ZMTP is the same over TCP and Unix sockets, so the
 * gateway's sockets (through its relay) talk to the kernel's as they do
 * to an ipc kernel: routing ids, subscriptions and signatures pass as
 * they are. No libzmq here: no I/O thread, no copy of each message.
 *
 * A connection that comes before the kernel listens waits (its bytes stay
 * in the socket) and the kernel is tried every RETRY_MS. The proxy ignores
 * SIGINT (the kernel gets it directly) and exits with the kernel's status.
 *
 * Threads: one; the main thread polls the listeners, the connections and
 * the kernel's pidfd. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
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
#include "jp_connection.h"
#include "jp_time.h"

#define PROXY_PAIRS_MAX 40          /* connections at a time, all channels */
#define RETRY_MS 20                 /* between tries to reach a starting kernel */

/* A connection of the gateway: waiting for the kernel (pair.fd[1] < 0),
 * or paired with one to the kernel. */
typedef struct {
    int ch;
    gw_byte_pair_t pair;
} s_conn_t;

typedef struct {
    int listener[JP_CHANNEL_COUNT];
    struct sockaddr_storage kernel[JP_CHANNEL_COUNT];
    socklen_t kernel_len[JP_CHANNEL_COUNT];
    s_conn_t *conns[PROXY_PAIRS_MAX];
    int64_t retry_at_ms;
} s_proxy_t;

/* Reads a connection file into conn. Returns 0 or -1. */
static int
s_load (const char *path, jp_connection_t *conn)
{
    int rc = jp_connection_read (conn, path);
    if (rc)
        fprintf (stderr, "kernel-proxy: %s: %s\n", path, strerror (-rc));
    return rc ? -1 : 0;
}

static void
s_conn_close (s_conn_t **conn_p)
{
    if (*conn_p) {
        gw_byte_pair_clear (&(*conn_p)->pair);
        free (*conn_p);
        *conn_p = NULL;
    }
}

/* Pairs a waiting connection with one to the kernel; false while the
 * kernel does not listen yet (a loopback connect answers at once). */
static bool
s_reach_kernel (s_proxy_t *self, s_conn_t *conn)
{
    struct sockaddr_storage *addr = &self->kernel[conn->ch];
    int fd = socket (addr->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    if (connect (fd, (struct sockaddr *) addr, self->kernel_len[conn->ch]) < 0) {
        close (fd);
        return false;
    }
    int one = 1;
    setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    int gateway = conn->pair.fd[0];
    conn->pair.fd[0] = -1;
    return gw_byte_pair_init (&conn->pair, gateway, fd) == 0;   /* else both closed */
}

/* Accepts a connection of the gateway on channel ch; one over the bound
 * is closed. */
static void
s_accept (s_proxy_t *self, int ch)
{
    int fd = accept4 (self->listener[ch], NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0)
        return;
    int slot = -1;
    for (int i = 0; i < PROXY_PAIRS_MAX && slot < 0; i++)
        if (!self->conns[i])
            slot = i;
    s_conn_t *conn = slot < 0 ? NULL : calloc (1, sizeof *conn);
    if (!conn) {
        close (fd);
        return;
    }
    *conn = (s_conn_t) {.ch = ch, .pair = {.fd = {fd, -1}}};
    self->conns[slot] = conn;
    if (!s_reach_kernel (self, conn)) {
        if (conn->pair.fd[0] < 0)       /* gw_byte_pair_init failed */
            s_conn_close (&self->conns[slot]);
        else
            self->retry_at_ms = jp_time_now_ms () + RETRY_MS;
    }
}

/* Tries the kernel again for the connections that wait. */
static void
s_retry (s_proxy_t *self)
{
    bool waiting = false;
    for (int i = 0; i < PROXY_PAIRS_MAX; i++) {
        s_conn_t *conn = self->conns[i];
        if (!conn || conn->pair.fd[1] >= 0)
            continue;
        if (!s_reach_kernel (self, conn) && conn->pair.fd[0] < 0)
            s_conn_close (&self->conns[i]);
        else if (conn->pair.fd[1] < 0)
            waiting = true;
    }
    self->retry_at_ms = waiting ? jp_time_now_ms () + RETRY_MS : 0;
}

/* Passes bytes until the kernel (pidfd) ends; returns its wait status. */
static int
s_run (s_proxy_t *self, pid_t kernel, int pidfd)
{
    enum { WHO_PIDFD = -1, WHO_LISTENER = -2 };
    int status = 0;
    for (;;) {
        struct pollfd p[1 + JP_CHANNEL_COUNT + 2 * PROXY_PAIRS_MAX];
        int who[1 + JP_CHANNEL_COUNT + 2 * PROXY_PAIRS_MAX], n = 0;    /* else 2*conn+d */
        p[n] = (struct pollfd) {.fd = pidfd, .events = POLLIN}, who[n++] = WHO_PIDFD;
        for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++)
            p[n] = (struct pollfd) {.fd = self->listener[ch], .events = POLLIN},
            who[n++] = WHO_LISTENER - ch;
        for (int i = 0; i < PROXY_PAIRS_MAX; i++) {
            s_conn_t *conn = self->conns[i];
            if (!conn)
                continue;
            if (conn->pair.fd[1] < 0) {     /* waiting: only its end is watched */
                p[n] = (struct pollfd) {.fd = conn->pair.fd[0], .events = POLLRDHUP},
                who[n++] = 2 * i;
                continue;
            }
            int dir[2], k = gw_byte_pair_poll (&conn->pair, &p[n], dir);
            for (int j = 0; j < k; j++)
                who[n + j] = 2 * i + dir[j];
            n += k;
        }
        int64_t now = jp_time_now_ms ();
        int timeout = self->retry_at_ms ? (int) (self->retry_at_ms > now ? self->retry_at_ms - now
                                                                          : 0)
                                        : -1;
        if (poll (p, (nfds_t) n, timeout) < 0) {
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
            if (who[k] <= WHO_LISTENER) {
                s_accept (self, WHO_LISTENER - who[k]);
                continue;
            }
            int i = who[k] / 2, d = who[k] % 2;
            s_conn_t *conn = self->conns[i];
            if (!conn)
                continue;
            if (conn->pair.fd[1] < 0)       /* the gateway left before the kernel came */
                s_conn_close (&self->conns[i]);
            else if (!gw_byte_pair_pump (&conn->pair, d, &p[k]))
                s_conn_close (&self->conns[i]);
        }
        if (self->retry_at_ms && jp_time_now_ms () >= self->retry_at_ms)
            s_retry (self);
    }
    for (int i = 0; i < PROXY_PAIRS_MAX; i++)
        s_conn_close (&self->conns[i]);
    return status;
}

int
gw_cmd_kernel_proxy (int argc, char **argv)
{
    if (argc < 5 || strcmp (argv[3], "--") != 0) {
        fprintf (stderr, "usage: codebox kernel-proxy GATEWAY_CONN KERNEL_CONN -- ARGV...\n");
        return GW_EXIT_USAGE;
    }
    jp_connection_t front, back;
    s_proxy_t self = {0};
    char paths[JP_CHANNEL_COUNT][sizeof ((struct sockaddr_un *) 0)->sun_path];
    if (s_load (argv[1], &front) || s_load (argv[2], &back))
        return GW_EXIT_USAGE;
    for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++)
        if (back.transport != JP_TRANSPORT_TCP
            || jp_connection_address (&back, (jp_channel_t) ch, &self.kernel[ch],
                                      &self.kernel_len[ch]) != 0) {
            fprintf (stderr, "kernel-proxy: the kernel's side must be tcp on an address: %s\n",
                     back.ip);
            return GW_EXIT_USAGE;
        }
    if (gw_kernel_listen (&front, "kernel-proxy", self.listener, paths) != 0)
        return GW_EXIT_USAGE;
    pid_t kernel = gw_kernel_start (argv + 4, "kernel-proxy");
    if (kernel < 0)
        return GW_EXIT_KERNEL;
    signal (SIGINT, SIG_IGN);   /* the kernel is signalled directly */
    signal (SIGPIPE, SIG_IGN);
    int pidfd = (int) syscall (SYS_pidfd_open, kernel, 0);
    int status = 0;
    if (pidfd < 0)
        waitpid (kernel, &status, 0);
    else
        status = s_run (&self, kernel, pidfd);
    return gw_kernel_exit_as (status);
}
