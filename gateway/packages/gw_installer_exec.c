/* gw_installer_exec: what pip's and npm's runs share: an argument vector,
 * the bubblewrap sandbox an installer runs in, running one command as the
 * kernel user bounded by the job's deadline and cancel descriptor, the
 * install folder's files and logs, and the error a run ends with. See
 * gw_installer_exec.h. Threads: a gw_packages worker thread. */
#include "gw_installer_exec.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gw_fs.h"
#include "jp_time.h"
#include "ks_process.h"

#define MAX_JSON (32u << 20)
#define LOG_TAIL 65536

/* ---- small helpers ------------------------------------------------------ */


void
gw_installer_arg (gw_installer_argv_t *a, const char *s)
{
    char *copy = a->n < GW_INSTALLER_MAX_ARGS - 1 ? strdup (s) : NULL;
    if (!copy) {
        a->broken = true;
        return;
    }
    a->v[a->n++] = copy;
    a->v[a->n] = NULL;
}

void
gw_installer_argf (gw_installer_argv_t *a, const char *fmt, ...)
{
    char buf[2200];
    va_list ap;
    va_start (ap, fmt);
    int n = vsnprintf (buf, sizeof buf, fmt, ap);
    va_end (ap);
    if (n < 0 || (size_t) n >= sizeof buf)
        a->broken = true;
    else
        gw_installer_arg (a, buf);
}

void
gw_installer_args_free (gw_installer_argv_t *a)
{
    for (int i = 0; i < a->n; i++)
        free (a->v[i]);
    a->n = 0;
}

/* The install folder and the session folder as the installer sees them. */
const char *
gw_installer_tmp (const gw_installer_t *job)
{
    return job->bwrap ? "/tmp" : job->opdir;
}

const char *
gw_installer_session (const gw_installer_t *job)
{
    return job->bwrap ? "/session" : job->workdir;
}

void
gw_installer_error (json_t *result, const char *code, const char *fmt, ...)
{
    char message[2048];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (message, sizeof message, fmt, ap);
    va_end (ap);
    json_object_set_new (result, "error", json_pack ("{s:s, s:s}", "code", code, "message",
                                                     message));
}

/* Writes a file into the install folder, owned by the kernel user. */
int
gw_installer_write_file (const gw_installer_t *job, const char *rel, const char *data, size_t len)
{
    char path[1200];
    snprintf (path, sizeof path, "%s/%s", job->opdir, rel);
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    int rc = gw_fs_write_all (fd, data, len);
    if (!rc && job->set_user && fchown (fd, job->uid, job->gid) < 0)
        rc = -errno;
    close (fd);
    return rc;
}

/* Reads a JSON file of the install folder (new), or NULL. */
json_t *
gw_installer_load_json (const gw_installer_t *job, const char *rel)
{
    char path[1200];
    snprintf (path, sizeof path, "%s/%s", job->opdir, rel);
    return gw_fs_read_json (open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), MAX_JSON);
}

/* The last lines of a log of the install folder that start with prefix
 * (at most max, each cut at 300 bytes), joined by "; ". */
void
gw_installer_log_lines (const gw_installer_t *job, const char *rel, const char *prefix, int max,
                        char *out, size_t out_len)
{
    char path[1200];
    snprintf (path, sizeof path, "%s/%s", job->opdir, rel);
    char *tail = ks_process_log_tail (path, LOG_TAIL);
    out[0] = '\0';
    size_t len = 0;
    int found = 0;
    char *save = NULL;
    for (char *line = tail ? strtok_r (tail, "\n", &save) : NULL; line && found < max;
         line = strtok_r (NULL, "\n", &save)) {
        if (strncmp (line, prefix, strlen (prefix)) != 0 || strstr (line, "complete log"))
            continue;
        const char *text = line + strlen (prefix);
        while (*text == ' ')
            text++;
        len += (size_t) snprintf (out + len, out_len - len, "%s%.300s", found ? "; " : "",
                                  text);
        if (len >= out_len)
            break;
        found++;
    }
    free (tail);
}

/* The last non-empty line of a log of the install folder (cut at 300
 * bytes), for a failure that printed no error line of its own. */
void
gw_installer_log_last (const gw_installer_t *job, const char *rel, char *out, size_t out_len)
{
    char path[1200];
    snprintf (path, sizeof path, "%s/%s", job->opdir, rel);
    char *tail = ks_process_log_tail (path, LOG_TAIL);
    const char *last = NULL;
    char *save = NULL;
    for (char *line = tail ? strtok_r (tail, "\n", &save) : NULL; line;
         line = strtok_r (NULL, "\n", &save))
        if (strspn (line, " \t\r") < strlen (line))
            last = line;
    snprintf (out, out_len, "%.300s", last ? last : "no output");
    free (tail);
}

