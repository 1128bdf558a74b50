/* gw_package_ranges: PEP 440 specifier sets and npm ranges read into
 * version sets, and a semver set written back as an npm range; see
 * gw_package_ranges.h. Pure code; any thread. */
#include "gw_package_ranges.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gw_package_version.h"

/* ---- PEP 440 specifiers ------------------------------------------------- */

/* Operators, longest first. */
static const char *const s_ops[] = {"===", "~=", "==", "!=", "<=", ">=", "<", ">", NULL};

/* Splits "OP VERSION" into op and the trimmed version text (at most
 * vlen - 1 bytes). Returns the operator's index or -1. */
static int
s_clause (const char *clause, size_t len, char *version, size_t vlen)
{
    while (len && isspace ((unsigned char) *clause)) {
        clause++;
        len--;
    }
    while (len && isspace ((unsigned char) clause[len - 1]))
        len--;
    for (int i = 0; s_ops[i]; i++) {
        size_t n = strlen (s_ops[i]);
        if (len > n && strncmp (clause, s_ops[i], n) == 0) {
            const char *v = clause + n;
            size_t vn = len - n;
            while (vn && isspace ((unsigned char) *v)) {
                v++;
                vn--;
            }
            if (!vn || vn >= vlen)
                return -1;
            memcpy (version, v, vn);
            version[vn] = '\0';
            return i;
        }
    }
    return -1;
}

/* Parses the version of a clause for the set's kind: PEP 440, or (semver)
 * one to three numbers and an optional "-pre". A trailing ".*" is a
 * wildcard (*wild set). *given counts the release numbers written. */
static int
s_clause_version (const char *text, bool npm, gw_ver_t *v, bool *wild, int *given)
{
    char buf[128];
    snprintf (buf, sizeof buf, "%s", text);
    size_t n = strlen (buf);
    *wild = n > 2 && strcmp (buf + n - 2, ".*") == 0;
    if (*wild)
        buf[n - 2] = '\0';
    if (!npm) {
        if (gw_ver_parse_pep440 (buf, v))
            return -1;
        *given = v->nrel;
        /* a wildcard follows a plain release */
        if (*wild && (v->pre_rank != LONG_MAX || v->post != LONG_MIN || v->dev != LONG_MAX))
            return -1;
        return 0;
    }
    gw_ver_init (v, true);
    const char *p = buf;
    gw_ver_partial_t part;
    if (!gw_ver_partial (&p, &part) || *p || part.given == 0
        || (part.given < 3 && strchr (buf, '*')) || strpbrk (buf, "xX"))
        return -1;
    v->nrel = 3;
    memcpy (v->rel, part.v, sizeof part.v);
    snprintf (v->pre, sizeof v->pre, "%s", part.pre);
    *given = part.given;
    return 0;
}

/* The set of one clause. */
static int
s_clause_set (int op, const gw_ver_t *v, bool wild, int given, gw_vset_t *out, char *err,
              size_t err_len)
{
    bool npm = v->npm;
    bool final = npm ? !v->pre[0]
                     : v->pre_rank == LONG_MAX && v->post == LONG_MIN && v->dev == LONG_MAX;
    const char *name = s_ops[op];
    if (wild && op != 2 && op != 3) {
        snprintf (err, err_len, "'.*' only goes with == and != (not %s)", name);
        return -1;
    }
    switch (op) {
    case 0:     /* === : an exact string; treated as == when it parses */
    case 2:     /* == */
        if (wild)
            return gw_vset_one (out, npm, gw_vbound_at (gw_ver_floor (v, given, false), true),
                                gw_vbound_at (gw_ver_floor (v, given, true), false));
        return gw_vset_one (out, npm, gw_vbound_at (*v, true), gw_vbound_at (*v, true));
    case 3: {   /* != */
        gw_vset_t eq;
        int rc = wild ? gw_vset_one (&eq, npm, gw_vbound_at (gw_ver_floor (v, given, false), true),
                                     gw_vbound_at (gw_ver_floor (v, given, true), false))
                      : gw_vset_one (&eq, npm, gw_vbound_at (*v, true), gw_vbound_at (*v, true));
        if (!rc)
            rc = gw_vset_complement (&eq, out);
        gw_vset_clear (&eq);
        return rc;
    }
    case 1:     /* ~= : >= v and == all but the last number .* */
        if (given < 2) {
            snprintf (err, err_len, "~= needs a version with at least two numbers, such as "
                      "~=1.4");
            return -1;
        }
        return gw_vset_one (out, npm, gw_vbound_at (*v, true),
                            gw_vbound_at (gw_ver_floor (v, given - 1, true), false));
    case 4:     /* <= */
        return gw_vset_one (out, npm, gw_vbound_inf (), gw_vbound_at (*v, true));
    case 5:     /* >= */
        return gw_vset_one (out, npm, gw_vbound_at (*v, true), gw_vbound_inf ());
    case 6:     /* < : not the pre-releases of a final version */
        return gw_vset_one (out, npm, gw_vbound_inf (),
                            gw_vbound_at (final ? gw_ver_floor (v, v->nrel, false) : *v, false));
    default: {  /* > : not the post-releases of a final version */
        gw_ver_t above = *v;
        if (final && !npm) {
            above = gw_ver_floor (v, v->nrel, false);
            above.sentinel = 1;
        }
        return gw_vset_one (out, npm, gw_vbound_at (above, false), gw_vbound_inf ());
    }
    }
}

