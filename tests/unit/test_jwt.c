/* test_jwt: gw_jwks and gw_jwt, JWT access tokens checked against a JWKS.
 * The keys are real (RSA 2048 and EC P-256 made by OpenSSL when the suite
 * starts), the JWKS is written from their numbers as an issuer writes it,
 * and each token is signed here with EVP as an issuer signs it (ES256 as
 * raw r || s). Then: what is right is accepted with its tenant, and each
 * way a token can be wrong (audience, time, issuer, key, alg, signature,
 * shape, tenant) is refused with its own verdict and a reason that does
 * not repeat the token. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rsa.h>

#include "gw_base64.h"
#include "gw_jwt.h"
#include "suites.h"

#define NOW 1750000000
#define ISS "https://issuer.example/"
#define AUD "https://codebox.example/mcp"

static EVP_PKEY *s_rsa, *s_rsa_other, *s_ec, *s_rsa_small;

/* Made once, in Check's parent process: every test's fork has them. */
static void
s_keys_setup (void)
{
    s_rsa = EVP_RSA_gen (2048);
    s_rsa_other = EVP_RSA_gen (2048);
    s_rsa_small = EVP_RSA_gen (1024);
    s_ec = EVP_EC_gen ("P-256");
    ck_assert (s_rsa && s_rsa_other && s_rsa_small && s_ec);
}

static void
s_keys_teardown (void)
{
    EVP_PKEY_free (s_rsa);
    EVP_PKEY_free (s_rsa_other);
    EVP_PKEY_free (s_rsa_small);
    EVP_PKEY_free (s_ec);
}

/* base64url without padding, written here (not by the code under test). */
static char *
s_b64url (const uint8_t *data, size_t len)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    char *out = malloc (len * 4 / 3 + 4), *o = out;
    size_t i = 0;
    for (; i + 2 < len; i += 3) {
        uint32_t v = (uint32_t) data[i] << 16 | (uint32_t) data[i + 1] << 8 | data[i + 2];
        *o++ = abc[v >> 18], *o++ = abc[(v >> 12) & 63], *o++ = abc[(v >> 6) & 63];
        *o++ = abc[v & 63];
    }
    if (len - i == 1)
        *o++ = abc[data[i] >> 2], *o++ = abc[(data[i] & 3) << 4];
    else if (len - i == 2) {
        uint32_t v = (uint32_t) data[i] << 8 | data[i + 1];
        *o++ = abc[v >> 10], *o++ = abc[(v >> 4) & 63], *o++ = abc[(v & 15) << 2];
    }
    *o = '\0';
    return out;
}

static char *
s_b64url_text (const char *text)
{
    return s_b64url ((const uint8_t *) text, strlen (text));
}

/* Sets jwk's member name to a big-number parameter of a key, big-endian
 * in size bytes (0: its own length), as base64url. */
static void
s_key_number (json_t *jwk, const char *name, EVP_PKEY *pkey, const char *param, int size)
{
    BIGNUM *bn = NULL;
    ck_assert (EVP_PKEY_get_bn_param (pkey, param, &bn) == 1);
    uint8_t buf[1024];
    int len = size ? BN_bn2binpad (bn, buf, size) : BN_bn2bin (bn, buf);
    ck_assert_int_gt (len, 0);
    BN_free (bn);
    char *text = s_b64url (buf, (size_t) len);
    json_object_set_new (jwk, name, json_string (text));
    free (text);
}

/* The public JWK of pkey (RSA: n, e; EC P-256: crv, x, y), with kid when
 * not NULL (new reference). */
static json_t *
s_jwk (EVP_PKEY *pkey, const char *kid)
{
    json_t *jwk = json_object ();
    if (EVP_PKEY_is_a (pkey, "RSA")) {
        json_object_set_new (jwk, "kty", json_string ("RSA"));
        s_key_number (jwk, "n", pkey, OSSL_PKEY_PARAM_RSA_N, 0);
        s_key_number (jwk, "e", pkey, OSSL_PKEY_PARAM_RSA_E, 0);
    } else {
        json_object_set_new (jwk, "kty", json_string ("EC"));
        json_object_set_new (jwk, "crv", json_string ("P-256"));
        s_key_number (jwk, "x", pkey, OSSL_PKEY_PARAM_EC_PUB_X, 32);
        s_key_number (jwk, "y", pkey, OSSL_PKEY_PARAM_EC_PUB_Y, 32);
    }
    if (kid)
        json_object_set_new (jwk, "kid", json_string (kid));
    return jwk;
}

