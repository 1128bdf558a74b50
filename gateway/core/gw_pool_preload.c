/* gw_pool_preload: the preload code of warm Python kernels (see
 * gw_pool_preload.h and gw_pool_preload.py).
 *
 * Threads: any (pure). */
#include "gw_pool_preload.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gw_base64.h"

/* gw_pool_preload.py, made a C string by the Makefile */
static const char S_PRELOAD_PY[] =
#include "gw_pool_preload.inc"
    ;

#define S_NAME_MAX 128

/* True for a dotted Python name: identifiers of ASCII letters, digits and
 * '_' (not starting with a digit) joined by single dots. */
static int
s_dotted_name (const char *name, size_t len)
{
    if (len == 0 || len > S_NAME_MAX)
        return 0;
    size_t part = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char) name[i];
        if (ch == '.') {
            if (part == 0 || i + 1 == len)
                return 0;
            part = 0;
        }
        else if (ch == '_' || isalpha (ch) || (isdigit (ch) && part > 0))
            part++;
        else
            return 0;
    }
    return 1;
}

char *
gw_pool_preload_code (const char *list)
{
    size_t cap = (list ? strlen (list) : 0) * 2 + 8;
    char *names = malloc (cap);
    if (!names)
        return NULL;
    size_t n = 0, count = 0;
    names[n++] = '[';
    for (const char *p = list; p && *p;) {
        size_t len = strcspn (p, ", \t");
        if (s_dotted_name (p, len)) {
            n += (size_t) snprintf (names + n, cap - n, "%s'%.*s'", count ? "," : "", (int) len,
                                    p);
            count++;
        }
        p += len;
        p += strspn (p, ", \t");
    }
    names[n++] = ']';
    names[n] = '\0';
    char *code = NULL;
    char *b64 = count ? gw_base64_encode ((const uint8_t *) S_PRELOAD_PY,
                                          sizeof S_PRELOAD_PY - 1) : NULL;
    if (b64 && asprintf (&code, "exec(__import__('base64').b64decode('%s').decode(), "
                         "{'__name__': '__codebox_preload__', 'NAMES': %s})", b64, names) < 0)
        code = NULL;
    free (b64);
    free (names);
    return code;
}

int
gw_pool_preload_language (const char *language)
{
    return language && strcasecmp (language, "python") == 0;
}
