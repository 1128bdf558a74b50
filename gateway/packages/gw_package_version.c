/* gw_package_version: PEP 440 and semver versions (parse, order), and
 * version sets as unions of intervals (intersect, complement, contain).
 * Specifiers and ranges are read into sets by gw_package_ranges. Pure
 * code; any thread. */
#include "gw_package_version.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- versions ----------------------------------------------------------- */

void
gw_ver_init (gw_ver_t *v, bool npm)
{
    memset (v, 0, sizeof *v);
    v->npm = npm;
    v->pre_rank = LONG_MAX;
    v->post = LONG_MIN;
    v->dev = LONG_MAX;
}

/* Reads a decimal number of at most 15 digits. */
static bool
s_num (const char **pp, long *out)
{
    const char *p = *pp;
    long n = 0;
    int digits = 0;
    while (isdigit ((unsigned char) *p)) {
        if (++digits > 15)
            return false;
        n = n * 10 + (*p++ - '0');
    }
    if (!digits)
        return false;
    *out = n;
    *pp = p;
    return true;
}

static bool
s_sep (char c)
{
    return c == '-' || c == '_' || c == '.';
}

/* Matches one of words (case-insensitive) at p; returns its index or -1
 * and the length through *len. Longer words must come first. */
static int
s_word (const char *p, const char *const *words, size_t *len)
{
    for (int i = 0; words[i]; i++) {
        size_t n = strlen (words[i]);
        if (strncasecmp (p, words[i], n) == 0) {
            *len = n;
            return i;
        }
    }
    return -1;
}

/* An optional separator and number after a pre/post/dev label. */
static long
s_label_number (const char **pp)
{
    const char *p = *pp;
    if (s_sep (*p) && isdigit ((unsigned char) p[1]))
        p++;
    long n = 0;
    if (isdigit ((unsigned char) *p) && !s_num (&p, &n))
        return -1;
    *pp = p;
    return n;
}

int
gw_ver_parse_pep440 (const char *text, gw_ver_t *out)
{
    gw_ver_init (out, false);
    if (!text)
        return -1;
    const char *p = text;
    while (isspace ((unsigned char) *p))
        p++;
    if (*p == 'v' || *p == 'V')
        p++;
    long n;
    if (!s_num (&p, &n))
        return -1;
    if (*p == '!') {
        out->epoch = n;
        p++;
        if (!s_num (&p, &n))
            return -1;
    }
    out->rel[out->nrel++] = n;
    while (*p == '.' && isdigit ((unsigned char) p[1])) {
        p++;
        if (out->nrel == GW_VER_MAXREL || !s_num (&p, &n))
            return -1;
        out->rel[out->nrel++] = n;
    }
    /* pre-release */
    static const char *const pre_words[] = {"alpha", "beta", "preview", "pre", "rc", "a", "b",
                                            "c", NULL};
    static const long pre_ranks[] = {0, 1, 2, 2, 2, 0, 1, 2};
    const char *q = s_sep (*p) ? p + 1 : p;
    size_t len;
    int w = s_word (q, pre_words, &len);
    if (w >= 0) {
        p = q + len;
        out->pre_rank = pre_ranks[w];
        if ((out->pre_num = s_label_number (&p)) < 0)
            return -1;
    }
    /* post-release: "-N" or "[sep]post|rev|r[N]" */
    static const char *const post_words[] = {"post", "rev", "r", NULL};
    if (*p == '-' && isdigit ((unsigned char) p[1])) {
        p++;
        if (!s_num (&p, &out->post))
            return -1;
    } else {
        q = s_sep (*p) ? p + 1 : p;
        if (s_word (q, post_words, &len) >= 0) {
            p = q + len;
            if ((out->post = s_label_number (&p)) < 0)
                return -1;
        }
    }
    /* development release */
    static const char *const dev_words[] = {"dev", NULL};
    q = s_sep (*p) ? p + 1 : p;
    if (s_word (q, dev_words, &len) >= 0) {
        p = q + len;
        if ((out->dev = s_label_number (&p)) < 0)
            return -1;
    }
    /* local label: ignored in comparisons */
    if (*p == '+') {
        p++;
        if (!isalnum ((unsigned char) *p))
            return -1;
        while (isalnum ((unsigned char) *p) || (s_sep (*p) && isalnum ((unsigned char) p[1])))
            p++;
    }
    while (isspace ((unsigned char) *p))
        p++;
    if (*p)
        return -1;
    /* the packaging library's key: a bare dev release sorts before pre-releases */
    if (out->pre_rank == LONG_MAX && out->post == LONG_MIN && out->dev != LONG_MAX)
        out->pre_rank = LONG_MIN;
    return 0;
}

