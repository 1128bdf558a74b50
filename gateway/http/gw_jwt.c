/* gw_jwt: JWT access-token checks against a gw_jwks_t. Pure code; any
 * thread (see gw_jwt.h). */
#include "gw_jwt.h"
#include "gw_base64.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

const char *
gw_jwt_verdict_name (gw_jwt_verdict_t verdict)
{
    static const char *const names[] = {
        "ok", "malformed", "unknown_key", "bad_alg", "bad_signature", "bad_issuer",
        "bad_audience", "expired", "not_yet_valid", "no_tenant"
    };
    return (unsigned) verdict < sizeof names / sizeof names[0] ? names[verdict] : "unknown";
}

/* A token cut into its parts: the signed text (header.payload) and the
 * three parts decoded into one buffer. */
typedef struct {
    size_t signed_len;
    uint8_t *buf;
    const uint8_t *header, *payload, *sig;
    size_t header_len, payload_len, sig_len;
} s_token_t;

/* Cuts a token of len bytes into *t (t->buf then the caller's to free). */
static gw_jwt_verdict_t
s_token_split (const char *token, size_t len, s_token_t *t, char *why, size_t why_len)
{
    memset (t, 0, sizeof *t);
    const char *dot1 = memchr (token, '.', len);
    const char *dot2 = dot1 ? memchr (dot1 + 1, '.', len - (size_t) (dot1 + 1 - token)) : NULL;
    if (!dot2 || memchr (dot2 + 1, '.', len - (size_t) (dot2 + 1 - token))) {
        size_t dots = 0;
        for (size_t i = 0; i < len; i++)
            dots += token[i] == '.';
        snprintf (why, why_len, dots == 4 ? "the token is encrypted (JWE); only signed JWTs are "
                  "accepted" : "the token is not a JWT (three base64url parts joined by dots)");
        return GW_JWT_MALFORMED;
    }
    t->signed_len = (size_t) (dot2 - token);
    /* each part decodes to fewer bytes than it has characters */
    t->buf = malloc (len + 1);
    if (!t->buf) {
        snprintf (why, why_len, "out of memory reading the token");
        return GW_JWT_MALFORMED;
    }
    uint8_t *at = t->buf;
    const char *starts[3] = { token, dot1 + 1, dot2 + 1 };
    const char *ends[3] = { dot1, dot2, token + len };
    const uint8_t **parts[3] = { &t->header, &t->payload, &t->sig };
    size_t *lens[3] = { &t->header_len, &t->payload_len, &t->sig_len };
    for (int i = 0; i < 3; i++) {
        size_t chars = (size_t) (ends[i] - starts[i]);
        if (gw_base64url_decode_to (starts[i], chars, at, lens[i]) != 0) {
            snprintf (why, why_len, "the token's %s is not base64url",
                      i == 0 ? "header" : i == 1 ? "payload" : "signature");
            return GW_JWT_MALFORMED;
        }
        *parts[i] = at;
        at += *lens[i];
    }
    return GW_JWT_OK;
}

/* True for a "typ" of RFC 7519 5.1 or RFC 9068 2.1. */
static bool
s_typ_ok (const char *typ)
{
    if (strncasecmp (typ, "application/", 12) == 0)
        typ += 12;
    return strcasecmp (typ, "JWT") == 0 || strcasecmp (typ, "at+jwt") == 0;
}

/* Picks the key for a token: the one of its kid that its alg fits, or,
 * without a kid, the only key its alg fits. */
static gw_jwt_verdict_t
s_key_pick (const gw_jwks_t *keys, const char *kid, const gw_jws_alg_t *alg,
            const gw_jwk_t **key_p, char *why, size_t why_len)
{
    const gw_jwk_t *named = NULL;
    size_t fitting = 0;
    for (size_t i = 0; i < gw_jwks_size (keys); i++) {
        const gw_jwk_t *key = gw_jwks_key (keys, i);
        if (kid && !(key->kid && strcmp (key->kid, kid) == 0))
            continue;
        named = key;
        if (gw_jws_alg_fits (alg, key)) {
            *key_p = key;
            if (kid)
                return GW_JWT_OK;
            fitting++;
        }
    }
    if (kid && !named) {
        snprintf (why, why_len, "no key of the issuer has the token's kid");
        return GW_JWT_UNKNOWN_KEY;
    }
    if (kid) {
        snprintf (why, why_len, "the token's alg %s does not fit its key (%s%s%s)", alg->name,
                  gw_jwk_kind (named), named->alg ? ", alg " : "",
                  named->alg ? named->alg->name : "");
        return GW_JWT_BAD_ALG;
    }
    if (fitting != 1) {
        snprintf (why, why_len, "the token names no kid, and %s of the issuer fits its alg %s",
                  fitting ? "more than one key" : "no key", alg->name);
        return GW_JWT_UNKNOWN_KEY;
    }
    return GW_JWT_OK;
}

