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

#include <jansson.h>

#include "gw_installer_job.h"

/* Runs the install. Returns a new object:
 *   {"installed": [{"name", "version", "requested"}...],
 *    "refused": [{"requirement", "rule", "reason"}...],   resolved packages
 *    "dropped": [...],         npm: recorded dependencies no longer allowed
 *    "error": {"code", "message"}}                        when nothing was installed
 * where code is "refused", "not_found", "index_unreachable", "timeout",
 * "cancelled" or "install_failed". NULL only on OOM. */
json_t *gw_installer_run (const gw_installer_t *job);

#endif
