/* gw_package_installer: pip and npm, sandboxed, resolved before they
 * install; see gw_package_installer.h. Runs on a worker thread. */
#include "gw_package_installer.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gw_fs.h"
#include "gw_package_version.h"
#include "gw_path.h"
#include "jp_time.h"
#include "ks_process.h"

#define MAX_ARGS 200
#define MAX_JSON (32u << 20)
#define LOG_TAIL 65536
#define PIP_NET_TIMEOUT_S 15
#define NPM_NET_TIMEOUT_MS 30000

/* ---- small helpers ------------------------------------------------------ */

/* An argument vector of owned strings. */
typedef struct {
    char *v[MAX_ARGS];
    int n;
    bool broken;                /* out of room or memory */
} s_argv_t;

static void
s_arg (s_argv_t *a, const char *s)
{
    char *copy = a->n < MAX_ARGS - 1 ? strdup (s) : NULL;
    if (!copy) {
        a->broken = true;
        return;
    }
    a->v[a->n++] = copy;
    a->v[a->n] = NULL;
}

static void
s_argf (s_argv_t *a, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

static void
s_argf (s_argv_t *a, const char *fmt, ...)
{
    char buf[2200];
    va_list ap;
    va_start (ap, fmt);
    int n = vsnprintf (buf, sizeof buf, fmt, ap);
    va_end (ap);
    if (n < 0 || (size_t) n >= sizeof buf)
        a->broken = true;
    else
        s_arg (a, buf);
}

static void
s_args_free (s_argv_t *a)
{
    for (int i = 0; i < a->n; i++)
        free (a->v[i]);
    a->n = 0;
}

/* The install folder and the session folder as the installer sees them. */
static const char *
s_tmp (const gw_installer_t *job)
{
    return job->bwrap ? "/tmp" : job->opdir;
}

static const char *
s_session (const gw_installer_t *job)
{
    return job->bwrap ? "/session" : job->workdir;
}

static void
s_error (json_t *result, const char *code, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static void
s_error (json_t *result, const char *code, const char *fmt, ...)
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
static int
s_write_file (const gw_installer_t *job, const char *rel, const char *data, size_t len)
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
static json_t *
s_load_json (const gw_installer_t *job, const char *rel)
{
    char path[1200];
    snprintf (path, sizeof path, "%s/%s", job->opdir, rel);
    int fd = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    char *data = NULL;
    size_t len = 0;
    int rc = gw_fs_read_fd (fd, MAX_JSON, &data, &len);
    close (fd);
    json_t *json = rc ? NULL : json_loadb (data, len, 0, NULL);
    free (data);
    return json;
}

/* The last lines of a log of the install folder that start with prefix
 * (at most max, each cut at 300 bytes), joined by "; ". */
static void
s_log_lines (const gw_installer_t *job, const char *rel, const char *prefix, int max,
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
static void
s_log_last (const gw_installer_t *job, const char *rel, char *out, size_t out_len)
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
static bool
s_log_mentions (const gw_installer_t *job, const char *rel, const char *const *words)
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
static void
s_sandbox_args (const gw_installer_t *job, s_argv_t *a, bool session, bool network)
{
    static const char *const head[] = {"bwrap", "--die-with-parent", "--new-session",
                                       "--unshare-pid", "--unshare-ipc", "--unshare-uts",
                                       "--unshare-cgroup-try", NULL};
    for (int i = 0; head[i]; i++)
        s_arg (a, head[i]);
    if (!network)
        s_arg (a, "--unshare-net");
    s_arg (a, "--ro-bind");
    s_arg (a, "/usr");
    s_arg (a, "/usr");
    static const char *const top[] = {"/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32",
                                      NULL};
    for (int i = 0; top[i]; i++) {
        char target[256];
        ssize_t len = readlink (top[i], target, sizeof target - 1);
        if (len > 0) {
            target[len] = '\0';
            s_arg (a, "--symlink");
            s_arg (a, target);
            s_arg (a, top[i]);
        } else if (access (top[i], F_OK) == 0) {
            s_arg (a, "--ro-bind");
            s_arg (a, top[i]);
            s_arg (a, top[i]);
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
        s_arg (a, "--ro-bind-try");
        s_arg (a, etc[i]);
        s_arg (a, etc[i]);
    }
    static const char *const rest[] = {"--proc", "/proc", "--dev", "/dev", NULL};
    for (int i = 0; rest[i]; i++)
        s_arg (a, rest[i]);
    s_arg (a, "--bind");
    s_arg (a, job->stage_work[0] ? job->stage_work : job->opdir);
    s_arg (a, "/tmp");
    if (session) {
        s_arg (a, "--bind");
        s_arg (a, job->stage_session[0] ? job->stage_session : job->workdir);
        s_arg (a, "/session");
    }
    if (job->seccomp_fd >= 0) {
        char fd[16];
        snprintf (fd, sizeof fd, "%d", KS_CHILD_SECCOMP_FD);
        s_arg (a, "--cap-drop");
        s_arg (a, "ALL");
        s_arg (a, "--seccomp");
        s_arg (a, fd);
    }
    if (job->find_links[0] == '/') {
        s_arg (a, "--ro-bind");
        s_arg (a, job->find_links);
        s_arg (a, job->find_links);
    }
    if (job->ca_file[0] && strncmp (job->ca_file, "/etc/ssl/", 9) != 0
        && strncmp (job->ca_file, "/usr/", 5) != 0) {
        s_arg (a, "--ro-bind-try");
        s_arg (a, job->ca_file);
        s_arg (a, job->ca_file);
    }
    s_arg (a, "--chdir");
    s_arg (a, "/tmp");
    s_arg (a, "--");
}

/* Runs argv as the kernel user with output appended to log. Returns 0
 * (exit status 0), 1 (another exit), -ETIMEDOUT, -ECANCELED, or another
 * negative errno when it could not start (err says why). */
static int
s_exec (const gw_installer_t *job, char *const argv[], const char *log, char *err,
        size_t err_len)
{
    char log_path[1200], home[1100], tmpdir[1100], ca[1100];
    snprintf (log_path, sizeof log_path, "%s/%s", job->opdir, log);
    snprintf (home, sizeof home, "HOME=%s", s_tmp (job));
    snprintf (tmpdir, sizeof tmpdir, "TMPDIR=%s", s_tmp (job));
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
static bool
s_stopped (const gw_installer_t *job, json_t *result)
{
    struct pollfd p = {.fd = job->cancel_fd, .events = POLLIN};
    if (poll (&p, 1, 0) > 0) {
        s_error (result, "cancelled", "the install was stopped");
        return true;
    }
    if (jp_time_now_ms () >= job->deadline_ms) {
        s_error (result, "timeout", "the install did not finish within %ld s", job->timeout_s);
        return true;
    }
    return false;
}

/* Records why a run failed: stopped, not startable, or the tool's errors. */
static bool
s_run_failed (const gw_installer_t *job, json_t *result, int rc, const char *what,
              const char *err)
{
    if (rc >= 0)
        return false;
    if (rc == -ETIMEDOUT)
        s_error (result, "timeout", "%s did not finish within %ld s and was stopped (the "
                 "limit is CODEBOX_EXEC_TIMEOUT, lowered by X-Codebox-Exec-Timeout)", what,
                 job->timeout_s);
    else if (rc == -ECANCELED)
        s_error (result, "cancelled", "the install was stopped");
    else
        s_error (result, "install_failed", "cannot run %s: %s", what, err);
    return true;
}

/* ---- pip ---------------------------------------------------------------- */

static void
s_pip_common (const gw_installer_t *job, s_argv_t *a)
{
    long left = (long) ((job->deadline_ms - jp_time_now_ms ()) / 1000);
    long net = left < 1 ? 1 : left < PIP_NET_TIMEOUT_S ? left : PIP_NET_TIMEOUT_S;
    const char *tmp = s_tmp (job);
    static const char *const fixed[] = {"-I", "-m", "pip", "install", "--no-input",
                                        "--disable-pip-version-check", "--no-color",
                                        "--progress-bar", "off", "--only-binary", ":all:",
                                        "--retries", "0", NULL};
    s_arg (a, job->python);
    for (int i = 0; fixed[i]; i++)
        s_arg (a, fixed[i]);
    s_argf (a, "--timeout=%ld", net);
    s_argf (a, "--cache-dir=%s/cache", tmp);
    s_argf (a, "--log=%s/pip-debug.log", tmp);
    if (job->index_url[0])
        s_argf (a, "--index-url=%s", job->index_url);
    else if (job->find_links[0])
        s_arg (a, "--no-index");
    if (job->find_links[0])
        s_argf (a, "--find-links=%s", job->find_links);
}

/* Explains a failed pip run. */
static void
s_pip_failure (const gw_installer_t *job, json_t *result, const char *reqs)
{
    /* pip's debug log words for an index it could not talk to (a 404 for
       an unknown package is "not found", not this) */
    static const char *const net[] = {"connection error:", "NewConnectionError",
                                      "ConnectTimeout", "ReadTimeoutError", "Read timed out",
                                      "Name or service not known", "SSLError", "ProxyError",
                                      "Temporary failure in name resolution", NULL};
    char lines[1200];
    s_log_lines (job, "pip.log", "ERROR:", 3, lines, sizeof lines);
    if (!lines[0])
        s_log_last (job, "pip.log", lines, sizeof lines);
    const char *index = job->index_url[0] ? job->index_url
                        : job->find_links[0] ? job->find_links
                                             : "https://pypi.org/simple (pip's default)";
    if (s_log_mentions (job, "pip-debug.log", net))
        s_error (result, "index_unreachable", "could not reach the package index %s, so "
                 "nothing was installed; the operator can set CODEBOX_PIP_INDEX_URL to a "
                 "reachable index or CODEBOX_PIP_FIND_LINKS to a folder of wheels (%s)", index,
                 lines[0] ? lines : "no answer");
    else if (strstr (lines, "No matching distribution") || strstr (lines, "Could not find a "
                                                                           "version"))
        s_error (result, "not_found", "no installable version of %s in %s (only wheels are "
                 "installed, and only from there): %s", reqs, index, lines);
    else
        s_error (result, "install_failed", "pip could not install %s: %s", reqs, lines);
}

/* True when s is made of the characters of allowed only. */
static bool
s_only (const char *s, const char *allowed)
{
    return s && *s && strspn (s, allowed) == strlen (s);
}

#define S_NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-"
#define S_VERSION_CHARS S_NAME_CHARS "!+"

/* The sha256 of a report item ("" when none). */
static void
s_report_hash (json_t *item, char *out, size_t len)
{
    json_t *archive = json_object_get (json_object_get (item, "download_info"), "archive_info");
    const char *h = json_string_value (json_object_get (json_object_get (archive, "hashes"),
                                                        "sha256"));
    const char *legacy = json_string_value (json_object_get (archive, "hash"));
    if (!h && legacy && strncmp (legacy, "sha256=", 7) == 0)
        h = legacy + 7;
    snprintf (out, len, "%s", h && strlen (h) == 64 && s_only (h, "0123456789abcdef") ? h : "");
}

/* Judges pip's report. Fills installed and the pins text; returns false
 * (with result's refused and error set) when anything is refused. */
static bool
s_pip_judge (const gw_installer_t *job, json_t *report, json_t *result, json_t *installed,
             char **pins_p)
{
    json_t *items = json_object_get (report, "install");
    size_t cap = 256 + json_array_size (items) * 400, len = 0;
    char *pins = malloc (cap);
    if (!json_is_array (items) || !pins) {
        free (pins);
        s_error (result, "install_failed", "pip's resolution report is missing");
        return false;
    }
    pins[0] = '\0';
    json_t *refused = json_object_get (result, "refused");
    bool hashes = true;
    size_t i;
    json_t *item;
    json_array_foreach (items, i, item) {
        json_t *meta = json_object_get (item, "metadata");
        const char *name = json_string_value (json_object_get (meta, "name"));
        const char *version = json_string_value (json_object_get (meta, "version"));
        bool requested = json_is_true (json_object_get (item, "requested"));
        char requirement[400];
        snprintf (requirement, sizeof requirement, "%.150s==%.150s", name ? name : "?",
                  version ? version : "?");
        gw_pkg_verdict_t v;
        if (!s_only (name, S_NAME_CHARS) || !s_only (version, S_VERSION_CHARS)
            || strlen (name) > 150 || strlen (version) > 150
            || json_is_true (json_object_get (item, "is_direct"))) {
            json_array_append_new (refused, json_pack ("{s:s, s:s, s:s}", "requirement",
                                                       requirement, "rule", "invalid", "reason",
                                                       "the index returned a package with an "
                                                       "unexpected name, version or source"));
            continue;
        }
        if (gw_package_policy_check_resolved (job->policy, GW_PKG_PYTHON, name, version,
                                              requested, &v)) {
            json_array_append_new (refused, json_pack ("{s:s, s:s, s:s}", "requirement",
                                                       requirement, "rule", v.rule, "reason",
                                                       v.reason));
            continue;
        }
        char hash[65];
        s_report_hash (item, hash, sizeof hash);
        hashes = hashes && hash[0];
        len += (size_t) snprintf (pins + len, cap - len, "%s==%s%s%s\n", name, version,
                                  hash[0] ? " --hash=sha256:" : "", hash);
        json_array_append_new (installed, json_pack ("{s:s, s:s, s:b}", "name", name, "version",
                                                     version, "requested", requested));
    }
    if (json_array_size (refused)) {
        json_t *first = json_array_get (refused, 0);
        s_error (result, "refused", "nothing was installed: %s",
                 json_string_value (json_object_get (first, "reason")));
        free (pins);
        return false;
    }
    if (!hashes) {
        /* hash-checking mode needs every hash; without them pin versions only */
        len = 0;
        json_array_foreach (installed, i, item)
            len += (size_t) snprintf (pins + len, cap - len, "%s==%s\n",
                                      json_string_value (json_object_get (item, "name")),
                                      json_string_value (json_object_get (item, "version")));
    }
    *pins_p = pins;
    return true;
}

static json_t *
s_pip (const gw_installer_t *job, json_t *result)
{
    char err[512], reqs[1024] = "";
    for (size_t i = 0; i < job->n; i++) {
        size_t rl = strlen (reqs);
        snprintf (reqs + rl, sizeof reqs - rl, "%s%s", i ? ", " : "", job->install[i]);
    }
    bool constraints = job->constraints && *job->constraints;
    if (constraints
        && s_write_file (job, "constraints.txt", job->constraints, strlen (job->constraints))) {
        s_error (result, "install_failed", "cannot write the constraints file");
        return result;
    }
    /* a local find-links folder alone needs no network */
    bool network = job->index_url[0] || job->find_links[0] != '/';
    const char *tmp = s_tmp (job);
    s_argv_t a = {0};
    if (job->bwrap)
        s_sandbox_args (job, &a, false, network);
    s_pip_common (job, &a);
    s_arg (&a, "--dry-run");
    s_arg (&a, "--ignore-installed");
    s_argf (&a, "--report=%s/report.json", tmp);
    s_arg (&a, "-q");
    if (constraints)
        s_argf (&a, "--constraint=%s/constraints.txt", tmp);
    s_arg (&a, "--");
    for (size_t i = 0; i < job->n; i++)
        s_arg (&a, job->install[i]);
    int rc = a.broken ? -ENOMEM : s_exec (job, a.v, "pip.log", err, sizeof err);
    s_args_free (&a);
    if (s_run_failed (job, result, rc, "pip", err))
        return result;
    if (rc) {
        s_pip_failure (job, result, reqs);
        return result;
    }
    json_t *report = s_load_json (job, "report.json");
    json_t *installed = json_array ();
    char *pins = NULL;
    bool ok = s_pip_judge (job, report, result, installed, &pins);
    json_decref (report);
    if (!ok || s_stopped (job, result)) {
        json_decref (installed);
        free (pins);
        return result;
    }
    rc = s_write_file (job, "pins.txt", pins, strlen (pins));
    bool hashes = strstr (pins, "--hash=") != NULL;
    free (pins);
    if (rc) {
        json_decref (installed);
        s_error (result, "install_failed", "cannot write the pins file");
        return result;
    }
    if (job->bwrap)
        s_sandbox_args (job, &a, true, network);
    s_pip_common (job, &a);
    s_argf (&a, "--target=%s/.packages", s_session (job));
    s_arg (&a, "--upgrade");
    s_arg (&a, "--no-deps");
    s_arg (&a, "-q");
    if (hashes)
        s_arg (&a, "--require-hashes");
    s_argf (&a, "--requirement=%s/pins.txt", tmp);
    rc = a.broken ? -ENOMEM : s_exec (job, a.v, "pip.log", err, sizeof err);
    s_args_free (&a);
    if (s_run_failed (job, result, rc, "pip", err) || rc) {
        if (rc > 0)
            s_pip_failure (job, result, reqs);
        json_decref (installed);
        return result;
    }
    json_object_set_new (result, "installed", installed);
    return result;
}

/* ---- npm ---------------------------------------------------------------- */

static void
s_npm_common (const gw_installer_t *job, s_argv_t *a, const char *command)
{
    long left = (long) (job->deadline_ms - jp_time_now_ms ());
    long net = left < 1000 ? 1000 : left < NPM_NET_TIMEOUT_MS ? left : NPM_NET_TIMEOUT_MS;
    static const char *const fixed[] = {"--ignore-scripts", "--no-audit", "--no-fund",
                                        "--no-update-notifier", "--fetch-retries=0",
                                        "--loglevel=warn", NULL};
    s_arg (a, "npm");
    s_arg (a, command);
    for (int i = 0; fixed[i]; i++)
        s_arg (a, fixed[i]);
    s_argf (a, "--fetch-timeout=%ld", net);
    s_argf (a, "--registry=%s", job->registry);
    s_argf (a, "--prefix=%s/stage", s_tmp (job));
}

/* Explains a failed npm run. */
static void
s_npm_failure (const gw_installer_t *job, json_t *result)
{
    static const char *const net[] = {"ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT",
                                      "ECONNRESET", "network request", "SELF_SIGNED_CERT",
                                      "UNABLE_TO_", NULL};
    static const char *const missing[] = {"E404", "ETARGET", "404 Not Found", NULL};
    char lines[1200];
    s_log_lines (job, "npm.log", "npm error", 4, lines, sizeof lines);
    if (!lines[0])
        s_log_lines (job, "npm.log", "npm ERR!", 4, lines, sizeof lines);
    if (!lines[0])
        s_log_last (job, "npm.log", lines, sizeof lines);
    if (s_log_mentions (job, "npm.log", missing))
        s_error (result, "not_found", "the registry %s has no such package or version: %s",
                 job->registry, lines);
    else if (s_log_mentions (job, "npm.log", net))
        s_error (result, "index_unreachable", "could not reach the npm registry %s, so "
                 "nothing was installed; the operator can set CODEBOX_NPM_REGISTRY (%s)",
                 job->registry, lines);
    else
        s_error (result, "install_failed", "npm could not install: %s", lines);
}

/* True when url is on the registry's scheme, host and port. */
static bool
s_same_origin (const char *url, const char *registry)
{
    const char *sep = strstr (registry, "://");
    if (!sep || (strncasecmp (registry, "https://", 8) != 0
                 && strncasecmp (registry, "http://", 7) != 0))
        return false;
    size_t n = (size_t) (sep + 3 - registry) + strcspn (sep + 3, "/");
    return strlen (url) > n && strncasecmp (url, registry, n) == 0 && url[n] == '/';
}

/* The session's recorded dependencies that the policy still allows, into
 * deps; the others into dropped. The new requests replace their names. */
static void
s_npm_previous (const gw_installer_t *job, json_t *deps, json_t *dropped)
{
    int dir = open (job->workdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int fd = dir < 0 ? -1 : gw_path_open_beneath (dir, "package.json", O_RDONLY | O_CLOEXEC, 0);
    if (dir >= 0)
        close (dir);
    struct stat st;
    char *data = NULL;
    size_t len = 0;
    if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode)
        || gw_fs_read_fd (fd, 1u << 20, &data, &len)) {
        if (fd >= 0)
            close (fd);
        free (data);
        return;
    }
    close (fd);
    json_t *old = json_loadb (data, len, 0, NULL);
    free (data);
    const char *key;
    json_t *value;
    json_object_foreach (json_object_get (old, "dependencies"), key, value) {
        char text[600];
        snprintf (text, sizeof text, "%.250s@%.300s", key,
                  json_is_string (value) ? json_string_value (value) : "?");
        gw_pkg_verdict_t v;
        if (!json_is_string (value)
            || gw_package_policy_check (job->policy, GW_PKG_NPM, text, &v)) {
            json_array_append_new (dropped, json_pack ("{s:s, s:s, s:s}", "requirement", text,
                                                       "rule", json_is_string (value) ? v.rule
                                                       : "invalid", "reason",
                                                       json_is_string (value) ? v.reason
                                                       : "not a version range"));
            continue;
        }
        bool replaced = false;
        for (size_t i = 0; i < job->n && !replaced; i++)
            replaced = strcmp (job->names[i], v.name) == 0;
        size_t kl = strlen (key);
        if (!replaced)
            json_object_set_new (deps, key, json_string (v.install[kl] == '@' ? v.install + kl + 1
                                                                           : "*"));
    }
    json_decref (old);
}

/* The package name of a lock key ("node_modules/a/node_modules/@s/b" is
 * "@s/b"), or NULL. */
static const char *
s_lock_name (const char *key, bool *top)
{
    const char *last = NULL;
    for (const char *p = strstr (key, "node_modules/"); p; p = strstr (p + 1, "node_modules/"))
        last = p;
    *top = last == key && strncmp (key, "node_modules/", 13) == 0;
    return last ? last + 13 : NULL;
}

/* Judges the lock file npm resolved. Fills installed with the requested
 * packages; returns false (refused and error set) when anything is
 * refused. */
static bool
s_npm_judge (const gw_installer_t *job, json_t *lock, json_t *result, json_t *installed,
             json_t *recorded)
{
    json_t *packages = json_object_get (lock, "packages");
    if (!json_is_object (packages)) {
        s_error (result, "install_failed", "npm's lock file is missing");
        return false;
    }
    json_t *refused = json_object_get (result, "refused");
    const char *key;
    json_t *entry;
    long tree = 0;
    json_object_foreach (packages, key, entry) {
        if (!*key)
            continue;
        bool top;
        const char *name = s_lock_name (key, &top);
        const char *version = json_string_value (json_object_get (entry, "version"));
        const char *resolved = json_string_value (json_object_get (entry, "resolved"));
        const char *alias = json_string_value (json_object_get (entry, "name"));
        char norm[GW_PKG_NAME_MAX];
        bool mine = false;
        if (name && top && gw_package_normalize (GW_PKG_NPM, name, norm, sizeof norm) == 0)
            for (size_t i = 0; i < job->n && !mine; i++)
                mine = strcmp (job->names[i], norm) == 0;
        bool requested = mine || (top && name && json_object_get (recorded, name));
        char requirement[400];
        snprintf (requirement, sizeof requirement, "%.200s@%.150s", name ? name : key,
                  version ? version : "?");
        const char *why = NULL;
        if (!name || json_is_true (json_object_get (entry, "link")))
            why = "a linked or local package";
        else if (alias && strcmp (alias, name) != 0)
            why = "an alias of another package";
        else if (resolved && !s_same_origin (resolved, job->registry))
            why = "a package from outside the registry (URL, git or file)";
        if (why) {
            char reason[600];
            snprintf (reason, sizeof reason, "%s is %s; only registry packages are installed",
                      requirement, why);
            json_array_append_new (refused, json_pack ("{s:s, s:s, s:s}", "requirement",
                                                       requirement, "rule", "source", "reason",
                                                       reason));
            continue;
        }
        gw_pkg_verdict_t v;
        if (gw_package_policy_check_resolved (job->policy, GW_PKG_NPM, name, version,
                                              requested, &v)) {
            json_array_append_new (refused, json_pack ("{s:s, s:s, s:s}", "requirement",
                                                       requirement, "rule", v.rule, "reason",
                                                       v.reason));
            continue;
        }
        tree++;
        if (mine)
            json_array_append_new (installed, json_pack ("{s:s, s:s, s:b}", "name", name,
                                                         "version", version, "requested", 1));
    }
    json_object_set_new (result, "packages_in_tree", json_integer (tree));
    if (json_array_size (refused)) {
        json_t *first = json_array_get (refused, 0);
        s_error (result, "refused", "nothing was installed: %s",
                 json_string_value (json_object_get (first, "reason")));
        return false;
    }
    return true;
}

/* Moves name from one folder into another, replacing what is there
 * (which ends up in from); no path is followed. */
static int
s_swap (int from, int to, const char *name)
{
    if (renameat2 (from, name, to, name, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno == ENOENT)
        return 0;           /* nothing to move */
    if (errno != EEXIST)
        return -errno;
    if (renameat2 (from, name, to, name, RENAME_EXCHANGE) == 0)
        return 0;
    if (errno != EINVAL)
        return -errno;
    /* no exchange on this file system: move the old one aside first */
    char aside[300];
    snprintf (aside, sizeof aside, "old-%s", name);
    if (renameat (to, name, from, aside) < 0 && errno != ENOENT)
        return -errno;
    return renameat2 (from, name, to, name, RENAME_NOREPLACE) == 0 ? 0 : -errno;
}

static json_t *
s_npm (const gw_installer_t *job, json_t *result)
{
    char err[512], stage[1200];
    snprintf (stage, sizeof stage, "%s/stage", job->opdir);
    if ((mkdir (stage, 0755) < 0 && errno != EEXIST)
        || (job->set_user && chown (stage, job->uid, job->gid) < 0)) {
        s_error (result, "install_failed", "cannot make the staging folder: %s",
                 strerror (errno));
        return result;
    }
    json_t *deps = json_object (), *dropped = json_array ();
    s_npm_previous (job, deps, dropped);
    json_object_set_new (result, "dropped", dropped);
    json_t *manifest = json_pack ("{s:s, s:b, s:O}", "name", "codebox-session", "private", 1,
                                  "dependencies", deps);
    char *text = manifest ? json_dumps (manifest, JSON_INDENT (2)) : NULL;
    json_decref (manifest);
    int rc = text ? s_write_file (job, "stage/package.json", text, strlen (text)) : -ENOMEM;
    free (text);
    if (rc) {
        json_decref (deps);
        s_error (result, "install_failed", "cannot write package.json: %s", strerror (-rc));
        return result;
    }
    s_argv_t a = {0};
    if (job->bwrap)
        s_sandbox_args (job, &a, false, true);
    s_npm_common (job, &a, "install");
    s_arg (&a, "--package-lock-only");
    s_arg (&a, "--save-exact");
    s_arg (&a, "--");
    for (size_t i = 0; i < job->n; i++)
        s_arg (&a, job->install[i]);
    rc = a.broken ? -ENOMEM : s_exec (job, a.v, "npm.log", err, sizeof err);
    s_args_free (&a);
    if (s_run_failed (job, result, rc, "npm", err) || rc) {
        if (rc > 0)
            s_npm_failure (job, result);
        json_decref (deps);
        return result;
    }
    json_t *lock = s_load_json (job, "stage/package-lock.json");
    json_t *installed = json_array ();
    bool ok = s_npm_judge (job, lock, result, installed, deps);
    json_decref (lock);
    json_decref (deps);
    if (!ok || s_stopped (job, result)) {
        json_decref (installed);
        return result;
    }
    if (job->bwrap)
        s_sandbox_args (job, &a, false, true);
    s_npm_common (job, &a, "ci");
    rc = a.broken ? -ENOMEM : s_exec (job, a.v, "npm.log", err, sizeof err);
    s_args_free (&a);
    if (s_run_failed (job, result, rc, "npm", err) || rc) {
        if (rc > 0)
            s_npm_failure (job, result);
        json_decref (installed);
        return result;
    }
    int from = open (stage, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int to = open (job->workdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    static const char *const moved[] = {"node_modules", "package-lock.json", "package.json",
                                        NULL};
    rc = from < 0 || to < 0 ? -errno : 0;
    for (int i = 0; moved[i] && !rc; i++)
        rc = s_swap (from, to, moved[i]);
    if (from >= 0)
        close (from);
    if (to >= 0)
        close (to);
    if (rc) {
        json_decref (installed);
        s_error (result, "install_failed", "cannot move the installed packages into the "
                 "session folder: %s", strerror (-rc));
        return result;
    }
    json_object_set_new (result, "installed", installed);
    return result;
}

/* ---- what the kernel has already ---------------------------------------- */

/* Run by the kernel's Python in the installer's sandbox, without network:
 * argv is OUT PACKAGES REQ...; writes {requirement: [version, name]} for each
 * requirement an installed distribution satisfies as the kernel would see
 * it (the session's packages first, then the system's), markers and
 * specifiers judged by `packaging` when there is one; extras are left to
 * pip. */
static const char S_SATISFIED_PY[] =
    "import sys, json\n"
    "from importlib import metadata\n"
    "try:\n"
    "    from packaging.requirements import Requirement\n"
    "except Exception:\n"
    "    Requirement = None\n"
    "out, packages, reqs = sys.argv[1], sys.argv[2], sys.argv[3:]\n"
    "sys.path.insert(0, packages)\n"
    "found = {}\n"
    "for text in reqs:\n"
    "    try:\n"
    "        if Requirement:\n"
    "            r = Requirement(text)\n"
    "            if r.extras or r.url or (r.marker and not r.marker.evaluate()):\n"
    "                continue\n"
    "            name, spec = r.name, r.specifier\n"
    "        else:\n"
    "            name, spec = text, None\n"
    "        dist = metadata.distribution(name)\n"
    "        if not spec or spec.contains(dist.version, prereleases=True):\n"
    "            found[text] = [dist.version, dist.metadata['Name'] or name]\n"
    "    except Exception:\n"
    "        pass\n"
    "with open(out, 'w') as f:\n"
    "    json.dump(found, f)\n";

/* Moves the requirements of job that the kernel's Python already satisfies
 * out of rest (a copy of job) into result's "satisfied":
 * [{"requirement","name","version"}]. A check that cannot run leaves
 * everything to pip. */
static void
s_pip_satisfied (const gw_installer_t *job, gw_installer_t *rest, json_t *result)
{
    char err[512];
    s_argv_t a = {0};
    if (job->bwrap)
        s_sandbox_args (job, &a, true, false);
    s_arg (&a, job->python);
    s_arg (&a, "-I");
    s_arg (&a, "-c");
    s_arg (&a, S_SATISFIED_PY);
    s_argf (&a, "%s/satisfied.json", s_tmp (job));
    s_argf (&a, "%s/.packages", s_session (job));
    for (size_t i = 0; i < job->n; i++)
        s_arg (&a, job->install[i]);
    int rc = a.broken ? -ENOMEM : s_exec (job, a.v, "check.log", err, sizeof err);
    s_args_free (&a);
    json_t *found = rc == 0 ? s_load_json (job, "satisfied.json") : NULL;
    json_t *satisfied = json_array ();
    rest->n = 0;
    for (size_t i = 0; i < job->n; i++) {
        json_t *pair = json_object_get (found, job->install[i]);
        const char *version = json_string_value (json_array_get (pair, 0));
        const char *name = json_string_value (json_array_get (pair, 1));
        if (version && s_only (version, S_VERSION_CHARS) && strlen (version) < 64)
            json_array_append_new (satisfied, json_pack ("{s:s, s:s, s:s}", "requirement",
                                                         job->install[i], "name",
                                                         name && s_only (name, S_NAME_CHARS)
                                                             && strlen (name) < 128
                                                             ? name : job->names[i],
                                                         "version", version));
        else {
            rest->install[rest->n] = job->install[i];
            rest->names[rest->n++] = job->names[i];
        }
    }
    json_object_set_new (result, "satisfied", satisfied);
    json_decref (found);
}

/* The version of node_modules/NAME in the session folder (the kernel's
 * NODE_PATH), read through gw_path_open_beneath: kernel code owns the
 * folder and may have planted links. False when there is none. */
static bool
s_npm_installed (const gw_installer_t *job, const char *name, char *version, size_t len)
{
    char rel[400];
    if (snprintf (rel, sizeof rel, "node_modules/%s/package.json", name) >= (int) sizeof rel)
        return false;
    int dir = open (job->workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int fd = dir < 0 ? -1 : gw_path_open_beneath (dir, rel, O_RDONLY | O_CLOEXEC, 0);
    if (dir >= 0)
        close (dir);
    char *text = NULL;
    size_t n = 0;
    bool ok = fd >= 0 && gw_fs_read_fd (fd, 1 << 20, &text, &n) == 0;
    if (fd >= 0)
        close (fd);
    json_t *manifest = ok ? json_loadb (text, n, 0, NULL) : NULL;
    free (text);
    const char *v = json_string_value (json_object_get (manifest, "version"));
    const char *own = json_string_value (json_object_get (manifest, "name"));
    ok = v && own && strcmp (own, name) == 0 && strlen (v) < len && s_only (v, S_VERSION_CHARS);
    if (ok)
        snprintf (version, len, "%s", v);
    json_decref (manifest);
    return ok;
}

/* npm: moves the requirements the session's node_modules already holds in
 * a version of the asked range out of rest, into result's "satisfied". */
static void
s_npm_satisfied (const gw_installer_t *job, gw_installer_t *rest, json_t *result)
{
    json_t *satisfied = json_array ();
    rest->n = 0;
    for (size_t i = 0; i < job->n; i++) {
        const char *name = job->names[i], *install = job->install[i];
        size_t nl = strlen (name);
        const char *range = strncmp (install, name, nl) == 0 && install[nl] == '@'
                                ? install + nl + 1 : strcmp (install, name) == 0 ? "*" : NULL;
        char version[64], err[200];
        gw_ver_t v;
        gw_vset_t set = {0};
        bool ok = range && s_npm_installed (job, name, version, sizeof version)
                  && gw_ver_parse_semver (version, &v) == 0
                  && gw_vset_parse_npm (*range ? range : "*", &set, err, sizeof err) == 0
                  && gw_vset_contains (&set, &v);
        gw_vset_clear (&set);
        if (ok)
            json_array_append_new (satisfied, json_pack ("{s:s, s:s, s:s}", "requirement",
                                                         install, "name", name, "version",
                                                         version));
        else {
            rest->install[rest->n] = job->install[i];
            rest->names[rest->n++] = job->names[i];
        }
    }
    json_object_set_new (result, "satisfied", satisfied);
}

json_t *
gw_installer_run (const gw_installer_t *job)
{
    json_t *result = json_pack ("{s:[], s:[]}", "installed", "refused");
    if (!result)
        return NULL;
    if (s_stopped (job, result))
        return result;
    gw_installer_t *rest = malloc (sizeof *rest);
    if (!rest)
        return job->eco == GW_PKG_PYTHON ? s_pip (job, result) : s_npm (job, result);
    *rest = *job;
    if (job->eco == GW_PKG_PYTHON)
        s_pip_satisfied (job, rest, result);
    else
        s_npm_satisfied (job, rest, result);
    if (rest->n && !s_stopped (job, result))
        (job->eco == GW_PKG_PYTHON ? s_pip : s_npm) (rest, result);
    free (rest);
    return result;
}