/* Reads a semver pre-release or build: identifiers of [0-9A-Za-z-]
 * separated by dots. Copies into out (may be NULL). */
static bool
s_semver_ids (const char **pp, char *out, size_t out_len)
{
    const char *p = *pp, *start = p;
    for (;;) {
        const char *id = p;
        while (isalnum ((unsigned char) *p) || *p == '-')
            p++;
        if (p == id)
            return false;
        if (*p != '.')
            break;
        p++;
    }
    size_t n = (size_t) (p - start);
    if (out) {
        if (n >= out_len)
            return false;
        memcpy (out, start, n);
        out[n] = '\0';
    }
    *pp = p;
    return true;
}

bool
gw_ver_partial (const char **pp, gw_ver_partial_t *out)
{
    memset (out, 0, sizeof *out);
    const char *p = *pp;
    if (*p == '=')
        p++;
    if (*p == 'v' || *p == 'V')
        p++;
    bool wild = false;
    for (int i = 0; i < 3; i++) {
        if (i > 0) {
            if (*p != '.')
                break;
            p++;
        }
        if (*p == 'x' || *p == 'X' || *p == '*') {
            p++;
            wild = true;
        } else if (!wild && s_num (&p, &out->v[i]))
            out->given++;
        else
            return false;
    }
    if (out->given == 3 && *p == '-') {
        p++;
        if (!s_semver_ids (&p, out->pre, sizeof out->pre))
            return false;
    }
    if (*p == '+') {
        p++;
        if (!s_semver_ids (&p, NULL, 0))
            return false;
    }
    *pp = p;
    return true;
}

int
gw_ver_parse_semver (const char *text, gw_ver_t *out)
{
    gw_ver_init (out, true);
    if (!text)
        return -1;
    const char *p = text;
    while (isspace ((unsigned char) *p))
        p++;
    gw_ver_partial_t part;
    if (!gw_ver_partial (&p, &part) || part.given != 3)
        return -1;
    while (isspace ((unsigned char) *p))
        p++;
    if (*p)
        return -1;
    out->nrel = 3;
    memcpy (out->rel, part.v, sizeof part.v);
    snprintf (out->pre, sizeof out->pre, "%s", part.pre);
    return 0;
}

static int
s_cmp_long (long a, long b)
{
    return a < b ? -1 : a > b;
}

static bool
s_all_digits (const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isdigit ((unsigned char) s[i]))
            return false;
    return n > 0;
}

/* semver pre-release precedence ("" is a release, above every pre-release). */
static int
s_cmp_pre (const char *a, const char *b)
{
    if (!*a || !*b)
        return !*a && !*b ? 0 : !*a ? 1 : -1;
    while (*a && *b) {
        size_t na = strcspn (a, "."), nb = strcspn (b, ".");
        bool da = s_all_digits (a, na), db = s_all_digits (b, nb);
        int c;
        if (da && db)
            c = na != nb ? s_cmp_long ((long) na, (long) nb) : strncmp (a, b, na);
        else if (da || db)
            c = da ? -1 : 1;
        else {
            c = strncmp (a, b, na < nb ? na : nb);
            if (!c)
                c = s_cmp_long ((long) na, (long) nb);
        }
        if (c)
            return c < 0 ? -1 : 1;
        a += na + (a[na] == '.');
        b += nb + (b[nb] == '.');
    }
    return *a ? 1 : *b ? -1 : 0;
}

