/* gw_cmd_kernel_seat: `codebox kernel-seat SOCKET -- ARGV...`, the command
 * bubblewrap runs in a Python kernel's sandbox when CODEBOX_FORK_SERVER=on
 * (gw_sandbox.c adds it). It asks the fork server on SOCKET (bound into
 * the sandbox) for the kernel: it sends one JSON line {"argv", "env",
 * "cwd"} with its descriptors 0, 1 and 2, and the server forks a kernel
 * into this sandbox (gw_fork_server.py). The seat then stands for the
 * kernel: SIGINT, SIGTERM, SIGHUP and SIGQUIT it gets are passed on to the
 * kernel (one that comes before the server names the kernel waits for
 * it), and it exits as the kernel did (a signal raised again), so the
 * gateway sees this process as it would see the kernel.
 *
 * The server is the kernel's parent and sends its wait status; if the
 * server ends first, the kernel goes on and the seat watches it through a
 * pidfd (its status is then lost: the seat exits with 1).
 *
 * When the server cannot be reached, refuses, or does not answer in
 * SEAT_REPLY_MS, the seat runs ARGV itself (execvp): the kernel starts as
 * without a fork server, only not sharing the server's pages.
 *
 * Threads: one. */
#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "gw_cli.h"
#include "gw_kernel_child.h"

#define SEAT_REPLY_MS 15000         /* the server's first answer */
#define SEAT_LINE_MAX 4096          /* an answer line */

extern char **environ;

/* Runs argv here: the way without the fork server. */
static int
s_exec (char **argv, const char *why)
{
    if (why)
        fprintf (stderr, "codebox kernel-seat: %s; starting the kernel itself\n", why);
    execvp (argv[0], argv);
    fprintf (stderr, "codebox kernel-seat: cannot run %s: %s\n", argv[0], strerror (errno));
    return 127;
}

/* The request line: argv, the environment and the folder. */
static char *
s_request (char **argv)
{
    json_t *args = json_array (), *env = json_object ();
    for (int i = 0; argv[i]; i++)
        json_array_append_new (args, json_string (argv[i]));
    for (char **e = environ; *e; e++) {
        const char *eq = strchr (*e, '=');
        if (eq && eq > *e) {
            char name[256];
            snprintf (name, sizeof name, "%.*s", (int) (eq - *e), *e);
            json_object_set_new (env, name, json_string (eq + 1));
        }
    }
    char cwd[4096];
    if (!getcwd (cwd, sizeof cwd))
        snprintf (cwd, sizeof cwd, "/");
    json_t *request = json_pack ("{s:o, s:o, s:s}", "argv", args, "env", env, "cwd", cwd);
    char *text = request ? json_dumps (request, JSON_COMPACT) : NULL;
    json_decref (request);
    return text;
}

/* Sends text and a newline, with descriptors 0, 1 and 2 on the first
 * part. Returns 0 or -errno. */
