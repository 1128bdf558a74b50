/* gw_packages: install jobs, their worker threads and the setup snippet
 * (the REST glue is gw_packages_rest); see gw_packages.h. The loop thread
 * owns everything here except gw_installer_t while its worker runs
 * (s_worker_main). A plain thread per install, not a CZMQ actor: it waits
 * on pip or npm and hands back one result, so an actor's pipe would stay
 * unread. */
#include "gw_packages.h"
#include "gw_id.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gw_fs.h"
#include "gw_job.h"
#include "gw_server.h"
#include "gw_package_installer.h"
#include "gw_sandbox.h"
#include "gw_session.h"
#include "jp_random.h"
#include "jp_time.h"
#include "jp_log.h"

#define INSTALL_DIR ".codebox-install"  /* in the session folder: the same file system
                                           (renameat2), and the session's quota */
#define DEFAULT_REGISTRY "https://registry.npmjs.org/"
#define SYSTEM_CA "/etc/ssl/certs/ca-certificates.crt"

typedef enum {
    S_WAITING,                  /* behind another install of its session */
    S_RUNNING,                  /* its worker runs the installer */
    S_SETUP,                    /* the setup snippet is queued in the kernel */
    S_FAILED,                   /* could not start; answered on the next turn */
} s_stage_t;

typedef struct s_op s_op_t;
struct s_op {
    gw_packages_t *owner;
    gw_server_t *server;
    gw_job_t *job;              /* the setup snippet; gw_job_session (job) is NULL once
                                   the session is gone */
    gw_job_observer_t watch;    /* on job's observers until answered: the
                                   gateway's shutdown or the snippet's end */
    s_stage_t stage;
    gw_installer_t work;
    gw_package_policy_t *policy;
    pthread_t thread;
    bool joined;
    bool abandoned;             /* answered at shutdown, or its owner is gone: the
                                   pending loop call (delivery) frees */
    bool undeliverable;         /* the worker could not post its result */
    json_t *result;             /* the worker's */
    char session_id[GW_ID_SIZE];
    char language[16];
    char location[1100];
    int64_t started_ms;
    gw_packages_done_fn *done;
    void *arg;
    s_op_t *next;
};

struct gw_packages {
    gw_server_t *server;
    s_op_t *ops;                /* installs waiting or running, oldest first */
    bool stopping;              /* the gateway shuts down: nothing new starts */
};

static void s_kick (gw_packages_t *self);

/* ---- judging ------------------------------------------------------------ */

static int
s_eco (const gw_session_t *session, gw_pkg_eco_t *eco)
{
    const char *language = gw_session_spec (session)->language;
    if (strcasecmp (language, "python") == 0)
        *eco = GW_PKG_PYTHON;
    else if (strcasecmp (language, "javascript") == 0)
        *eco = GW_PKG_NPM;
    else
        return -1;
    return 0;
}

static gw_package_policy_t *
s_policy (gw_server_t *server, char *err, size_t err_len)
{
    const gw_config_t *c = gw_server_config (server);
    return gw_package_policy_new (gw_config_str (c, GW_SET_PACKAGE_ALLOW),
                                  gw_config_str (c, GW_SET_PACKAGE_DENY), err, err_len);
}