int
gw_ver_cmp (const gw_ver_t *a, const gw_ver_t *b)
{
    int c = s_cmp_long (a->epoch, b->epoch);
    if (c)
        return c;
    int n = a->nrel > b->nrel ? a->nrel : b->nrel;
    for (int i = 0; i < n; i++)
        if ((c = s_cmp_long (i < a->nrel ? a->rel[i] : 0, i < b->nrel ? b->rel[i] : 0)))
            return c;
    if ((c = s_cmp_long (a->sentinel, b->sentinel)) || a->sentinel)
        return c;
    if (a->npm)
        return s_cmp_pre (a->pre, b->pre);
    if ((c = s_cmp_long (a->pre_rank, b->pre_rank)))
        return c;
    if ((c = s_cmp_long (a->pre_num, b->pre_num)))
        return c;
    if ((c = s_cmp_long (a->post, b->post)))
        return c;
    return s_cmp_long (a->dev, b->dev);
}

/* The least version whose release starts with the first n numbers of v
 * (+1 on the last when bump): a sentinel below them all for PEP 440, the
 * real version M.m.p-0 for semver. */
gw_ver_t
gw_ver_floor (const gw_ver_t *v, int n, bool bump)
{
    gw_ver_t f;
    gw_ver_init (&f, v->npm);
    f.epoch = v->epoch;
    f.nrel = n;
    memcpy (f.rel, v->rel, (size_t) n * sizeof f.rel[0]);
    if (bump && n > 0)
        f.rel[n - 1]++;
    if (v->npm) {
        /* semver has a least version of each release: M.m.p-0 */
        for (int i = n; i < 3; i++)
            f.rel[i] = 0;
        f.nrel = 3;
        snprintf (f.pre, sizeof f.pre, "0");
    } else
        f.sentinel = -1;
    return f;
}

/* ---- sets --------------------------------------------------------------- */

void
gw_vset_clear (gw_vset_t *set)
{
    free (set->r);
    set->r = NULL;
    set->n = 0;
}

int
gw_vset_push (gw_vset_t *set, const gw_vrange_t *range)
{
    gw_vrange_t *grown = realloc (set->r, (set->n + 1) * sizeof *grown);
    if (!grown)
        return -1;
    set->r = grown;
    set->r[set->n++] = *range;
    return 0;
}

gw_vbound_t
gw_vbound_inf (void)
{
    gw_vbound_t b;
    memset (&b, 0, sizeof b);
    b.inf = true;
    return b;
}

gw_vbound_t
gw_vbound_at (gw_ver_t v, bool closed)
{
    gw_vbound_t b = {.v = v, .inf = false, .closed = closed};
    return b;
}

/* A set of one interval. */
int
gw_vset_one (gw_vset_t *out, bool npm, gw_vbound_t lo, gw_vbound_t hi)
{
    out->npm = npm;
    out->r = NULL;
    out->n = 0;
    gw_vrange_t r = {lo, hi};
    return gw_vset_push (out, &r);
}

int
gw_vset_all (gw_vset_t *out, bool npm)
{
    return gw_vset_one (out, npm, gw_vbound_inf (), gw_vbound_inf ());
}

/* Lower bounds: which starts first (<0: a). */
static int
s_cmp_lo (const gw_vbound_t *a, const gw_vbound_t *b)
{
    if (a->inf || b->inf)
        return a->inf && b->inf ? 0 : a->inf ? -1 : 1;
    int c = gw_ver_cmp (&a->v, &b->v);
    return c ? c : a->closed == b->closed ? 0 : a->closed ? -1 : 1;
}

/* Upper bounds: which ends first (<0: a). */
static int
s_cmp_hi (const gw_vbound_t *a, const gw_vbound_t *b)
{
    if (a->inf || b->inf)
        return a->inf && b->inf ? 0 : a->inf ? 1 : -1;
    int c = gw_ver_cmp (&a->v, &b->v);
    return c ? c : a->closed == b->closed ? 0 : a->closed ? 1 : -1;
}

static bool
s_range_empty (const gw_vrange_t *r)
{
    if (r->lo.inf || r->hi.inf)
        return false;
    int c = gw_ver_cmp (&r->lo.v, &r->hi.v);
    return c > 0 || (c == 0 && !(r->lo.closed && r->hi.closed));
}

static int
s_range_order (const void *a, const void *b)
{
    return s_cmp_lo (&((const gw_vrange_t *) a)->lo, &((const gw_vrange_t *) b)->lo);
}

