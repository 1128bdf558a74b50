/* gw_package_policy: the allow and deny lists and the verdicts on
 * requirements (read by gw_package_requirement) and on resolved packages;
 * see gw_package_policy.h. Pure code; any thread. */
#include "gw_package_policy.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gw_package_ranges.h"

#define MAX_ENTRIES 1000

/* One allow or deny entry. */
typedef struct {
    char name[GW_PKG_NAME_MAX];     /* as written */
    char spec[GW_PKG_SPEC_MAX];     /* constraint without blanks, or "" */
    bool npm_range;                 /* written "name@range" */
    char raw[GW_PKG_SPEC_MAX];      /* as written */
    char text[GW_PKG_SPEC_MAX];     /* as written, printable, for messages */
} s_entry_t;

typedef struct {
    s_entry_t *items;
    size_t n;
} s_list_t;

struct gw_package_policy {
    s_list_t allow, deny;
};

/* snprintf that says whether everything fitted. */
static bool
s_fits (char *buf, size_t len, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));

static bool
s_fits (char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    int n = vsnprintf (buf, len, fmt, ap);
    va_end (ap);
    return n >= 0 && (size_t) n < len;
}

/* A copy of text for a message (cut to len), every byte outside
 * printable ASCII shown as '?'. */
static const char *
s_shown (const char *text, char *buf, size_t len)
{
    size_t o = 0;
    for (const char *p = text ? text : ""; *p && o + 1 < len; p++)
        buf[o++] = (unsigned char) *p < 0x20 || (unsigned char) *p >= 0x7f ? '?' : *p;
    buf[o] = '\0';
    return buf;
}


/* ---- the lists ---------------------------------------------------------- */

static bool
s_is_operator (char c)
{
    return strchr ("<>=!~", c) != NULL;
}

/* Parses one entry ("name", "name<spec>", "name@range", "@scope/name..."). */
static int
s_entry_parse (const char *item, s_entry_t *e, const char *setting, char *err, size_t err_len)
{
    memset (e, 0, sizeof *e);
    snprintf (e->raw, sizeof e->raw, "%s", item);
    s_shown (item, e->text, sizeof e->text);
    const char *at = strchr (item + (item[0] == '@'), '@');
    size_t n;
    if (at)
        n = (size_t) (at - item);
    else if (item[0] == '@')
        n = strcspn (item, " <>=!~");
    else
        n = strspn (item, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-");
    if (n == 0 || n >= sizeof e->name)
        goto bad;
    memcpy (e->name, item, n);
    e->name[n] = '\0';
    char norm[GW_PKG_NAME_MAX];
    if (gw_package_normalize (GW_PKG_PYTHON, e->name, norm, sizeof norm)
        && gw_package_normalize (GW_PKG_NPM, e->name, norm, sizeof norm))
        goto bad;
    gw_vset_t set;
    char why[200], shown[128];
    if (at) {
        e->npm_range = true;
        snprintf (e->spec, sizeof e->spec, "%s", at + 1);
        if (gw_vset_parse_npm (e->spec, &set, why, sizeof why)) {
            snprintf (err, err_len, "%s entry '%s': %s", setting,
                      s_shown (item, shown, sizeof shown), s_shown (why, why, sizeof why));
            return -1;
        }
    } else {
        gw_pkg_squeeze (item + n, e->spec, sizeof e->spec);
        if (gw_vset_parse_pep440 (e->spec, &set, why, sizeof why)) {
            snprintf (err, err_len, "%s entry '%s': %s", setting,
                      s_shown (item, shown, sizeof shown), s_shown (why, why, sizeof why));
            return -1;
        }
    }
    gw_vset_clear (&set);
    return 0;
bad:
    snprintf (err, err_len, "%s entry '%s' is not a package name with an optional version "
              "constraint (such as requests>=2.31 or lodash@^4)", setting,
              s_shown (item, shown, sizeof shown));
    return -1;
}

/* Reads a comma list; an item that starts with an operator continues the
 * previous entry's constraint ("urllib3>=1.26,<3"). */
static int
s_list_parse (const char *text, s_list_t *list, const char *setting, char *err, size_t err_len)
{
    list->items = NULL;
    list->n = 0;
    if (!text || !*text)
        return 0;
    char *copy = strdup (text);
    if (!copy) {
        snprintf (err, err_len, "out of memory");
        return -1;
    }
    int rc = 0;
    char *save = NULL;
    for (char *tok = strtok_r (copy, ",", &save); tok && !rc; tok = strtok_r (NULL, ",", &save)) {
        while (isspace ((unsigned char) *tok))
            tok++;
        size_t n = strlen (tok);
        while (n && isspace ((unsigned char) tok[n - 1]))
            tok[--n] = '\0';
        if (!n)
            continue;
        if (s_is_operator (tok[0]) && list->n && !list->items[list->n - 1].npm_range) {
            s_entry_t *prev = &list->items[list->n - 1];
            char joined[GW_PKG_SPEC_MAX];
            if (!s_fits (joined, sizeof joined, "%s,%s", prev->raw, tok)) {
                snprintf (err, err_len, "%s has an entry that is too long", setting);
                rc = -1;
                break;
            }
            rc = s_entry_parse (joined, prev, setting, err, err_len);
            continue;
        }
        if (list->n == MAX_ENTRIES) {
            snprintf (err, err_len, "%s has more than %d entries", setting, MAX_ENTRIES);
            rc = -1;
            break;
        }
        s_entry_t *grown = realloc (list->items, (list->n + 1) * sizeof *grown);
        if (!grown) {
            snprintf (err, err_len, "out of memory");
            rc = -1;
            break;
        }
        list->items = grown;
        rc = s_entry_parse (tok, &list->items[list->n], setting, err, err_len);
        if (!rc)
            list->n++;
    }
    free (copy);
    if (rc) {
        free (list->items);
        list->items = NULL;
        list->n = 0;
    }
    return rc;
}

gw_package_policy_t *
gw_package_policy_new (const char *allow, const char *deny, char *err, size_t err_len)
{
    gw_package_policy_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, err_len, "out of memory");
        return NULL;
    }
    if (s_list_parse (allow, &self->allow, "CODEBOX_PACKAGE_ALLOW", err, err_len)
        || s_list_parse (deny, &self->deny, "CODEBOX_PACKAGE_DENY", err, err_len)) {
        gw_package_policy_destroy (&self);
        return NULL;
    }
    return self;
}

