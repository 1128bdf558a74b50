/* jp_sign: HMAC-SHA256 over Jupyter frames with OpenSSL's EVP_MAC.
 * Pure code, callable from any thread. */
#include "jp_sign.h"

#include <errno.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

/* Computes the raw 32-byte MAC of the parts. Returns 0 or -EIO. */
static int
s_mac (const uint8_t *key, size_t key_len, const jp_part_t parts[4], uint8_t mac[32])
{
    int rc = -EIO;
    EVP_MAC *hmac = EVP_MAC_fetch (NULL, "HMAC", NULL);
    EVP_MAC_CTX *ctx = hmac ? EVP_MAC_CTX_new (hmac) : NULL;
    if (!ctx)
        goto out;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string ("digest", (char *) "SHA256", 0),
        OSSL_PARAM_construct_end (),
    };
    if (!EVP_MAC_init (ctx, key, key_len, params))
        goto out;
    for (int i = 0; i < 4; i++)
        if (parts[i].size && !EVP_MAC_update (ctx, parts[i].data, parts[i].size))
            goto out;
    size_t len = 0;
    if (!EVP_MAC_final (ctx, mac, &len, 32) || len != 32)
        goto out;
    rc = 0;
out:
    EVP_MAC_CTX_free (ctx);
    EVP_MAC_free (hmac);
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
