/* test_package_policy: the package policy (gw_package_policy) and the
 * version arithmetic under it (gw_package_version): name normalisation as
 * PyPI and npm do it, PEP 440 and semver ordering, specifier sets and npm
 * ranges as intervals, requirement strings refused for their form (URLs,
 * VCS links, paths, archives, options, direct references, markers, npm
 * protocols and aliases, GitHub shorthand) with the rule named, and the
 * allow and deny lists: deny wins, an allow list refuses what it does not
 * name, a version constraint refuses what lies outside it and narrows what
 * overlaps it, and resolved packages (dependencies included) are judged
 * again. */
#include <stdlib.h>
#include <string.h>

#include "gw_package_policy.h"
#include "gw_package_ranges.h"
#include "suites.h"

/* ---- names -------------------------------------------------------------- */

static const struct {
    gw_pkg_eco_t eco;
    const char *name, *norm;    /* norm NULL: invalid */
} s_names[] = {
    {GW_PKG_PYTHON, "Foo_Bar", "foo-bar"},
    {GW_PKG_PYTHON, "foo-bar", "foo-bar"},
    {GW_PKG_PYTHON, "FOO.bar", "foo-bar"},
    {GW_PKG_PYTHON, "foo__-._bar", "foo-bar"},
    {GW_PKG_PYTHON, "Django", "django"},
    {GW_PKG_PYTHON, "zope.interface", "zope-interface"},
    {GW_PKG_PYTHON, "a", "a"},
    {GW_PKG_PYTHON, "-foo", NULL},
    {GW_PKG_PYTHON, "foo-", NULL},
    {GW_PKG_PYTHON, "foo bar", NULL},
    {GW_PKG_PYTHON, "@scope/pkg", NULL},
    {GW_PKG_PYTHON, "", NULL},
    {GW_PKG_NPM, "lodash", "lodash"},
    {GW_PKG_NPM, "JSONStream", "jsonstream"},
    {GW_PKG_NPM, "@Scope/Pkg", "@scope/pkg"},
    {GW_PKG_NPM, "@types/node", "@types/node"},
    {GW_PKG_NPM, "foo_bar", "foo_bar"},     /* npm keeps _ and - apart */
    {GW_PKG_NPM, ".hidden", NULL},
    {GW_PKG_NPM, "_under", NULL},
    {GW_PKG_NPM, "@scope", NULL},
    {GW_PKG_NPM, "@scope/", NULL},
    {GW_PKG_NPM, "user/repo", NULL},
    {GW_PKG_NPM, "a b", NULL},
};

/* Names normalise as PyPI (PEP 503) and npm do; invalid ones are refused. */
START_TEST (test_normalize)
{
    char out[GW_PKG_NAME_MAX];
    int rc = gw_package_normalize (s_names[_i].eco, s_names[_i].name, out, sizeof out);
    if (!s_names[_i].norm)
        ck_assert_msg (rc != 0, "'%s' should be invalid", s_names[_i].name);
    else {
        ck_assert_msg (rc == 0, "'%s' should be valid", s_names[_i].name);
        ck_assert_str_eq (out, s_names[_i].norm);
    }
}
END_TEST

/* ---- versions ----------------------------------------------------------- */

/* Each pair is in ascending order (PEP 440 as the packaging library sorts). */
static const char *const s_pep440_order[] = {
    "1.0.dev0", "1.0a0.dev1", "1.0a1", "1.0a2.post1", "1.0b1", "1.0rc1", "1.0", "1.0.post1.dev0",
    "1.0.post1", "1.0.1", "1.1", "2!0.1", NULL,
};