/* Parses a JWKS of the given JWKs (stolen); fails the test if it is not. */
static gw_jwks_t *
s_jwks_of (json_t *keys)
{
    json_t *doc = json_pack ("{s:o}", "keys", keys);
    char *text = json_dumps (doc, JSON_COMPACT);
    char err[256] = "";
    gw_jwks_t *jwks = gw_jwks_parse (text, strlen (text), err, sizeof err);
    ck_assert_msg (jwks != NULL, "the JWKS was refused: %s", err);
    free (text);
    json_decref (doc);
    return jwks;
}

/* The usual JWKS: the RSA key as "rsa-1", the EC key as "ec-1". */
static gw_jwks_t *
s_jwks (void)
{
    return s_jwks_of (json_pack ("[o,o]", s_jwk (s_rsa, "rsa-1"), s_jwk (s_ec, "ec-1")));
}

/* The JWK of pkey as compact JSON text (new). */
static char *
s_jwk_text (EVP_PKEY *pkey, const char *kid)
{
    json_t *jwk = s_jwk (pkey, kid);
    char *text = json_dumps (jwk, JSON_COMPACT);
    json_decref (jwk);
    return text;
}

/* Signs header.payload (JSON texts) with pkey as alg does; ES256 as raw
 * r || s. Returns the compact token (new). */
static char *
s_sign (EVP_PKEY *pkey, const char *alg, const char *header, const char *payload)
{
    char *h = s_b64url_text (header), *p = s_b64url_text (payload);
    char *input = malloc (strlen (h) + strlen (p) + 2);
    sprintf (input, "%s.%s", h, p);
    const EVP_MD *md = strstr (alg, "384") ? EVP_sha384 () : strstr (alg, "512") ? EVP_sha512 ()
                     : EVP_sha256 ();
    EVP_MD_CTX *ctx = EVP_MD_CTX_new ();
    EVP_PKEY_CTX *pctx = NULL;
    ck_assert (EVP_DigestSignInit (ctx, &pctx, md, NULL, pkey) == 1);
    if (alg[0] == 'P') {
        ck_assert (EVP_PKEY_CTX_set_rsa_padding (pctx, RSA_PKCS1_PSS_PADDING) > 0);
        ck_assert (EVP_PKEY_CTX_set_rsa_pss_saltlen (pctx, RSA_PSS_SALTLEN_DIGEST) > 0);
    }
    uint8_t sig[1024];
    size_t sig_len = sizeof sig;
    ck_assert (EVP_DigestSign (ctx, sig, &sig_len, (uint8_t *) input, strlen (input)) == 1);
    EVP_MD_CTX_free (ctx);
    if (alg[0] == 'E') {         /* DER to r || s of 32 bytes each */
        const uint8_t *der = sig;
        ECDSA_SIG *pair = d2i_ECDSA_SIG (NULL, &der, (long) sig_len);
        ck_assert (pair);
        uint8_t raw[64];
        BN_bn2binpad (ECDSA_SIG_get0_r (pair), raw, 32);
        BN_bn2binpad (ECDSA_SIG_get0_s (pair), raw + 32, 32);
        ECDSA_SIG_free (pair);
        memcpy (sig, raw, 64);
        sig_len = 64;
    }
    char *s = s_b64url (sig, sig_len);
    char *token = malloc (strlen (input) + strlen (s) + 2);
    sprintf (token, "%s.%s", input, s);
    free (h), free (p), free (s), free (input);
    return token;
}

/* Claims that pass, with `extra` (a JSON object text) merged over them. */
static char *
s_claims (const char *extra)
{
    json_t *claims = json_pack ("{s:s, s:s, s:s, s:I, s:I}", "iss", ISS, "aud", AUD,
                                "sub", "alice", "exp", (json_int_t) NOW + 600,
                                "iat", (json_int_t) NOW - 10);
    json_t *more = json_loads (extra ? extra : "{}", JSON_ALLOW_NUL, NULL);
    ck_assert (more);
    json_object_update (claims, more);
    json_t *value;
    const char *key;
    void *tmp;
    json_object_foreach_safe (claims, tmp, key, value)
        if (json_is_null (value))            /* "sub": null drops sub */
            json_object_del (claims, key);
    char *text = json_dumps (claims, JSON_COMPACT);
    ck_assert (text);
    json_decref (claims);
    json_decref (more);
    return text;
}