static int
s_parse_specifiers (const char *spec, bool npm, gw_vset_t *out, char *err, size_t err_len)
{
    char buf[1024];
    snprintf (buf, sizeof buf, "%s", spec ? spec : "");
    char *p = buf;
    while (isspace ((unsigned char) *p))
        p++;
    size_t n = strlen (p);
    while (n && isspace ((unsigned char) p[n - 1]))
        p[--n] = '\0';
    if (n >= 2 && p[0] == '(' && p[n - 1] == ')') {
        p[n - 1] = '\0';
        p++;
    }
    if (gw_vset_all (out, npm)) {
        snprintf (err, err_len, "out of memory");
        return -1;
    }
    while (*p && isspace ((unsigned char) *p))
        p++;
    if (!*p)
        return 0;
    for (;;) {
        size_t len = strcspn (p, ",");
        char version[128];
        int op = s_clause (p, len, version, sizeof version);
        gw_ver_t v;
        bool wild = false;
        int given = 0;
        if (op < 0 || s_clause_version (version, npm, &v, &wild, &given)) {
            snprintf (err, err_len, "'%.*s' is not a version constraint such as >=1.2 or "
                      "==1.4.*", (int) (len > 80 ? 80 : len), p);
            gw_vset_clear (out);
            return -1;
        }
        gw_vset_t clause, both;
        if (s_clause_set (op, &v, wild, given, &clause, err, err_len)) {
            gw_vset_clear (out);
            return -1;
        }
        int rc = gw_vset_intersect (out, &clause, &both);
        gw_vset_clear (&clause);
        gw_vset_clear (out);
        if (rc) {
            snprintf (err, err_len, "out of memory");
            return -1;
        }
        *out = both;
        if (!p[len])
            return 0;
        p += len + 1;
    }
}

int
gw_vset_parse_pep440 (const char *spec, gw_vset_t *out, char *err, size_t err_len)
{
    return s_parse_specifiers (spec, false, out, err, err_len);
}

int
gw_vset_parse_pep440_semver (const char *spec, gw_vset_t *out, char *err, size_t err_len)
{
    return s_parse_specifiers (spec, true, out, err, err_len);
}

/* ---- npm ranges --------------------------------------------------------- */

/* The version of a partial, zero-padded; pre-release kept when given. */
static gw_ver_t
s_partial_ver (const gw_ver_partial_t *part)
{
    gw_ver_t v;
    gw_ver_init (&v, true);
    v.nrel = 3;
    memcpy (v.rel, part->v, sizeof part->v);
    snprintf (v.pre, sizeof v.pre, "%s", part->pre);
    return v;
}

