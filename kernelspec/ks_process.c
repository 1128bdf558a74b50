/* ks_process: fork/exec of kernels in their own process group, pidfds,
 * group signals and reaping. Runs in the thread that owns the kernel. */
#include "ks_process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ks_spec.h"

extern char **environ;

/* In the child: reports errno through the pipe and exits. */
static void
s_child_fail (int fd)
{
    int e = errno;
    ssize_t ignored = write (fd, &e, sizeof e);
    (void) ignored;
    _exit (127);
}

int
ks_process_spawn (char *const argv[], char *const envp[], const char *cwd,
                  const char *log_path, pid_t *pid_p, int *pidfd_p, char *err,
                  size_t err_len)
{
    int log_fd = open (log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (log_fd < 0) {
        int e = errno;
        snprintf (err, err_len, "cannot open kernel log %s: %s", log_path, strerror (e));
        return -e;
    }
    int report[2];
    if (pipe2 (report, O_CLOEXEC) < 0) {
        int e = errno;
        close (log_fd);
        snprintf (err, err_len, "pipe: %s", strerror (e));
        return -e;
    }
    pid_t parent = getpid ();
    pid_t pid = fork ();
    if (pid < 0) {
        int e = errno;
        close (log_fd);
        close (report[0]);
        close (report[1]);
        snprintf (err, err_len, "fork: %s", strerror (e));
        return -e;
    }
    if (pid == 0) {
        /* child: only async-signal-safe calls from here to exec */
        if (setsid () < 0 || prctl (PR_SET_PDEATHSIG, SIGKILL) < 0)
            s_child_fail (report[1]);
        if (getppid () != parent)
            _exit (1);      /* the parent died before the signal was armed */
        int devnull = open ("/dev/null", O_RDONLY);
        if (devnull < 0 || dup2 (devnull, 0) < 0 || dup2 (log_fd, 1) < 0
            || dup2 (log_fd, 2) < 0)
            s_child_fail (report[1]);
        sigset_t none;
        sigemptyset (&none);
        sigprocmask (SIG_SETMASK, &none, NULL);
        signal (SIGPIPE, SIG_DFL);
        signal (SIGINT, SIG_DFL);
        signal (SIGTERM, SIG_DFL);
        if (cwd && chdir (cwd) < 0)
            s_child_fail (report[1]);
        execvpe (argv[0], argv, envp);
        s_child_fail (report[1]);
    }
    close (log_fd);
    close (report[1]);
    int child_errno = 0;
    ssize_t n;
    do
        n = read (report[0], &child_errno, sizeof child_errno);
    while (n < 0 && errno == EINTR);
    close (report[0]);
    if (n == (ssize_t) sizeof child_errno) {
        int status;
        waitpid (pid, &status, 0);
        snprintf (err, err_len, "cannot run '%s'%s%s: %s", argv[0], cwd ? " in " : "",
                  cwd ? cwd : "", strerror (child_errno));
        return -child_errno;
    }
    int pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
    if (pidfd < 0) {
        int e = errno;
        kill (-pid, SIGKILL);
        int status;
        waitpid (pid, &status, 0);
        snprintf (err, err_len, "pidfd_open: %s", strerror (e));
        return -e;
    }
    fcntl (pidfd, F_SETFD, FD_CLOEXEC);
    *pid_p = pid;
    *pidfd_p = pidfd;
    return 0;
}

int
ks_process_signal_group (pid_t pgid, int sig)
{
    if (pgid <= 1)
        return -EINVAL;
    return kill (-pgid, sig) < 0 ? -errno : 0;
}

int
ks_process_reap (pid_t pid, int *status)
{
    pid_t r;
    do
        r = waitpid (pid, status, WNOHANG);
    while (r < 0 && errno == EINTR);
    if (r < 0)
        return -errno;
    return r == pid ? 1 : 0;
}

void
ks_process_describe (int status, char *buf, size_t len)
{
    if (WIFEXITED (status))
        snprintf (buf, len, "exited with status %d", WEXITSTATUS (status));
    else if (WIFSIGNALED (status))
        snprintf (buf, len, "killed by signal %d (%s)", WTERMSIG (status),
                  strsignal (WTERMSIG (status)));
    else
        snprintf (buf, len, "ended (wait status %d)", status);
}

/* Sets or replaces "NAME=..." entry in env (n entries, room for one more). */
static int
s_env_put (char ***env_p, size_t *n, char *entry)
{
    if (!entry)
        return -ENOMEM;
    size_t name_len = strcspn (entry, "=");
    char **env = *env_p;
    for (size_t i = 0; i < *n; i++)
        if (strncmp (env[i], entry, name_len) == 0 && env[i][name_len] == '=') {
            free (env[i]);
            env[i] = entry;
            return 0;
        }
    char **grown = realloc (env, (*n + 2) * sizeof (char *));
    if (!grown) {
        free (entry);
        return -ENOMEM;
    }
    grown[(*n)++] = entry;
    grown[*n] = NULL;
    *env_p = grown;
    return 0;
}

char **
ks_process_env (json_t *spec_env, const char *const *extra)
{
    char **env = calloc (1, sizeof (char *));
    size_t n = 0;
    int rc = env ? 0 : -ENOMEM;
    for (char **e = environ; e && *e && !rc; e++)
        rc = s_env_put (&env, &n, strdup (*e));
    const char *key;
    json_t *value;
    json_object_foreach (spec_env, key, value) {
        if (rc || !json_is_string (value))
            continue;
        char *expanded = ks_expand_env (json_string_value (value));
        char *entry = NULL;
        if (expanded && asprintf (&entry, "%s=%s", key, expanded) < 0)
            entry = NULL;
        free (expanded);
        rc = s_env_put (&env, &n, entry);
    }
    for (const char *const *e = extra; e && *e && !rc; e++)
        rc = s_env_put (&env, &n, strdup (*e));
    if (rc) {
        ks_strv_free (env);
        return NULL;
    }
    return env;
}

char *
ks_process_log_tail (const char *path, size_t max_bytes)
{
    FILE *f = path ? fopen (path, "re") : NULL;
    char *out = calloc (1, max_bytes + 1);
    if (!f || !out)
        goto done;
    if (fseek (f, 0, SEEK_END) == 0) {
        long size = ftell (f);
        long from = size > (long) max_bytes ? size - (long) max_bytes : 0;
        fseek (f, from, SEEK_SET);
    }
    size_t got = fread (out, 1, max_bytes, f);
    out[got] = '\0';
done:
    if (f)
        fclose (f);
    return out;
}
