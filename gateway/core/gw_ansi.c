/* gw_ansi: ANSI escape removal; see gw_ansi.h. Pure; any thread. */
#include "gw_ansi.h"

#include <stdlib.h>
#include <string.h>

size_t
gw_ansi_strip (char *s)
{
    char *out = s;
    for (const char *p = s; *p; p++) {
        if (*p != '\033') {
            *out++ = *p;
            continue;
        }
        if (p[1] == '[') {
            p += 2;
            while (*p && !(*p >= '@' && *p <= '~'))
                p++;
        } else if (p[1])
            p++;        /* ESC and one byte (ESC c, ESC =...) */
        if (!*p)
            break;
    }
    *out = '\0';
    return (size_t) (out - s);
}

json_t *
gw_ansi_strip_json (const char *text)
{
    char *copy = strdup (text ? text : "");
    if (!copy)
        return NULL;
    size_t len = gw_ansi_strip (copy);
    json_t *value = json_stringn (copy, len);
    free (copy);
    return value;
}