/* The set of one comparator: op ("", "=", "<", "<=", ">", ">=", "~", "^"). */
static int
s_npm_comparator (const char *op, const gw_ver_partial_t *part, gw_vset_t *out)
{
    gw_ver_t v = s_partial_ver (part);
    int n = part->given;
    bool full = n == 3;
    /* the sentinel below the next tuple at the last given number */
    gw_ver_t next = gw_ver_floor (&v, n ? n : 1, true);
    if (!strcmp (op, "") || !strcmp (op, "=")) {
        if (n == 0)
            return gw_vset_all (out, true);
        if (full)
            return gw_vset_one (out, true, gw_vbound_at (v, true), gw_vbound_at (v, true));
        return gw_vset_one (out, true, gw_vbound_at (v, true), gw_vbound_at (next, false));
    }
    if (!strcmp (op, ">")) {
        if (n == 0)     /* empty */
            return gw_vset_one (out, true, gw_vbound_at (v, false), gw_vbound_at (v, false));
        return full ? gw_vset_one (out, true, gw_vbound_at (v, false), gw_vbound_inf ())
                    : gw_vset_one (out, true, gw_vbound_at (next, true), gw_vbound_inf ());
    }
    if (!strcmp (op, ">="))
        return n == 0 ? gw_vset_all (out, true)
                      : gw_vset_one (out, true, gw_vbound_at (v, true), gw_vbound_inf ());
    if (!strcmp (op, "<")) {
        gw_ver_t below = gw_ver_floor (&v, 3, false);
        if (n == 0)     /* empty */
            return gw_vset_one (out, true, gw_vbound_at (v, false), gw_vbound_at (v, false));
        return gw_vset_one (out, true, gw_vbound_inf (), gw_vbound_at (full ? v : below, false));
    }
    if (!strcmp (op, "<=")) {
        if (n == 0)
            return gw_vset_all (out, true);
        return full ? gw_vset_one (out, true, gw_vbound_inf (), gw_vbound_at (v, true))
                    : gw_vset_one (out, true, gw_vbound_inf (), gw_vbound_at (next, false));
    }
    if (!strcmp (op, "~")) {
        if (n == 0)
            return gw_vset_all (out, true);
        return gw_vset_one (out, true, gw_vbound_at (v, true),
                            gw_vbound_at (gw_ver_floor (&v, n == 1 ? 1 : 2, true), false));
    }
    /* ^ : up to the next change of the first non-zero number given */
    if (n == 0)
        return gw_vset_all (out, true);
    int keep = 1;
    if (v.rel[0] == 0 && n >= 2)
        keep = v.rel[1] == 0 && n == 3 ? 3 : 2;
    return gw_vset_one (out, true, gw_vbound_at (v, true),
                        gw_vbound_at (gw_ver_floor (&v, keep, true), false));
}

/* One alternative of a range (no "||"): comparators separated by spaces,
 * or a hyphen range "A - B". */
static int
s_npm_alternative (char *alt, gw_vset_t *out, char *err, size_t err_len)
{
    if (gw_vset_all (out, true))
        return -1;
    char *hyphen = strstr (alt, " - ");
    if (hyphen) {
        *hyphen = '\0';
        const char *a = alt, *b = hyphen + 3;
        while (isspace ((unsigned char) *a))
            a++;
        while (isspace ((unsigned char) *b))
            b++;
        gw_ver_partial_t pa, pb;
        gw_vset_clear (out);
        if (!gw_ver_partial (&a, &pa) || !gw_ver_partial (&b, &pb)) {
            snprintf (err, err_len, "'%.60s - %.60s' is not a hyphen range", alt, hyphen + 3);
            return -1;
        }
        while (isspace ((unsigned char) *a))
            a++;
        while (isspace ((unsigned char) *b))
            b++;
        if (*a || *b) {
            snprintf (err, err_len, "a hyphen range stands alone: '%.60s'", alt);
            return -1;
        }
        gw_vset_t lo, hi, both;
        if (s_npm_comparator (">=", &pa, &lo))
            return -1;
        if (s_npm_comparator ("<=", &pb, &hi)) {
            gw_vset_clear (&lo);
            return -1;
        }
        int rc = gw_vset_intersect (&lo, &hi, &both);
        gw_vset_clear (&lo);
        gw_vset_clear (&hi);
        *out = both;
        return rc;
    }
    const char *p = alt;
    for (;;) {
        while (isspace ((unsigned char) *p))
            p++;
        if (!*p)
            return 0;
        static const char *const ops[] = {">=", "<=", "~>", ">", "<", "=", "~", "^", NULL};
        char op[3] = "";
        for (int i = 0; ops[i]; i++)
            if (strncmp (p, ops[i], strlen (ops[i])) == 0) {
                snprintf (op, sizeof op, "%s", strcmp (ops[i], "~>") == 0 ? "~" : ops[i]);
                p += strlen (ops[i]);
                break;
            }
        while (isspace ((unsigned char) *p))
            p++;
        const char *start = p;
        gw_ver_partial_t part;
        if (!gw_ver_partial (&p, &part) || (*p && !isspace ((unsigned char) *p))) {
            snprintf (err, err_len, "'%.60s' is not a version range such as ^1.2, ~1.2.3, "
                      ">=1 <2 or 1.x", start);
            gw_vset_clear (out);
            return -1;
        }
        gw_vset_t one, both;
        if (s_npm_comparator (op, &part, &one)) {
            gw_vset_clear (out);
            return -1;
        }
        int rc = gw_vset_intersect (out, &one, &both);
        gw_vset_clear (&one);
        gw_vset_clear (out);
        *out = both;
        if (rc)
            return -1;
    }
}