void
gw_package_policy_destroy (gw_package_policy_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free ((*self_p)->allow.items);
    free ((*self_p)->deny.items);
    free (*self_p);
    *self_p = NULL;
}

bool
gw_package_policy_has_allow (const gw_package_policy_t *self)
{
    return self->allow.n > 0;
}

/* True when the entry names the package norm of eco. */
static bool
s_entry_matches (const s_entry_t *e, gw_pkg_eco_t eco, const char *norm)
{
    char name[GW_PKG_NAME_MAX];
    return gw_package_normalize (eco, e->name, name, sizeof name) == 0
           && strcmp (name, norm) == 0;
}

/* The versions an entry's constraint admits, for eco. -1 when it cannot
 * apply (an npm range on a Python package). */
static int
s_entry_set (const s_entry_t *e, gw_pkg_eco_t eco, gw_vset_t *out)
{
    char err[200];
    if (eco == GW_PKG_PYTHON)
        return e->npm_range ? -1 : gw_vset_parse_pep440 (e->spec, out, err, sizeof err);
    return e->npm_range ? gw_vset_parse_npm (e->spec, out, err, sizeof err)
                        : gw_vset_parse_pep440_semver (e->spec, out, err, sizeof err);
}

/* The versions a parsed requirement asks for. */
static int
s_req_set (const gw_pkg_req_t *req, gw_pkg_eco_t eco, gw_vset_t *out)
{
    char err[200];
    if (eco == GW_PKG_PYTHON)
        return gw_vset_parse_pep440 (req->spec, out, err, sizeof err);
    if (req->tag)
        return gw_vset_all (out, true);
    return gw_vset_parse_npm (req->spec, out, err, sizeof err);
}

/* The deny list's verdict on a requirement asking for versions r. */
static int
s_check_deny (const gw_package_policy_t *self, gw_pkg_eco_t eco, const char *text,
              const char *norm, const gw_vset_t *r, gw_pkg_verdict_t *out)
{
    for (size_t i = 0; i < self->deny.n; i++) {
        const s_entry_t *e = &self->deny.items[i];
        if (!s_entry_matches (e, eco, norm))
            continue;
        if (!e->spec[0]) {
            gw_pkg_refuse (out, "denied", "'%s' is denied by the server's package policy "
                           "(CODEBOX_PACKAGE_DENY entry '%s')", text, e->text);
            return -1;
        }
        gw_vset_t d = {0};
        bool all_denied = s_entry_set (e, eco, &d) != 0 || gw_vset_subset (r, &d);
        gw_vset_clear (&d);
        if (all_denied) {
            gw_pkg_refuse (out, "version_denied", "every version '%s' asks for is denied by the "
                           "server's package policy (CODEBOX_PACKAGE_DENY entry '%s'); ask for "
                           "another version", text, e->text);
            return -1;
        }
    }
    return 0;
}

