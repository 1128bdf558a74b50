/* gw_ipykernel: the arguments codebox adds to an ipykernel kernel's argv
 * (see gw_ipykernel.c): IPython's input history in memory unless the
 * operator keeps it on disk (CODEBOX_KERNEL_HISTORY), no sleep before each
 * reply, and the startup code of gw_ipykernel_startup.py (figures under a
 * non-interactive matplotlib backend; output and iopub paths without
 * needless thread hand-offs). Any thread. */
#ifndef GW_IPYKERNEL_H
#define GW_IPYKERNEL_H

#include "gw_config.h"
#include "ks_spec.h"

/* Extra kernel arguments for spec under config (NULL-terminated, static),
 * or NULL when it is not an ipykernel kernel. */
const char *const *gw_ipykernel_argv (const ks_spec_t *spec, const gw_config_t *config);

#endif
