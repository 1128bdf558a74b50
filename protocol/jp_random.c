/* jp_random: UUIDs and HMAC keys from getrandom(2). Any thread. Ours, not
 * zuuid: zuuid allocates per id and took 1.8 us against 0.27 us here, and
 * has nothing for a 256-bit key (measured by `make bench`,
 * tests/bench/czmq_compare.c). UUIDs come from a per-thread store of
 * getrandom's bytes, filled 16 ids at a time: a call makes two (a message
 * id, an execution id), and each was a system call. A forked child forgets
 * the store it inherited (pthread_atfork), so no two processes give the
 * same ids; keys are read alone, never from the store. */
#include "jp_random.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>

#define STORE_BYTES 256

static _Thread_local struct {
    uint8_t bytes[STORE_BYTES];
    size_t left;                /* the unused bytes are the last `left` */
} s_store;

static pthread_once_t s_once = PTHREAD_ONCE_INIT;

static void
s_forget (void)
{
    explicit_bzero (&s_store, sizeof s_store);
}

static void
s_register (void)
{
    pthread_atfork (NULL, NULL, s_forget);
}

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

/* 16 bytes from the thread's store, filled again when empty. Returns 0
 * or -errno. */
static int
s_take16 (uint8_t b[16])
{
    pthread_once (&s_once, s_register);
    if (s_store.left < 16) {
        int rc = jp_random_bytes (s_store.bytes, STORE_BYTES);
        if (rc)
            return rc;
        s_store.left = STORE_BYTES;
    }
    uint8_t *from = s_store.bytes + STORE_BYTES - s_store.left;
    memcpy (b, from, 16);
    explicit_bzero (from, 16);  /* given out once */
    s_store.left -= 16;
    return 0;
}

int
jp_random_uuid (char out[JP_UUID_LEN + 1])
{
    uint8_t b[16];
    int rc = s_take16 (b);
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