START_TEST (test_pep440_order)
{
    for (int i = 0; s_pep440_order[i + 1]; i++) {
        bool ok;
        int c = gw_package_version_cmp (GW_PKG_PYTHON, s_pep440_order[i], s_pep440_order[i + 1],
                                        &ok);
        ck_assert_msg (ok && c < 0, "%s < %s", s_pep440_order[i], s_pep440_order[i + 1]);
    }
    bool ok;
    /* spellings and zero padding */
    ck_assert_int_eq (gw_package_version_cmp (GW_PKG_PYTHON, "1.0", "1.0.0", &ok), 0);
    ck_assert (ok);
    ck_assert_int_eq (gw_package_version_cmp (GW_PKG_PYTHON, "1.0-alpha.1", "1.0a1", &ok), 0);
    ck_assert_int_eq (gw_package_version_cmp (GW_PKG_PYTHON, "1.0-1", "1.0.post1", &ok), 0);
    ck_assert_int_eq (gw_package_version_cmp (GW_PKG_PYTHON, "v1.0RC2", "1.0rc2", &ok), 0);
    ck_assert_int_eq (gw_package_version_cmp (GW_PKG_PYTHON, "1.0+local.7", "1.0", &ok), 0);
    ck_assert (ok);
    gw_package_version_cmp (GW_PKG_PYTHON, "1.0 @ http://x", "1.0", &ok);
    ck_assert (!ok);
    gw_package_version_cmp (GW_PKG_PYTHON, "1.0; os_name=='nt'", "1.0", &ok);
    ck_assert (!ok);
}
END_TEST

START_TEST (test_semver_order)
{
    static const char *const order[] = {"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta",
                                        "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
                                        "1.0.0-rc.1", "1.0.0", "1.0.1", "1.10.0", "2.0.0", NULL};
    for (int i = 0; order[i + 1]; i++) {
        bool ok;
        int c = gw_package_version_cmp (GW_PKG_NPM, order[i], order[i + 1], &ok);
        ck_assert_msg (ok && c < 0, "%s < %s", order[i], order[i + 1]);
    }
    bool ok;
    ck_assert_int_eq (gw_package_version_cmp (GW_PKG_NPM, "v1.2.3+build.5", "1.2.3", &ok), 0);
    ck_assert (ok);
    gw_package_version_cmp (GW_PKG_NPM, "1.2", "1.2.0", &ok);
    ck_assert (!ok);
}
END_TEST

/* A set parsed from spec contains exactly the "in" versions listed. */
static void
s_check_set (bool npm_range, bool semver, const char *spec, const char *const *in,
             const char *const *out)
{
    gw_vset_t set;
    char err[200];
    int rc = npm_range ? gw_vset_parse_npm (spec, &set, err, sizeof err)
             : semver  ? gw_vset_parse_pep440_semver (spec, &set, err, sizeof err)
                       : gw_vset_parse_pep440 (spec, &set, err, sizeof err);
    ck_assert_msg (rc == 0, "'%s' should parse: %s", spec, err);
    for (int k = 0; k < 2; k++)
        for (const char *const *v = k ? out : in; v && *v; v++) {
            gw_ver_t ver;
            ck_assert (semver || npm_range ? gw_ver_parse_semver (*v, &ver) == 0
                                           : gw_ver_parse_pep440 (*v, &ver) == 0);
            ck_assert_msg (gw_vset_contains (&set, &ver) == !k, "'%s' should %scontain %s",
                           spec, k ? "not " : "", *v);
        }
    gw_vset_clear (&set);
}

