/* jp_random: identifiers and keys from the OS's random source (getrandom).
 * Pure code, callable from any thread. */
#ifndef JP_RANDOM_H
#define JP_RANDOM_H

#include <stddef.h>

#define JP_UUID_LEN 36          /* 8-4-4-4-12 hex digits and dashes */
#define JP_KEY_HEX_LEN 64       /* a 256-bit key as lowercase hex */

/* Fills buf with len random bytes. Returns 0 or a negative errno. */
int jp_random_bytes (void *buf, size_t len);

/* Writes a random (version 4) UUID and a NUL into out. Returns 0 or -errno. */
int jp_random_uuid (char out[JP_UUID_LEN + 1]);

/* Writes 256 random bits as 64 hex digits and a NUL. Returns 0 or -errno. */
int jp_random_key (char out[JP_KEY_HEX_LEN + 1]);

#endif