/* A token of alg signed by pkey with kid (NULL: none) and claims. */
static char *
s_token (EVP_PKEY *pkey, const char *alg, const char *kid, const char *extra_claims)
{
    char header[256];
    if (kid)
        snprintf (header, sizeof header, "{\"alg\":\"%s\",\"typ\":\"JWT\",\"kid\":\"%s\"}", alg, kid);
    else
        snprintf (header, sizeof header, "{\"alg\":\"%s\",\"typ\":\"JWT\"}", alg);
    char *claims = s_claims (extra_claims);
    char *token = s_sign (pkey, alg, header, claims);
    free (claims);
    return token;
}

/* Verifies token with the usual expectations; checks that a refusal says
 * why without repeating the token, and that only OK names a tenant. */
static gw_jwt_verdict_t
s_verify (const gw_jwks_t *jwks, const char *token, char *tenant)
{
    gw_jwt_expect_t expect = { ISS, AUD, "sub", NOW, 60 };
    char why[256] = "x";
    gw_jwt_verdict_t v = gw_jwt_verify (jwks, token, &expect, tenant, GW_JWT_TENANT_SIZE, why,
                                        sizeof why);
    if (v == GW_JWT_OK)
        ck_assert_str_eq (why, "");
    else {
        ck_assert_msg (strlen (why) > 10, "verdict %s without a reason", gw_jwt_verdict_name (v));
        ck_assert_str_eq (tenant, "");
        ck_assert (!strstr (why, "alice"));
        const char *dot = token ? strchr (token, '.') : NULL;
        if (dot && dot - token > 8)
            ck_assert (!strstr (why, "eyJ"));
    }
    return v;
}

/* Verifies a token and expects verdict; frees the token. */
static void
s_expect (const gw_jwks_t *jwks, char *token, gw_jwt_verdict_t verdict)
{
    char tenant[GW_JWT_TENANT_SIZE] = "x";
    gw_jwt_verdict_t v = s_verify (jwks, token, tenant);
    ck_assert_msg (v == verdict, "got %s, expected %s", gw_jwt_verdict_name (v),
                   gw_jwt_verdict_name (verdict));
    free (token);
}

START_TEST (rs256_and_es256_accepted_with_tenant)
{
    gw_jwks_t *jwks = s_jwks ();
    ck_assert_uint_eq (gw_jwks_size (jwks), 2);
    char tenant[GW_JWT_TENANT_SIZE];
    char *token = s_token (s_rsa, "RS256", "rsa-1", NULL);
    ck_assert_int_eq (s_verify (jwks, token, tenant), GW_JWT_OK);
    ck_assert_str_eq (tenant, "alice");
    free (token);
    token = s_token (s_ec, "ES256", "ec-1", "{\"sub\": \"bob@example.com\"}");
    ck_assert_int_eq (s_verify (jwks, token, tenant), GW_JWT_OK);
    ck_assert_str_eq (tenant, "bob@example.com");
    free (token);
    /* PS256 and RS512 with the RSA key, and RFC 9068's typ */
    s_expect (jwks, s_token (s_rsa, "PS256", "rsa-1", NULL), GW_JWT_OK);
    s_expect (jwks, s_token (s_rsa, "RS512", "rsa-1", NULL), GW_JWT_OK);
    char *claims = s_claims (NULL);
    s_expect (jwks, s_sign (s_rsa, "RS256", "{\"alg\":\"RS256\",\"kid\":\"rsa-1\","
                            "\"typ\":\"application/AT+JWT\"}", claims), GW_JWT_OK);
    s_expect (jwks, s_sign (s_rsa, "RS256", "{\"alg\":\"RS256\",\"kid\":\"rsa-1\"}", claims),
              GW_JWT_OK);
    free (claims);
    gw_jwks_destroy (&jwks);
    ck_assert_ptr_null (jwks);
}
END_TEST

START_TEST (audience)
{
    gw_jwks_t *jwks = s_jwks ();
    s_expect (jwks, s_token (s_rsa, "RS256", "rsa-1", "{\"aud\": \"https://other.example/\"}"),
              GW_JWT_BAD_AUDIENCE);
    s_expect (jwks, s_token (s_rsa, "RS256", "rsa-1", "{\"aud\": null}"), GW_JWT_BAD_AUDIENCE);
    s_expect (jwks, s_token (s_rsa, "RS256", "rsa-1", "{\"aud\": [\"https://other.example/\"]}"),
              GW_JWT_BAD_AUDIENCE);
    s_expect (jwks, s_token (s_ec, "ES256", "ec-1",
                             "{\"aud\": [\"https://other.example/\", \"" AUD "\"]}"), GW_JWT_OK);
    /* a prefix of the audience is another audience */
    s_expect (jwks, s_token (s_rsa, "RS256", "rsa-1", "{\"aud\": \"https://codebox.example\"}"),
              GW_JWT_BAD_AUDIENCE);
    gw_jwks_destroy (&jwks);
}
END_TEST

