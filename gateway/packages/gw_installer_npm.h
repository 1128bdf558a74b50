/* gw_installer_npm: a JavaScript install with npm, resolved before it
 * installs: the session's recorded dependencies (re-judged by the policy)
 * plus the new ones resolved with "npm install --package-lock-only" in a
 * staging folder, the lock file judged (registry tarballs only, no links
 * or aliases), "npm ci" there, and node_modules, package.json and
 * package-lock.json swapped into the session folder with renameat2 (no
 * path is followed). No scripts run (--ignore-scripts).
 *
 * Threads: a gw_packages worker thread; it reads only its job. */
#ifndef GW_INSTALLER_NPM_H
#define GW_INSTALLER_NPM_H

#include <jansson.h>

#include "gw_installer_job.h"

/* Installs job's requirements; fills result's "installed", "refused",
 * "dropped", "packages_in_tree" and, when nothing was installed, "error".
 * Returns result. */
json_t *gw_installer_npm (const gw_installer_t *job, json_t *result);

/* Moves the requirements the session's node_modules already holds in a
 * version of the asked range out of rest (a copy of job), into result's
 * "satisfied". */
void gw_installer_npm_satisfied (const gw_installer_t *job, gw_installer_t *rest,
                                 json_t *result);

#endif
