/* gw_package_policy: what may be installed into a session. Pure code.
 *
 * It reads requirement strings the way pip and npm would, but only the
 * safe part of their grammar: a package name with optional extras and a
 * version constraint (PEP 508/440 for Python: "requests>=2.31",
 * "numpy==1.26.*", "pkg[extra]~=1.2"), or a name with an optional range or
 * dist-tag for npm ("lodash", "lodash@^4.17", "@scope/pkg@1.2.3",
 * "is-number@latest"). Everything else is refused with the rule that
 * refuses it: URLs, VCS links, local paths and archives, direct references
 * ("name @ URL"), environment markers, pip options ("--index-url", "-e",
 * "-r"), npm protocols ("git+", "file:", "http:", "npm:" aliases) and
 * GitHub shorthand ("user/repo").
 *
 * Names are compared normalised: PEP 503 for Python (lowercase, every run
 * of "-", "_" and "." becomes "-", so "Foo_Bar" is "foo-bar"), lowercase
 * for npm (scope included).
 *
 * The policy is two comma-separated lists (CODEBOX_PACKAGE_ALLOW,
 * CODEBOX_PACKAGE_DENY) of names with optional constraints, written either
 * the Python way ("requests>=2.31", "urllib3<2,>=1.26": an item that starts
 * with an operator continues the previous entry's constraint) or the npm
 * way ("lodash@^4", "@types/node"). The deny list wins. With an allow list,
 * a requested name that is not on it is refused, and a requirement whose
 * versions do not meet the allow entry's constraint at all is refused; one
 * that overlaps it is narrowed to the overlap. A deny entry with a
 * constraint refuses a requirement only when every version it asks for is
 * denied; the version actually resolved is checked again before anything
 * is installed (gw_package_policy_check_resolved), dependencies included.
 * Python constraints on npm entries (and the reverse) are applied by their
 * meaning where they can be; an npm range cannot constrain a Python
 * package, so such an entry refuses conservatively.
 *
 * Threads: a policy is immutable once made; any thread may read it. */
#ifndef GW_PACKAGE_POLICY_H
#define GW_PACKAGE_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "gw_package_requirement.h"

typedef struct gw_package_policy gw_package_policy_t;

/* Reads the two lists (NULL or "" for none). NULL with a sentence in err
 * when an entry is not a name with an optional constraint (or on OOM). */
gw_package_policy_t *gw_package_policy_new (const char *allow, const char *deny, char *err,
                                            size_t err_len);
void gw_package_policy_destroy (gw_package_policy_t **self_p);

/* True when an allow list is set. */
bool gw_package_policy_has_allow (const gw_package_policy_t *self);

/* Judges one requirement string for an ecosystem. Returns 0 when it may be
 * installed (out->name and out->install set), or -1 when refused
 * (out->rule and out->reason set). */
int gw_package_policy_check (const gw_package_policy_t *self, gw_pkg_eco_t eco,
                             const char *requirement, gw_pkg_verdict_t *out);

/* Judges a package the installer resolved (name as the index spells it,
 * its exact version), requested or pulled in as a dependency. Deny entries
 * apply to every package; the allow list's names to requested ones; its
 * constraints to any package it names. Returns 0, or -1 with out->rule
 * and out->reason set. An unparsable name or version is refused. */
int gw_package_policy_check_resolved (const gw_package_policy_t *self, gw_pkg_eco_t eco,
                                      const char *name, const char *version, bool requested,
                                      gw_pkg_verdict_t *out);

/* pip constraints, so dependencies resolve inside the allow list's
 * ranges and outside the deny list's: "name>=1,<2\n" per allow entry
 * with a Python constraint, and the complement of each one-clause deny
 * constraint ("cbx>=2" gives "cbx<2"; wider ones are only checked after
 * resolution). A new string ("" when none), or NULL on OOM. */
char *gw_package_policy_pip_constraints (const gw_package_policy_t *self);

/* Compares two versions of an ecosystem (PEP 440 or semver): <0, 0, >0;
 * *ok is false when either does not parse. For tests and diagnostics. */
int gw_package_version_cmp (gw_pkg_eco_t eco, const char *a, const char *b, bool *ok);

#endif