START_TEST (test_pep440_specifiers)
{
    s_check_set (false, false, ">=2.31", (const char *[]) {"2.31", "2.31.0", "3.0", NULL},
                 (const char *[]) {"2.30.9", "2.31rc1", NULL});
    s_check_set (false, false, ">=1,<2,!=1.5.*",
                 (const char *[]) {"1.0", "1.4.9", "1.6", "1.9.9", NULL},
                 (const char *[]) {"0.9", "1.5", "1.5.3", "2.0", "2.0a1", NULL});
    s_check_set (false, false, "~=1.4.2", (const char *[]) {"1.4.2", "1.4.9", NULL},
                 (const char *[]) {"1.4.1", "1.5", NULL});
    s_check_set (false, false, "~=1.4", (const char *[]) {"1.4", "1.9", NULL},
                 (const char *[]) {"1.3", "2.0", NULL});
    s_check_set (false, false, "==1.26.*", (const char *[]) {"1.26", "1.26.4", "1.26.0rc1", NULL},
                 (const char *[]) {"1.25.9", "1.27", NULL});
    s_check_set (false, false, "(< 2.0)", (const char *[]) {"1.9", NULL},
                 (const char *[]) {"2.0", "2.0a1", "2.0.dev3", NULL});
    s_check_set (false, false, ">1.0", (const char *[]) {"1.0.1", "1.1", NULL},
                 (const char *[]) {"1.0", "1.0.post2", NULL});
    s_check_set (false, false, "===1.0", (const char *[]) {"1.0", NULL},
                 (const char *[]) {"1.0.1", NULL});
    s_check_set (false, false, "", (const char *[]) {"0.0.1", "99", NULL}, NULL);
    /* the same operators on semver versions */
    s_check_set (false, true, ">=2.31,<3", (const char *[]) {"2.31.0", "2.99.1", NULL},
                 (const char *[]) {"2.30.0", "3.0.0", NULL});
    s_check_set (false, true, "==7.0.0", (const char *[]) {"7.0.0", NULL},
                 (const char *[]) {"7.0.1", NULL});
    gw_vset_t set;
    char err[200];
    static const char *const bad[] = {">=", "1.0", ">=1.0;", "~=1", ">=1.*", "==1.0a1.*",
                                      "=>1", "<<1", ">=1,,<2", NULL};
    for (int i = 0; bad[i]; i++)
        ck_assert_msg (gw_vset_parse_pep440 (bad[i], &set, err, sizeof err) != 0,
                       "'%s' should not parse", bad[i]);
}
END_TEST

START_TEST (test_npm_ranges)
{
    s_check_set (true, false, "^1.2.3", (const char *[]) {"1.2.3", "1.9.0", NULL},
                 (const char *[]) {"1.2.2", "2.0.0", NULL});
    s_check_set (true, false, "^0.2.3", (const char *[]) {"0.2.3", "0.2.9", NULL},
                 (const char *[]) {"0.3.0", NULL});
    s_check_set (true, false, "^0.0.3", (const char *[]) {"0.0.3", NULL},
                 (const char *[]) {"0.0.4", NULL});
    s_check_set (true, false, "~1.2", (const char *[]) {"1.2.0", "1.2.9", NULL},
                 (const char *[]) {"1.3.0", NULL});
    s_check_set (true, false, "1.x || >=3 <4", (const char *[]) {"1.0.0", "1.9.9", "3.5.0", NULL},
                 (const char *[]) {"2.0.0", "4.0.0", NULL});
    s_check_set (true, false, "1.2 - 2.3", (const char *[]) {"1.2.0", "2.3.9", NULL},
                 (const char *[]) {"1.1.9", "2.4.0", NULL});
    s_check_set (true, false, ">= 7.0.0", (const char *[]) {"7.0.0", NULL},
                 (const char *[]) {"6.9.9", NULL});
    s_check_set (true, false, "7.0.0", (const char *[]) {"7.0.0", NULL},
                 (const char *[]) {"7.0.1", NULL});
    s_check_set (true, false, "*", (const char *[]) {"0.0.1", NULL}, NULL);
    s_check_set (true, false, "", (const char *[]) {"0.0.1", NULL}, NULL);
    gw_vset_t set;
    char err[200];
    static const char *const bad[] = {"^", "1.2.3.4", "latest", ">=1 - 2", "1.x.3", NULL};
    for (int i = 0; bad[i]; i++)
        ck_assert_msg (gw_vset_parse_npm (bad[i], &set, err, sizeof err) != 0,
                       "'%s' should not parse", bad[i]);
}
END_TEST

