/* gw_kernel_child: listening on the gateway's side, starting the kernel,
 * exiting as it did; see gw_kernel_child.h. Threads: the caller's. */
#include "gw_kernel_child.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

int
gw_kernel_listen (const jp_connection_t *conn, const char *who, int fds[JP_CHANNEL_COUNT],
                  char paths[JP_CHANNEL_COUNT][sizeof ((struct sockaddr_un *) 0)->sun_path])
{
    for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++)
        fds[ch] = -1;
    for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++) {
        char endpoint[JP_IPC_PATH_MAX + 32];
        struct sockaddr_storage addr;
        socklen_t len;
        jp_connection_endpoint (conn, (jp_channel_t) ch, endpoint, sizeof endpoint);
        if (conn->transport != JP_TRANSPORT_IPC
            || jp_connection_address (conn, (jp_channel_t) ch, &addr, &len) != 0) {
            fprintf (stderr, "%s: the gateway's side must be ipc: %s\n", who, endpoint);
            return -1;
        }
        memcpy (paths[ch], ((struct sockaddr_un *) &addr)->sun_path, sizeof paths[ch]);
        unlink (paths[ch]);
        int fd = fds[ch] = socket (AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind (fd, (struct sockaddr *) &addr, len) != 0 || listen (fd, 16) != 0) {
            fprintf (stderr, "%s: bind %s: %s\n", who, endpoint, strerror (errno));
            return -1;
        }
    }
    return 0;
}

pid_t
gw_kernel_start (char **argv, const char *who)
{
    pid_t kernel = fork ();
    if (kernel == 0) {
        execvp (argv[0], argv);
        fprintf (stderr, "%s: cannot run %s: %s\n", who, argv[0], strerror (errno));
        _exit (127);
    }
    return kernel;
}

int
gw_kernel_exit_as (int status)
{
    if (WIFSIGNALED (status)) {
        int sig = WTERMSIG (status);
        signal (sig, SIG_DFL);
        sigset_t set;
        sigemptyset (&set);
        sigaddset (&set, sig);
        sigprocmask (SIG_UNBLOCK, &set, NULL);
        raise (sig);
        return 128 + sig;
    }
    return WIFEXITED (status) ? WEXITSTATUS (status) : 1;
}
