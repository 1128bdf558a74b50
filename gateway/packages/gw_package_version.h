/* gw_package_version: package versions and sets of them, for the package
 * policy. Pure code; any thread.
 *
 * Versions are PEP 440 (Python: "1!2.0rc1.post2.dev3+local", ordered as
 * the packaging library orders them, local labels ignored) or semver
 * (npm: "1.2.3-beta.1+build"). A version set is a union of intervals of
 * one ordering, so the policy can ask "does this requirement overlap the
 * allowed versions?" and "is every version it asks for denied?". Sets are
 * made (by gw_package_ranges) from PEP 440 specifier sets (">=1.2,!=1.3.*,<2", "~=1.4",
 * "===1.0" when it parses), from npm ranges ("^1.2 || >=3 <4", "1.x",
 * "1.2 - 2", "~0.3") and from PEP 440 specifiers applied to semver. The
 * usual fine print is approximated by the interval: "<2.0" ends below
 * 2.0's pre-releases, ">1.0" starts above 1.0's post-releases; npm's rule
 * that a range only matches pre-releases of its own tuples is not
 * modelled (the installer applies it). */
#ifndef GW_PACKAGE_VERSION_H
#define GW_PACKAGE_VERSION_H

#include <stdbool.h>
#include <stddef.h>

#define GW_VER_MAXREL 8

typedef struct {
    bool npm;                   /* semver ordering; else PEP 440 */
    long epoch;
    long rel[GW_VER_MAXREL];    /* release numbers (semver: major, minor, patch) */
    int nrel;
    long pre_rank, pre_num;     /* PEP 440: 0 a, 1 b, 2 rc; LONG_MIN -inf, LONG_MAX none */
    long post;                  /* PEP 440: LONG_MIN none */
    long dev;                   /* PEP 440: LONG_MAX none */
    char pre[64];               /* semver pre-release ("" none) */
    int sentinel;               /* PEP 440: 0 a real version; -1 below every
                                   version of this release; +1 above every
                                   post-release of it (semver: always 0) */
} gw_ver_t;

/* Parses a PEP 440 version (case-insensitive, "v" prefix and the usual
 * spellings allowed). Returns 0 or -1. */
int gw_ver_parse_pep440 (const char *text, gw_ver_t *out);

/* Parses a full semver version (loose: "v" prefix, "=" prefix). Returns 0
 * or -1. */
int gw_ver_parse_semver (const char *text, gw_ver_t *out);

/* Orders two versions of the same kind: <0, 0, >0. */
int gw_ver_cmp (const gw_ver_t *a, const gw_ver_t *b);

typedef struct {
    gw_ver_t v;
    bool inf;                   /* unbounded on this side */
    bool closed;                /* the bound belongs to the interval */
} gw_vbound_t;

typedef struct {
    gw_vbound_t lo, hi;
} gw_vrange_t;

typedef struct {
    bool npm;
    gw_vrange_t *r;
    size_t n;                   /* 0: the empty set */
} gw_vset_t;

/* Every version of a kind. Returns 0 or -1 (OOM). */
int gw_vset_all (gw_vset_t *out, bool npm);

/* Frees a set's intervals (the struct itself is the caller's). */
void gw_vset_clear (gw_vset_t *set);

/* out = a ∩ b; out = ¬a. Return 0 or -1 (OOM). out must not be a or b. */
int gw_vset_intersect (const gw_vset_t *a, const gw_vset_t *b, gw_vset_t *out);
int gw_vset_complement (const gw_vset_t *a, gw_vset_t *out);

bool gw_vset_empty (const gw_vset_t *set);
bool gw_vset_contains (const gw_vset_t *set, const gw_ver_t *v);
/* True when a ⊆ b (false on OOM). */
bool gw_vset_subset (const gw_vset_t *a, const gw_vset_t *b);

/* ---- building blocks of sets (gw_package_ranges reads specifiers and
 * ranges into sets with these) ---- */

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
