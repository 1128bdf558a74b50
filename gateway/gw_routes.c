/* gw_routes: route shapes and their methods (see gw_routes.h).
 * Threads: any. */
#include "gw_routes.h"

#include <string.h>

#define GET "GET, HEAD"

/* Counts the non-empty '/'-separated parts of path, copying the first
 * three (each cut to 31 bytes) into parts. */
static int
s_parts (const char *path, char parts[3][32])
{
    int n = 0;
    const char *p = path;
    while (*p) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        size_t len = strcspn (p, "/");
        if (n < 3) {
            size_t keep = len < 31 ? len : 31;
            memcpy (parts[n], p, keep);
            parts[n][keep] = '\0';
        }
        n++;
        p += len;
    }
    return n;
}

const char *
gw_routes_allow (const char *path)
{
    char parts[3][32] = {{0}};
    int n = s_parts (path, parts);
    const char *top = n ? parts[0] : "";
    if (n == 1 && (strcmp (top, "healthz") == 0 || strcmp (top, "metrics") == 0
                   || strcmp (top, "kernelspecs") == 0))
        return GET;
    if (n == 1 && strcmp (top, "mcp") == 0)
        return "GET, POST, DELETE";
    if (strcmp (top, "sessions") == 0) {
        if (n == 1)
            return GET ", POST";
        if (n == 2)
            return GET ", DELETE";
        if (n == 3 && strcmp (parts[2], "artifacts") == 0)
            return GET;
        if (n >= 4 && strcmp (parts[2], "files") == 0)
            return GET ", PUT";
        return NULL;
    }
    if (strcmp (top, "execute") == 0) {
        if (n == 1)
            return "POST";
        if (n == 3 && (strcmp (parts[2], "status") == 0 || strcmp (parts[2], "results") == 0))
            return GET;
        if (n == 3 && strcmp (parts[2], "cancel") == 0)
            return "POST";
        return NULL;
    }
    if (n == 1 && strcmp (top, "sql") == 0)
        return "POST";
    if (n >= 2 && strcmp (top, "signed") == 0)
        return GET;
    return NULL;
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
