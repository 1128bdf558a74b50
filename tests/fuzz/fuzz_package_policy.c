/* fuzz_package_policy: libFuzzer target for the package policy
 * (gw_package_policy: requirement strings, the allow and deny lists) and
 * the version sets under it (gw_package_version).
 *
 * Input format: the first byte picks the mode (its value modulo 4), the
 * rest is text:
 *   0, 1  a Python (0) or npm (1) requirement, judged under fixed lists;
 *   2     an allow and deny list text, then fixed requirements judged;
 *   3     two version sets, one per line; the second byte picks PEP 440
 *         (even) or npm ranges (odd).
 *
 * Checked properties (a failure aborts):
 *   - a verdict is 0 or -1; a refusal has a known rule and a printable
 *     reason; an admitted requirement gives a printable install string
 *     that does not start with '-', holds no "://", and is itself admitted
 *     (under no lists) with the same normalised name;
 *   - for sets that parse: a ∩ ¬a is empty, a ⊆ a, a ∩ b ⊆ a, and an npm
 *     set's text parses back to the same set. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_package_policy.h"
#include "gw_package_ranges.h"

static void
s_fail (const char *what, const char *input)
{
    fprintf (stderr, "fuzz_package_policy: %s (input '%.200s')\n", what, input);
    abort ();
}

static bool
s_printable (const char *s)
{
    for (; *s; s++)
        if ((unsigned char) *s < 0x20 || (unsigned char) *s >= 0x7f)
            return false;
    return true;
}

static const char *const s_rules[] = {"denied", "not_allowed", "version_not_allowed",
                                      "version_denied", "url", "vcs", "path", "option",
                                      "direct_reference", "marker", "shorthand", "protocol",
                                      "alias", "invalid", NULL};

static void
s_check_verdict (gw_package_policy_t *policy, gw_pkg_eco_t eco, const char *text)
{
    gw_pkg_verdict_t v;
    int rc = gw_package_policy_check (policy, eco, text, &v);
    if (rc == -1) {
        bool known = false;
        for (int i = 0; s_rules[i] && !known; i++)
            known = strcmp (s_rules[i], v.rule) == 0;
        if (!known || !v.reason[0] || !s_printable (v.reason))
            s_fail ("a refusal without a known rule and reason", text);
        return;
    }
    if (rc != 0)
        s_fail ("a verdict other than 0 or -1", text);
    if (!v.install[0] || v.install[0] == '-' || strstr (v.install, "://")
        || !s_printable (v.install))
        s_fail ("an unsafe install string", v.install);
    char err[200];
    gw_package_policy_t *open = gw_package_policy_new (NULL, NULL, err, sizeof err);
    gw_pkg_verdict_t again;
    if (!open || gw_package_policy_check (open, eco, v.install, &again) != 0
        || strcmp (again.name, v.name) != 0)
        s_fail ("an install string that is not itself admitted", v.install);
    gw_package_policy_destroy (&open);
}

static bool
s_same (const gw_vset_t *a, const gw_vset_t *b)
{
    return gw_vset_subset (a, b) && gw_vset_subset (b, a);
}

static void
s_sets (const char *text, bool npm)
{
    char *copy = strdup (text);
    char *nl = copy ? strchr (copy, '\n') : NULL;
    if (!nl) {
        free (copy);
        return;
    }
    *nl = '\0';
    gw_vset_t a, b, x, na;
    char err[200];
    int ra = npm ? gw_vset_parse_npm (copy, &a, err, sizeof err)
                 : gw_vset_parse_pep440 (copy, &a, err, sizeof err);
    int rb = npm ? gw_vset_parse_npm (nl + 1, &b, err, sizeof err)
                 : gw_vset_parse_pep440 (nl + 1, &b, err, sizeof err);
    if (ra == 0 && rb == 0 && gw_vset_complement (&a, &na) == 0
        && gw_vset_intersect (&a, &b, &x) == 0) {
        gw_vset_t none;
        if (gw_vset_intersect (&a, &na, &none) == 0) {
            if (!gw_vset_empty (&none))
                s_fail ("a and not a overlap", text);
            gw_vset_clear (&none);
        }
        if (!gw_vset_subset (&a, &a) || !gw_vset_subset (&x, &a))
            s_fail ("a subset law fails", text);
        char *back = npm ? gw_vset_npm_text (&a) : NULL;
        gw_vset_t c;
        if (back && gw_vset_parse_npm (back, &c, err, sizeof err) == 0) {
            if (!s_same (&a, &c))
                s_fail ("an npm set's text reads back differently", back);
            gw_vset_clear (&c);
        } else if (back)
            s_fail ("an npm set's text does not parse", back);
        free (back);
        gw_vset_clear (&x);
        gw_vset_clear (&na);
    }
    if (ra == 0)
        gw_vset_clear (&a);
    if (rb == 0)
        gw_vset_clear (&b);
    free (copy);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096)
        return 0;
    int mode = data[0] % 4;
    char *text = malloc (size);
    if (!text)
        return 0;
    memcpy (text, data + 1, size - 1);
    text[size - 1] = '\0';
    char err[300];
    if (mode < 2) {
        gw_package_policy_t *p = gw_package_policy_new ("a>=1, b@^1, c", "d, e<2, f@1.x", err,
                                                        sizeof err);
        if (!p)
            s_fail ("the fixed lists do not parse", err);
        s_check_verdict (p, mode == 0 ? GW_PKG_PYTHON : GW_PKG_NPM, text);
        gw_package_policy_destroy (&p);
    } else if (mode == 2) {
        gw_package_policy_t *p = gw_package_policy_new (text, text, err, sizeof err);
        if (!p && (!err[0] || !s_printable (err)))
            s_fail ("a list error without a message", text);
        if (p) {
            static const char *const reqs[] = {"a", "requests>=2", "lodash@^4", "@s/p", NULL};
            for (int i = 0; reqs[i]; i++) {
                s_check_verdict (p, GW_PKG_PYTHON, reqs[i]);
                s_check_verdict (p, GW_PKG_NPM, reqs[i]);
            }
            gw_pkg_verdict_t v;
            gw_package_policy_check_resolved (p, GW_PKG_PYTHON, "requests", "2.31.0", true, &v);
            gw_package_policy_check_resolved (p, GW_PKG_NPM, "lodash", "4.17.21", false, &v);
            char *c = gw_package_policy_pip_constraints (p);
            for (char *q = c; q && *q; q++)
                if (*q != '\n' && ((unsigned char) *q < 0x20 || (unsigned char) *q >= 0x7f))
                    s_fail ("unprintable constraints", c);
            free (c);
            gw_package_policy_destroy (&p);
        }
    } else if (size > 2)
        s_sets (text + 1, data[1] & 1);
    free (text);
    return 0;
}
