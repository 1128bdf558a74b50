/* gw_fork_server: starting and restarting the fork server process (see
 * gw_fork_server.h; what it does is gw_fork_server.py, embedded here).
 *
 * Threads: the loop thread (the one launching kernels). */
#include "gw_fork_server.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gw_fs.h"
#include "jp_log.h"

#define GW_FORK_SERVER_RETRY_S 10
#define S_LISTEN_FD 3
#define S_SECCOMP_FD 4
#define S_CODE_FD 5             /* the server's source (a short command line) */

/* gw_fork_server.py, made a C string by the Makefile */
static const char S_SERVER_PY[] =
#include "gw_fork_server.inc"
    ;

struct gw_fork_server {
    char folder[300];
    char socket[sizeof ((struct sockaddr_un *) 0)->sun_path];
    char python[PATH_MAX];
    char *names;
    uid_t uid;
    gid_t gid;
    int seccomp_fd;
    pid_t pid;
    time_t started;
};

gw_fork_server_t *
gw_fork_server_new (const char *folder, const char *names, uid_t uid, gid_t gid,
                    int seccomp_fd, char *err, size_t err_len)
{
    gw_fork_server_t *self = calloc (1, sizeof *self);
    if (!self || !(self->names = strdup (names ? names : ""))) {
        free (self);
        snprintf (err, err_len, "out of memory");
        return NULL;
    }
    snprintf (self->folder, sizeof self->folder, "%s", folder);
    int n = snprintf (self->socket, sizeof self->socket, "%s/server.sock", folder);
    char home[sizeof self->folder + 8];
    snprintf (home, sizeof home, "%s/home", folder);
    if (n < 0 || (size_t) n >= sizeof self->socket
        || (mkdir (folder, 0711) < 0 && errno != EEXIST) || chmod (folder, 0711) < 0
        || (mkdir (home, 0700) < 0 && errno != EEXIST)) {
        snprintf (err, err_len, "cannot make the fork server's folder %s: %s", folder,
                  n < 0 || (size_t) n >= sizeof self->socket ? "too long" : strerror (errno));
        gw_fork_server_destroy (&self);
        return NULL;
    }
    self->uid = uid;
    self->gid = gid;
    self->seccomp_fd = seccomp_fd;
    return self;
}

void
gw_fork_server_destroy (gw_fork_server_t **self_p)
{
    gw_fork_server_t *self = self_p ? *self_p : NULL;
    if (!self)
        return;
    if (self->pid > 0) {
        kill (self->pid, SIGKILL);
        waitpid (self->pid, NULL, 0);
    }
    gw_fs_remove_tree (self->folder);   /* its socket, home, matplotlib's cache */
    free (self->names);
    free (self);
    *self_p = NULL;
}

/* A listening socket at self->socket only the kernels' user may connect
 * to (the server also checks each peer). Returns it or -1. */
static int
s_listen (gw_fork_server_t *self)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf (addr.sun_path, sizeof addr.sun_path, "%s", self->socket);
    unlink (self->socket);
    int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (bind (fd, (struct sockaddr *) &addr, sizeof addr) < 0
        || chown (self->socket, self->uid, self->gid) < 0 || chmod (self->socket, 0600) < 0
        || listen (fd, 64) < 0) {
        jp_log_warn ("fork_server=off why=\"cannot listen on %s: %s\"", self->socket,
                     strerror (errno));
        close (fd);
        return -1;
    }
    return fd;
}

/* What the child execs, made before the fork: from fork to exec the child
 * of a threaded process makes only async-signal-safe calls. */
typedef struct {
    char seccomp[64], home[sizeof ((gw_fork_server_t *) 0)->folder + 8];
    char env_home[sizeof ((gw_fork_server_t *) 0)->folder + 16];
    char env_mpl[sizeof ((gw_fork_server_t *) 0)->folder + 40];
    char uid[24], listen_fd[8], seccomp_fd[8];
    char *envp[8], *argv[10];
} s_exec_t;