/* Checks the token's header and picks its key and alg. */
static gw_jwt_verdict_t
s_header_check (const gw_jwks_t *keys, const s_token_t *t, const gw_jwk_t **key_p,
                const gw_jws_alg_t **alg_p, char *why, size_t why_len)
{
    json_t *header = json_loadb ((const char *) t->header, t->header_len,
                                 JSON_REJECT_DUPLICATES, NULL);
    json_t *alg = json_object_get (header, "alg");
    json_t *typ = json_object_get (header, "typ");
    json_t *kid = json_object_get (header, "kid");
    gw_jwt_verdict_t verdict = GW_JWT_MALFORMED;
    if (!json_is_object (header))
        snprintf (why, why_len, "the token's header is not a JSON object");
    else if (!json_is_string (alg))
        snprintf (why, why_len, "the token's header has no alg");
    else if (typ && !(json_is_string (typ) && s_typ_ok (json_string_value (typ))))
        snprintf (why, why_len, "the token's typ is neither JWT nor at+jwt");
    else if (json_object_get (header, "crit"))
        snprintf (why, why_len, "the token's header has critical extensions (crit) this server "
                  "does not understand");
    else if (kid && !json_is_string (kid))
        snprintf (why, why_len, "the token's kid is not a string");
    else if (!(*alg_p = gw_jws_alg_find (json_string_value (alg)))) {
        const char *name = json_string_value (alg);
        verdict = GW_JWT_BAD_ALG;
        if (strcasecmp (name, "none") == 0)
            snprintf (why, why_len, "unsigned tokens (alg none) are refused");
        else if (strncmp (name, "HS", 2) == 0)
            snprintf (why, why_len, "HMAC-signed tokens (HS*) are refused: the issuer's keys are "
                      "public");
        else
            snprintf (why, why_len, "the token's alg is not one of RS256/384/512, PS256/384/512, "
                      "ES256/384/512");
    } else
        verdict = s_key_pick (keys, json_string_value (kid), *alg_p, key_p, why, why_len);
    json_decref (header);
    return verdict;
}

/* Checks a token's signature with key and alg. ES* signatures are r || s
 * of the curve's size (RFC 7518 3.4), made DER for OpenSSL; RS* and PS*
 * signatures are as long as the modulus; PS* salts are as long as the hash. */
static bool
s_signature_ok (const gw_jwk_t *key, const gw_jws_alg_t *alg, const char *token, const s_token_t *t)
{
    const uint8_t *sig = t->sig;
    size_t sig_len = t->sig_len;
    unsigned char *der = NULL;
    bool ok = false;
    if (key->type == GW_JWK_EC) {
        if (sig_len != 2 * key->coord_size)
            return false;
        ECDSA_SIG *pair = ECDSA_SIG_new ();
        BIGNUM *r = BN_bin2bn (sig, (int) key->coord_size, NULL);
        BIGNUM *s = BN_bin2bn (sig + key->coord_size, (int) key->coord_size, NULL);
        int der_len = -1;
        if (pair && r && s && ECDSA_SIG_set0 (pair, r, s) == 1) {
            r = s = NULL;        /* pair's now */
            der_len = i2d_ECDSA_SIG (pair, &der);
        }
        BN_free (r);
        BN_free (s);
        ECDSA_SIG_free (pair);
        if (der_len <= 0)
            return false;
        sig = der;
        sig_len = (size_t) der_len;
    } else if (sig_len != (size_t) EVP_PKEY_get_size (key->pkey))
        return false;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new ();
    EVP_PKEY_CTX *pctx = NULL;
    if (ctx && EVP_DigestVerifyInit (ctx, &pctx, alg->md (), NULL, key->pkey) == 1
        && (!alg->pss
            || (EVP_PKEY_CTX_set_rsa_padding (pctx, RSA_PKCS1_PSS_PADDING) > 0
                && EVP_PKEY_CTX_set_rsa_pss_saltlen (pctx, RSA_PSS_SALTLEN_DIGEST) > 0)))
        ok = EVP_DigestVerify (ctx, sig, sig_len, (const unsigned char *) token,
                               t->signed_len) == 1;
    EVP_MD_CTX_free (ctx);
    OPENSSL_free (der);
    ERR_clear_error ();
    return ok;
}

/* Reads a NumericDate (RFC 7519 2: seconds, maybe with a fraction) as
 * whole seconds, rounded down; false when it is not a number in range. */
static bool
s_numeric_date (json_t *value, int64_t *out)
{
    if (json_is_integer (value)) {
        *out = (int64_t) json_integer_value (value);
        return true;
    }
    double d = json_real_value (value);
    if (!json_is_real (value) || !(d > -9e15 && d < 9e15))
        return false;
    int64_t whole = (int64_t) d;
    *out = (double) whole > d ? whole - 1 : whole;
    return true;
}

/* True when aud (a string, or an array of them) holds audience. */
static bool
s_audience_holds (json_t *aud, const char *audience)
{
    if (json_is_string (aud))
        return strcmp (json_string_value (aud), audience) == 0;
    size_t i;
    json_t *item;
    json_array_foreach (aud, i, item)
        if (json_is_string (item) && strcmp (json_string_value (item), audience) == 0)
            return true;
    return false;
}

