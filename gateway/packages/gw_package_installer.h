/* gw_package_installer: runs pip or npm for one install into one session
 * folder, blocking, bounded by a deadline and a cancel descriptor. It is
 * the work of gw_packages' worker threads.
 *
 * The installers run as the kernel user, and where kernels run under
 * bubblewrap so do they: system folders read-only, a private /tmp (the
 * install's own folder), the session folder as /session, no other session
 * in sight, so a symlink planted in the session folder cannot send writes
 * anywhere else. They keep the network (an index must be reachable), except
 * pip with only a local find-links folder, which runs without one. No
 * package code runs at install time: pip takes wheels only
 * (--only-binary :all:) and npm runs no scripts (--ignore-scripts).
 *
 * Every install resolves first and installs second, so the policy sees the
 * whole resolution, dependencies included, before anything lands:
 *   Python: "pip install --dry-run --report" (allow-list constraints as a
 *     constraints file), then each resolved package pinned to its version
 *     and hash, "--no-deps --target /session/.packages".
 *   JavaScript: the session's recorded dependencies (re-judged by the
 *     policy) plus the new ones are resolved with "npm install
 *     --package-lock-only" in a staging folder, the lock file is judged
 *     (registry tarballs only, no links or aliases), "npm ci" installs it
 *     there, and node_modules, package.json and package-lock.json are
 *     swapped into the session folder with renameat2 (no path is followed).
 *
 * Threads: gw_installer_run runs on a worker thread; it reads only its
 * job and the (immutable) policy. */
#ifndef GW_PACKAGE_INSTALLER_H
#define GW_PACKAGE_INSTALLER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "gw_package_policy.h"

#define GW_INSTALLER_MAX_REQS 64

typedef struct {
    gw_pkg_eco_t eco;
    char *install[GW_INSTALLER_MAX_REQS];   /* checked requirement strings */
    char *names[GW_INSTALLER_MAX_REQS];     /* their normalised names */
    size_t n;
    const gw_package_policy_t *policy;      /* for the resolved packages */
    char workdir[1024];         /* the session folder (host path) */
    char opdir[1024];           /* this install's own folder (host path,
                                   the kernel user's, same file system) */
    char python[256];           /* the kernel's Python (runs pip) */
    bool bwrap;                 /* run the installer under bubblewrap */
    bool set_user;              /* and as this user */
    /* When set: mount targets the launcher binds opdir and workdir to as
       root (gw_sandbox_stage), so their parents need not be traversable */
    char stage_work[300];
    char stage_session[300];
    int seccomp_fd;             /* the kernels' seccomp program, or -1 */
    uid_t uid;
    gid_t gid;
    char index_url[1024];       /* CODEBOX_PIP_INDEX_URL or "" */
    char find_links[1024];      /* CODEBOX_PIP_FIND_LINKS (absolute) or "" */
    char registry[1024];        /* npm registry (never "") */
    char ca_file[1024];         /* NODE_EXTRA_CA_CERTS for npm, or "" */
    char *proxy_env[7];         /* "HTTPS_PROXY=..." and friends, NULL-ended */
    char *constraints;          /* pip constraints text, or NULL */
    long long fsize_limit;      /* largest file, bytes */
    int64_t deadline_ms;        /* jp_time_now_ms () clock */
    long timeout_s;             /* for messages */
    int cancel_fd;              /* readable: stop now */
} gw_installer_t;

/* Runs the install. Returns a new object:
 *   {"installed": [{"name", "version", "requested"}...],
 *    "refused": [{"requirement", "rule", "reason"}...],   resolved packages
 *    "dropped": [...],         npm: recorded dependencies no longer allowed
 *    "error": {"code", "message"}}                        when nothing was installed
 * where code is "refused", "not_found", "index_unreachable", "timeout",
 * "cancelled" or "install_failed". NULL only on OOM. */
json_t *gw_installer_run (const gw_installer_t *job);

#endif
