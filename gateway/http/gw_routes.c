/* gw_routes: matching paths against the route table (see gw_routes.h).
 * Threads: any. */
#include "gw_routes.h"

#include <stdlib.h>
#include <string.h>

#define S_BODY_MEM  false
#define S_BODY_FILE true

static const struct {
    const char *allow, *pattern, *label;
    bool body_to_file;
} s_routes[GW_ROUTE_COUNT] = {
#define GW_ROUTE_ROW(name, methods, pattern, label, body) \
    [GW_ROUTE_##name] = {methods, pattern, label, S_BODY_##body},
    GW_ROUTE_TABLE (GW_ROUTE_ROW)
#undef GW_ROUTE_ROW
};

/* The next non-empty part of *p (advanced past it): its start and length,
 * or NULL at the end. */
static const char *
s_next_part (const char **p, size_t *len)
{
    while (**p == '/')
        (*p)++;
    if (!**p)
        return NULL;
    const char *start = *p;
    *len = strcspn (start, "/");
    *p = start + *len;
    return start;
}

/* Matches path against one pattern; parameters are copied into buf. */
static bool
s_match_one (const char *pattern, const char *path, char *buf, gw_route_match_t *m)
{
    const char *pp = pattern, *p = path;
    char *out = buf;
    m->n_params = 0;
    for (;;) {
        size_t plen, len;
        const char *before = p;
        const char *want = s_next_part (&pp, &plen);
        const char *have = s_next_part (&p, &len);
        if (!want || !have)
            return !want && !have;
        if (plen == 2 && strncmp (want, "**", 2) == 0) {
            /* the rest of the path after one '/': "files//session/x" gives
               "/session/x", an absolute path the handler judges */
            const char *from = *before == '/' ? before + 1 : have;
            size_t rest = strlen (from);
            memcpy (out, from, rest + 1);
            m->params[m->n_params++] = out;
            return true;
        }
        if (plen == 2 && strncmp (want, "{}", 2) == 0) {
            memcpy (out, have, len);
            out[len] = '\0';
            m->params[m->n_params++] = out;
            out += len + 1;
        } else if (plen != len || strncmp (want, have, len) != 0)
            return false;
    }
}

bool
gw_routes_match (const char *path, char *buf, size_t buf_len, gw_route_match_t *match)
{
    if (!path || strlen (path) + 1 > buf_len)
        return false;
    for (int id = 0; id < GW_ROUTE_COUNT; id++)
        if (s_match_one (s_routes[id].pattern, path, buf, match)) {
            match->id = (gw_route_id_t) id;
            match->allow = s_routes[id].allow;
            match->label = s_routes[id].label;
            match->body_to_file = s_routes[id].body_to_file;
            return true;
        }
    return false;
}

/* Matches path with a buffer of its own (the parameters are not kept):
 * the route's row in *m, or false when no route has its shape. */
static bool
s_match_row (const char *path, gw_route_match_t *m)
{
    size_t len = path ? strlen (path) + 1 : 1;
    char *buf = malloc (len);
    bool found = buf && gw_routes_match (path, buf, len, m);
    free (buf);
    return found;
}

const char *
gw_routes_allow (const char *path)
{
    gw_route_match_t m;
    return s_match_row (path, &m) ? m.allow : NULL;
}

bool
gw_routes_body_to_file (const char *path)
{
    gw_route_match_t m;
    return s_match_row (path, &m) && m.body_to_file;
}

bool
gw_routes_allows (const char *allow, const char *method)
{
    size_t len = strlen (method);
    for (const char *p = allow; p && *p;) {
        size_t word = strcspn (p, ",");
        if (word == len && strncmp (p, method, len) == 0)
            return true;
        p += word;
        while (*p == ',' || *p == ' ')
            p++;
    }
    return false;
}