/* True when the log of the install folder mentions any of words. */
bool
gw_installer_log_mentions (const gw_installer_t *job, const char *rel, const char *const *words)
{
    char path[1200];
    snprintf (path, sizeof path, "%s/%s", job->opdir, rel);
    char *tail = ks_process_log_tail (path, 4 * LOG_TAIL);
    bool found = false;
    for (int i = 0; tail && words[i] && !found; i++)
        found = strstr (tail, words[i]) != NULL;
    free (tail);
    return found;
}

/* ---- running a command -------------------------------------------------- */

/* bubblewrap's arguments: the system read-only, the install folder as
 * /tmp, the session folder as /session when asked, nothing else. */
void
gw_installer_sandbox_args (const gw_installer_t *job, gw_installer_argv_t *a, bool session,
                           bool network)
{
    static const char *const head[] = {"bwrap", "--die-with-parent", "--new-session",
                                       "--unshare-pid", "--unshare-ipc", "--unshare-uts",
                                       "--unshare-cgroup-try", NULL};
    for (int i = 0; head[i]; i++)
        gw_installer_arg (a, head[i]);
    if (!network)
        gw_installer_arg (a, "--unshare-net");
    gw_installer_arg (a, "--ro-bind");
    gw_installer_arg (a, "/usr");
    gw_installer_arg (a, "/usr");
    static const char *const top[] = {"/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32",
                                      NULL};
    for (int i = 0; top[i]; i++) {
        char target[256];
        ssize_t len = readlink (top[i], target, sizeof target - 1);
        if (len > 0) {
            target[len] = '\0';
            gw_installer_arg (a, "--symlink");
            gw_installer_arg (a, target);
            gw_installer_arg (a, top[i]);
        } else if (access (top[i], F_OK) == 0) {
            gw_installer_arg (a, "--ro-bind");
            gw_installer_arg (a, top[i]);
            gw_installer_arg (a, top[i]);
        }
    }
    /* what name resolution, TLS and the interpreters need; no secrets */
    static const char *const etc[] = {
        "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/hosts", "/etc/resolv.conf",
        "/etc/host.conf", "/etc/gai.conf", "/etc/protocols", "/etc/services", "/etc/ssl",
        "/etc/ca-certificates", "/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf",
        "/etc/ld.so.conf.d", "/etc/localtime", "/etc/python3", "/etc/python3.11",
        "/etc/os-release", "/etc/debian_version", "/etc/mime.types", "/etc/pip.conf",
        "/etc/xdg/pip", NULL,
    };
    for (int i = 0; etc[i]; i++) {
        gw_installer_arg (a, "--ro-bind-try");
        gw_installer_arg (a, etc[i]);
        gw_installer_arg (a, etc[i]);
    }
    static const char *const rest[] = {"--proc", "/proc", "--dev", "/dev", NULL};
    for (int i = 0; rest[i]; i++)
        gw_installer_arg (a, rest[i]);
    gw_installer_arg (a, "--bind");
    gw_installer_arg (a, job->stage_work[0] ? job->stage_work : job->opdir);
    gw_installer_arg (a, "/tmp");
    if (session) {
        gw_installer_arg (a, "--bind");
        gw_installer_arg (a, job->stage_session[0] ? job->stage_session : job->workdir);
        gw_installer_arg (a, "/session");
    }
    if (job->seccomp_fd >= 0) {
        char fd[16];
        snprintf (fd, sizeof fd, "%d", KS_CHILD_SECCOMP_FD);
        gw_installer_arg (a, "--cap-drop");
        gw_installer_arg (a, "ALL");
        gw_installer_arg (a, "--seccomp");
        gw_installer_arg (a, fd);
    }
    if (job->find_links[0] == '/') {
        gw_installer_arg (a, "--ro-bind");
        gw_installer_arg (a, job->find_links);
        gw_installer_arg (a, job->find_links);
    }
    if (job->ca_file[0] && strncmp (job->ca_file, "/etc/ssl/", 9) != 0
        && strncmp (job->ca_file, "/usr/", 5) != 0) {
        gw_installer_arg (a, "--ro-bind-try");
        gw_installer_arg (a, job->ca_file);
        gw_installer_arg (a, job->ca_file);
    }
    gw_installer_arg (a, "--chdir");
    gw_installer_arg (a, "/tmp");
    gw_installer_arg (a, "--");
}

/* Runs argv as the kernel user with output appended to log. Returns 0
 * (exit status 0), 1 (another exit), -ETIMEDOUT, -ECANCELED, or another
 * negative errno when it could not start (err says why). */
