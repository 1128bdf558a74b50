/* jp_random: UUIDs and HMAC keys from getrandom(2). Any thread. Ours, not
 * zuuid: zuuid allocates per id and took 1.8 us against 0.27 us here, and
 * has nothing for a 256-bit key (measured by `make bench`,
 * tests/bench/czmq_compare.c). */
#include "jp_random.h"

#include <errno.h>
#include <stdint.h>
#include <sys/random.h>

int
jp_random_bytes (void *buf, size_t len)
{
    uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = getrandom (p, len, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += n;
        len -= (size_t) n;
    }
    return 0;
}

/* Writes len bytes of in as lowercase hex into out (2*len chars, no NUL). */
static void
s_hex (const uint8_t *in, size_t len, char *out)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = hex[in[i] >> 4];
        out[2 * i + 1] = hex[in[i] & 15];
    }
}

int
jp_random_uuid (char out[JP_UUID_LEN + 1])
{
    uint8_t b[16];
    int rc = jp_random_bytes (b, sizeof b);
    if (rc)
        return rc;
    b[6] = (uint8_t) ((b[6] & 0x0f) | 0x40);    /* version 4 */
    b[8] = (uint8_t) ((b[8] & 0x3f) | 0x80);    /* RFC 4122 variant */
    char *o = out;
    static const int groups[] = {4, 2, 2, 2, 6};
    const uint8_t *p = b;
    for (int g = 0; g < 5; g++) {
        if (g)
            *o++ = '-';
        s_hex (p, (size_t) groups[g], o);
        o += 2 * groups[g];
        p += groups[g];
    }
    *o = '\0';
    return 0;
}

int
jp_random_key (char out[JP_KEY_HEX_LEN + 1])
{
    uint8_t b[JP_KEY_HEX_LEN / 2];
    int rc = jp_random_bytes (b, sizeof b);
    if (rc)
        return rc;
    s_hex (b, sizeof b, out);
    out[JP_KEY_HEX_LEN] = '\0';
    return 0;
}
