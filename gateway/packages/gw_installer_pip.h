/* gw_installer_pip: a Python install with pip, resolved before it
 * installs: "pip install --dry-run --report" (the allow-list's
 * constraints as a constraints file), every resolved package judged by
 * the policy, then each pinned to its version and hash and installed
 * "--no-deps --target /session/.packages". Wheels only
 * (--only-binary :all:); a local find-links folder alone runs without
 * network.
 *
 * Threads: a gw_packages worker thread; it reads only its job. */
#ifndef GW_INSTALLER_PIP_H
#define GW_INSTALLER_PIP_H

#include <jansson.h>

#include "gw_installer_job.h"

/* Installs job's requirements; fills result's "installed", "refused" and,
 * when nothing was installed, "error". Returns result. */
json_t *gw_installer_pip (const gw_installer_t *job, json_t *result);

/* Moves the requirements of job that the kernel's Python already
 * satisfies (the session's packages first, then the system's) out of rest
 * (a copy of job) into result's "satisfied":
 * [{"requirement","name","version"}]. A check that cannot run leaves
 * everything to pip. */
void gw_installer_pip_satisfied (const gw_installer_t *job, gw_installer_t *rest,
                                 json_t *result);

#endif