/* Intersection, complement, subset, and the npm text of a set. */
START_TEST (test_set_algebra)
{
    gw_vset_t a, b, x, c;
    char err[200];
    ck_assert_int_eq (gw_vset_parse_npm ("^1.2", &a, err, sizeof err), 0);
    ck_assert_int_eq (gw_vset_parse_npm (">=1.5.0", &b, err, sizeof err), 0);
    ck_assert_int_eq (gw_vset_intersect (&a, &b, &x), 0);
    char *text = gw_vset_npm_text (&x);
    ck_assert_str_eq (text, ">=1.5.0 <2.0.0-0");
    free (text);
    ck_assert (gw_vset_subset (&x, &a));
    ck_assert (!gw_vset_subset (&a, &x));
    ck_assert_int_eq (gw_vset_complement (&x, &c), 0);
    text = gw_vset_npm_text (&c);
    ck_assert_str_eq (text, "<1.5.0 || >=2.0.0-0");
    free (text);
    gw_vset_clear (&a);
    gw_vset_clear (&b);
    gw_vset_clear (&x);
    gw_vset_clear (&c);
    ck_assert_int_eq (gw_vset_parse_pep440 ("==2.0", &a, err, sizeof err), 0);
    ck_assert_int_eq (gw_vset_parse_pep440 (">=2.31", &b, err, sizeof err), 0);
    ck_assert_int_eq (gw_vset_intersect (&a, &b, &x), 0);
    ck_assert (gw_vset_empty (&x));
    ck_assert (gw_vset_npm_text (&x) == NULL);
    gw_vset_clear (&a);
    gw_vset_clear (&b);
    gw_vset_clear (&x);
}
END_TEST

/* ---- requirements refused for their form -------------------------------- */

static const struct {
    gw_pkg_eco_t eco;
    const char *req, *rule;
} s_forms[] = {
    {GW_PKG_PYTHON, "--index-url=https://evil.example/simple", "option"},
    {GW_PKG_PYTHON, "--extra-index-url https://evil.example", "option"},
    {GW_PKG_PYTHON, "-e .", "option"},
    {GW_PKG_PYTHON, "-r requirements.txt", "option"},
    {GW_PKG_PYTHON, "https://evil.example/pkg-1.0-py3-none-any.whl", "url"},
    {GW_PKG_PYTHON, "http://evil.example/x.tar.gz", "url"},
    {GW_PKG_PYTHON, "git+https://github.com/user/repo.git", "vcs"},
    {GW_PKG_PYTHON, "hg+https://example.org/repo", "vcs"},
    {GW_PKG_PYTHON, "pkg @ https://evil.example/pkg.whl", "url"},
    {GW_PKG_PYTHON, "pkg@ file:///tmp/x", "url"},
    {GW_PKG_PYTHON, "pkg @ ../x", "direct_reference"},
    {GW_PKG_PYTHON, "./local/pkg", "path"},
    {GW_PKG_PYTHON, "/tmp/pkg", "path"},
    {GW_PKG_PYTHON, "~/pkg", "path"},
    {GW_PKG_PYTHON, "pkg-1.0-py3-none-any.whl", "path"},
    {GW_PKG_PYTHON, "sub/dir", "path"},
    {GW_PKG_PYTHON, "C:\\pkg", "path"},
    {GW_PKG_PYTHON, "requests; python_version<'3'", "marker"},
    {GW_PKG_PYTHON, "requests==$(id)", "invalid"},
    {GW_PKG_PYTHON, "requests\n--index-url=x", "invalid"},
    {GW_PKG_PYTHON, "requests>=", "invalid"},
    {GW_PKG_PYTHON, "", "invalid"},
    {GW_PKG_NPM, "--registry=https://evil.example", "option"},
    {GW_PKG_NPM, "git+https://github.com/user/repo.git", "vcs"},
    {GW_PKG_NPM, "git://github.com/user/repo.git", "vcs"},
    {GW_PKG_NPM, "github:user/repo", "vcs"},
    {GW_PKG_NPM, "user/repo", "shorthand"},
    {GW_PKG_NPM, "pkg@user/repo", "shorthand"},
    {GW_PKG_NPM, "file:../pkg", "path"},
    {GW_PKG_NPM, "pkg@file:../pkg", "protocol"},
    {GW_PKG_NPM, "https://evil.example/pkg.tgz", "url"},
    {GW_PKG_NPM, "http://evil.example/pkg", "url"},
    {GW_PKG_NPM, "pkg@https://evil.example/pkg.tgz", "url"},
    {GW_PKG_NPM, "./pkg", "path"},
    {GW_PKG_NPM, "pkg.tgz", "path"},
    {GW_PKG_NPM, "alias@npm:lodash@4", "alias"},
    {GW_PKG_NPM, "lodash@#main", "shorthand"},
    {GW_PKG_NPM, "lodash@^4 && id", "invalid"},
    {GW_PKG_NPM, "lodash@1.2.3.4.5", "invalid"},
};