START_TEST (time_and_issuer)
{
    gw_jwks_t *jwks = s_jwks ();
    s_expect (jwks, s_token (s_rsa, "RS256", "rsa-1", "{\"exp\": 1749999900}"), GW_JWT_EXPIRED);
    s_expect (jwks, s_token (s_rsa, "RS256", "rsa-1", "{\"exp\": 1749999970}"), GW_JWT_OK);
    s_expect (jwks, s_token (s_rsa, "RS256", "rsa-1", "{\"exp\": 1749999940}"), GW_JWT_EXPIRED);
    s_expect (jwks, s_token (s_rsa, "RS256", "rsa-1", "{\"exp\": 1749999999.5}"), GW_JWT_OK);
    /* fractions are rounded down: expiry comes no later */
    s_expect (jwks, s_token (s_rsa, "RS256", "rsa-1", "{\"exp\": 1749999940.5}"), GW_JWT_EXPIRED);
    s_expect (jwks, s_token (s_rsa, "RS256", "rsa-1", "{\"exp\": null}"), GW_JWT_MALFORMED);
    s_expect (jwks, s_token (s_rsa, "RS256", "rsa-1", "{\"exp\": \"1750000600\"}"),
              GW_JWT_MALFORMED);
    s_expect (jwks, s_token (s_rsa, "RS256", "rsa-1", "{\"nbf\": 1750000300}"),
              GW_JWT_NOT_YET_VALID);
    s_expect (jwks, s_token (s_rsa, "RS256", "rsa-1", "{\"nbf\": 1750000030}"), GW_JWT_OK);
    s_expect (jwks, s_token (s_rsa, "RS256", "rsa-1", "{\"iss\": \"https://evil.example/\"}"),
              GW_JWT_BAD_ISSUER);
    s_expect (jwks, s_token (s_rsa, "RS256", "rsa-1", "{\"iss\": \"https://issuer.example\"}"),
              GW_JWT_BAD_ISSUER);
    s_expect (jwks, s_token (s_rsa, "RS256", "rsa-1", "{\"iss\": null}"), GW_JWT_BAD_ISSUER);
    gw_jwks_destroy (&jwks);
}
END_TEST

START_TEST (another_key_unknown_kid)
{
    gw_jwks_t *jwks = s_jwks ();
    /* signed by another key that claims the kid */
    s_expect (jwks, s_token (s_rsa_other, "RS256", "rsa-1", NULL), GW_JWT_BAD_SIGNATURE);
    ck_assert (gw_jwks_has_kid (jwks, "rsa-1"));
    ck_assert (!gw_jwks_has_kid (jwks, "rsa-2"));
    s_expect (jwks, s_token (s_rsa, "RS256", "rsa-2", NULL), GW_JWT_UNKNOWN_KEY);
    /* the key a token's header carries is never used */
    char *jwk = s_jwk_text (s_rsa_other, "rsa-1");
    char header[2048], *claims = s_claims (NULL);
    snprintf (header, sizeof header, "{\"alg\":\"RS256\",\"kid\":\"rsa-1\",\"jwk\":%s}", jwk);
    s_expect (jwks, s_sign (s_rsa_other, "RS256", header, claims), GW_JWT_BAD_SIGNATURE);
    free (jwk);
    free (claims);
    /* no kid: the only key the alg fits; two that fit: none is picked */
    s_expect (jwks, s_token (s_rsa, "RS256", NULL, NULL), GW_JWT_OK);
    s_expect (jwks, s_token (s_ec, "ES256", NULL, NULL), GW_JWT_OK);
    gw_jwks_destroy (&jwks);
    jwks = s_jwks_of (json_pack ("[o,o]", s_jwk (s_rsa, "a"), s_jwk (s_rsa_other, "b")));
    s_expect (jwks, s_token (s_rsa, "RS256", NULL, NULL), GW_JWT_UNKNOWN_KEY);
    s_expect (jwks, s_token (s_rsa_other, "RS256", "b", NULL), GW_JWT_OK);
    gw_jwks_destroy (&jwks);
}
END_TEST