int
gw_packages_check (gw_packages_t *self, const gw_session_t *session, json_t *requirements,
                   json_t **allowed_p, json_t **refused_p, gw_error_t *e, char *err,
                   size_t err_len)
{
    *allowed_p = *refused_p = NULL;
    *e = GW_E_BAD_REQUEST;
    gw_pkg_eco_t eco;
    if (s_eco (session, &eco)) {
        snprintf (err, err_len, "installing packages is not supported for this kernel (%s, "
                  "language %s): Python kernels use pip and JavaScript kernels npm",
                  gw_session_spec (session)->name, gw_session_spec (session)->language);
        return -1;
    }
    json_t *list = json_is_string (requirements) ? json_pack ("[O]", requirements)
                                                 : json_incref (requirements);
    size_t i;
    json_t *item;
    bool strings = json_is_array (list) && json_array_size (list) > 0;
    json_array_foreach (list, i, item)
        strings = strings && json_is_string (item);
    if (!strings || json_array_size (list) > GW_INSTALLER_MAX_REQS) {
        snprintf (err, err_len, strings ? "at most %d packages at once"
                  : "packages must be a list of requirement strings, such as [\"requests\", "
                    "\"numpy>=1.26\"] (Python) or [\"lodash@4\"] (JavaScript)",
                  GW_INSTALLER_MAX_REQS);
        json_decref (list);
        return -1;
    }
    char why[600];
    gw_package_policy_t *policy = s_policy (self->server, why, sizeof why);
    if (!policy) {
        *e = GW_E_INTERNAL;
        snprintf (err, err_len, "the server's package policy is malformed: %s", why);
        json_decref (list);
        return -1;
    }
    *allowed_p = json_array ();
    *refused_p = json_array ();
    json_array_foreach (list, i, item) {
        const char *text = json_string_value (item);
        gw_pkg_verdict_t v;
        if (gw_package_policy_check (policy, eco, text, &v) == 0)
            json_array_append_new (*allowed_p, json_pack ("{s:s, s:s, s:s}", "requirement",
                                                          text, "name", v.name, "install",
                                                          v.install));
        else
            json_array_append_new (*refused_p, json_pack ("{s:s, s:s, s:s}", "requirement",
                                                          text, "rule", v.rule, "reason",
                                                          v.reason));
    }
    gw_package_policy_destroy (&policy);
    json_decref (list);
    return 0;
}

/* ---- ops ---------------------------------------------------------------- */

/* Takes the op off its job's observers. */
static void
s_unwait (s_op_t *op)
{
    gw_job_unobserve (op->job, &op->watch);
}

static void
s_unlink (s_op_t *op)
{
    for (s_op_t **link = &op->owner->ops; *link; link = &(*link)->next)
        if (*link == op) {
            *link = op->next;
            return;
        }
}

static void
s_op_free (s_op_t *op)
{
    for (size_t i = 0; i < op->work.n; i++) {
        free (op->work.install[i]);
        free (op->work.names[i]);
    }
    for (int i = 0; op->work.proxy_env[i]; i++)
        free (op->work.proxy_env[i]);
    free (op->work.constraints);
    if (op->work.cancel_fd >= 0)
        close (op->work.cancel_fd);
    gw_package_policy_destroy (&op->policy);
    json_decref (op->result);
    free (op);
}

/* Sets the result's error unless it has one. */
static void
s_fail (json_t *result, const char *code, const char *message)
{
    if (!json_object_get (result, "error"))
        json_object_set_new (result, "error", json_pack ("{s:s, s:s}", "code", code, "message",
                                                         message));
}

/* Answers: the job ends (if it has not), done gets the result, the op
 * leaves the list. Frees the op unless keep (its worker's delivery will). */
static void
s_answer (s_op_t *op, json_t *result, bool keep)
{
    s_unlink (op);
    s_unwait (op);
    gw_job_set_transient (op->job);  /* nobody asks for the snippet's results */
    if (!gw_job_finished (op->job))
        gw_job_finish (op->job, GW_EXEC_CANCELLED);
    if (!result)
        result = json_pack ("{s:[], s:[]}", "installed", "refused");
    if (!result)
        result = json_object ();
    json_object_set_new (result, "session_id", json_string (op->session_id));
    json_object_set_new (result, "language", json_string (op->language));
    json_object_set_new (result, "location", json_string (op->location));
    json_t *error = json_object_get (result, "error");
    jp_log_warn ("packages event=%s session=%s installed=%zu refused=%zu "
             "ms=%lld%s%s", error ? "failed" : "done", op->session_id,
             json_array_size (json_object_get (result, "installed")),
             json_array_size (json_object_get (result, "refused")),
             (long long) (jp_time_now_ms () - op->started_ms), error ? " code=" : "",
             error ? json_string_value (json_object_get (error, "code")) : "");
    gw_packages_done_fn *done = op->done;
    void *arg = op->arg;
    gw_packages_t *owner = op->owner;
    if (!keep)
        s_op_free (op);
    done (result, arg);
    s_kick (owner);
}

