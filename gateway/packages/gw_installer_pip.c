/* gw_installer_pip: a Python install: pip resolves with --dry-run
 * --report, the policy judges every resolved package, and pip installs
 * the pinned (and, when the index gives them, hashed) wheels into
 * /session/.packages; before that, the requirements the kernel's Python
 * already satisfies are set aside. See gw_installer_pip.h. Threads: a
 * gw_packages worker thread. */
#include "gw_installer_pip.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_installer_exec.h"
#include "jp_time.h"

#define PIP_NET_TIMEOUT_S 15


static void
s_pip_common (const gw_installer_t *job, gw_installer_argv_t *a)
{
    long left = (long) ((job->deadline_ms - jp_time_now_ms ()) / 1000);
    long net = left < 1 ? 1 : left < PIP_NET_TIMEOUT_S ? left : PIP_NET_TIMEOUT_S;
    const char *tmp = gw_installer_tmp (job);
    static const char *const fixed[] = {"-I", "-m", "pip", "install", "--no-input",
                                        "--disable-pip-version-check", "--no-color",
                                        "--progress-bar", "off", "--only-binary", ":all:",
                                        "--retries", "0", NULL};
    gw_installer_arg (a, job->python);
    for (int i = 0; fixed[i]; i++)
        gw_installer_arg (a, fixed[i]);
    gw_installer_argf (a, "--timeout=%ld", net);
    gw_installer_argf (a, "--cache-dir=%s/cache", tmp);
    gw_installer_argf (a, "--log=%s/pip-debug.log", tmp);
    if (job->index_url[0])
        gw_installer_argf (a, "--index-url=%s", job->index_url);
    else if (job->find_links[0])
        gw_installer_arg (a, "--no-index");
    if (job->find_links[0])
        gw_installer_argf (a, "--find-links=%s", job->find_links);
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
    gw_installer_log_lines (job, "pip.log", "ERROR:", 3, lines, sizeof lines);
    if (!lines[0])
        gw_installer_log_last (job, "pip.log", lines, sizeof lines);
    const char *index = job->index_url[0] ? job->index_url
                        : job->find_links[0] ? job->find_links
                                             : "https://pypi.org/simple (pip's default)";
    if (gw_installer_log_mentions (job, "pip-debug.log", net))
        gw_installer_error (result, "index_unreachable", "could not reach the package index %s, "
                            "so nothing was installed; the operator can set "
                            "CODEBOX_PIP_INDEX_URL to a reachable index or "
                            "CODEBOX_PIP_FIND_LINKS to a folder of wheels (%s)", index,
                            lines[0] ? lines : "no answer");
    else if (strstr (lines, "No matching distribution") || strstr (lines, "Could not find a "
                                                                           "version"))
        gw_installer_error (result, "not_found", "no installable version of %s in %s (only "
                            "wheels are installed, and only from there): %s", reqs, index,
                            lines);
    else
        gw_installer_error (result, "install_failed", "pip could not install %s: %s", reqs, lines);
}

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
    snprintf (out, len, "%s",
              h && strlen (h) == 64 && gw_installer_only (h, "0123456789abcdef") ? h : "");
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
        gw_installer_error (result, "install_failed", "pip's resolution report is missing");
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
        if (!gw_installer_only (name, GW_PKG_NAME_CHARS)
            || !gw_installer_only (version, GW_PKG_VERSION_CHARS)
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
        gw_installer_error (result, "refused", "nothing was installed: %s",
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

json_t *
gw_installer_pip (const gw_installer_t *job, json_t *result)
{
    char err[512], reqs[1024] = "";
    for (size_t i = 0; i < job->n; i++) {
        size_t rl = strlen (reqs);
        snprintf (reqs + rl, sizeof reqs - rl, "%s%s", i ? ", " : "", job->install[i]);
    }
    bool constraints = job->constraints && *job->constraints;
    if (constraints
        && gw_installer_write_file (job, "constraints.txt", job->constraints,
                                    strlen (job->constraints))) {
        gw_installer_error (result, "install_failed", "cannot write the constraints file");
        return result;
    }
    /* a local find-links folder alone needs no network */
    bool network = job->index_url[0] || job->find_links[0] != '/';
    const char *tmp = gw_installer_tmp (job);
    gw_installer_argv_t a = {0};
    if (job->bwrap)
        gw_installer_sandbox_args (job, &a, false, network);
    s_pip_common (job, &a);
    gw_installer_arg (&a, "--dry-run");
    gw_installer_arg (&a, "--ignore-installed");
    gw_installer_argf (&a, "--report=%s/report.json", tmp);
    gw_installer_arg (&a, "-q");
    if (constraints)
        gw_installer_argf (&a, "--constraint=%s/constraints.txt", tmp);
    gw_installer_arg (&a, "--");
    for (size_t i = 0; i < job->n; i++)
        gw_installer_arg (&a, job->install[i]);
    int rc = a.broken ? -ENOMEM : gw_installer_exec (job, a.v, "pip.log", err, sizeof err);
    gw_installer_args_free (&a);
    if (gw_installer_run_failed (job, result, rc, "pip", err))
        return result;
    if (rc) {
        s_pip_failure (job, result, reqs);
        return result;
    }
    json_t *report = gw_installer_load_json (job, "report.json");
    json_t *installed = json_array ();
    char *pins = NULL;
    bool ok = s_pip_judge (job, report, result, installed, &pins);
    json_decref (report);
    if (!ok || gw_installer_stopped (job, result)) {
        json_decref (installed);
        free (pins);
        return result;
    }
    rc = gw_installer_write_file (job, "pins.txt", pins, strlen (pins));
    bool hashes = strstr (pins, "--hash=") != NULL;
    free (pins);
    if (rc) {
        json_decref (installed);
        gw_installer_error (result, "install_failed", "cannot write the pins file");
        return result;
    }
    if (job->bwrap)
        gw_installer_sandbox_args (job, &a, true, network);
    s_pip_common (job, &a);
    gw_installer_argf (&a, "--target=%s/.packages", gw_installer_session (job));
    gw_installer_arg (&a, "--upgrade");
    gw_installer_arg (&a, "--no-deps");
    gw_installer_arg (&a, "-q");
    if (hashes)
        gw_installer_arg (&a, "--require-hashes");
    gw_installer_argf (&a, "--requirement=%s/pins.txt", tmp);
    rc = a.broken ? -ENOMEM : gw_installer_exec (job, a.v, "pip.log", err, sizeof err);
    gw_installer_args_free (&a);
    if (gw_installer_run_failed (job, result, rc, "pip", err) || rc) {
        if (rc > 0)
            s_pip_failure (job, result, reqs);
        json_decref (installed);
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
void
gw_installer_pip_satisfied (const gw_installer_t *job, gw_installer_t *rest, json_t *result)
{
    char err[512];
    gw_installer_argv_t a = {0};
    if (job->bwrap)
        gw_installer_sandbox_args (job, &a, true, false);
    gw_installer_arg (&a, job->python);
    gw_installer_arg (&a, "-I");
    gw_installer_arg (&a, "-c");
    gw_installer_arg (&a, S_SATISFIED_PY);
    gw_installer_argf (&a, "%s/satisfied.json", gw_installer_tmp (job));
    gw_installer_argf (&a, "%s/.packages", gw_installer_session (job));
    for (size_t i = 0; i < job->n; i++)
        gw_installer_arg (&a, job->install[i]);
    int rc = a.broken ? -ENOMEM : gw_installer_exec (job, a.v, "check.log", err, sizeof err);
    gw_installer_args_free (&a);
    json_t *found = rc == 0 ? gw_installer_load_json (job, "satisfied.json") : NULL;
    json_t *satisfied = json_array ();
    rest->n = 0;
    for (size_t i = 0; i < job->n; i++) {
        json_t *pair = json_object_get (found, job->install[i]);
        const char *version = json_string_value (json_array_get (pair, 0));
        const char *name = json_string_value (json_array_get (pair, 1));
        bool own = name && gw_installer_only (name, GW_PKG_NAME_CHARS) && strlen (name) < 128;
        if (version && gw_installer_only (version, GW_PKG_VERSION_CHARS) && strlen (version) < 64)
            json_array_append_new (satisfied, json_pack ("{s:s, s:s, s:s}", "requirement",
                                                         job->install[i], "name",
                                                         own ? name : job->names[i],
                                                         "version", version));
        else {
            rest->install[rest->n] = job->install[i];
            rest->names[rest->n++] = job->names[i];
        }
    }
    json_object_set_new (result, "satisfied", satisfied);
    json_decref (found);
}
