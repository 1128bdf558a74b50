/* gw_package_requirement: one requirement string read the way pip or npm
 * would, but only the safe part of their grammar (see gw_package_policy.h
 * for what is accepted and what is refused with which rule), package
 * names checked and normalised (PEP 503 for Python, lowercase for npm),
 * and the verdict a requirement gets. The policy (gw_package_policy)
 * judges what is read here against its lists.
 *
 * Threads: pure code; any thread. */
#ifndef GW_PACKAGE_REQUIREMENT_H
#define GW_PACKAGE_REQUIREMENT_H

#include <stdbool.h>
#include <stddef.h>

typedef enum { GW_PKG_PYTHON, GW_PKG_NPM } gw_pkg_eco_t;

#define GW_PKG_NAME_MAX 215     /* npm's limit (214) and a NUL */
#define GW_PKG_SPEC_MAX 1024

/* The verdict on one requirement. */
typedef struct {
    char name[GW_PKG_NAME_MAX];     /* normalised */
    char install[GW_PKG_SPEC_MAX];  /* what to hand to pip/npm when allowed */
    char rule[40];                  /* when refused: "denied", "not_allowed",
                                       "version_not_allowed", "version_denied",
                                       "url", "vcs", "path", "option",
                                       "direct_reference", "marker",
                                       "shorthand", "protocol", "invalid" */
    char reason[768];               /* when refused: a sentence naming the
                                       rule (and the setting and entry) */
} gw_pkg_verdict_t;

#define GW_PKG_REQUIREMENT_MAX 200  /* characters of a requirement string */

/* A requirement as parsed. */
typedef struct {
    char name[GW_PKG_NAME_MAX];     /* as written */
    char norm[GW_PKG_NAME_MAX];
    char extras[256];               /* Python: "[a,b]" or "" */
    char spec[GW_PKG_SPEC_MAX];     /* Python: specifiers without blanks; npm: range or tag */
    bool tag;                       /* npm: spec is a dist-tag */
} gw_pkg_req_t;

/* Normalises a name into out (out_len >= GW_PKG_NAME_MAX): PEP 503 for
 * Python, lowercase for npm. Returns 0, or -1 when name is not a valid
 * name of that ecosystem. */
int gw_package_normalize (gw_pkg_eco_t eco, const char *name, char *out, size_t out_len);

/* True when name is a valid Python package name (as written, not yet
 * normalised). */
bool gw_pkg_python_name_valid (const char *name);

/* Reads a requirement of an ecosystem into req. Returns 0, or -1 with
 * out->rule and out->reason set when it is refused: empty, too long, not
 * printable ASCII, an option, URL, VCS link, path or archive, or
 * otherwise outside the grammar. */
int gw_pkg_requirement_parse (gw_pkg_eco_t eco, const char *requirement, gw_pkg_req_t *req,
                              gw_pkg_verdict_t *out);

/* Copies text without blanks and without one pair of outer parentheses. */
void gw_pkg_squeeze (const char *text, char *out, size_t len);

/* Refuses: sets out->rule and out->reason (the formatted sentence). */
void gw_pkg_refuse (gw_pkg_verdict_t *out, const char *rule, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

#endif
