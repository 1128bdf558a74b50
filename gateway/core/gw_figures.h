/* gw_figures: the arguments codebox adds to an ipykernel kernel's argv:
 * the hook that makes plt.show() give figures back under a
 * non-interactive matplotlib backend (see gw_figures.c), and IPython's
 * input history in memory unless the operator keeps it on disk
 * (CODEBOX_KERNEL_HISTORY). Any thread. */
#ifndef GW_FIGURES_H
#define GW_FIGURES_H

#include "gw_config.h"
#include "ks_spec.h"

/* Extra kernel arguments for spec under config (NULL-terminated, static),
 * or NULL when it is not an ipykernel kernel. */
const char *const *gw_figures_argv (const ks_spec_t *spec, const gw_config_t *config);

#endif