/* Every form that is not "a name with an optional version" is refused,
 * with its rule named, even without any list. */
START_TEST (test_refused_forms)
{
    char err[200];
    gw_package_policy_t *p = gw_package_policy_new (NULL, NULL, err, sizeof err);
    ck_assert (p);
    gw_pkg_verdict_t v;
    ck_assert_msg (gw_package_policy_check (p, s_forms[_i].eco, s_forms[_i].req, &v) == -1,
                   "'%s' should be refused", s_forms[_i].req);
    ck_assert_msg (strcmp (v.rule, s_forms[_i].rule) == 0, "'%s': rule %s, expected %s (%s)",
                   s_forms[_i].req, v.rule, s_forms[_i].rule, v.reason);
    ck_assert (v.reason[0]);
    gw_package_policy_destroy (&p);
    ck_assert (p == NULL);
}
END_TEST

/* Plain requirements pass unchanged (blanks squeezed out). */
START_TEST (test_accepted_forms)
{
    static const struct {
        gw_pkg_eco_t eco;
        const char *req, *name, *install;
    } ok[] = {
        {GW_PKG_PYTHON, "requests", "requests", "requests"},
        {GW_PKG_PYTHON, "  Foo_Bar >= 1.0 , < 2 ", "foo-bar", "Foo_Bar>=1.0,<2"},
        {GW_PKG_PYTHON, "pkg[extra1, extra2]~=1.4", "pkg", "pkg[extra1,extra2]~=1.4"},
        {GW_PKG_PYTHON, "numpy==1.26.*", "numpy", "numpy==1.26.*"},
        {GW_PKG_PYTHON, "pkg (>=1.0)", "pkg", "pkg>=1.0"},
        {GW_PKG_NPM, "lodash", "lodash", "lodash"},
        {GW_PKG_NPM, "is-number@7.0.0", "is-number", "is-number@7.0.0"},
        {GW_PKG_NPM, "@Scope/Pkg@^1.2", "@scope/pkg", "@Scope/Pkg@^1.2"},
        {GW_PKG_NPM, "@types/node", "@types/node", "@types/node"},
        {GW_PKG_NPM, "lodash@latest", "lodash", "lodash@latest"},
        {GW_PKG_NPM, "lodash@>=4 <5", "lodash", "lodash@>=4 <5"},
    };
    char err[200];
    gw_package_policy_t *p = gw_package_policy_new ("", "", err, sizeof err);
    ck_assert (p);
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        gw_pkg_verdict_t v;
        ck_assert_msg (gw_package_policy_check (p, ok[i].eco, ok[i].req, &v) == 0,
                       "'%s' should pass: %s", ok[i].req, v.reason);
        ck_assert_str_eq (v.name, ok[i].name);
        ck_assert_str_eq (v.install, ok[i].install);
    }
    gw_package_policy_destroy (&p);
}
END_TEST

/* ---- the lists ---------------------------------------------------------- */

static gw_package_policy_t *
s_policy (const char *allow, const char *deny)
{
    char err[300];
    gw_package_policy_t *p = gw_package_policy_new (allow, deny, err, sizeof err);
    ck_assert_msg (p != NULL, "policy should parse: %s", err);
    return p;
}

