/* gw_package_ranges: what a requirement asks for, read into a version set
 * (gw_package_version): PEP 440 specifier sets (">=1.2,!=1.3.*,<2",
 * "~=1.4", "===1.0" when it parses), the same specifiers applied to semver
 * versions, and npm ranges ("^1.2 || >=3 <4", "1.x", "1.2 - 2", "~0.3");
 * and a semver set written back as an npm range. Pure code; any thread. */
#ifndef GW_PACKAGE_RANGES_H
#define GW_PACKAGE_RANGES_H

#include <stddef.h>

#include "gw_package_version.h"

/* Parses a PEP 440 specifier set ("" is every version; "(...)" allowed).
 * Returns 0, or -1 with a sentence in err. */
int gw_vset_parse_pep440 (const char *spec, gw_vset_t *out, char *err, size_t err_len);

/* The same specifiers applied to semver versions (zero-padded). */
int gw_vset_parse_pep440_semver (const char *spec, gw_vset_t *out, char *err, size_t err_len);

/* Parses an npm range ("" and "*" are every version). Returns 0, or -1
 * with a sentence in err. */
int gw_vset_parse_npm (const char *range, gw_vset_t *out, char *err, size_t err_len);

/* An npm range for a semver set ("<1.0.0 || >=2.0.0 <3.0.0-0"), new; "*"
 * for every version; NULL for the empty set or on OOM. */
char *gw_vset_npm_text (const gw_vset_t *set);

#endif
