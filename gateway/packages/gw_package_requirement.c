/* gw_package_requirement: requirement strings read the way pip and npm
 * would (the safe part of their grammar), and package names checked and
 * normalised; see gw_package_requirement.h. Pure code; any thread. */
#include "gw_package_requirement.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gw_package_ranges.h"

void
gw_pkg_refuse (gw_pkg_verdict_t *out, const char *rule, const char *fmt, ...)
{
    snprintf (out->rule, sizeof out->rule, "%s", rule);
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (out->reason, sizeof out->reason, fmt, ap);
    va_end (ap);
}

/* ---- names -------------------------------------------------------------- */

bool
gw_pkg_python_name_valid (const char *name)
{
    size_t n = strlen (name);
    if (n == 0 || n >= GW_PKG_NAME_MAX || !isalnum ((unsigned char) name[0])
        || !isalnum ((unsigned char) name[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum ((unsigned char) name[i]) && !strchr ("._-", name[i]))
            return false;
    return true;
}

/* One part of an npm name: [A-Za-z0-9-._~], not starting with . or _. */
static bool
s_npm_part_valid (const char *p, size_t n)
{
    if (n == 0 || p[0] == '.' || p[0] == '_')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum ((unsigned char) p[i]) && !strchr ("-._~", p[i]))
            return false;
    return true;
}

static bool
s_npm_name_valid (const char *name)
{
    size_t n = strlen (name);
    if (n == 0 || n > 214)
        return false;
    if (name[0] != '@')
        return s_npm_part_valid (name, n);
    const char *slash = strchr (name, '/');
    return slash && s_npm_part_valid (name + 1, (size_t) (slash - name - 1))
           && s_npm_part_valid (slash + 1, strlen (slash + 1));
}

int
gw_package_normalize (gw_pkg_eco_t eco, const char *name, char *out, size_t out_len)
{
    if (!name || out_len < GW_PKG_NAME_MAX)
        return -1;
    if (eco == GW_PKG_PYTHON ? !gw_pkg_python_name_valid (name) : !s_npm_name_valid (name))
        return -1;
    size_t o = 0;
    for (const char *p = name; *p; p++) {
        if (eco == GW_PKG_PYTHON && strchr ("-_.", *p)) {
            if (o == 0 || out[o - 1] != '-')
                out[o++] = '-';
        } else
            out[o++] = (char) tolower ((unsigned char) *p);
    }
    out[o] = '\0';
    return 0;
}

/* ---- requirements ------------------------------------------------------- */

static bool
s_starts (const char *s, const char *prefix)
{
    return strncasecmp (s, prefix, strlen (prefix)) == 0;
}

static bool
s_ends (const char *s, const char *suffix)
{
    size_t n = strlen (s), m = strlen (suffix);
    return n >= m && strcasecmp (s + n - m, suffix) == 0;
}

/* Copies text without blanks and without one pair of outer parentheses. */
void
gw_pkg_squeeze (const char *text, char *out, size_t len)
{
    size_t o = 0;
    for (const char *p = text; *p && o + 1 < len; p++)
        if (!isspace ((unsigned char) *p))
            out[o++] = *p;
    out[o] = '\0';
    if (o >= 2 && out[0] == '(' && out[o - 1] == ')') {
        memmove (out, out + 1, o - 2);
        out[o - 2] = '\0';
    }
}

/* The refusals every ecosystem shares: options, URLs, VCS links, paths and
 * archives. Returns true when text was refused. */
static bool
s_refuse_forms (gw_pkg_eco_t eco, const char *text, gw_pkg_verdict_t *out)
{
    const char *tool = eco == GW_PKG_PYTHON ? "pip" : "npm";
    static const char *const vcs[] = {"git+", "git:", "hg+", "svn+", "bzr+", "github:",
                                      "gitlab:", "bitbucket:", "gist:", NULL};
    if (text[0] == '-') {
        gw_pkg_refuse (out, "option", "'%s' is a %s option; options such as --index-url, -e or -r "
                       "are not accepted, only package names with an optional version", text, tool);
        return true;
    }
    for (int i = 0; vcs[i]; i++)
        if (s_starts (text, vcs[i])) {
            gw_pkg_refuse (out, "vcs", "'%s' is a version-control link; only packages from the "
                           "configured index may be installed", text);
            return true;
        }
    if (strstr (text, "://") || s_starts (text, "http:") || s_starts (text, "https:")) {
        gw_pkg_refuse (out, "url", "'%s' is a URL; only packages from the configured index may be "
                       "installed, by name with an optional version", text);
        return true;
    }
    if (text[0] == '.' || text[0] == '/' || text[0] == '~' || strchr (text, '\\')
        || s_starts (text, "file:") || s_starts (text, "link:") || s_starts (text, "workspace:")
        || s_ends (text, ".whl") || s_ends (text, ".zip") || s_ends (text, ".tar.gz")
        || s_ends (text, ".tgz") || s_ends (text, ".tar") || s_ends (text, ".tar.bz2")
        || s_ends (text, ".egg")) {
        gw_pkg_refuse (out, "path", "'%s' is a local path or archive; only packages from the "
                       "configured index may be installed", text);
        return true;
    }
    return false;
}

/* "name[extras] specifiers" (PEP 508 without URLs and markers). */
static int
s_parse_python (const char *text, gw_pkg_req_t *req, gw_pkg_verdict_t *out)
{
    if (strchr (text, '@')) {
        gw_pkg_refuse (out, "direct_reference", "'%s' is a direct reference (name @ URL); only "
                       "packages from the configured index may be installed", text);
        return -1;
    }
    if (strchr (text, ';')) {
        gw_pkg_refuse (out, "marker", "'%s' has an environment marker (;); give the name and an "
                       "optional version only", text);
        return -1;
    }
    if (strchr (text, '/')) {
        gw_pkg_refuse (out, "path", "'%s' is a path; only packages from the configured index may "
                       "be installed", text);
        return -1;
    }
    for (const char *p = text; *p; p++)
        if (!isalnum ((unsigned char) *p) && !strchr ("._-[], <>=!~*+()", *p)) {
            gw_pkg_refuse (out, "invalid", "'%s' is not a requirement (a name with an optional "
                           "version such as requests>=2.31): '%c' is not allowed", text, *p);
            return -1;
        }
    const char *p = text;
    size_t n = strspn (p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-");
    if (n == 0 || n >= sizeof req->name) {
        gw_pkg_refuse (out, "invalid", "'%s' does not start with a package name", text);
        return -1;
    }
    memcpy (req->name, p, n);
    req->name[n] = '\0';
    p += n;
    if (gw_package_normalize (GW_PKG_PYTHON, req->name, req->norm, sizeof req->norm)) {
        gw_pkg_refuse (out, "invalid", "'%s' is not a valid package name", req->name);
        return -1;
    }
    while (isspace ((unsigned char) *p))
        p++;
    if (*p == '[') {
        const char *end = strchr (p, ']');
        char list[256];
        size_t len = end ? (size_t) (end - p - 1) : 0;
        if (!end || len >= sizeof list) {
            gw_pkg_refuse (out, "invalid", "'%s' has unbalanced extras brackets", text);
            return -1;
        }
        memcpy (list, p + 1, len);
        list[len] = '\0';
        size_t o = 0;
        req->extras[o++] = '[';
        char *save = NULL;
        for (char *tok = strtok_r (list, ",", &save); tok; tok = strtok_r (NULL, ",", &save)) {
            char extra[128];
            gw_pkg_squeeze (tok, extra, sizeof extra);
            if (!gw_pkg_python_name_valid (extra)) {
                gw_pkg_refuse (out, "invalid", "'%s' has an invalid extra '%s'", text, extra);
                return -1;
            }
            o += (size_t) snprintf (req->extras + o, sizeof req->extras - o, "%s%s",
                                    o > 1 ? "," : "", extra);
            if (o >= sizeof req->extras - 2) {
                gw_pkg_refuse (out, "invalid", "'%s' has too many extras", text);
                return -1;
            }
        }
        snprintf (req->extras + o, sizeof req->extras - o, "]");
        p = end + 1;
    }
    gw_pkg_squeeze (p, req->spec, sizeof req->spec);
    gw_vset_t set;
    char err[200];
    if (gw_vset_parse_pep440 (req->spec, &set, err, sizeof err)) {
        gw_pkg_refuse (out, "invalid", "'%s' has an invalid version constraint: %s", text, err);
        return -1;
    }
    gw_vset_clear (&set);
    return 0;
}

/* "name", "name@range", "name@tag", "@scope/name[@...]". */
static int
s_parse_npm (const char *text, gw_pkg_req_t *req, gw_pkg_verdict_t *out)
{
    const char *at = strchr (text + (text[0] == '@'), '@');
    size_t n = at ? (size_t) (at - text) : strlen (text);
    if (n == 0 || n >= sizeof req->name) {
        gw_pkg_refuse (out, "invalid", "'%s' does not start with a package name", text);
        return -1;
    }
    memcpy (req->name, text, n);
    req->name[n] = '\0';
    if (text[0] != '@' && strchr (req->name, '/')) {
        gw_pkg_refuse (out, "shorthand", "'%s' is GitHub shorthand (user/repo); only packages from "
                       "the configured registry may be installed", text);
        return -1;
    }
    if (gw_package_normalize (GW_PKG_NPM, req->name, req->norm, sizeof req->norm)) {
        gw_pkg_refuse (out, "invalid", "'%s' is not a valid npm package name", req->name);
        return -1;
    }
    const char *spec = at ? at + 1 : "";
    while (isspace ((unsigned char) *spec))
        spec++;
    if (s_starts (spec, "npm:")) {
        gw_pkg_refuse (out, "alias", "'%s' is an npm alias (npm:); ask for the package by its own "
                       "name", text);
        return -1;
    }
    if (strchr (spec, ':') || strchr (spec, '/') || strchr (spec, '#')) {
        gw_pkg_refuse (out, strchr (spec, ':') ? "protocol" : "shorthand",
                       "'%s' names a source other than the registry (URL, git, file or GitHub "
                       "shorthand); give a version range or tag", text);
        return -1;
    }
    for (const char *p = spec; *p; p++)
        if (!isalnum ((unsigned char) *p) && !strchr (".*^~<>=| -_+", *p)) {
            gw_pkg_refuse (out, "invalid", "'%s' is not a package with a version range: '%c' is "
                           "not allowed", text, *p);
            return -1;
        }
    snprintf (req->spec, sizeof req->spec, "%s", spec);
    size_t len = strlen (req->spec);
    while (len && isspace ((unsigned char) req->spec[len - 1]))
        req->spec[--len] = '\0';
    gw_vset_t set;
    char err[200];
    if (gw_vset_parse_npm (req->spec, &set, err, sizeof err) == 0) {
        gw_vset_clear (&set);
        return 0;
    }
    /* a dist-tag such as latest or next */
    bool tag = isalpha ((unsigned char) req->spec[0]);
    for (const char *p = req->spec; *p && tag; p++)
        tag = isalnum ((unsigned char) *p) || strchr ("._-", *p);
    if (!tag) {
        gw_pkg_refuse (out, "invalid", "'%s' has an invalid version range: %s", text, err);
        return -1;
    }
    req->tag = true;
    return 0;
}

/* Parses a requirement after the shared refusals. */
int
gw_pkg_requirement_parse (gw_pkg_eco_t eco, const char *requirement, gw_pkg_req_t *req,
                          gw_pkg_verdict_t *out)
{
    memset (req, 0, sizeof *req);
    char text[GW_PKG_REQUIREMENT_MAX + 2];
    const char *p = requirement ? requirement : "";
    while (isspace ((unsigned char) *p))
        p++;
    size_t n = strlen (p);
    while (n && isspace ((unsigned char) p[n - 1]))
        n--;
    if (n == 0) {
        gw_pkg_refuse (out, "invalid", "an empty requirement: give a package name such as %s",
                       eco == GW_PKG_PYTHON ? "requests" : "lodash");
        return -1;
    }
    if (n > GW_PKG_REQUIREMENT_MAX) {
        gw_pkg_refuse (out, "invalid", "a requirement of %zu characters is too long (at most %d)",
                       n, GW_PKG_REQUIREMENT_MAX);
        return -1;
    }
    memcpy (text, p, n);
    text[n] = '\0';
    for (const char *c = text; *c; c++)
        if ((unsigned char) *c < 0x20 || (unsigned char) *c >= 0x7f) {
            gw_pkg_refuse (out, "invalid",
                           "a requirement may only hold printable ASCII characters");
            return -1;
        }
    if (s_refuse_forms (eco, text, out))
        return -1;
    return eco == GW_PKG_PYTHON ? s_parse_python (text, req, out) : s_parse_npm (text, req, out);
}