static void
s_expect (gw_package_policy_t *p, gw_pkg_eco_t eco, const char *req, const char *rule,
          const char *install)
{
    gw_pkg_verdict_t v;
    int rc = gw_package_policy_check (p, eco, req, &v);
    if (rule) {
        ck_assert_msg (rc == -1, "'%s' should be refused (%s)", req, rule);
        ck_assert_msg (strcmp (v.rule, rule) == 0, "'%s': rule %s, expected %s (%s)", req,
                       v.rule, rule, v.reason);
    } else {
        ck_assert_msg (rc == 0, "'%s' should pass: %s %s", req, v.rule, v.reason);
        if (install)
            ck_assert_str_eq (v.install, install);
    }
}

/* A denied name is refused in any spelling; the reason names the setting
 * and the entry. */
START_TEST (test_deny)
{
    gw_package_policy_t *p = s_policy (NULL, "Foo_Bar, evil-pkg, @bad/thing");
    s_expect (p, GW_PKG_PYTHON, "foo-bar", "denied", NULL);
    s_expect (p, GW_PKG_PYTHON, "FOO.BAR==1.0", "denied", NULL);
    s_expect (p, GW_PKG_PYTHON, "foo_bar[x]", "denied", NULL);
    s_expect (p, GW_PKG_PYTHON, "evil_pkg", "denied", NULL);
    s_expect (p, GW_PKG_PYTHON, "foobar", NULL, "foobar");
    s_expect (p, GW_PKG_NPM, "evil-pkg@1", "denied", NULL);
    s_expect (p, GW_PKG_NPM, "@BAD/thing", "denied", NULL);
    s_expect (p, GW_PKG_NPM, "@bad/other", NULL, NULL);
    gw_pkg_verdict_t v;
    ck_assert_int_eq (gw_package_policy_check (p, GW_PKG_PYTHON, "Foo-Bar", &v), -1);
    ck_assert (strstr (v.reason, "CODEBOX_PACKAGE_DENY"));
    ck_assert (strstr (v.reason, "Foo_Bar"));
    gw_package_policy_destroy (&p);
}
END_TEST

/* With an allow list, anything not on it is refused; deny wins over allow. */
START_TEST (test_allow)
{
    gw_package_policy_t *p = s_policy ("requests, numpy, is-number, @scope/pkg", "numpy");
    ck_assert (gw_package_policy_has_allow (p));
    s_expect (p, GW_PKG_PYTHON, "requests", NULL, "requests");
    s_expect (p, GW_PKG_PYTHON, "Requests==2.31.0", NULL, "Requests==2.31.0");
    s_expect (p, GW_PKG_PYTHON, "flask", "not_allowed", NULL);
    s_expect (p, GW_PKG_PYTHON, "numpy", "denied", NULL);
    s_expect (p, GW_PKG_NPM, "is-number@7.0.0", NULL, "is-number@7.0.0");
    s_expect (p, GW_PKG_NPM, "@scope/pkg", NULL, NULL);
    s_expect (p, GW_PKG_NPM, "lodash", "not_allowed", NULL);
    gw_pkg_verdict_t v;
    ck_assert_int_eq (gw_package_policy_check (p, GW_PKG_PYTHON, "flask", &v), -1);
    ck_assert (strstr (v.reason, "CODEBOX_PACKAGE_ALLOW"));
    gw_package_policy_destroy (&p);
}
END_TEST

/* An allow entry's constraint refuses requirements outside it and narrows
 * the ones that overlap it; a deny constraint refuses what lies wholly
 * inside it. */