/* The setup snippet ended: the install is answered. */
static void
s_on_setup (gw_job_t *job, s_op_t *op)
{
    json_t *result = op->result;
    op->result = NULL;
    if (gw_job_status (job) != GW_EXEC_COMPLETED) {
        char message[1200];
        const char *why = gw_job_status (job) == GW_EXEC_CANCELLED ? "the session ended"
                          : gw_job_session (job) && gw_session_error (gw_job_session (job))[0] ? gw_session_error (gw_job_session (job))
                                                                   : "the setup code failed";
        json_t *outputs = gw_job_execution (job) ? gw_execution_outputs (gw_job_execution (job)) : NULL;
        size_t i;
        json_t *out;
        json_array_foreach (outputs, i, out) {
            const char *type = json_string_value (json_object_get (out, "type"));
            if (type && strcmp (type, "error") == 0)
                why = json_string_value (json_object_get (out, "evalue"));
        }
        snprintf (message, sizeof message, "the packages were installed in the session "
                  "folder, but the kernel could not take them up: %s", why ? why : "?");
        s_fail (result, gw_job_status (job) == GW_EXEC_CANCELLED ? "session_ended" : "kernel", message);
    }
    s_answer (op, result, false);
}

/* The Python and JavaScript snippets: no names bound, nothing printed. */
static void
s_setup_code (gw_pkg_eco_t eco, const char *visible, char *code, size_t len)
{
    char quoted[1100];
    size_t q = 0;
    for (const char *p = visible; *p && q + 2 < sizeof quoted; p++) {
        if (*p == '\\' || *p == '\'')
            quoted[q++] = '\\';
        quoted[q++] = *p;
    }
    quoted[q] = '\0';
    if (eco == GW_PKG_PYTHON)
        snprintf (code, len, "(lambda s, i, p: (p in s.path or s.path.insert(0, p), "
                  "i.invalidate_caches()) and None)(__import__('sys'), "
                  "__import__('importlib'), '%s/.packages')", quoted);
    else
        snprintf (code, len, "(function (p) { if (typeof module !== 'undefined' && "
                  "module.paths && module.paths.indexOf(p) < 0) module.paths.unshift(p); "
                  "})('%s/node_modules')", quoted);
}

/* Runs in the loop thread when a worker is done. */
static void
s_deliver (gw_server_t *server, void *arg)
{
    (void) server;
    s_op_t *op = arg;
    if (!op->joined) {
        pthread_join (op->thread, NULL);
        op->joined = true;
    }
    if (op->abandoned) {
        s_op_free (op);
        return;
    }
    json_t *result = op->result;
    op->result = NULL;
    gw_session_t *session = gw_job_session (op->job);
    if (!result)
        s_answer (op, NULL, false);
    else if (!session) {
        s_fail (result, "session_ended", "the session ended during the install");
        s_answer (op, result, false);
    } else if (json_object_get (result, "error")
               || json_array_size (json_object_get (result, "installed")) == 0)
        s_answer (op, result, false);
    else {
        op->result = result;
        op->stage = S_SETUP;   /* its watch now waits for the snippet's end */
        gw_session_enqueue (session, op->job);
    }
}

static void *
s_worker_main (void *arg)
{
    s_op_t *op = arg;
    op->result = gw_installer_run (&op->work);
    gw_fs_remove_tree (op->work.opdir);
    for (int i = 0; i < 200; i++) {
        if (gw_server_call (op->server, s_deliver, op) == 0)
            return NULL;
        nanosleep (&(struct timespec) {.tv_nsec = 10 * 1000 * 1000}, NULL);
    }
    op->undeliverable = true;   /* out of memory for 2 s: shutdown answers */
    return NULL;
}

/* What the op's job tells it: the snippet's end once queued (S_SETUP);
 * before that, the gateway's shutdown (or the job's end some other way):
 * the installer is stopped and the client answered while its connection
 * still exists. */
static void
s_on_job (gw_job_t *job, gw_job_event_t event, json_t *item, gw_job_observer_t *watch)
{
    (void) item;
    s_op_t *op = watch->arg;
    if (event == GW_JOB_OUTPUT || event == GW_JOB_INPUT)
        return;
    if (event == GW_JOB_FINISHED && op->stage == S_SETUP) {
        s_on_setup (job, op);
        return;
    }
    bool shutdown = event == GW_JOB_SHUTDOWN;
    if (shutdown)
        op->owner->stopping = true;
    json_t *result = json_pack ("{s:[], s:[]}", "installed", "refused");
    if (shutdown)
        s_fail (result, "shutting_down", "the gateway is shutting down; nothing was installed");
    else
        s_fail (result, "session_ended", "the install was cancelled; nothing was installed");
    if (op->stage != S_RUNNING) {
        s_answer (op, result, false);
        return;
    }
    uint64_t one = 1;
    ssize_t ignored = write (op->work.cancel_fd, &one, sizeof one);
    (void) ignored;
    pthread_join (op->thread, NULL);
    op->joined = true;
    op->abandoned = !op->undeliverable;
    s_answer (op, result, op->abandoned);
}