static int
s_send (int fd, const char *text)
{
    size_t len = strlen (text), sent = 0;
    int fds[3] = {0, 1, 2};
    char control[CMSG_SPACE (sizeof fds)] = {0};
    while (sent <= len) {
        struct iovec iov = {.iov_base = (char *) (sent < len ? text + sent : "\n"),
                            .iov_len = sent < len ? len - sent : 1};
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
        if (sent == 0) {
            msg.msg_control = control;
            msg.msg_controllen = sizeof control;
            struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
            c->cmsg_level = SOL_SOCKET;
            c->cmsg_type = SCM_RIGHTS;
            c->cmsg_len = CMSG_LEN (sizeof fds);
            memcpy (CMSG_DATA (c), fds, sizeof fds);
        }
        ssize_t n = sendmsg (fd, &msg, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EPIPE;
        sent += (size_t) n;
    }
    return 0;
}

/* Passes a signal waiting on sfd on to the kernel. */
static void
s_pass_signal (int sfd, pid_t kernel)
{
    struct signalfd_siginfo info;
    if (read (sfd, &info, sizeof info) == sizeof info)
        kill (kernel, (int) info.ssi_signo);
}

/* Reads one answer line into line (NUL-terminated, no newline), waiting
 * at most timeout_ms (-1: as long as it takes). Once the kernel is known
 * (kernel > 0), the signals that come through sfd are passed on to it;
 * before, they stay pending (blocked): passed on once it is, or, when the
 * seat must start the kernel itself, taken by the seat as it unblocks
 * them. Returns its length, 0 at the end of the stream, or -1 on a
 * timeout or error. */
static int
s_read_line (int fd, int sfd, pid_t kernel, char *line, size_t size, int timeout_ms)
{
    size_t n = 0;
    bool signals = sfd >= 0 && kernel > 0;
    for (;;) {
        struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
        int r = poll (p, signals ? 2 : 1, timeout_ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        if (signals && p[1].revents)
            s_pass_signal (sfd, kernel);
        if (!p[0].revents)
            continue;
        ssize_t got = read (fd, line + n, 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return n ? -1 : 0;
        if (line[n] == '\n') {
            line[n] = '\0';
            return (int) n;
        }
        if (++n >= size - 1)
            return -1;
    }
}

/* The server ended before the kernel (its parent, so its status goes
 * with it): the kernel lives on, watched through a pidfd, its signals
 * still passed on; its end is then told as an exit of 1. */
static int
s_outlive_server (pid_t kernel, int sfd)
{
    int pidfd = (int) syscall (SYS_pidfd_open, kernel, 0);
    if (pidfd < 0)
        return 1;
    fprintf (stderr, "codebox kernel-seat: the fork server ended; the kernel goes on\n");
    for (;;) {
        struct pollfd p[2] = {{.fd = pidfd, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
        if (poll (p, sfd >= 0 ? 2 : 1, -1) < 0 && errno != EINTR)
            break;
        if (p[0].revents)
            break;
        if (sfd >= 0 && p[1].revents)
            s_pass_signal (sfd, kernel);
    }
    fprintf (stderr, "codebox kernel-seat: the kernel ended (its status went with the "
             "fork server)\n");
    close (pidfd);
    return 1;
}

/* Asks the server on path for the kernel; returns what to exit with, or
 * runs argv itself when the server does not give one. */
static int
s_seat (const char *path, char **argv)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen (path) >= sizeof addr.sun_path)
        return s_exec (argv, "the fork server's socket path is too long");
    strcpy (addr.sun_path, path);
    int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect (fd, (struct sockaddr *) &addr, sizeof addr) < 0) {
        char why[160];
        snprintf (why, sizeof why, "no fork server at %s (%s)", path, strerror (errno));
        return s_exec (argv, why);
    }
    char *request = s_request (argv);
    int rc = request ? s_send (fd, request) : -ENOMEM;
    free (request);
    malloc_trim (0);    /* one per kernel: what building the request took goes back */
    if (rc < 0) {
        close (fd);
        return s_exec (argv, "the fork server did not take the request");
    }
    /* from here the kernel's signals are ours to pass on */
    sigset_t set;
    sigemptyset (&set);
    int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
        sigaddset (&set, forwarded[i]);
    sigprocmask (SIG_BLOCK, &set, NULL);
    int sfd = signalfd (-1, &set, SFD_CLOEXEC);
    char line[SEAT_LINE_MAX];
    json_t *answer = NULL;
    if (s_read_line (fd, sfd, 0, line, sizeof line, SEAT_REPLY_MS) > 0)
        answer = json_loads (line, 0, NULL);
    json_int_t pid = json_integer_value (json_object_get (answer, "pid"));
    if (pid <= 1) {
        const char *why = json_string_value (json_object_get (answer, "refused"));
        snprintf (line, sizeof line, "the fork server %s%s", why ? "refused: " : "gave no kernel",
                  why ? why : "");
        json_decref (answer);
        close (fd);
        close (sfd);
        sigprocmask (SIG_UNBLOCK, &set, NULL);
        return s_exec (argv, line);
    }
    json_decref (answer);
    int got = s_read_line (fd, sfd, (pid_t) pid, line, sizeof line, -1);
    answer = got > 0 ? json_loads (line, 0, NULL) : NULL;
    json_t *status = json_object_get (answer, "exit");
    int code = json_is_integer (status) ? gw_kernel_exit_as ((int) json_integer_value (status))
                                        : s_outlive_server ((pid_t) pid, sfd);
    json_decref (answer);
    return code;
}

int
gw_cmd_kernel_seat (int argc, char **argv)
{
    if (argc < 4 || strcmp (argv[2], "--") != 0) {
        fprintf (stderr, "usage: codebox kernel-seat SOCKET -- ARGV...\n");
        return GW_EXIT_USAGE;
    }
    return s_seat (argv[1], argv + 3);
}
