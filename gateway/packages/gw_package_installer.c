/* gw_package_installer: one install, Python or JavaScript: what is there
 * already is set aside, the rest goes to pip (gw_installer_pip) or npm
 * (gw_installer_npm); see gw_package_installer.h. Runs on a worker thread. */
#include "gw_package_installer.h"

#include <stdlib.h>

#include "gw_installer_exec.h"
#include "gw_installer_npm.h"
#include "gw_installer_pip.h"

json_t *
gw_installer_run (const gw_installer_t *job)
{
    json_t *result = json_pack ("{s:[], s:[]}", "installed", "refused");
    if (!result)
        return NULL;
    if (gw_installer_stopped (job, result))
        return result;
    gw_installer_t *rest = malloc (sizeof *rest);
    if (!rest)
        return job->eco == GW_PKG_PYTHON ? gw_installer_pip (job, result)
                                         : gw_installer_npm (job, result);
    *rest = *job;
    if (job->eco == GW_PKG_PYTHON)
        gw_installer_pip_satisfied (job, rest, result);
    else
        gw_installer_npm_satisfied (job, rest, result);
    if (rest->n && !gw_installer_stopped (job, result))
        (job->eco == GW_PKG_PYTHON ? gw_installer_pip : gw_installer_npm) (rest, result);
    free (rest);
    return result;
}
