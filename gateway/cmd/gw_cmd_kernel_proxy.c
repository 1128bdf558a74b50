/* gw_cmd_kernel_proxy: `codebox kernel-proxy GATEWAY_CONN KERNEL_CONN --
 * ARGV...`, run inside a kernel's sandbox when the kernel speaks only TCP
 * and the sandbox has no network (a private network namespace): it starts
 * the kernel on the namespace's own loopback (KERNEL_CONN, tcp), binds the
 * gateway's Unix sockets (GATEWAY_CONN, ipc, in the shared runtime folder)
 * and forwards every frame between the two, unchanged (signatures stay
 * valid). ROUTER/DEALER pairs keep the routing envelopes, which Jupyter
 * kernels echo; iopub is an XPUB/XSUB pair. It ignores SIGINT (the kernel
 * gets it directly) and exits with the kernel's status. Its own loop, not
 * CZMQ's zproxy: one thread watches all five pairs and the kernel's
 * pidfd, where zproxy is an actor (a thread) per pair and watches no fd.
 *
 * Threads: one; the main thread polls every socket and the kernel's pidfd. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <zmq.h>

#include "gw_cli.h"
#include "jp_connection.h"
#include "jp_poll.h"

/* Reads a connection file into conn. Returns 0 or -1. */
static int
s_load (const char *path, jp_connection_t *conn)
{
    int rc = jp_connection_read (conn, path);
    if (rc)
        fprintf (stderr, "kernel-proxy: %s: %s\n", path, strerror (-rc));
    return rc ? -1 : 0;
}

