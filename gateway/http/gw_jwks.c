/* gw_jwks: JWKS parsing into OpenSSL 3 public keys, and the JWS
 * algorithms. Pure code; any thread (see gw_jwks.h). */
#include "gw_jwks.h"
#include "gw_base64.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

/* RSA moduli a key may have: RFC 7518 3.3 asks for 2048 bits or more;
 * issuers use 2048 to 4096, and checking a key (EVP_PKEY_public_check
 * tests that n is not prime) grows with the cube of its size. */
#define S_RSA_MIN_BITS 2048
#define S_RSA_MAX_BITS 8192

static const gw_jws_alg_t s_algs[] = {
    { "RS256", GW_JWK_RSA, false, 0, EVP_sha256 },
    { "RS384", GW_JWK_RSA, false, 0, EVP_sha384 },
    { "RS512", GW_JWK_RSA, false, 0, EVP_sha512 },
    { "PS256", GW_JWK_RSA, true, 0, EVP_sha256 },
    { "PS384", GW_JWK_RSA, true, 0, EVP_sha384 },
    { "PS512", GW_JWK_RSA, true, 0, EVP_sha512 },
    { "ES256", GW_JWK_EC, false, 256, EVP_sha256 },
    { "ES384", GW_JWK_EC, false, 384, EVP_sha384 },
    { "ES512", GW_JWK_EC, false, 521, EVP_sha512 },
};
#define S_ALGS (sizeof s_algs / sizeof s_algs[0])

/* The curves of JWK "crv" (RFC 7518 6.2.1.1), OpenSSL's names for them and
 * the bytes of one coordinate. */
static const struct {
    const char *crv;
    const char *group;
    int bits;
    size_t size;
} s_curves[] = {
    { "P-256", "prime256v1", 256, 32 },
    { "P-384", "secp384r1", 384, 48 },
    { "P-521", "secp521r1", 521, 66 },
};

struct gw_jwks {
    gw_jwk_t *keys;
    size_t n;
};

const gw_jws_alg_t *
gw_jws_alg_find (const char *name)
{
    for (size_t i = 0; name && i < S_ALGS; i++)
        if (strcmp (s_algs[i].name, name) == 0)
            return &s_algs[i];
    return NULL;
}

bool
gw_jws_alg_fits (const gw_jws_alg_t *alg, const gw_jwk_t *key)
{
    if (alg->type != key->type)
        return false;
    if (key->type == GW_JWK_EC && alg->curve_bits != key->curve_bits)
        return false;
    return !key->alg || key->alg == alg;
}

const char *
gw_jwk_kind (const gw_jwk_t *key)
{
    return key->type == GW_JWK_RSA ? "RSA" : key->curve_bits == 256 ? "EC P-256"
         : key->curve_bits == 384 ? "EC P-384" : "EC P-521";
}

/* Decodes a JWK member that must be a base64url string into a new buffer
 * (*out_p, *out_len); false when absent, not a string or not base64url. */
static bool
s_member_bytes (json_t *jwk, const char *name, uint8_t **out_p, size_t *out_len)
{
    const char *text = json_string_value (json_object_get (jwk, name));
    if (!text)
        return false;
    size_t len = strlen (text);
    uint8_t *out = malloc (len * 3 / 4 + 1);
    if (!out || gw_base64url_decode_to (text, len, out, out_len) != 0) {
        free (out);
        return false;
    }
    *out_p = out;
    return true;
}

/* Makes the public RSA key of n and e; NULL when they are not one. */
static EVP_PKEY *
s_rsa_key (const uint8_t *n, size_t n_len, const uint8_t *e, size_t e_len)
{
    BIGNUM *bn_n = BN_bin2bn (n, (int) n_len, NULL);
    BIGNUM *bn_e = BN_bin2bn (e, (int) e_len, NULL);
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new ();
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name (NULL, "RSA", NULL);
    EVP_PKEY *pkey = NULL;
    if (bn_n && bn_e && bld && ctx
        && OSSL_PARAM_BLD_push_BN (bld, OSSL_PKEY_PARAM_RSA_N, bn_n)
        && OSSL_PARAM_BLD_push_BN (bld, OSSL_PKEY_PARAM_RSA_E, bn_e)
        && (params = OSSL_PARAM_BLD_to_param (bld)) != NULL
        && EVP_PKEY_fromdata_init (ctx) > 0)
        EVP_PKEY_fromdata (ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params);
    OSSL_PARAM_free (params);
    OSSL_PARAM_BLD_free (bld);
    EVP_PKEY_CTX_free (ctx);
    BN_free (bn_n);
    BN_free (bn_e);
    return pkey;
}

