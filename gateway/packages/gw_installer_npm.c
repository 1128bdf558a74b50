/* gw_installer_npm: a JavaScript install: the session's recorded
 * dependencies (re-judged) and the new ones resolved with npm install
 * --package-lock-only in a staging folder, the lock file judged (registry
 * tarballs only), npm ci there, and the result swapped into the session
 * folder with renameat2; before that, the requirements the session's
 * node_modules already holds are set aside. See gw_installer_npm.h.
 * Threads: a gw_packages worker thread. */
#include "gw_installer_npm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw_fs.h"
#include "gw_installer_exec.h"
#include "gw_package_ranges.h"
#include "gw_path.h"
#include "jp_time.h"

#define NPM_NET_TIMEOUT_MS 30000


static void
s_npm_common (const gw_installer_t *job, gw_installer_argv_t *a, const char *command)
{
    long left = (long) (job->deadline_ms - jp_time_now_ms ());
    long net = left < 1000 ? 1000 : left < NPM_NET_TIMEOUT_MS ? left : NPM_NET_TIMEOUT_MS;
    static const char *const fixed[] = {"--ignore-scripts", "--no-audit", "--no-fund",
                                        "--no-update-notifier", "--fetch-retries=0",
                                        "--loglevel=warn", NULL};
    gw_installer_arg (a, "npm");
    gw_installer_arg (a, command);
    for (int i = 0; fixed[i]; i++)
        gw_installer_arg (a, fixed[i]);
    gw_installer_argf (a, "--fetch-timeout=%ld", net);
    gw_installer_argf (a, "--registry=%s", job->registry);
    gw_installer_argf (a, "--prefix=%s/stage", gw_installer_tmp (job));
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
    gw_installer_log_lines (job, "npm.log", "npm error", 4, lines, sizeof lines);
    if (!lines[0])
        gw_installer_log_lines (job, "npm.log", "npm ERR!", 4, lines, sizeof lines);
    if (!lines[0])
        gw_installer_log_last (job, "npm.log", lines, sizeof lines);
    if (gw_installer_log_mentions (job, "npm.log", missing))
        gw_installer_error (result, "not_found", "the registry %s has no such package or "
                            "version: %s", job->registry, lines);
    else if (gw_installer_log_mentions (job, "npm.log", net))
        gw_installer_error (result, "index_unreachable", "could not reach the npm registry %s, so "
                            "nothing was installed; the operator can set CODEBOX_NPM_REGISTRY (%s)",
                            job->registry, lines);
    else
        gw_installer_error (result, "install_failed", "npm could not install: %s", lines);
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
        gw_installer_error (result, "install_failed", "npm's lock file is missing");
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
        gw_installer_error (result, "refused", "nothing was installed: %s",
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

json_t *
gw_installer_npm (const gw_installer_t *job, json_t *result)
{
    char err[512], stage[1200];
    snprintf (stage, sizeof stage, "%s/stage", job->opdir);
    if ((mkdir (stage, 0755) < 0 && errno != EEXIST)
        || (job->set_user && chown (stage, job->uid, job->gid) < 0)) {
        gw_installer_error (result, "install_failed", "cannot make the staging folder: %s",
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
    int rc = text ? gw_installer_write_file (job, "stage/package.json", text, strlen (text))
                  : -ENOMEM;
    free (text);
    if (rc) {
        json_decref (deps);
        gw_installer_error (result, "install_failed", "cannot write package.json: %s",
                            strerror (-rc));
        return result;
    }
    gw_installer_argv_t a = {0};
    if (job->bwrap)
        gw_installer_sandbox_args (job, &a, false, true);
    s_npm_common (job, &a, "install");
    gw_installer_arg (&a, "--package-lock-only");
    gw_installer_arg (&a, "--save-exact");
    gw_installer_arg (&a, "--");
    for (size_t i = 0; i < job->n; i++)
        gw_installer_arg (&a, job->install[i]);
    rc = a.broken ? -ENOMEM : gw_installer_exec (job, a.v, "npm.log", err, sizeof err);
    gw_installer_args_free (&a);
    if (gw_installer_run_failed (job, result, rc, "npm", err) || rc) {
        if (rc > 0)
            s_npm_failure (job, result);
        json_decref (deps);
        return result;
    }
    json_t *lock = gw_installer_load_json (job, "stage/package-lock.json");
    json_t *installed = json_array ();
    bool ok = s_npm_judge (job, lock, result, installed, deps);
    json_decref (lock);
    json_decref (deps);
    if (!ok || gw_installer_stopped (job, result)) {
        json_decref (installed);
        return result;
    }
    if (job->bwrap)
        gw_installer_sandbox_args (job, &a, false, true);
    s_npm_common (job, &a, "ci");
    rc = a.broken ? -ENOMEM : gw_installer_exec (job, a.v, "npm.log", err, sizeof err);
    gw_installer_args_free (&a);
    if (gw_installer_run_failed (job, result, rc, "npm", err) || rc) {
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
        gw_installer_error (result, "install_failed", "cannot move the installed packages into the "
                            "session folder: %s", strerror (-rc));
        return result;
    }
    json_object_set_new (result, "installed", installed);
    return result;
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
    json_t *manifest = gw_fs_read_json (fd, 1 << 20);
    const char *v = json_string_value (json_object_get (manifest, "version"));
    const char *own = json_string_value (json_object_get (manifest, "name"));
    bool ok = v && own && strcmp (own, name) == 0 && strlen (v) < len
         && gw_installer_only (v, GW_PKG_VERSION_CHARS);
    if (ok)
        snprintf (version, len, "%s", v);
    json_decref (manifest);
    return ok;
}

/* npm: moves the requirements the session's node_modules already holds in
 * a version of the asked range out of rest, into result's "satisfied". */
void
gw_installer_npm_satisfied (const gw_installer_t *job, gw_installer_t *rest, json_t *result)
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
