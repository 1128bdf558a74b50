/* gw_figures: the arguments that make plt.show() give figures back under
 * a non-interactive matplotlib backend (see gw_figures.c). Any thread. */
#ifndef GW_FIGURES_H
#define GW_FIGURES_H

#include "ks_spec.h"

/* Extra kernel arguments for spec (NULL-terminated, static), or NULL when
 * it is not an ipykernel kernel. */
const char *const *gw_figures_argv (const ks_spec_t *spec);

#endif
