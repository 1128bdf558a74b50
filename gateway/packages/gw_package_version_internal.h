/* gw_package_version_internal: the pieces of gw_package_version that
 * gw_package_ranges builds its sets with: a version's initial state, a
 * semver partial ("1.x", "1.2.3-beta"), the floor of a release, and
 * one-interval sets. Private to gateway/packages. Pure code; any thread. */
#ifndef GW_PACKAGE_VERSION_INTERNAL_H
#define GW_PACKAGE_VERSION_INTERNAL_H

#include <stdbool.h>

#include "gw_package_version.h"

/* A version of the kind (npm: semver) with no pre-, post- or
 * dev-release. */
void gw_ver_init (gw_ver_t *v, bool npm);

/* A semver "partial": up to three components, each a number or a wildcard
 * (x, X or an asterisk); given counts the numbers before the first
 * wildcard (or the end). */
typedef struct {
    long v[3];
    int given;
    char pre[64];
} gw_ver_partial_t;

/* Reads a partial at *pp ("=" and "v" prefixes, a pre-release after
 * three numbers, build metadata skipped) and moves *pp past it. False
 * when it is not one. */
bool gw_ver_partial (const char **pp, gw_ver_partial_t *out);

/* The least version whose release starts with the first n numbers of v
 * (+1 on the last when bump): a sentinel below them all for PEP 440, the
 * real version M.m.p-0 for semver. */
gw_ver_t gw_ver_floor (const gw_ver_t *v, int n, bool bump);

/* Appends an interval to a set. 0 or -1 (OOM). */
int gw_vset_push (gw_vset_t *set, const gw_vrange_t *range);
/* Bounds: unbounded, and at v (closed when v belongs to the interval). */
gw_vbound_t gw_vbound_inf (void);
gw_vbound_t gw_vbound_at (gw_ver_t v, bool closed);
/* out = the set of one interval. 0 or -1 (OOM). */
int gw_vset_one (gw_vset_t *out, bool npm, gw_vbound_t lo, gw_vbound_t hi);
/* Sorts, drops empty intervals and merges touching ones. */
void gw_vset_normalize (gw_vset_t *set);

#endif