void
gw_packages_cancel (gw_packages_t *self, void *arg)
{
    for (s_op_t *op = self->ops; op; op = op->next)
        if (op->arg == arg && (op->stage == S_WAITING || op->stage == S_RUNNING)) {
            /* the eventfd stays readable: a waiting install stops at its start */
            uint64_t one = 1;
            ssize_t ignored = write (op->work.cancel_fd, &one, sizeof one);
            (void) ignored;
            jp_log_info ("packages event=cancel session=%s", op->session_id);
            return;
        }
}

/* Makes the install's own folder in the session folder (a hidden one), for
 * the kernel user. Returns 0 or -errno. */
static int
s_make_opdir (s_op_t *op)
{
    char parent[1000], uuid[JP_UUID_LEN + 1];
    int n = snprintf (parent, sizeof parent, "%s/" INSTALL_DIR, op->work.workdir);
    if (n < 0 || (size_t) n >= sizeof parent)
        return -ENAMETOOLONG;
    if (mkdir (parent, 0711) < 0 && errno != EEXIST)
        return -errno;
    if (op->work.set_user && chown (parent, op->work.uid, op->work.gid) < 0)
        return -errno;
    jp_random_uuid (uuid);
    snprintf (op->work.opdir, sizeof op->work.opdir, "%s/%.8s", parent, uuid);
    if (mkdir (op->work.opdir, 0700) < 0)
        return -errno;
    if (op->work.set_user && chown (op->work.opdir, op->work.uid, op->work.gid) < 0) {
        int e = errno;
        rmdir (op->work.opdir);
        return -e;
    }
    return 0;
}

/* Starts the worker. Returns 0, or -1 with message set. */
static int
s_launch (s_op_t *op, char *message, size_t len)
{
    gw_session_t *session = gw_job_session (op->job);
    if (!session) {
        snprintf (message, len, "the session ended before the install began");
        return -1;
    }
    gw_server_t *server = op->server;
    const gw_config_t *c = gw_server_config (server);
    gw_installer_t *w = &op->work;
    snprintf (w->workdir, sizeof w->workdir, "%s", gw_session_workdir (session));
    struct stat st;
    if (stat (gw_session_workdir (session), &st) < 0) {
        snprintf (message, len, "the session folder is gone: %s", strerror (errno));
        return -1;
    }
    if (geteuid () == 0) {
        if (st.st_uid == 0) {
            snprintf (message, len, "the session folder belongs to root; the installer does "
                      "not run as root");
            return -1;
        }
        w->set_user = true;
        w->uid = st.st_uid;
        w->gid = st.st_gid;
    }
    w->bwrap = gw_sandbox_bwrap (gw_server_sandbox (server));
    w->seccomp_fd = gw_sandbox_stage (gw_server_sandbox (server), w->stage_work, w->stage_session,
                                      sizeof w->stage_work);
    const char *links = gw_config_str (c, GW_SET_PIP_FIND_LINKS);
    bool url = strncasecmp (links, "http://", 7) == 0 || strncasecmp (links, "https://", 8) == 0;
    if (*links && !url) {
        char real[PATH_MAX];
        if (!realpath (links, real) || stat (real, &st) < 0 || !S_ISDIR (st.st_mode)
            || strlen (real) >= sizeof w->find_links) {
            snprintf (message, len, "CODEBOX_PIP_FIND_LINKS names %s, which is not a folder",
                      links);
            return -1;
        }
        memcpy (w->find_links, real, strlen (real) + 1);
    } else
        snprintf (w->find_links, sizeof w->find_links, "%s", links);
    snprintf (w->index_url, sizeof w->index_url, "%s", gw_config_str (c, GW_SET_PIP_INDEX_URL));
    const char *registry = gw_config_str (c, GW_SET_NPM_REGISTRY);
    snprintf (w->registry, sizeof w->registry, "%s", *registry ? registry : DEFAULT_REGISTRY);
    const char *ca = getenv ("NODE_EXTRA_CA_CERTS");
    if (ca && access (ca, R_OK) == 0)
        snprintf (w->ca_file, sizeof w->ca_file, "%s", ca);
    else if (access (SYSTEM_CA, R_OK) == 0)
        snprintf (w->ca_file, sizeof w->ca_file, "%s", SYSTEM_CA);
    static const char *const proxies[] = {"HTTPS_PROXY", "https_proxy", "HTTP_PROXY",
                                          "http_proxy", "NO_PROXY", "no_proxy", NULL};
    int np = 0;
    for (int i = 0; proxies[i]; i++) {
        const char *value = getenv (proxies[i]);
        char *entry = NULL;
        if (value && *value && asprintf (&entry, "%s=%s", proxies[i], value) > 0)
            w->proxy_env[np++] = entry;
    }
    if (w->eco == GW_PKG_PYTHON
        && !(w->constraints = gw_package_policy_pip_constraints (op->policy))) {
        snprintf (message, len, "out of memory");
        return -1;
    }
    w->fsize_limit = (long long) gw_config_int (c, GW_SET_DISK_QUOTA_MB) << 20;
    w->deadline_ms = jp_time_now_ms () + w->timeout_s * 1000;
    int rc = s_make_opdir (op);
    if (rc) {
        snprintf (message, len, "cannot make a folder for the install: %s", strerror (-rc));
        return -1;
    }
    if (pthread_create (&op->thread, NULL, s_worker_main, op) != 0) {
        gw_fs_remove_tree (w->opdir);
        snprintf (message, len, "cannot start a worker thread");
        return -1;
    }
    op->stage = S_RUNNING;
    op->started_ms = jp_time_now_ms ();
    jp_log_info ("packages event=start session=%s language=%s count=%zu "
             "sandbox=%s", op->session_id, op->language, w->n, w->bwrap ? "bwrap" : "none");
    return 0;
}

