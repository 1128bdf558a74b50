/* jp_sign: HMAC-SHA256 over Jupyter frames with OpenSSL's EVP_MAC.
 * Pure code, callable from any thread: each thread keeps its own few keyed
 * contexts (a gateway thread signs for a handful of kernels at a time), so
 * a message costs an update and a final, not OpenSSL's algorithm fetch,
 * a new context and the key's set-up each time. */
#include "jp_sign.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#define CACHE_SLOTS 4           /* keyed contexts a thread keeps */
#define CACHE_KEY_MAX 128       /* longer keys are used once, not kept */

typedef struct {
    EVP_MAC_CTX *ctx;           /* keyed; NULL: free slot */
    size_t key_len;
    uint8_t key[CACHE_KEY_MAX];
} s_keyed_t;

typedef struct {
    s_keyed_t slots[CACHE_SLOTS];
    unsigned next;              /* the slot a new key takes, in turn */
} s_cache_t;

static pthread_once_t s_once = PTHREAD_ONCE_INIT;
static EVP_MAC *s_hmac;         /* fetched once, for the process */
static pthread_key_t s_cache_key;
static bool s_have_cache_key;

static void
s_slot_clear (s_keyed_t *slot)
{
    EVP_MAC_CTX_free (slot->ctx);
    OPENSSL_cleanse (slot->key, sizeof slot->key);
    slot->ctx = NULL;
    slot->key_len = 0;
}

/* A thread ends: its contexts and key copies go. */
static void
s_cache_free (void *arg)
{
    s_cache_t *cache = arg;
    for (int i = 0; i < CACHE_SLOTS; i++)
        s_slot_clear (&cache->slots[i]);
    free (cache);
}

static void
s_init (void)
{
    s_hmac = EVP_MAC_fetch (NULL, "HMAC", NULL);
    s_have_cache_key = pthread_key_create (&s_cache_key, s_cache_free) == 0;
}

/* A context keyed with key, new. NULL if OpenSSL fails. */
static EVP_MAC_CTX *
s_ctx_new (const uint8_t *key, size_t key_len)
{
    EVP_MAC_CTX *ctx = EVP_MAC_CTX_new (s_hmac);
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string ("digest", (char *) "SHA256", 0),
        OSSL_PARAM_construct_end (),
    };
    if (ctx && !EVP_MAC_init (ctx, key, key_len, params))
        EVP_MAC_CTX_free (ctx), ctx = NULL;
    return ctx;
}

/* This thread's cache (made on first use), or NULL. */
static s_cache_t *
s_cache (void)
{
    if (!s_have_cache_key)
        return NULL;
    s_cache_t *cache = pthread_getspecific (s_cache_key);
    if (!cache && (cache = calloc (1, sizeof *cache))
        && pthread_setspecific (s_cache_key, cache) != 0)
        free (cache), cache = NULL;
    return cache;
}

/* The thread's keyed context for key, ready for updates (kept: the caller
 * does not free it), or NULL with *own set to a new one the caller frees. */
static EVP_MAC_CTX *
s_keyed (const uint8_t *key, size_t key_len, EVP_MAC_CTX **own)
{
    *own = NULL;
    s_cache_t *cache = key_len <= CACHE_KEY_MAX ? s_cache () : NULL;
    if (!cache) {
        *own = s_ctx_new (key, key_len);
        return NULL;
    }
    for (int i = 0; i < CACHE_SLOTS; i++) {
        s_keyed_t *slot = &cache->slots[i];
        if (slot->ctx && slot->key_len == key_len
            && CRYPTO_memcmp (slot->key, key, key_len) == 0) {
            /* a NULL key starts over with the key already set */
            if (EVP_MAC_init (slot->ctx, NULL, 0, NULL))
                return slot->ctx;
            s_slot_clear (slot);
            return NULL;
        }
    }
    s_keyed_t *slot = &cache->slots[cache->next++ % CACHE_SLOTS];
    s_slot_clear (slot);
    slot->ctx = s_ctx_new (key, key_len);
    if (!slot->ctx)
        return NULL;
    memcpy (slot->key, key, key_len);
    slot->key_len = key_len;
    return slot->ctx;
}

/* Computes the raw 32-byte MAC of the parts. Returns 0 or -EIO. */
static int
s_mac (const uint8_t *key, size_t key_len, const jp_part_t parts[4], uint8_t mac[32])
{
    pthread_once (&s_once, s_init);
    if (!s_hmac)
        return -EIO;
    EVP_MAC_CTX *own;
    EVP_MAC_CTX *ctx = s_keyed (key, key_len, &own);
    if (!ctx)
        ctx = own;
    int rc = -EIO;
    if (!ctx)
        goto out;
    for (int i = 0; i < 4; i++)
        if (parts[i].size && !EVP_MAC_update (ctx, parts[i].data, parts[i].size))
            goto out;
    size_t len = 0;
    if (!EVP_MAC_final (ctx, mac, &len, 32) || len != 32)
        goto out;
    rc = 0;
out:
    EVP_MAC_CTX_free (own);
    return rc;
}

int
jp_sign (const uint8_t *key, size_t key_len, const jp_part_t parts[4],
         char out[JP_SIGNATURE_HEX_LEN + 1])
{
    static const char hex[] = "0123456789abcdef";
    out[0] = '\0';
    if (key_len == 0)
        return 0;
    uint8_t mac[32];
    int rc = s_mac (key, key_len, parts, mac);
    if (rc)
        return rc;
    for (int i = 0; i < 32; i++) {
        out[2 * i] = hex[mac[i] >> 4];
        out[2 * i + 1] = hex[mac[i] & 15];
    }
    out[JP_SIGNATURE_HEX_LEN] = '\0';
    return 0;
}

int
jp_sign_verify (const uint8_t *key, size_t key_len, const jp_part_t parts[4],
                const void *sig, size_t sig_len)
{
    if (key_len == 0)
        return sig_len == 0 ? 0 : -EBADMSG;
    if (sig_len != JP_SIGNATURE_HEX_LEN)
        return -EBADMSG;
    char expected[JP_SIGNATURE_HEX_LEN + 1];
    int rc = jp_sign (key, key_len, parts, expected);
    if (rc)
        return rc;
    return CRYPTO_memcmp (expected, sig, JP_SIGNATURE_HEX_LEN) == 0 ? 0 : -EBADMSG;
}
