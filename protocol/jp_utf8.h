/* jp_utf8: the one UTF-8 validator of the project: RFC 3629, as Jansson
 * accepts it (no overlong form, no surrogate, nothing above U+10FFFF, no
 * 0xC0, 0xC1 or 0xF5-0xFF byte). A NUL byte is a valid character: callers
 * that must refuse it look for it themselves.
 * Pure functions; any thread. */
#ifndef JP_UTF8_H
#define JP_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The length (1 to 4) of the valid UTF-8 character at p, with n bytes
 * left from p, or 0 when the bytes there are not one (or n is 0). Its
 * code point in *cp when cp is not NULL and the length is not 0. */
size_t jp_utf8_char (const uint8_t *p, size_t n, uint32_t *cp);

/* True when the len bytes at s are valid UTF-8. */
bool jp_utf8_valid (const char *s, size_t len);

#endif