/* Builds the install string: the requirement narrowed to x (the overlap
 * with allow entry e, or NULL for no narrowing). */
static int
s_install_text (gw_pkg_eco_t eco, const gw_pkg_req_t *req, const s_entry_t *e, const gw_vset_t *x,
                gw_pkg_verdict_t *out)
{
    if (eco == GW_PKG_PYTHON) {
        const char *mine = req->spec, *theirs = e && e->spec[0] ? e->spec : "";
        return s_fits (out->install, sizeof out->install, "%s%s%s%s%s", req->name, req->extras,
                       mine, *mine && *theirs ? "," : "", theirs) ? 0 : -1;
    }
    if (!e || !e->spec[0])
        return s_fits (out->install, sizeof out->install, "%s%s%s", req->name,
                       req->spec[0] ? "@" : "", req->spec) ? 0 : -1;
    char *range = gw_vset_npm_text (x);
    if (!range)
        return -1;
    bool fits = s_fits (out->install, sizeof out->install, "%s%s%s", req->name,
                        strcmp (range, "*") ? "@" : "", strcmp (range, "*") ? range : "");
    free (range);
    return fits ? 0 : -1;
}

int
gw_package_policy_check (const gw_package_policy_t *self, gw_pkg_eco_t eco,
                         const char *requirement, gw_pkg_verdict_t *out)
{
    memset (out, 0, sizeof *out);
    gw_pkg_req_t req;
    if (gw_pkg_requirement_parse (eco, requirement, &req, out))
        return -1;
    snprintf (out->name, sizeof out->name, "%s", req.norm);
    /* the requirement as messages show it: trimmed (it parsed, so it is
       printable and short) */
    char text[GW_PKG_REQUIREMENT_MAX + 2];
    const char *start = requirement;
    while (isspace ((unsigned char) *start))
        start++;
    size_t n = strlen (start);
    while (n && isspace ((unsigned char) start[n - 1]))
        n--;
    snprintf (text, sizeof text, "%.*s", (int) n, start);
    gw_vset_t r;
    if (s_req_set (&req, eco, &r)) {
        gw_pkg_refuse (out, "invalid", "'%s' has an invalid version constraint", text);
        return -1;
    }
    int rc = s_check_deny (self, eco, text, req.norm, &r, out);
    if (rc || !gw_package_policy_has_allow (self)) {
        if (!rc)
            rc = s_install_text (eco, &req, NULL, NULL, out);
        gw_vset_clear (&r);
        return rc;
    }
    const s_entry_t *named = NULL;
    rc = -1;
    for (size_t i = 0; i < self->allow.n && rc; i++) {
        const s_entry_t *e = &self->allow.items[i];
        if (!s_entry_matches (e, eco, req.norm))
            continue;
        named = e;
        gw_vset_t a = {0}, x = {0};
        if (s_entry_set (e, eco, &a))
            continue;
        if (gw_vset_intersect (&r, &a, &x) == 0 && !gw_vset_empty (&x))
            rc = s_install_text (eco, &req, e, &x, out);
        gw_vset_clear (&a);
        gw_vset_clear (&x);
    }
    gw_vset_clear (&r);
    if (rc && !named)
        gw_pkg_refuse (out, "not_allowed", "'%s' is not on the server's allow list "
                       "(CODEBOX_PACKAGE_ALLOW); ask the operator to add it", text);
    else if (rc)
        gw_pkg_refuse (out, "version_not_allowed", "'%s' asks for versions outside what the "
                       "server's allow list permits (CODEBOX_PACKAGE_ALLOW entry '%s')", text,
                       named->text);
    return rc;
}