START_TEST (test_versions)
{
    gw_package_policy_t *p = s_policy ("requests>=2.31, urllib3>=1.26,<3, lodash@^4, "
                                       "is-number>=7", "certifi<2023, lodash@4.17.0");
    s_expect (p, GW_PKG_PYTHON, "requests", NULL, "requests>=2.31");
    s_expect (p, GW_PKG_PYTHON, "requests>=2.0", NULL, "requests>=2.0,>=2.31");
    s_expect (p, GW_PKG_PYTHON, "requests==2.0", "version_not_allowed", NULL);
    s_expect (p, GW_PKG_PYTHON, "requests<2.31", "version_not_allowed", NULL);
    s_expect (p, GW_PKG_PYTHON, "urllib3==2.2.1", NULL, "urllib3==2.2.1,>=1.26,<3");
    s_expect (p, GW_PKG_PYTHON, "urllib3==3.0", "version_not_allowed", NULL);
    s_expect (p, GW_PKG_NPM, "lodash", NULL, "lodash@>=4.0.0 <5.0.0-0");
    s_expect (p, GW_PKG_NPM, "lodash@latest", NULL, "lodash@>=4.0.0 <5.0.0-0");
    s_expect (p, GW_PKG_NPM, "lodash@^3", "version_not_allowed", NULL);
    s_expect (p, GW_PKG_NPM, "lodash@4.17.0", "version_denied", NULL);
    s_expect (p, GW_PKG_NPM, "lodash@4.17.21", NULL, "lodash@4.17.21");
    s_expect (p, GW_PKG_NPM, "is-number@6", "version_not_allowed", NULL);
    s_expect (p, GW_PKG_NPM, "is-number@7.0.0", NULL, "is-number@7.0.0");
    gw_package_policy_destroy (&p);
    /* deny with a constraint: wholly inside is refused, overlap passes */
    p = s_policy (NULL, "certifi<2023");
    s_expect (p, GW_PKG_PYTHON, "certifi==2022.12.7", "version_denied", NULL);
    s_expect (p, GW_PKG_PYTHON, "certifi<2022", "version_denied", NULL);
    s_expect (p, GW_PKG_PYTHON, "certifi", NULL, "certifi");
    s_expect (p, GW_PKG_PYTHON, "certifi>=2024", NULL, "certifi>=2024");
    gw_package_policy_destroy (&p);
    /* an npm range cannot constrain a Python package: refused either way */
    p = s_policy ("shared@^1", "other@^2");
    s_expect (p, GW_PKG_PYTHON, "shared", "version_not_allowed", NULL);
    s_expect (p, GW_PKG_NPM, "shared@1.5.0", NULL, "shared@1.5.0");
    gw_package_policy_destroy (&p);
    p = s_policy (NULL, "other@^2");
    s_expect (p, GW_PKG_PYTHON, "other", "version_denied", NULL);
    s_expect (p, GW_PKG_NPM, "other@^1", NULL, NULL);
    s_expect (p, GW_PKG_NPM, "other@2.1.0", "version_denied", NULL);
    gw_package_policy_destroy (&p);
}
END_TEST

/* Resolved packages: deny applies to dependencies too; allow names only
 * to requested packages, its constraints to any package it names. */
START_TEST (test_resolved)
{
    gw_package_policy_t *p = s_policy ("cbx-app, cbx_base<2", "evil, certifi<2023");
    gw_pkg_verdict_t v;
    ck_assert_int_eq (gw_package_policy_check_resolved (p, GW_PKG_PYTHON, "cbx_app", "2.0",
                                                        true, &v), 0);
    ck_assert_int_eq (gw_package_policy_check_resolved (p, GW_PKG_PYTHON, "cbx_base", "1.0",
                                                        false, &v), 0);
    ck_assert_int_eq (gw_package_policy_check_resolved (p, GW_PKG_PYTHON, "cbx_base", "2.1",
                                                        false, &v), -1);
    ck_assert_str_eq (v.rule, "version_not_allowed");
    ck_assert_int_eq (gw_package_policy_check_resolved (p, GW_PKG_PYTHON, "Evil", "1.0",
                                                        false, &v), -1);
    ck_assert_str_eq (v.rule, "denied");
    ck_assert (strstr (v.reason, "dependency"));
    ck_assert_int_eq (gw_package_policy_check_resolved (p, GW_PKG_PYTHON, "certifi",
                                                        "2022.12.7", false, &v), -1);
    ck_assert_str_eq (v.rule, "version_denied");
    ck_assert_int_eq (gw_package_policy_check_resolved (p, GW_PKG_PYTHON, "certifi",
                                                        "2024.2.2", false, &v), 0);
    /* a dependency the allow list does not name is fine; a requested one is not */
    ck_assert_int_eq (gw_package_policy_check_resolved (p, GW_PKG_PYTHON, "six", "1.16.0",
                                                        false, &v), 0);
    ck_assert_int_eq (gw_package_policy_check_resolved (p, GW_PKG_PYTHON, "six", "1.16.0",
                                                        true, &v), -1);
    ck_assert_str_eq (v.rule, "not_allowed");
    /* names and versions that could smuggle anything are refused */
    ck_assert_int_eq (gw_package_policy_check_resolved (p, GW_PKG_PYTHON, "cbx_app",
                                                        "1.0 @ http://x", true, &v), -1);
    ck_assert_int_eq (gw_package_policy_check_resolved (p, GW_PKG_PYTHON, "-e", "1.0", true,
                                                        &v), -1);
    ck_assert_int_eq (gw_package_policy_check_resolved (p, GW_PKG_NPM, "is-number", "7.0",
                                                        true, &v), -1);
    gw_package_policy_destroy (&p);
}
END_TEST