START_TEST (alg_none_and_hmac_refused)
{
    gw_jwks_t *jwks = s_jwks ();
    char *claims = s_claims (NULL), *p = s_b64url_text (claims), token[4096];
    const char *nones[] = { "none", "None", "NONE" };
    for (int i = 0; i < 3; i++) {
        char header[128];
        snprintf (header, sizeof header, "{\"alg\":\"%s\",\"kid\":\"rsa-1\"}", nones[i]);
        char *h = s_b64url_text (header);
        snprintf (token, sizeof token, "%s.%s.", h, p);
        s_expect (jwks, strdup (token), GW_JWT_BAD_ALG);
        free (h);
    }
    /* HS256 with the RSA key's modulus, then with its JWK text, as the
     * HMAC secret: the classic confusion */
    BIGNUM *n = NULL;
    ck_assert (EVP_PKEY_get_bn_param (s_rsa, OSSL_PKEY_PARAM_RSA_N, &n) == 1);
    uint8_t mod[256];
    ck_assert_int_eq (BN_bn2bin (n, mod), 256);
    BN_free (n);
    char *jwk = s_jwk_text (s_rsa, "rsa-1");
    for (int i = 0; i < 2; i++) {
        char *h = s_b64url_text ("{\"alg\":\"HS256\",\"typ\":\"JWT\",\"kid\":\"rsa-1\"}");
        snprintf (token, sizeof token, "%s.%s", h, p);
        uint8_t mac[32];
        unsigned mac_len = 0;
        ck_assert (HMAC (EVP_sha256 (), i ? (const void *) jwk : mod, i ? (int) strlen (jwk) : 256,
                         (uint8_t *) token, strlen (token), mac, &mac_len));
        char *m = s_b64url (mac, mac_len);
        strcat (token, "."), strcat (token, m);
        s_expect (jwks, strdup (token), GW_JWT_BAD_ALG);
        free (h), free (m);
    }
    free (jwk), free (claims), free (p);
    gw_jwks_destroy (&jwks);
}
END_TEST

START_TEST (alg_must_fit_the_key)
{
    gw_jwks_t *jwks = s_jwks ();
    /* RS256 named on the EC key (signed with RSA: the alg is refused first) */
    s_expect (jwks, s_token (s_rsa, "RS256", "ec-1", NULL), GW_JWT_BAD_ALG);
    s_expect (jwks, s_token (s_ec, "ES256", "rsa-1", NULL), GW_JWT_BAD_ALG);
    s_expect (jwks, s_token (s_ec, "ES384", "ec-1", NULL), GW_JWT_BAD_ALG);
    s_expect (jwks, s_token (s_rsa, "RS1", "rsa-1", NULL), GW_JWT_BAD_ALG);
    gw_jwks_destroy (&jwks);
    /* a JWK's own alg binds it */
    json_t *jwk = s_jwk (s_rsa, "rsa-1");
    json_object_set_new (jwk, "alg", json_string ("PS256"));
    jwks = s_jwks_of (json_pack ("[o]", jwk));
    s_expect (jwks, s_token (s_rsa, "RS256", "rsa-1", NULL), GW_JWT_BAD_ALG);
    s_expect (jwks, s_token (s_rsa, "PS256", "rsa-1", NULL), GW_JWT_OK);
    gw_jwks_destroy (&jwks);
}
END_TEST