int
gw_installer_exec (const gw_installer_t *job, char *const argv[], const char *log, char *err,
                   size_t err_len)
{
    char log_path[1200], home[1100], tmpdir[1100], ca[1100];
    snprintf (log_path, sizeof log_path, "%s/%s", job->opdir, log);
    snprintf (home, sizeof home, "HOME=%s", gw_installer_tmp (job));
    snprintf (tmpdir, sizeof tmpdir, "TMPDIR=%s", gw_installer_tmp (job));
    snprintf (ca, sizeof ca, "NODE_EXTRA_CA_CERTS=%s", job->ca_file);
    char *env[20];
    int n = 0;
    env[n++] = "PATH=/usr/local/bin:/usr/bin:/bin";
    env[n++] = "LANG=C.UTF-8";
    env[n++] = home;
    env[n++] = tmpdir;
    env[n++] = "npm_config_update_notifier=false";
    env[n++] = "PIP_NO_WARN_SCRIPT_LOCATION=1";
    if (job->ca_file[0])
        env[n++] = ca;
    for (int i = 0; job->proxy_env[i] && n < 19; i++)
        env[n++] = job->proxy_env[i];
    env[n] = NULL;
    ks_spawn_extra_t extra;
    memset (&extra, 0, sizeof extra);
    extra.set_user = job->set_user;
    extra.uid = job->uid;
    extra.gid = job->gid;
    extra.rlimits[extra.n_rlimits++] = (ks_rlimit_t) {RLIMIT_NOFILE, 4096};
    extra.rlimits[extra.n_rlimits++] = (ks_rlimit_t) {RLIMIT_CORE, 0};
    extra.rlimits[extra.n_rlimits++] = (ks_rlimit_t) {RLIMIT_FSIZE, (rlim_t) job->fsize_limit};
    if (job->bwrap && job->stage_work[0]) {
        extra.bind_from[0] = job->opdir;
        extra.bind_to[0] = job->stage_work;
        extra.bind_from[1] = job->workdir;
        extra.bind_to[1] = job->stage_session;
    }
    if (job->bwrap && job->seccomp_fd >= 0) {
        extra.has_seccomp = true;
        extra.seccomp_fd = job->seccomp_fd;
    }
    pid_t pid;
    int pidfd;
    int rc = ks_process_spawn (argv, env, job->opdir, log_path, &extra, &pid, &pidfd, err,
                               err_len);
    if (rc)
        return rc;
    struct pollfd fds[2] = {{.fd = pidfd, .events = POLLIN},
                            {.fd = job->cancel_fd, .events = POLLIN}};
    int outcome = 0;
    for (;;) {
        int64_t left = job->deadline_ms - jp_time_now_ms ();
        if (left <= 0) {
            outcome = -ETIMEDOUT;
            break;
        }
        int r = poll (fds, 2, left > INT_MAX ? INT_MAX : (int) left);
        if (r < 0 && errno != EINTR) {
            outcome = -errno;
            break;
        }
        if (r > 0 && fds[0].revents)
            break;
        if (r > 0 && fds[1].revents) {
            outcome = -ECANCELED;
            break;
        }
    }
    if (outcome)
        ks_process_signal_group (pid, SIGKILL);     /* bwrap takes the sandbox along */
    int status = 0;
    while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
        ;
    close (pidfd);
    if (outcome)
        return outcome;
    return WIFEXITED (status) && WEXITSTATUS (status) == 0 ? 0 : 1;
}

/* True when the run must stop before the next step. */
bool
gw_installer_stopped (const gw_installer_t *job, json_t *result)
{
    struct pollfd p = {.fd = job->cancel_fd, .events = POLLIN};
    if (poll (&p, 1, 0) > 0) {
        gw_installer_error (result, "cancelled", "the install was stopped");
        return true;
    }
    if (jp_time_now_ms () >= job->deadline_ms) {
        gw_installer_error (result, "timeout", "the install did not finish within %ld s",
                            job->timeout_s);
        return true;
    }
    return false;
}

/* Records why a run failed: stopped, not startable, or the tool's errors. */
bool
gw_installer_run_failed (const gw_installer_t *job, json_t *result, int rc, const char *what,
                         const char *err)
{
    if (rc >= 0)
        return false;
    if (rc == -ETIMEDOUT)
        gw_installer_error (result, "timeout", "%s did not finish within %ld s and was stopped "
                            "(the limit is CODEBOX_EXEC_TIMEOUT, lowered by "
                            "X-Codebox-Exec-Timeout)", what, job->timeout_s);
    else if (rc == -ECANCELED)
        gw_installer_error (result, "cancelled", "the install was stopped");
    else
        gw_installer_error (result, "install_failed", "cannot run %s: %s", what, err);
    return true;
}

/* True when s is made of the characters of allowed only. */
bool
gw_installer_only (const char *s, const char *allowed)
{
    return s && *s && strspn (s, allowed) == strlen (s);
}