/* Malformed lists are errors naming the setting; pip constraints come
 * from the allow list's Python constraints. */
START_TEST (test_lists)
{
    char err[300];
    static const struct {
        const char *allow, *deny, *setting;
    } bad[] = {
        {"requests>=", NULL, "CODEBOX_PACKAGE_ALLOW"},
        {NULL, "https://evil.example/x", "CODEBOX_PACKAGE_DENY"},
        {"lodash@^^4", NULL, "CODEBOX_PACKAGE_ALLOW"},
        {NULL, "pkg[extra]", "CODEBOX_PACKAGE_DENY"},
        {"a b", NULL, "CODEBOX_PACKAGE_ALLOW"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gw_package_policy_t *p = gw_package_policy_new (bad[i].allow, bad[i].deny, err,
                                                        sizeof err);
        ck_assert_msg (p == NULL, "list %zu should be refused", i);
        ck_assert_msg (strstr (err, bad[i].setting), "%s", err);
    }
    gw_package_policy_t *p = s_policy (" requests >= 2.31 , , numpy, urllib3>=1.26,<3, "
                                       "lodash@^4 ", NULL);
    char *c = gw_package_policy_pip_constraints (p);
    ck_assert_str_eq (c, "requests>=2.31\nurllib3>=1.26,<3\n");
    free (c);
    gw_package_policy_destroy (&p);
    p = s_policy ("a>=1", "b>=2, c==1.0.*, d>=1,<2, e@^1, f, g~=1.2, h<3");
    c = gw_package_policy_pip_constraints (p);
    ck_assert_str_eq (c, "a>=1\nb<2\nc!=1.0.*\nh>=3\n");
    free (c);
    gw_package_policy_destroy (&p);
    p = s_policy (NULL, NULL);
    ck_assert (!gw_package_policy_has_allow (p));
    c = gw_package_policy_pip_constraints (p);
    ck_assert_str_eq (c, "");
    free (c);
    gw_package_policy_destroy (&p);
    gw_package_policy_destroy (&p);     /* NULL-safe */
}
END_TEST

Suite *
package_policy_suite (void)
{
    Suite *s = suite_create ("package_policy");
    TCase *tc = tcase_create ("package_policy");
    tcase_add_loop_test (tc, test_normalize, 0, sizeof s_names / sizeof s_names[0]);
    tcase_add_test (tc, test_pep440_order);
    tcase_add_test (tc, test_semver_order);
    tcase_add_test (tc, test_pep440_specifiers);
    tcase_add_test (tc, test_npm_ranges);
    tcase_add_test (tc, test_set_algebra);
    tcase_add_loop_test (tc, test_refused_forms, 0, sizeof s_forms / sizeof s_forms[0]);
    tcase_add_test (tc, test_accepted_forms);
    tcase_add_test (tc, test_deny);
    tcase_add_test (tc, test_allow);
    tcase_add_test (tc, test_versions);
    tcase_add_test (tc, test_resolved);
    tcase_add_test (tc, test_lists);
    suite_add_tcase (s, tc);
    return s;
}
