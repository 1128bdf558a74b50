/* gw_url: percent-encoding. See gw_url.h. Pure code; any thread. */
#include "gw_url.h"

#include <stdlib.h>
#include <string.h>

char *
gw_url_encode (const char *s, bool keep_slash)
{
    static const char hex[] = "0123456789ABCDEF";
    char *out = malloc (3 * strlen (s) + 1);
    if (!out)
        return NULL;
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
        bool plain = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z')
                     || (*p >= '0' && *p <= '9') || strchr ("-._~", *p)
                     || (keep_slash && *p == '/');
        if (plain)
            out[k++] = (char) *p;
        else {
            out[k++] = '%';
            out[k++] = hex[*p >> 4];
            out[k++] = hex[*p & 15];
        }
    }
    out[k] = '\0';
    return out;
}
