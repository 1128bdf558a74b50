/* gw_jwks: the signing keys of an OAuth issuer's JWKS (RFC 7517) as
 * OpenSSL 3 public keys, and the JWS algorithms (RFC 7518 3) each may be
 * used with, for gw_jwt. Pure code: the caller fetches the document. Keys
 * are made from the JWK's own numbers (EVP_PKEY_fromdata) and checked
 * (EVP_PKEY_public_check); only public numbers are read.
 *
 * Threads: a gw_jwks_t is read-only once parsed; any number of threads may
 * verify with its keys at once (OpenSSL 3 allows concurrent use of one
 * EVP_PKEY for verification). */
#ifndef GW_JWKS_H
#define GW_JWKS_H

#include <stdbool.h>
#include <stddef.h>

#include <openssl/types.h>

/* The longest JWKS text gw_jwks_parse reads. */
#define GW_JWKS_MAX_TEXT (1024 * 1024)

typedef enum { GW_JWK_RSA, GW_JWK_EC } gw_jwk_type_t;

/* A JWS algorithm this server accepts: RS256/384/512, PS256/384/512,
 * ES256/384/512. Never "none", never HS* (a JWKS holds public keys, and a
 * public key must not become an HMAC secret). */
typedef struct {
    const char *name;
    gw_jwk_type_t type;
    bool pss;                    /* RSASSA-PSS rather than PKCS #1 v1.5 */
    int curve_bits;              /* EC: the one curve it goes with (256, 384, 521) */
    const EVP_MD *(*md) (void);
} gw_jws_alg_t;

/* A usable signing key. Read-only. */
typedef struct {
    char *kid;                   /* NULL when the JWK has none */
    const gw_jws_alg_t *alg;     /* the JWK's own "alg", or NULL */
    gw_jwk_type_t type;
    int curve_bits;              /* EC: 256, 384 or 521 */
    size_t coord_size;           /* EC: bytes of one coordinate, and of r and of s */
    EVP_PKEY *pkey;
} gw_jwk_t;

typedef struct gw_jwks gw_jwks_t;

/* Parses a JWKS document ({"keys": [...]}) into its usable signing keys:
 * RSA (2048 to 8192 bits) and EC (P-256, P-384, P-521) with "use" absent
 * or "sig" and "key_ops", when present, holding "verify". Other keys are
 * skipped: other types (oct, OKP), "use":"enc", an "alg" this server does
 * not accept or that does not fit the key, numbers that do not make a valid
 * public key. Returns NULL with a sentence in err when the text is not a
 * JWKS, is longer than GW_JWKS_MAX_TEXT, or has no usable key. */
gw_jwks_t *gw_jwks_parse (const char *json, size_t len, char *err, size_t err_len);

/* Frees the keys and nulls *self_p; NULL-safe. */
void gw_jwks_destroy (gw_jwks_t **self_p);

/* True when a usable key has this kid (so that a caller can refetch the
 * JWKS when a token names one it does not have). */
bool gw_jwks_has_kid (const gw_jwks_t *self, const char *kid);

/* How many usable keys there are, and the index-th of them (borrowed). */
size_t gw_jwks_size (const gw_jwks_t *self);
const gw_jwk_t *gw_jwks_key (const gw_jwks_t *self, size_t index);

/* The accepted algorithm of this name, or NULL ("none", HS*, unknown). */
const gw_jws_alg_t *gw_jws_alg_find (const char *name);

/* True when alg may sign with key: its type, its curve, and the JWK's own
 * "alg" when it has one. */
bool gw_jws_alg_fits (const gw_jws_alg_t *alg, const gw_jwk_t *key);

/* "RSA", "EC P-256", ...: the key's kind, for messages. */
const char *gw_jwk_kind (const gw_jwk_t *key);

#endif
