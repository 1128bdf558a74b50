/* ks_process: fork/exec of kernels in their own process group, pidfds,
 * group signals and reaping. Runs in the thread that owns the kernel. */
#include "ks_process.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <grp.h>
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

/* In the child: writes n in decimal to text (at least 24 bytes), returns
 * its length. Async-signal-safe. */
static int
s_decimal (long n, char *text)
{
    int len = 0;
    do
        text[len++] = (char) ('0' + n % 10);
    while ((n /= 10) > 0 && len < 22);
    for (int i = 0; i < len / 2; i++) {
        char t = text[i];
        text[i] = text[len - 1 - i];
        text[len - 1 - i] = t;
    }
    text[len] = '\0';
    return len;
}

/* In the child: makes the bind mounts in a mount namespace of its own
 * (slave to the host's, so nothing leaks back), as root. */
static int
s_child_binds (const ks_spawn_extra_t *extra)
{
    if (!extra->bind_from[0])
        return 0;
    if (unshare (CLONE_NEWNS) < 0 || mount (NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
        return -1;
    for (int i = 0; i < KS_MAX_BINDS && extra->bind_from[i]; i++)
        if (mount (extra->bind_from[i], extra->bind_to[i], NULL, MS_BIND | MS_REC, NULL) < 0)
            return -1;
    return 0;
}

/* In the child: opens the seccomp program anew (its own offset: children
 * started close together must not share one) at KS_CHILD_SECCOMP_FD,
 * first moving the report pipe out of the way. */
static int
s_child_seccomp (const ks_spawn_extra_t *extra, int *report_fd)
{
    if (!extra->has_seccomp)
        return 0;
    if (*report_fd == KS_CHILD_SECCOMP_FD) {
        int moved = fcntl (*report_fd, F_DUPFD_CLOEXEC, KS_CHILD_SECCOMP_FD + 1);
        if (moved < 0)
            return -1;
        *report_fd = moved;
    }
    char path[48] = "/proc/self/fd/";
    s_decimal (extra->seccomp_fd, path + 14);
    int fd = open (path, O_RDONLY);
    if (fd < 0)
        return -1;
    if (fd != KS_CHILD_SECCOMP_FD) {
        if (dup2 (fd, KS_CHILD_SECCOMP_FD) < 0)
            return -1;
        close (fd);
    }
    return 0;
}

/* In the child: joins cgroups, makes bind mounts, opens the seccomp
 * program, sets limits, drops privileges. Only async-signal-safe calls.
 * Returns 0 or -1 with errno set. */
static int
s_child_extra (const ks_spawn_extra_t *extra, pid_t self_pid, int *report_fd)
{
    if (!extra)
        return 0;
    char pid_text[24];
    int n = s_decimal (self_pid, pid_text);
    for (int i = 0; i < KS_MAX_CGROUPS && extra->cgroups[i]; i++) {
        char path[512];
        size_t len = strlen (extra->cgroups[i]);
        if (len + 14 > sizeof path)
            return -1;
        memcpy (path, extra->cgroups[i], len);
        memcpy (path + len, "/cgroup.procs", 14);
        int fd = open (path, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write (fd, pid_text, (size_t) n) != n) {
            if (fd >= 0)
                close (fd);
            return -1;
        }
        close (fd);
    }
    if ((extra->unshare_net && unshare (CLONE_NEWNET) < 0) || s_child_binds (extra) < 0
        || s_child_seccomp (extra, report_fd) < 0)
        return -1;
    for (int i = 0; i < extra->n_rlimits; i++) {
        struct rlimit rl = {extra->rlimits[i].value, extra->rlimits[i].value};
        if (setrlimit (extra->rlimits[i].resource, &rl) < 0)
            return -1;
    }
    if (extra->set_user
        && (setgroups (0, NULL) < 0 || setgid (extra->gid) < 0 || setuid (extra->uid) < 0))
        return -1;
    return 0;
}

/* Reads the first number after key in dir/file (key "" reads the first
 * number). Returns 0 when absent. */
static unsigned long long
s_cgroup_number (const char *dir, const char *file, const char *key)
{
    char path[600], line[128];
    snprintf (path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen (path, "re");
    unsigned long long value = 0;
    while (f && fgets (line, sizeof line, f)) {
        size_t n = strlen (key);
        if (strncmp (line, key, n) == 0) {
            value = strtoull (line + n, NULL, 10);
            break;
        }
    }
    if (f)
        fclose (f);
    return value;
}

bool
ks_process_cgroup_oom (const char *dir)
{
    return s_cgroup_number (dir, "memory.oom_control", "oom_kill ") > 0
           || s_cgroup_number (dir, "memory.failcnt", "") > 0
           || s_cgroup_number (dir, "memory.memsw.failcnt", "") > 0;
}

int
ks_process_spawn (char *const argv[], char *const envp[], const char *cwd,
                  const char *log_path, const ks_spawn_extra_t *extra, pid_t *pid_p,
                  int *pidfd_p, char *err, size_t err_len)
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
        /* child: only async-signal-safe calls from here to exec; stdio
           first, so the descriptors moved below cannot land on the log */
        int devnull = open ("/dev/null", O_RDONLY);
        if (devnull < 0 || dup2 (devnull, 0) < 0 || dup2 (log_fd, 1) < 0
            || dup2 (log_fd, 2) < 0)
            s_child_fail (report[1]);
        /* cwd next, as root: a folder whose parents the kernel user cannot
           pass through is still its working directory; the death signal is
           armed after dropping privileges, which would clear it */
        if (setsid () < 0 || (cwd && chdir (cwd) < 0)
            || s_child_extra (extra, getpid (), &report[1]) < 0
            || prctl (PR_SET_PDEATHSIG, SIGKILL) < 0)
            s_child_fail (report[1]);
        if (getppid () != parent)
            _exit (1);      /* the parent died before the signal was armed */
        sigset_t none;
        sigemptyset (&none);
        sigprocmask (SIG_SETMASK, &none, NULL);
        signal (SIGPIPE, SIG_DFL);
        signal (SIGINT, SIG_DFL);
        signal (SIGTERM, SIG_DFL);
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
ks_process_signal_tree_except (pid_t root, int sig, const char *skip_comm)
{
    /* one pass over /proc: pid, parent and name of every process */
    typedef struct {
        pid_t pid, ppid;
        char comm[32];
    } s_proc_t;
    size_t n = 0, cap = 1024;
    s_proc_t *procs = malloc (cap * sizeof *procs);
    DIR *dir = procs ? opendir ("/proc") : NULL;
    struct dirent *e;
    while (dir && (e = readdir (dir))) {
        char *end;
        long pid = strtol (e->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        char path[64], stat[512];
        snprintf (path, sizeof path, "/proc/%ld/stat", pid);
        FILE *f = fopen (path, "re");
        size_t len = f ? fread (stat, 1, sizeof stat - 1, f) : 0;
        if (f)
            fclose (f);
        stat[len] = '\0';
        /* pid (comm) state ppid ...; comm may hold spaces and parens */
        char *open_paren = strchr (stat, '('), *close_paren = strrchr (stat, ')');
        int ppid;
        char state;
        if (!open_paren || !close_paren || close_paren < open_paren
            || sscanf (close_paren + 2, "%c %d", &state, &ppid) != 2)
            continue;
        if (n == cap) {
            s_proc_t *grown = realloc (procs, (cap *= 2) * sizeof *procs);
            if (!grown)
                break;
            procs = grown;
        }
        *close_paren = '\0';
        procs[n].pid = (pid_t) pid;
        procs[n].ppid = ppid;
        snprintf (procs[n].comm, sizeof procs[n].comm, "%s", open_paren + 1);
        n++;
    }
    if (dir)
        closedir (dir);
    /* walk down from root, breadth first, marking descendants */
    pid_t *queue = malloc ((n + 1) * sizeof *queue);
    size_t head = 0, tail = 0;
    int count = 0;
    if (queue)
        queue[tail++] = root;
    while (queue && head < tail) {
        pid_t parent = queue[head++];
        for (size_t i = 0; i < n; i++) {
            if (procs[i].ppid != parent || procs[i].pid == root)
                continue;
            queue[tail++] = procs[i].pid;
            if (skip_comm && strcmp (procs[i].comm, skip_comm) == 0)
                continue;
            if (kill (procs[i].pid, sig) == 0)
                count++;
        }
    }
    free (queue);
    free (procs);
    return count;
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

/* True for the variables a clean environment keeps. PATH is not one: a
 * clean environment gets KS_CLEAN_PATH, never the gateway's. */
static bool
s_env_kept (const char *entry)
{
    static const char *const kept[] = {"LANG=", "LANGUAGE=", "TZ=", "HOME=", "LC_", NULL};
    for (int i = 0; kept[i]; i++)
        if (strncmp (entry, kept[i], strlen (kept[i])) == 0)
            return true;
    return false;
}

char **
ks_process_env (json_t *spec_env, const char *const *extra, bool clean)
{
    char **env = calloc (1, sizeof (char *));
    size_t n = 0;
    int rc = env ? 0 : -ENOMEM;
    for (char **e = environ; e && *e && !rc; e++)
        if (!clean || s_env_kept (*e))
            rc = s_env_put (&env, &n, strdup (*e));
    if (clean && !rc)
        rc = s_env_put (&env, &n, strdup ("PATH=" KS_CLEAN_PATH));
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
