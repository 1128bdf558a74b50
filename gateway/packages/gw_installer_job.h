/* gw_installer_job: what one install is (gw_installer_t): the checked
 * requirements, the policy that judges what they resolve to, the folders,
 * the sandbox and user it runs as, the index and registry, and its
 * deadline and cancel descriptor. gw_packages fills it on the loop thread;
 * the installer (gw_package_installer, gw_installer_pip, gw_installer_npm)
 * reads it on a worker thread and never changes it. */
#ifndef GW_INSTALLER_JOB_H
#define GW_INSTALLER_JOB_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

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

#endif