/* Sorts, drops empty intervals and merges touching ones. */
void
gw_vset_normalize (gw_vset_t *set)
{
    size_t kept = 0;
    for (size_t i = 0; i < set->n; i++)
        if (!s_range_empty (&set->r[i]))
            set->r[kept++] = set->r[i];
    set->n = kept;
    if (set->n < 2)
        return;
    qsort (set->r, set->n, sizeof set->r[0], s_range_order);
    size_t out = 0;
    for (size_t i = 1; i < set->n; i++) {
        gw_vrange_t *last = &set->r[out], *next = &set->r[i];
        bool touch = last->hi.inf;
        if (!touch) {
            int c = next->lo.inf ? -1 : gw_ver_cmp (&next->lo.v, &last->hi.v);
            touch = c < 0 || (c == 0 && (next->lo.closed || last->hi.closed));
        }
        if (touch) {
            if (s_cmp_hi (&next->hi, &last->hi) > 0)
                last->hi = next->hi;
        } else
            set->r[++out] = *next;
    }
    set->n = out + 1;
}

int
gw_vset_intersect (const gw_vset_t *a, const gw_vset_t *b, gw_vset_t *out)
{
    out->npm = a->npm;
    out->r = NULL;
    out->n = 0;
    for (size_t i = 0; i < a->n; i++)
        for (size_t j = 0; j < b->n; j++) {
            gw_vrange_t r;
            r.lo = s_cmp_lo (&a->r[i].lo, &b->r[j].lo) >= 0 ? a->r[i].lo : b->r[j].lo;
            r.hi = s_cmp_hi (&a->r[i].hi, &b->r[j].hi) <= 0 ? a->r[i].hi : b->r[j].hi;
            if (!s_range_empty (&r) && gw_vset_push (out, &r)) {
                gw_vset_clear (out);
                return -1;
            }
        }
    gw_vset_normalize (out);
    return 0;
}

int
gw_vset_complement (const gw_vset_t *a, gw_vset_t *out)
{
    gw_vset_t sorted = {a->npm, NULL, 0};
    out->npm = a->npm;
    out->r = NULL;
    out->n = 0;
    if (a->n && !(sorted.r = malloc (a->n * sizeof *sorted.r)))
        return -1;
    if (a->n)
        memcpy (sorted.r, a->r, a->n * sizeof *sorted.r);
    sorted.n = a->n;
    gw_vset_normalize (&sorted);
    gw_vbound_t start = gw_vbound_inf ();
    bool open_end = true;
    int rc = 0;
    for (size_t i = 0; i < sorted.n && !rc; i++) {
        const gw_vrange_t *r = &sorted.r[i];
        if (!r->lo.inf) {
            gw_vrange_t gap = {start, gw_vbound_at (r->lo.v, !r->lo.closed)};
            if (!s_range_empty (&gap))
                rc = gw_vset_push (out, &gap);
        }
        if (r->hi.inf) {
            open_end = false;
            break;
        }
        start = gw_vbound_at (r->hi.v, !r->hi.closed);
    }
    if (!rc && open_end) {
        gw_vrange_t tail = {start, gw_vbound_inf ()};
        rc = gw_vset_push (out, &tail);
    }
    gw_vset_clear (&sorted);
    if (rc)
        gw_vset_clear (out);
    return rc;
}

bool
gw_vset_empty (const gw_vset_t *set)
{
    for (size_t i = 0; i < set->n; i++)
        if (!s_range_empty (&set->r[i]))
            return false;
    return true;
}

bool
gw_vset_contains (const gw_vset_t *set, const gw_ver_t *v)
{
    for (size_t i = 0; i < set->n; i++) {
        const gw_vrange_t *r = &set->r[i];
        int lo = r->lo.inf ? 1 : gw_ver_cmp (v, &r->lo.v);
        int hi = r->hi.inf ? -1 : gw_ver_cmp (v, &r->hi.v);
        if ((lo > 0 || (lo == 0 && r->lo.closed)) && (hi < 0 || (hi == 0 && r->hi.closed)))
            return true;
    }
    return false;
}

bool
gw_vset_subset (const gw_vset_t *a, const gw_vset_t *b)
{
    gw_vset_t not_b, rest;
    if (gw_vset_complement (b, &not_b))
        return false;
    int rc = gw_vset_intersect (a, &not_b, &rest);
    gw_vset_clear (&not_b);
    bool subset = rc == 0 && gw_vset_empty (&rest);
    gw_vset_clear (&rest);
    return subset;
}