/* Answers an install that could not start (a loop call). */
static void
s_answer_later (gw_server_t *server, void *arg)
{
    (void) server;
    s_op_t *op = arg;
    if (op->abandoned) {
        s_op_free (op);
        return;
    }
    json_t *result = op->result;
    op->result = NULL;
    s_answer (op, result, false);
}

/* Starts waiting installs whose session has no install running; answers
 * those whose session is gone. */
static void
s_kick (gw_packages_t *self)
{
    for (s_op_t *op = self->ops; op && !self->stopping; op = op->next) {
        if (op->stage != S_WAITING)
            continue;
        gw_session_t *session = gw_job_session (op->job);
        bool busy = false;
        for (s_op_t *other = self->ops; other && session && !busy; other = other->next)
            busy = other != op && other->stage != S_WAITING && gw_job_session (other->job) == session;
        if (busy)
            continue;
        char message[600];
        if (s_launch (op, message, sizeof message)) {
            json_t *result = json_pack ("{s:[], s:[]}", "installed", "refused");
            s_fail (result, session ? "install_failed" : "session_ended", message);
            s_answer (op, result, false);   /* kicks again */
            return;
        }
    }
}

int
gw_packages_install (gw_packages_t *self, gw_session_t *session, json_t *allowed, long timeout_s,
                     gw_packages_done_fn *done, void *arg)
{
    gw_server_t *server = self->server;
    gw_pkg_eco_t eco;
    size_t n = json_array_size (allowed);
    if (s_eco (session, &eco) || n == 0 || n > GW_INSTALLER_MAX_REQS)
        return -EINVAL;
    s_op_t *op = calloc (1, sizeof *op);
    if (!op)
        return -ENOMEM;
    op->owner = self;
    op->server = server;
    op->done = done;
    op->arg = arg;
    op->stage = S_WAITING;
    op->work.cancel_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
    op->work.eco = eco;
    op->work.timeout_s = timeout_s > 0 ? timeout_s : 300;
    snprintf (op->session_id, sizeof op->session_id, "%s", gw_session_id (session));
    snprintf (op->language, sizeof op->language, "%s", eco == GW_PKG_PYTHON ? "python"
                                                                           : "javascript");
    snprintf (op->location, sizeof op->location, "%s/%s", gw_session_visible_workdir (session),
              eco == GW_PKG_PYTHON ? ".packages" : "node_modules");
    const char *python = gw_session_spec (session)->argv[0];
    snprintf (op->work.python, sizeof op->work.python, "%s",
              python && strncmp (python, "/usr/", 5) == 0 && strstr (python, "python")
                  ? python : "/usr/bin/python3");
    char err[600], code[1400];
    op->policy = s_policy (server, err, sizeof err);
    op->work.policy = op->policy;
    bool ok = op->policy && op->work.cancel_fd >= 0;
    for (size_t i = 0; i < n && ok; i++) {
        json_t *item = json_array_get (allowed, i);
        op->work.install[i] = strdup (json_string_value (json_object_get (item, "install")));
        op->work.names[i] = strdup (json_string_value (json_object_get (item, "name")));
        op->work.n = i + 1;
        ok = op->work.install[i] && op->work.names[i];
    }
    s_setup_code (eco, gw_session_visible_workdir (session), code, sizeof code);
    op->job = ok ? gw_jobs_add (gw_server_jobs (server), session, gw_session_id (session), gw_session_tenant (session), code,
                                (long) op->work.timeout_s * 1000)
                 : NULL;
    if (!op->job) {
        s_op_free (op);
        return -ENOMEM;
    }
    op->watch = (gw_job_observer_t) {.fn = s_on_job, .arg = op};
    gw_job_observe (op->job, &op->watch);
    op->started_ms = jp_time_now_ms ();
    s_op_t **tail = &self->ops;
    while (*tail)
        tail = &(*tail)->next;
    *tail = op;
    /* started now, or after the session's running install; either way
       done comes later (through the loop) */
    bool busy = false;
    for (s_op_t *other = self->ops; other && !busy; other = other->next)
        busy = other != op && other->stage != S_WAITING && gw_job_session (other->job) == session;
    if (busy)
        return 0;
    if (s_launch (op, err, sizeof err) == 0)
        return 0;
    /* answered on the next turn, as promised; shutdown no longer reaches it */
    s_unwait (op);
    op->stage = S_FAILED;
    op->result = json_pack ("{s:[], s:[]}", "installed", "refused");
    s_fail (op->result, "install_failed", err);
    if (gw_server_call (server, s_answer_later, op) == 0)
        return 0;
    s_unlink (op);
    gw_job_finish (op->job, GW_EXEC_CANCELLED);
    s_op_free (op);
    return -ENOMEM;
}

