/* jp_utf8: the one UTF-8 validator of the project (see jp_utf8.h).
 * Pure functions; any thread. */
#include "jp_utf8.h"

size_t
jp_utf8_char (const uint8_t *p, size_t n, uint32_t *cp)
{
    if (n == 0)
        return 0;
    uint32_t c = p[0], min;
    size_t len;
    if (c < 0x80) {
        if (cp)
            *cp = c;
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF)
        len = 2, c &= 0x1F, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF)
        len = 3, c &= 0x0F, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4, c &= 0x07, min = 0x10000;
    else
        return 0;       /* a continuation byte, 0xC0, 0xC1, 0xF5-0xFF */
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        c = c << 6 | (p[i] & 0x3Fu);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return 0;       /* overlong, above Unicode, a surrogate */
    if (cp)
        *cp = c;
    return len;
}

bool
jp_utf8_valid (const char *s, size_t len)
{
    const uint8_t *p = (const uint8_t *) s;
    for (size_t i = 0; i < len;) {
        if (p[i] < 0x80) {      /* the common case, without a call */
            i++;
            continue;
        }
        size_t n = jp_utf8_char (p + i, len - i, NULL);
        if (n == 0)
            return false;
        i += n;
    }
    return true;
}