START_TEST (tampered_and_bad_signatures)
{
    gw_jwks_t *jwks = s_jwks ();
    char *good = s_token (s_rsa, "RS256", "rsa-1", NULL);
    char *evil = s_claims ("{\"sub\": \"mallory\"}"), *p = s_b64url_text (evil);
    char *dot1 = strchr (good, '.'), *dot2 = strrchr (good, '.');
    char *token = malloc (strlen (good) + strlen (p) + 1);
    sprintf (token, "%.*s.%s%s", (int) (dot1 - good), good, p, dot2);
    s_expect (jwks, token, GW_JWT_BAD_SIGNATURE);
    /* a flipped bit in the signature; a signature cut short */
    token = strdup (good);
    char *last = token + strlen (token) - 3;
    *last = *last == 'A' ? 'B' : 'A';
    s_expect (jwks, token, GW_JWT_BAD_SIGNATURE);
    token = strdup (good);
    token[strlen (token) - 2] = '\0';                   /* 255 bytes of 256 */
    s_expect (jwks, token, GW_JWT_BAD_SIGNATURE);
    free (good), free (evil), free (p);
    /* ES256 signatures are r || s of 64 bytes: DER is refused */
    good = s_token (s_ec, "ES256", "ec-1", NULL);
    dot2 = strrchr (good, '.');
    uint8_t raw[64];
    size_t raw_len = 0;
    ck_assert_int_eq (gw_base64url_decode_to (dot2 + 1, strlen (dot2 + 1), raw, &raw_len), 0);
    ck_assert_uint_eq (raw_len, 64);
    ECDSA_SIG *pair = ECDSA_SIG_new ();
    ECDSA_SIG_set0 (pair, BN_bin2bn (raw, 32, NULL), BN_bin2bn (raw + 32, 32, NULL));
    uint8_t *der = NULL;
    int der_len = i2d_ECDSA_SIG (pair, &der);
    char *d = s_b64url (der, (size_t) der_len);
    token = malloc (strlen (good) + strlen (d) + 1);
    sprintf (token, "%.*s.%s", (int) (dot2 - good), good, d);
    s_expect (jwks, token, GW_JWT_BAD_SIGNATURE);
    ECDSA_SIG_free (pair), OPENSSL_free (der), free (d), free (good);
    gw_jwks_destroy (&jwks);
}
END_TEST

START_TEST (malformed_tokens)
{
    gw_jwks_t *jwks = s_jwks ();
    char *good = s_token (s_rsa, "RS256", "rsa-1", NULL);
    const char *shapes[] = { "", "abc", "a.b", "a.b.c.d", "..", "...." };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        s_expect (jwks, strdup (shapes[i]), GW_JWT_MALFORMED);
    s_expect (jwks, NULL, GW_JWT_MALFORMED);
    /* {"alg":"RS256"} with nothing signed: a shape that holds, no signature */
    s_expect (jwks, strdup ("eyJhbGciOiJSUzI1NiJ9.."), GW_JWT_BAD_SIGNATURE);
    /* bad base64url: padding, the standard alphabet, a space, a bad length */
    const char *edits[] = { "=", "+", " ", "Q" };
    for (int i = 0; i < 4; i++) {
        char *token = malloc (strlen (good) + 2);
        char *dot = strchr (good, '.');
        sprintf (token, "%.*s%s%s", (int) (dot - good), good, edits[i], dot);
        s_expect (jwks, token, GW_JWT_MALFORMED);
    }
    /* a header that is not a JSON object, a JSON array, duplicate members,
     * another typ, crit, a kid that is no string */
    char *claims = s_claims (NULL);
    const char *headers[] = {
        "not json", "[\"RS256\"]", "{\"alg\":\"RS256\",\"alg\":\"none\",\"kid\":\"rsa-1\"}",
        "{\"alg\":\"RS256\",\"kid\":\"rsa-1\",\"typ\":\"JOSE\"}",
        "{\"alg\":\"RS256\",\"kid\":\"rsa-1\",\"crit\":[\"exp\"],\"exp\":1}",
        "{\"alg\":\"RS256\",\"kid\":7}", "{\"kid\":\"rsa-1\"}",
    };
    for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++)
        s_expect (jwks, s_sign (s_rsa, "RS256", headers[i], claims), GW_JWT_MALFORMED);
    /* a payload that is not a JSON object, signed by the right key */
    s_expect (jwks, s_sign (s_rsa, "RS256", "{\"alg\":\"RS256\",\"kid\":\"rsa-1\"}", "[1]"),
              GW_JWT_MALFORMED);
    /* longer than 16 KiB: refused unread (a valid token with padding in a
     * claim of 17 000 bytes) */
    char big[17100] = "{\"pad\": \"";
    memset (big + 9, 'x', 17000);
    strcpy (big + 9 + 17000, "\"}");
    s_expect (jwks, s_token (s_rsa, "RS256", "rsa-1", big), GW_JWT_MALFORMED);
    char *huge = malloc (1 << 20);
    memset (huge, 'A', (1 << 20) - 1);
    huge[(1 << 20) - 1] = '\0';
    s_expect (jwks, huge, GW_JWT_MALFORMED);
    /* five parts: an encrypted token */
    s_expect (jwks, strdup ("eyJhbGciOiJSU0EtT0FFUCJ9.a.b.c.d"), GW_JWT_MALFORMED);
    free (good), free (claims);
    gw_jwks_destroy (&jwks);
}
END_TEST