int
gw_package_policy_check_resolved (const gw_package_policy_t *self, gw_pkg_eco_t eco,
                                  const char *name, const char *version, bool requested,
                                  gw_pkg_verdict_t *out)
{
    memset (out, 0, sizeof *out);
    char norm[GW_PKG_NAME_MAX];
    gw_ver_t v;
    char shown[128];
    if (gw_package_normalize (eco, name, norm, sizeof norm)) {
        gw_pkg_refuse (out, "invalid", "the installer resolved a package with an unexpected name "
                       "'%s'", s_shown (name, shown, sizeof shown));
        return -1;
    }
    snprintf (out->name, sizeof out->name, "%s", norm);
    if ((eco == GW_PKG_PYTHON ? gw_ver_parse_pep440 (version, &v)
                              : gw_ver_parse_semver (version, &v))) {
        gw_pkg_refuse (out, "invalid", "the installer resolved %s to an unexpected version "
                       "'%s'", name, s_shown (version, shown, sizeof shown));
        return -1;
    }
    const char *role = requested ? "" : " (a dependency)";
    for (size_t i = 0; i < self->deny.n; i++) {
        const s_entry_t *e = &self->deny.items[i];
        if (!s_entry_matches (e, eco, norm))
            continue;
        gw_vset_t d = {0};
        bool denied = !e->spec[0] || s_entry_set (e, eco, &d) != 0;
        if (e->spec[0] && !denied) {
            denied = gw_vset_contains (&d, &v);
            gw_vset_clear (&d);
        }
        if (denied) {
            gw_pkg_refuse (out, e->spec[0] ? "version_denied" : "denied",
                           "%s %s%s is denied by the server's package policy "
                           "(CODEBOX_PACKAGE_DENY entry '%s')", name, version, role, e->text);
            return -1;
        }
    }
    if (!gw_package_policy_has_allow (self))
        return 0;
    bool named = false;
    for (size_t i = 0; i < self->allow.n; i++) {
        const s_entry_t *e = &self->allow.items[i];
        if (!s_entry_matches (e, eco, norm))
            continue;
        named = true;
        if (!e->spec[0])
            return 0;
        gw_vset_t a = {0};
        if (s_entry_set (e, eco, &a))
            continue;
        bool in = gw_vset_contains (&a, &v);
        gw_vset_clear (&a);
        if (in)
            return 0;
    }
    if (!named && !requested)
        return 0;
    if (!named)
        gw_pkg_refuse (out, "not_allowed", "%s is not on the server's allow list "
                       "(CODEBOX_PACKAGE_ALLOW)", name);
    else
        gw_pkg_refuse (out, "version_not_allowed", "%s %s%s is outside what the server's allow "
                       "list permits (CODEBOX_PACKAGE_ALLOW)", name, version, role);
    return -1;
}

/* The constraint that keeps a resolver out of a one-clause deny range
 * (">=2" gives "<2"), or "" when it cannot be written as one clause. */
static void
s_deny_complement (const s_entry_t *e, char *out, size_t len)
{
    static const char *const ops[][2] = {{">=", "<"}, {"<=", ">"}, {"==", "!="}, {"!=", "=="},
                                         {">", "<="}, {"<", ">="}};
    out[0] = '\0';
    if (e->npm_range || strchr (e->spec, ',') || strncmp (e->spec, "===", 3) == 0)
        return;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        size_t n = strlen (ops[i][0]);
        if (strncmp (e->spec, ops[i][0], n) == 0) {
            snprintf (out, len, "%s%s", ops[i][1], e->spec + n);
            return;
        }
    }
}

char *
gw_package_policy_pip_constraints (const gw_package_policy_t *self)
{
    size_t cap = 1 + (self->allow.n + self->deny.n) * (GW_PKG_NAME_MAX + GW_PKG_SPEC_MAX + 2);
    char *text = malloc (cap);
    if (!text)
        return NULL;
    size_t len = 0;
    text[0] = '\0';
    for (size_t i = 0; i < self->allow.n; i++) {
        const s_entry_t *e = &self->allow.items[i];
        if (e->npm_range || !e->spec[0] || !gw_pkg_python_name_valid (e->name))
            continue;
        len += (size_t) snprintf (text + len, cap - len, "%s%s\n", e->name, e->spec);
    }
    for (size_t i = 0; i < self->deny.n; i++) {
        const s_entry_t *e = &self->deny.items[i];
        char spec[GW_PKG_SPEC_MAX];
        s_deny_complement (e, spec, sizeof spec);
        if (spec[0] && gw_pkg_python_name_valid (e->name))
            len += (size_t) snprintf (text + len, cap - len, "%s%s\n", e->name, spec);
    }
    return text;
}

int
gw_package_version_cmp (gw_pkg_eco_t eco, const char *a, const char *b, bool *ok)
{
    gw_ver_t va, vb;
    int (*parse) (const char *, gw_ver_t *) =
        eco == GW_PKG_PYTHON ? gw_ver_parse_pep440 : gw_ver_parse_semver;
    *ok = parse (a, &va) == 0 && parse (b, &vb) == 0;
    return *ok ? gw_ver_cmp (&va, &vb) : 0;
}