/* A kernel finds the session's packages: PYTHONPATH and NODE_PATH. */
static void
s_kernel_env (void *arg, const char *visible_workdir, gw_kernel_env_t *env)
{
    (void) arg;
    if (env->n + 2 > GW_KERNEL_ENV_MAX)
        return;
    snprintf (env->vars[env->n++], sizeof env->vars[0], "PYTHONPATH=%s/.packages",
              visible_workdir);
    snprintf (env->vars[env->n++], sizeof env->vars[0], "NODE_PATH=%s/node_modules",
              visible_workdir);
}

static const gw_session_hooks_t s_hooks = {.kernel_env = s_kernel_env};

gw_packages_t *
gw_packages_new (gw_server_t *server)
{
    gw_packages_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->server = server;
    if (gw_server_add_hooks (server, &s_hooks, self) < 0) {
        free (self);
        return NULL;
    }
    return self;
}

void
gw_packages_destroy (gw_packages_t **self_p)
{
    gw_packages_t *self = *self_p;
    if (!self)
        return;
    /* the server's shutdown answered every install (their job observers);
       one left here never started, and done is never called for it */
    while (self->ops) {
        s_op_t *op = self->ops;
        self->ops = op->next;
        gw_job_unobserve (op->job, &op->watch);
        if (op->stage == S_RUNNING) {
            uint64_t one = 1;
            ssize_t ignored = write (op->work.cancel_fd, &one, sizeof one);
            (void) ignored;
        }
        if (op->stage == S_RUNNING || op->stage == S_FAILED)
            op->abandoned = true;   /* its pending loop call frees it */
        else
            s_op_free (op);
    }
    gw_server_remove_hooks (self->server, &s_hooks, self);
    free (self);
    *self_p = NULL;
}