/* True for a subject the caller can make a tenant of: 1 to
 * GW_JWT_TENANT_MAX bytes of text without control characters (the caller
 * maps what is no tenant name, gw_auth). */
static bool
s_tenant_ok (const char *s)
{
    size_t n = strlen (s);
    if (n == 0 || n > GW_JWT_TENANT_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char) s[i] < 0x20 || s[i] == 0x7f)
            return false;
    return true;
}

/* Checks the claims of a token whose signature holds, and copies its
 * tenant. */
static gw_jwt_verdict_t
s_claims_check (json_t *claims, const gw_jwt_expect_t *expect, char *tenant, size_t tenant_len,
                char *why, size_t why_len)
{
    const char *iss = json_string_value (json_object_get (claims, "iss"));
    json_t *aud = json_object_get (claims, "aud");
    json_t *exp = json_object_get (claims, "exp");
    json_t *nbf = json_object_get (claims, "nbf");
    const char *claim = expect->tenant_claim ? expect->tenant_claim : "sub";
    json_t *who = json_object_get (claims, claim);
    int64_t leeway = expect->leeway_s < 0 ? 0 : expect->leeway_s > 86400 ? 86400 : expect->leeway_s;
    int64_t exp_at = 0, nbf_at = 0;
    if (!json_is_object (claims)) {
        snprintf (why, why_len, "the token's payload is not a JSON object of claims");
        return GW_JWT_MALFORMED;
    }
    if (!iss || !expect->issuer || strcmp (iss, expect->issuer) != 0) {
        snprintf (why, why_len, iss ? "the token comes from another issuer"
                                    : "the token has no iss");
        return GW_JWT_BAD_ISSUER;
    }
    if (!aud || !expect->audience || !s_audience_holds (aud, expect->audience)) {
        snprintf (why, why_len, aud ? "the token is meant for another audience (aud)"
                  : "the token has no aud (audience)");
        return GW_JWT_BAD_AUDIENCE;
    }
    if (!s_numeric_date (exp, &exp_at)) {
        snprintf (why, why_len, exp ? "the token's exp is not a number of seconds"
                  : "the token has no exp (expiry)");
        return GW_JWT_MALFORMED;
    }
    if (expect->now - leeway >= exp_at) {
        snprintf (why, why_len, "the token has expired");
        return GW_JWT_EXPIRED;
    }
    if (nbf && !s_numeric_date (nbf, &nbf_at)) {
        snprintf (why, why_len, "the token's nbf is not a number of seconds");
        return GW_JWT_MALFORMED;
    }
    if (nbf && nbf_at > expect->now + leeway) {
        snprintf (why, why_len, "the token is not valid yet (nbf)");
        return GW_JWT_NOT_YET_VALID;
    }
    const char *name = json_string_value (who);
    if (!name || !s_tenant_ok (name) || strlen (name) >= tenant_len) {
        snprintf (why, why_len, !who ? "the token has no %s claim to name its tenant"
                  : "the token's %s claim is no text of 1-255 bytes", claim);
        return GW_JWT_NO_TENANT;
    }
    snprintf (tenant, tenant_len, "%s", name);
    return GW_JWT_OK;
}

gw_jwt_verdict_t
gw_jwt_verify (const gw_jwks_t *keys, const char *token, const gw_jwt_expect_t *expect,
               char *tenant, size_t tenant_len, char *why, size_t why_len)
{
    snprintf (why, why_len, "%s", "");
    if (tenant && tenant_len)
        tenant[0] = '\0';
    size_t len = token ? strnlen (token, GW_JWT_MAX_TOKEN + 1) : 0;
    if (!keys || !expect || !tenant || tenant_len == 0 || len == 0 || len > GW_JWT_MAX_TOKEN) {
        snprintf (why, why_len, len > GW_JWT_MAX_TOKEN ? "the token is longer than %d bytes"
                  : "no token, or nothing to check it with", GW_JWT_MAX_TOKEN);
        return GW_JWT_MALFORMED;
    }
    s_token_t t;
    const gw_jwk_t *key = NULL;
    const gw_jws_alg_t *alg = NULL;
    gw_jwt_verdict_t verdict = s_token_split (token, len, &t, why, why_len);
    if (verdict == GW_JWT_OK)
        verdict = s_header_check (keys, &t, &key, &alg, why, why_len);
    if (verdict == GW_JWT_OK && !s_signature_ok (key, alg, token, &t)) {
        snprintf (why, why_len, "the token's signature does not verify with the issuer's key");
        verdict = GW_JWT_BAD_SIGNATURE;
    }
    if (verdict == GW_JWT_OK) {
        json_t *claims = json_loadb ((const char *) t.payload, t.payload_len,
                                     JSON_REJECT_DUPLICATES, NULL);
        verdict = s_claims_check (claims, expect, tenant, tenant_len, why, why_len);
        json_decref (claims);
    }
    free (t.buf);
    return verdict;
}