/* Makes the public EC key of the point (x, y) on group; NULL when it is not
 * a point of the curve. */
static EVP_PKEY *
s_ec_key (const char *group, const uint8_t *x, const uint8_t *y, size_t size)
{
    uint8_t point[1 + 2 * 66];
    point[0] = 0x04;             /* uncompressed: 04 || x || y */
    memcpy (point + 1, x, size);
    memcpy (point + 1 + size, y, size);
    OSSL_PARAM params[] = {
        OSSL_PARAM_utf8_string (OSSL_PKEY_PARAM_GROUP_NAME, (char *) group, 0),
        OSSL_PARAM_octet_string (OSSL_PKEY_PARAM_PUB_KEY, point, 1 + 2 * size),
        OSSL_PARAM_END
    };
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name (NULL, "EC", NULL);
    EVP_PKEY *pkey = NULL;
    if (ctx && EVP_PKEY_fromdata_init (ctx) > 0)
        EVP_PKEY_fromdata (ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params);
    EVP_PKEY_CTX_free (ctx);
    return pkey;
}

/* Fills key's type and public key from an RSA JWK; false when n and e do
 * not make a usable key. */
static bool
s_key_rsa (json_t *jwk, gw_jwk_t *key)
{
    uint8_t *n = NULL, *e = NULL;
    size_t n_len = 0, e_len = 0;
    bool ok = s_member_bytes (jwk, "n", &n, &n_len) && s_member_bytes (jwk, "e", &e, &e_len);
    size_t skip = 0;             /* leading zero bytes of n */
    while (ok && skip < n_len && n[skip] == 0)
        skip++;
    /* an odd exponent above 1 of at most 64 bits (OpenSSL's own limit for
     * large moduli) */
    if (ok) {
        size_t bits = (n_len - skip) * 8;
        if (bits)
            for (uint8_t top = n[skip]; !(top & 0x80); top <<= 1)
                bits--;
        ok = bits >= S_RSA_MIN_BITS && bits <= S_RSA_MAX_BITS && e_len >= 1 && e_len <= 8
          && (e[e_len - 1] & 1) && !(e_len == 1 && e[0] == 1);
    }
    if (ok) {
        key->type = GW_JWK_RSA;
        key->pkey = s_rsa_key (n + skip, n_len - skip, e, e_len);
        ok = key->pkey != NULL;
    }
    free (n);
    free (e);
    return ok;
}

/* Fills key's type, curve and public key from an EC JWK; false for another
 * curve or a point that is not on it (each coordinate must be the curve's
 * full size, RFC 7518 6.2.1.2). */
static bool
s_key_ec (json_t *jwk, gw_jwk_t *key)
{
    const char *crv = json_string_value (json_object_get (jwk, "crv"));
    size_t c = 0;
    while (crv && c < sizeof s_curves / sizeof s_curves[0] && strcmp (s_curves[c].crv, crv) != 0)
        c++;
    if (!crv || c == sizeof s_curves / sizeof s_curves[0])
        return false;
    uint8_t *x = NULL, *y = NULL;
    size_t x_len = 0, y_len = 0;
    bool ok = s_member_bytes (jwk, "x", &x, &x_len) && s_member_bytes (jwk, "y", &y, &y_len)
           && x_len == s_curves[c].size && y_len == s_curves[c].size;
    if (ok) {
        key->type = GW_JWK_EC;
        key->curve_bits = s_curves[c].bits;
        key->coord_size = s_curves[c].size;
        key->pkey = s_ec_key (s_curves[c].group, x, y, s_curves[c].size);
        ok = key->pkey != NULL;
    }
    free (x);
    free (y);
    return ok;
}

/* True when a JWK is meant for verifying signatures: "use" absent or
 * "sig", "key_ops" absent or holding "verify". */
static bool
s_jwk_for_signatures (json_t *jwk)
{
    json_t *use = json_object_get (jwk, "use");
    if (use && (!json_is_string (use) || strcmp (json_string_value (use), "sig") != 0))
        return false;
    json_t *ops = json_object_get (jwk, "key_ops");
    if (!ops)
        return true;
    size_t i;
    json_t *op;
    json_array_foreach (ops, i, op)
        if (json_is_string (op) && strcmp (json_string_value (op), "verify") == 0)
            return true;
    return false;
}

