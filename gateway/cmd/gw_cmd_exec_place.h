/* gw_cmd_exec_place: where the kernel of `codebox exec` works. By default
 * in the folder the command was started from, read-write, as `python FILE`
 * would: sandboxed, that folder is the session folder (/session inside);
 * when kernels run as the kernel user (the command runs as root), they
 * reach it through an idmapped mount, private to this process, on which
 * the folder's owner is the kernel user: files the code writes belong to
 * the folder's owner on disk, and nothing of the folder changes hands.
 * With isolated, an empty folder instead, removed at the end.
 *
 * Also the run's temporary folder (/tmp/codebox-exec-XXXXXX: the kernel's
 * runtime folder, the sandbox's mount targets). Main thread only; open it
 * before any other thread starts (it may unshare the mount namespace). */
#ifndef GW_CMD_EXEC_PLACE_H
#define GW_CMD_EXEC_PLACE_H

#include <limits.h>
#include <stdbool.h>

#include "gw_config.h"
#include "gw_sandbox.h"
#include "ks_kernel.h"

typedef struct {
    char top[32];               /* /tmp/codebox-exec-XXXXXX ("" until made) */
    char run[64], work[64], here[64];
    char cwd[PATH_MAX];         /* the folder the command was started from */
    const char *workdir;        /* the host folder the kernel works in */
    gw_sandbox_t *sandbox;      /* NULL without one */
    gw_sandbox_launch_t launch;
    bool isolated;
    bool mounted;               /* here holds the idmapped mount of cwd */
} gw_exec_place_t;

/* Makes the place and fills kopts (runtime folder, working folder, and
 * with sandboxed the sandbox's launch options) for a kernel of spec.
 * Returns 0, or -1 with err set (and the place still to be closed). */
int gw_exec_place_open (gw_exec_place_t *self, const gw_config_t *config, const ks_spec_t *spec,
                        bool sandboxed, bool isolated, ks_kernel_options_t *kopts, char *err,
                        size_t err_len);

/* Once the kernel has started: frees the launch options' strings. */
void gw_exec_place_launched (gw_exec_place_t *self);

/* After the kernel has ended: with isolated, says on stderr how many
 * entries the code left in its folder (they go with it); undoes the
 * mount and removes the temporary folder, never what lies under cwd. */
void gw_exec_place_close (gw_exec_place_t *self);

#endif