static void
s_exec_make (const gw_fork_server_t *self, s_exec_t *x)
{
    snprintf (x->seccomp, sizeof x->seccomp, "/proc/self/fd/%d", self->seccomp_fd);
    snprintf (x->home, sizeof x->home, "%s/home", self->folder);
    snprintf (x->env_home, sizeof x->env_home, "HOME=%s", x->home);
    snprintf (x->env_mpl, sizeof x->env_mpl, "MPLCONFIGDIR=%s/.matplotlib", x->home);
    snprintf (x->uid, sizeof x->uid, "%u", (unsigned) self->uid);
    snprintf (x->listen_fd, sizeof x->listen_fd, "%d", S_LISTEN_FD);
    snprintf (x->seccomp_fd, sizeof x->seccomp_fd, "%d", S_SECCOMP_FD);
    char *envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", x->env_home,
                    x->env_mpl, "MPLBACKEND=module://matplotlib_inline.backend_inline",
                    "PYTHONDONTWRITEBYTECODE=1", NULL};
    char *argv[] = {(char *) self->python, "-c",
                    "import os; exec(compile(os.pread(5, 1 << 20, 0), "
                    "'gw_fork_server.py', 'exec'))",
                    "codebox-fork-server", x->listen_fd, x->seccomp_fd, x->uid,
                    self->names, NULL};
    memcpy (x->envp, envp, sizeof envp);
    memcpy (x->argv, argv, sizeof argv);
}

/* In the child: the server's descriptors (each source moved above the
 * targets first, so that none is overwritten before it is copied), a
 * clean signal mask (the gateway's loop blocks SIGINT and SIGTERM for its
 * signalfd: a mask exec would pass on to the server and every kernel),
 * then the program. */
static void
s_exec_server (const s_exec_t *x, int listener, int code)
{
    int program = open (x->seccomp, O_RDONLY);     /* its own offset */
    int null = open ("/dev/null", O_RDONLY);
    int from[4] = {null, listener, program, code};
    int to[4] = {0, S_LISTEN_FD, S_SECCOMP_FD, S_CODE_FD};
    for (int i = 0; i < 4; i++)
        if (from[i] < 0 || (from[i] = fcntl (from[i], F_DUPFD, 16)) < 0)
            _exit (127);
    for (int i = 0; i < 4; i++)
        if (dup2 (from[i], to[i]) < 0)
            _exit (127);
    for (int fd = S_CODE_FD + 1; fd < 1024; fd++)
        close (fd);
    sigset_t none;
    sigemptyset (&none);
    sigprocmask (SIG_SETMASK, &none, NULL);
    signal (SIGPIPE, SIG_DFL);
    if (chdir (x->home) < 0)
        _exit (127);
    execve (x->argv[0], x->argv, x->envp);
    _exit (127);
}

static void
s_start (gw_fork_server_t *self)
{
    self->started = time (NULL);
    int listener = s_listen (self);
    int code = memfd_create ("gw_fork_server.py", MFD_CLOEXEC);
    if (listener < 0 || code < 0
        || write (code, S_SERVER_PY, sizeof S_SERVER_PY - 1) != sizeof S_SERVER_PY - 1) {
        if (code < 0 || listener >= 0)
            jp_log_warn ("fork_server=off why=\"its source: %s\"", strerror (errno));
        if (listener >= 0)
            close (listener);
        if (code >= 0)
            close (code);
        return;
    }
    s_exec_t x;
    s_exec_make (self, &x);
    pid_t pid = fork ();
    if (pid == 0)
        s_exec_server (&x, listener, code);
    close (listener);   /* when the server ends, seats find no one */
    close (code);
    if (pid < 0) {
        jp_log_warn ("fork_server=off why=\"fork: %s\"", strerror (errno));
        return;
    }
    self->pid = pid;
    jp_log_info ("fork_server=started pid=%d python=%s", (int) pid, self->python);
}

const char *
gw_fork_server_socket (gw_fork_server_t *self, const char *python)
{
    if (!self || !python || python[0] != '/')
        return NULL;
    if (!self->python[0])
        snprintf (self->python, sizeof self->python, "%s", python);
    else if (strcmp (self->python, python) != 0)
        return NULL;
    if (self->pid > 0) {
        int status;
        if (waitpid (self->pid, &status, WNOHANG) == 0)
            return self->socket;
        jp_log_warn ("fork_server=ended pid=%d status=%d", (int) self->pid, status);
        self->pid = 0;
    }
    if (time (NULL) - self->started < GW_FORK_SERVER_RETRY_S && self->started)
        return NULL;
    s_start (self);
    return self->pid > 0 ? self->socket : NULL;
}