/* Makes a usable key of one JWK into *key; false (and *key left empty) for
 * a JWK that is not one. */
static bool
s_key_from_jwk (json_t *jwk, gw_jwk_t *key)
{
    memset (key, 0, sizeof *key);
    const char *kty = json_string_value (json_object_get (jwk, "kty"));
    json_t *kid = json_object_get (jwk, "kid");
    json_t *alg = json_object_get (jwk, "alg");
    if (!json_is_object (jwk) || !kty || !s_jwk_for_signatures (jwk)
        || (kid && !json_is_string (kid)) || (alg && !json_is_string (alg)))
        return false;
    if (alg && !(key->alg = gw_jws_alg_find (json_string_value (alg))))
        return false;            /* an encryption alg, HS*, "none" or unknown */
    bool ok = strcmp (kty, "RSA") == 0 ? s_key_rsa (jwk, key)
            : strcmp (kty, "EC") == 0  ? s_key_ec (jwk, key)
                                       : false;
    if (ok && key->alg && !gw_jws_alg_fits (key->alg, key))
        ok = false;              /* "alg": "ES256" on a P-384 key, RS256 on EC */
    if (ok && kid && !(key->kid = strdup (json_string_value (kid))))
        ok = false;
    if (ok) {
        EVP_PKEY_CTX *check = EVP_PKEY_CTX_new_from_pkey (NULL, key->pkey, NULL);
        ok = check && EVP_PKEY_public_check (check) == 1;
        EVP_PKEY_CTX_free (check);
    }
    if (!ok) {
        EVP_PKEY_free (key->pkey);
        free (key->kid);
        memset (key, 0, sizeof *key);
    }
    ERR_clear_error ();
    return ok;
}

gw_jwks_t *
gw_jwks_parse (const char *json, size_t len, char *err, size_t err_len)
{
    if (!json || len > GW_JWKS_MAX_TEXT) {
        snprintf (err, err_len, json ? "the JWKS is longer than %d bytes" : "no JWKS",
                  GW_JWKS_MAX_TEXT);
        return NULL;
    }
    json_error_t jerr;
    json_t *doc = json_loadb (json, len, JSON_REJECT_DUPLICATES, &jerr);
    json_t *list = json_object_get (doc, "keys");
    if (!doc || !json_is_array (list)) {
        if (!doc)
            snprintf (err, err_len, "the JWKS is not JSON (line %d, column %d)", jerr.line,
                      jerr.column);
        else
            snprintf (err, err_len, "the JWKS is not a JSON object with a \"keys\" array");
        json_decref (doc);
        return NULL;
    }
    gw_jwks_t *self = calloc (1, sizeof *self);
    size_t total = json_array_size (list);
    if (self && total && !(self->keys = calloc (total, sizeof *self->keys)))
        gw_jwks_destroy (&self);
    for (size_t i = 0; self && i < total; i++)
        if (s_key_from_jwk (json_array_get (list, i), &self->keys[self->n]))
            self->n++;
    json_decref (doc);
    if (self && self->n == 0) {
        snprintf (err, err_len, "the JWKS has no usable signing key among its %zu (RSA of "
                  "2048-8192 bits, or EC P-256/P-384/P-521, with \"use\" absent or \"sig\")",
                  total);
        gw_jwks_destroy (&self);
    } else if (!self)
        snprintf (err, err_len, "out of memory reading the JWKS");
    return self;
}

void
gw_jwks_destroy (gw_jwks_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gw_jwks_t *self = *self_p;
    for (size_t i = 0; i < self->n; i++) {
        EVP_PKEY_free (self->keys[i].pkey);
        free (self->keys[i].kid);
    }
    free (self->keys);
    free (self);
    *self_p = NULL;
}

bool
gw_jwks_has_kid (const gw_jwks_t *self, const char *kid)
{
    for (size_t i = 0; self && kid && i < self->n; i++)
        if (self->keys[i].kid && strcmp (self->keys[i].kid, kid) == 0)
            return true;
    return false;
}

size_t
gw_jwks_size (const gw_jwks_t *self)
{
    return self ? self->n : 0;
}

const gw_jwk_t *
gw_jwks_key (const gw_jwks_t *self, size_t index)
{
    return self && index < self->n ? &self->keys[index] : NULL;
}