START_TEST (tenant_from_a_claim)
{
    gw_jwks_t *jwks = s_jwks ();
    s_expect (jwks, s_token (s_rsa, "RS256", "rsa-1", "{\"sub\": null}"), GW_JWT_NO_TENANT);
    const char *bad[] = { "{\"sub\": \"\"}", "{\"sub\": 42}", "{\"sub\": \"x\\u0001y\"}",
                          "{\"sub\": \"x\\u0000y\"}" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        s_expect (jwks, s_token (s_rsa, "RS256", "rsa-1", bad[i]),
                  i == 3 ? GW_JWT_MALFORMED : GW_JWT_NO_TENANT);
    /* any text is the claim (gw_auth makes a tenant name of it) */
    char tenant[GW_JWT_TENANT_SIZE];
    const char *any[][2] = { {"{\"sub\": \"auth0|123\"}", "auth0|123"},
                             {"{\"sub\": \"..\"}", ".."}, {"{\"sub\": \"a/b\"}", "a/b"},
                             {"{\"sub\": \"\u00e9\"}", "\xc3\xa9"} };
    for (size_t i = 0; i < sizeof any / sizeof any[0]; i++) {
        char *t = s_token (s_rsa, "RS256", "rsa-1", any[i][0]);
        ck_assert_int_eq (s_verify (jwks, t, tenant), GW_JWT_OK);
        ck_assert_str_eq (tenant, any[i][1]);
        free (t);
    }
    char claim[300];
    snprintf (claim, sizeof claim, "{\"sub\": \"%0255d\"}", 7);
    char *token = s_token (s_rsa, "RS256", "rsa-1", claim);
    ck_assert_int_eq (s_verify (jwks, token, tenant), GW_JWT_OK);
    ck_assert_uint_eq (strlen (tenant), 255);
    free (token);
    snprintf (claim, sizeof claim, "{\"sub\": \"%0256d\"}", 7);
    s_expect (jwks, s_token (s_rsa, "RS256", "rsa-1", claim), GW_JWT_NO_TENANT);
    /* another claim names the tenant */
    token = s_token (s_ec, "ES256", "ec-1", "{\"org_id\": \"team-7\"}");
    gw_jwt_expect_t expect = { ISS, AUD, "org_id", NOW, 60 };
    char why[128];
    ck_assert_int_eq (gw_jwt_verify (jwks, token, &expect, tenant, sizeof tenant, why,
                                     sizeof why), GW_JWT_OK);
    ck_assert_str_eq (tenant, "team-7");
    expect.tenant_claim = "tid";
    ck_assert_int_eq (gw_jwt_verify (jwks, token, &expect, tenant, sizeof tenant, why,
                                     sizeof why), GW_JWT_NO_TENANT);
    ck_assert_ptr_nonnull (strstr (why, "tid"));
    free (token);
    gw_jwks_destroy (&jwks);
}
END_TEST

/* Parses a JWKS text; returns the keys (NULL with err when refused). */
static gw_jwks_t *
s_parse (const char *text, char *err)
{
    return gw_jwks_parse (text, strlen (text), err, 256);
}

START_TEST (jwks_skips_what_it_cannot_use)
{
    json_t *enc = s_jwk (s_rsa_other, "enc-1"), *ops = s_jwk (s_rsa_other, "ops-1");
    json_object_set_new (enc, "use", json_string ("enc"));
    json_object_set_new (ops, "key_ops", json_pack ("[s]", "encrypt"));
    json_t *small = s_jwk (s_rsa_small, "small-1"), *off = s_jwk (s_ec, "off-1");
    json_t *hs = json_pack ("{s:s, s:s, s:s}", "kty", "oct", "kid", "oct-1", "k", "c2VjcmV0");
    json_t *okp = json_pack ("{s:s, s:s, s:s, s:s}", "kty", "OKP", "crv", "Ed25519", "kid",
                             "okp-1", "x", "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo");
    json_t *enc_alg = s_jwk (s_rsa_other, "oaep-1");
    json_object_set_new (enc_alg, "alg", json_string ("RSA-OAEP"));
    /* a point off the curve: y of another point */
    json_t *ec2 = s_jwk (s_ec, NULL);
    json_object_set (off, "y", json_object_get (ec2, "x"));
    json_decref (ec2);
    json_t *sig = s_jwk (s_rsa, "rsa-1");
    json_object_set_new (sig, "use", json_string ("sig"));
    json_object_set_new (sig, "d", json_string ("AQAB"));   /* private parts are not read */
    gw_jwks_t *jwks = s_jwks_of (json_pack ("[o,o,o,o,o,o,o,o,o]", enc, ops, small, off, hs,
                                            okp, enc_alg, sig, s_jwk (s_ec, "ec-1")));
    ck_assert_uint_eq (gw_jwks_size (jwks), 2);
    const char *skipped[] = { "enc-1", "ops-1", "small-1", "off-1", "oct-1", "okp-1", "oaep-1" };
    for (int i = 0; i < 7; i++)
        ck_assert_msg (!gw_jwks_has_kid (jwks, skipped[i]), "%s was kept", skipped[i]);
    ck_assert (gw_jwks_has_kid (jwks, "rsa-1") && gw_jwks_has_kid (jwks, "ec-1"));
    s_expect (jwks, s_token (s_rsa_other, "RS256", "enc-1", NULL), GW_JWT_UNKNOWN_KEY);
    s_expect (jwks, s_token (s_rsa_small, "RS256", "small-1", NULL), GW_JWT_UNKNOWN_KEY);
    s_expect (jwks, s_token (s_rsa, "RS256", "rsa-1", NULL), GW_JWT_OK);
    gw_jwks_destroy (&jwks);
    gw_jwks_destroy (&jwks);                                /* NULL-safe */
}
END_TEST

START_TEST (jwks_refused)
{
    char err[256];
    const char *texts[] = {
        "", "not json", "[]", "{\"keys\": {}}", "{}", "{\"keys\": []}",
        "{\"keys\": [{\"kty\": \"oct\", \"k\": \"c2VjcmV0\"}]}",
        "{\"keys\": [{\"kty\": \"RSA\", \"n\": \"AQAB=\", \"e\": \"AQAB\"}]}",
        "{\"keys\": [], \"keys\": []}",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        err[0] = '\0';
        ck_assert_ptr_null (s_parse (texts[i], err));
        ck_assert_msg (strlen (err) > 10, "no reason for %s", texts[i]);
    }
    ck_assert_ptr_nonnull (strstr (err, "not JSON"));
    ck_assert_ptr_null (gw_jwks_parse ("{}", GW_JWKS_MAX_TEXT + 1, err, sizeof err));
    ck_assert_ptr_nonnull (strstr (err, "longer"));
}
END_TEST

START_TEST (strict_base64url)
{
    uint8_t out[16];
    size_t n = 0;
    ck_assert_int_eq (gw_base64url_decode_to ("", 0, out, &n), 0);
    ck_assert_uint_eq (n, 0);
    ck_assert_int_eq (gw_base64url_decode_to ("_-8", 3, out, &n), 0);
    ck_assert_uint_eq (n, 2);
    ck_assert (out[0] == 0xff && out[1] == 0xef);
    ck_assert_int_eq (gw_base64url_decode_to ("QQ", 2, out, &n), 0);      /* "A" */
    ck_assert_int_eq (gw_base64url_decode_to ("QR", 2, out, &n), -EINVAL); /* stray bits */
    ck_assert_int_eq (gw_base64url_decode_to ("QQ==", 4, out, &n), -EINVAL);
    ck_assert_int_eq (gw_base64url_decode_to ("A===", 4, out, &n), -EINVAL);
    ck_assert_int_eq (gw_base64url_decode_to ("QUJD/w", 6, out, &n), -EINVAL);
    ck_assert_int_eq (gw_base64url_decode_to ("QUJDR", 5, out, &n), -EINVAL);
}
END_TEST

Suite *
jwt_suite (void)
{
    Suite *s = suite_create ("jwt");
    TCase *tc = tcase_create ("tokens");
    tcase_add_unchecked_fixture (tc, s_keys_setup, s_keys_teardown);
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, rs256_and_es256_accepted_with_tenant);
    tcase_add_test (tc, audience);
    tcase_add_test (tc, time_and_issuer);
    tcase_add_test (tc, another_key_unknown_kid);
    tcase_add_test (tc, alg_none_and_hmac_refused);
    tcase_add_test (tc, alg_must_fit_the_key);
    tcase_add_test (tc, tampered_and_bad_signatures);
    tcase_add_test (tc, malformed_tokens);
    tcase_add_test (tc, tenant_from_a_claim);
    tcase_add_test (tc, jwks_skips_what_it_cannot_use);
    tcase_add_test (tc, jwks_refused);
    tcase_add_test (tc, strict_base64url);
    suite_add_tcase (s, tc);
    return s;
}