int
gw_vset_parse_npm (const char *range, gw_vset_t *out, char *err, size_t err_len)
{
    out->npm = true;
    out->r = NULL;
    out->n = 0;
    char *copy = strdup (range ? range : "");
    if (!copy) {
        snprintf (err, err_len, "out of memory");
        return -1;
    }
    int rc = 0;
    char *alt = copy;
    for (;;) {
        char *bar = strstr (alt, "||");
        if (bar)
            *bar = '\0';
        gw_vset_t one = {true, NULL, 0};
        err[0] = '\0';
        rc = s_npm_alternative (alt, &one, err, err_len);
        if (rc) {
            gw_vset_clear (&one);
            if (!err[0])
                snprintf (err, err_len, "out of memory");
            break;
        }
        for (size_t i = 0; i < one.n && !rc; i++)
            rc = gw_vset_push (out, &one.r[i]);
        gw_vset_clear (&one);
        if (rc || !bar)
            break;
        alt = bar + 2;
    }
    free (copy);
    if (rc)
        gw_vset_clear (out);
    else
        gw_vset_normalize (out);
    return rc;
}

/* "1.2.3", "1.2.3-beta.1", or "1.2.3-0" for the sentinel below 1.2.3. */
static void
s_semver_text (const gw_ver_t *v, char *buf, size_t len)
{
    const char *pre = v->sentinel < 0 ? "0" : v->pre;
    snprintf (buf, len, "%ld.%ld.%ld%s%s", v->rel[0], v->nrel > 1 ? v->rel[1] : 0,
              v->nrel > 2 ? v->rel[2] : 0, *pre ? "-" : "", pre);
}

char *
gw_vset_npm_text (const gw_vset_t *set)
{
    if (gw_vset_empty (set))
        return NULL;
    size_t cap = 64 + set->n * 200;
    char *text = malloc (cap);
    if (!text)
        return NULL;
    text[0] = '\0';
    size_t len = 0;
    for (size_t i = 0; i < set->n; i++) {
        const gw_vrange_t *r = &set->r[i];
        char lo[100] = "", hi[100] = "";
        if (!r->lo.inf)
            s_semver_text (&r->lo.v, lo, sizeof lo);
        if (!r->hi.inf)
            s_semver_text (&r->hi.v, hi, sizeof hi);
        const char *bar = i ? " || " : "";
        if (r->lo.inf && r->hi.inf)
            len += (size_t) snprintf (text + len, cap - len, "%s*", bar);
        else if (!r->lo.inf && !r->hi.inf && r->lo.closed && r->hi.closed
                 && gw_ver_cmp (&r->lo.v, &r->hi.v) == 0)
            len += (size_t) snprintf (text + len, cap - len, "%s%s", bar, lo);
        else
            len += (size_t) snprintf (text + len, cap - len, "%s%s%s%s%s%s%s", bar,
                                      r->lo.inf ? "" : r->lo.closed ? ">=" : ">", lo,
                                      !r->lo.inf && !r->hi.inf ? " " : "",
                                      r->hi.inf ? "" : r->hi.closed ? "<=" : "<", hi, "");
    }
    return text;
}