/* Moves one whole multipart message from one socket to another. */
static void
s_forward (void *from, void *to)
{
    for (int more = 1; more;) {
        zmq_msg_t part;
        zmq_msg_init (&part);
        if (zmq_msg_recv (&part, from, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close (&part);
            return;
        }
        more = zmq_msg_more (&part);
        zmq_msg_send (&part, to, more ? ZMQ_SNDMORE : 0);
        zmq_msg_close (&part);
    }
}

/* Before the ZeroMQ context exists: keeps this process (and the I/O
 * thread libzmq starts later, which inherits it) on the one CPU it runs
 * on. Each message crosses between our thread and libzmq's twice; on
 * another CPU each crossing is a wake-up that costs tens of microseconds
 * more (on a VM, an interrupt to a halted virtual CPU). Proxies land where
 * the scheduler started them, so they spread. */
static void
s_stay_on_this_cpu (void)
{
    int cpu = sched_getcpu ();
    if (cpu < 0 || cpu >= CPU_SETSIZE)
        return;
    cpu_set_t set;
    CPU_ZERO (&set);
    CPU_SET (cpu, &set);
    sched_setaffinity (0, sizeof set, &set);   /* a refusal only costs speed */
}

int
gw_cmd_kernel_proxy (int argc, char **argv)
{
    if (argc < 5 || strcmp (argv[3], "--") != 0) {
        fprintf (stderr, "usage: codebox kernel-proxy GATEWAY_CONN KERNEL_CONN -- ARGV...\n");
        return GW_EXIT_USAGE;
    }
    jp_connection_t front_conn, back_conn;
    if (s_load (argv[1], &front_conn) || s_load (argv[2], &back_conn))
        return GW_EXIT_USAGE;
    pid_t kernel = fork ();
    if (kernel < 0)
        return GW_EXIT_KERNEL;
    if (kernel == 0) {
        execvp (argv[4], argv + 4);
        fprintf (stderr, "kernel-proxy: cannot run %s: %s\n", argv[4], strerror (errno));
        _exit (127);
    }
    signal (SIGINT, SIG_IGN);   /* the kernel is signalled directly */
    int pidfd = (int) syscall (SYS_pidfd_open, kernel, 0);
    s_stay_on_this_cpu ();    /* the kernel, started above, is not held */
    void *ctx = zmq_ctx_new ();
    static const int front_types[] = {ZMQ_ROUTER, ZMQ_XPUB, ZMQ_ROUTER, ZMQ_ROUTER, ZMQ_ROUTER};
    static const int back_types[] = {ZMQ_DEALER, ZMQ_XSUB, ZMQ_DEALER, ZMQ_DEALER, ZMQ_DEALER};
    void *front[JP_CHANNEL_COUNT], *back[JP_CHANNEL_COUNT];
    int zero = 0;
    for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++) {
        char endpoint[JP_IPC_PATH_MAX + 32];
        front[ch] = zmq_socket (ctx, front_types[ch]);
        back[ch] = zmq_socket (ctx, back_types[ch]);
        zmq_setsockopt (front[ch], ZMQ_LINGER, &zero, sizeof zero);
        zmq_setsockopt (back[ch], ZMQ_LINGER, &zero, sizeof zero);
        if (ch == JP_CHANNEL_IOPUB) {
            zmq_setsockopt (front[ch], ZMQ_SNDHWM, &zero, sizeof zero);
            zmq_setsockopt (back[ch], ZMQ_RCVHWM, &zero, sizeof zero);
        }
        /* the kernel answers input requests to the shell peer's routing
           id: both backends must share it */
        if (ch == JP_CHANNEL_SHELL || ch == JP_CHANNEL_STDIN)
            zmq_setsockopt (back[ch], ZMQ_ROUTING_ID, "codebox-proxy", 13);
        jp_connection_endpoint (&front_conn, (jp_channel_t) ch, endpoint, sizeof endpoint);
        if (zmq_bind (front[ch], endpoint) != 0) {
            fprintf (stderr, "kernel-proxy: bind %s: %s\n", endpoint, zmq_strerror (errno));
            kill (kernel, SIGKILL);
            return GW_EXIT_KERNEL;
        }
        jp_connection_endpoint (&back_conn, (jp_channel_t) ch, endpoint, sizeof endpoint);
        zmq_connect (back[ch], endpoint);
    }
    int status = 0;
    bool used[JP_CHANNEL_COUNT];    /* read or written last turn: see jp_poll.h */
    for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++)
        used[ch] = true;
    for (;;) {
        zmq_pollitem_t items[2 * JP_CHANNEL_COUNT + 1];
        for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++) {
            short events = (short) (ZMQ_POLLIN | (used[ch] ? JP_POLL_USED : 0));
            items[2 * ch] = (zmq_pollitem_t) {.socket = front[ch], .events = events};
            items[2 * ch + 1] = (zmq_pollitem_t) {.socket = back[ch], .events = events};
        }
        items[2 * JP_CHANNEL_COUNT] = (zmq_pollitem_t) {.fd = pidfd, .events = ZMQ_POLLIN};
        struct pollfd pfds[2 * JP_CHANNEL_COUNT + 1];
        if (jp_poll (items, pfds, 2 * JP_CHANNEL_COUNT + 1, -1) < 0)
            break;
        for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++) {
            used[ch] = items[2 * ch].revents || items[2 * ch + 1].revents;
            if (items[2 * ch].revents & ZMQ_POLLIN)
                s_forward (front[ch], back[ch]);
            if (items[2 * ch + 1].revents & ZMQ_POLLIN)
                s_forward (back[ch], front[ch]);
        }
        if (items[2 * JP_CHANNEL_COUNT].revents & ZMQ_POLLIN) {
            waitpid (kernel, &status, 0);
            break;
        }
    }
    for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++) {
        zmq_close (front[ch]);
        zmq_close (back[ch]);
    }
    zmq_ctx_term (ctx);
    if (WIFSIGNALED (status)) {
        signal (WTERMSIG (status), SIG_DFL);
        raise (WTERMSIG (status));
    }
    return WIFEXITED (status) ? WEXITSTATUS (status) : 1;
}
