/* gw_jwt: JWT access tokens (RFC 9068, RFC 7519) checked against the
 * signing keys of an OAuth issuer's JWKS (RFC 7517), for the resource
 * server of CODEBOX_OAUTH_ISSUER. Pure code: no I/O, no clock (the caller
 * gives the time), no logging; the caller fetches and caches the JWKS.
 *
 * Signatures are checked with OpenSSL 3's EVP_DigestVerify with the keys
 * of gw_jwks; the alg is fixed by the key (gw_jws_alg_fits): never "none",
 * never HMAC, RS and PS only with RSA keys, ES256/384/512 only with the
 * curve that goes with each. Keys and key URLs a token's header carries
 * (jwk, jku, x5u, x5c) are never used.
 *
 * Threads: any. gw_jwt_verify may be called from any number of threads at
 * once with the same gw_jwks_t (read-only once parsed). */
#ifndef GW_JWT_H
#define GW_JWT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gw_jwks.h"

/* The longest token gw_jwt_verify looks at. */
#define GW_JWT_MAX_TOKEN 16384

/* The longest tenant claim a token can have, and a buffer for it. */
#define GW_JWT_TENANT_MAX 255
#define GW_JWT_TENANT_SIZE (GW_JWT_TENANT_MAX + 1)

/* What a token must say. issuer and audience must not be NULL (a NULL one
 * refuses every token). */
typedef struct {
    const char *issuer;        /* "iss" must equal it */
    const char *audience;      /* "aud" (a string, or an array) must hold it */
    const char *tenant_claim;  /* the claim naming the tenant, e.g. "sub" */
    int64_t now;               /* seconds since the epoch */
    int leeway_s;              /* clock skew allowed on exp and nbf (60) */
} gw_jwt_expect_t;

typedef enum {
    GW_JWT_OK,
    GW_JWT_MALFORMED,          /* not a compact JWS, bad base64url or JSON, no exp, crit */
    GW_JWT_UNKNOWN_KEY,        /* no key has its kid (or, without one, no single key fits) */
    GW_JWT_BAD_ALG,            /* none, HS*, unknown, or not the key's */
    GW_JWT_BAD_SIGNATURE,
    GW_JWT_BAD_ISSUER,
    GW_JWT_BAD_AUDIENCE,
    GW_JWT_EXPIRED,
    GW_JWT_NOT_YET_VALID,
    GW_JWT_NO_TENANT
} gw_jwt_verdict_t;

/* Checks a compact JWS token (the text after "Bearer "), in this order:
 * its length (over GW_JWT_MAX_TOKEN bytes: MALFORMED, unread); three
 * strict base64url parts; the header (a JSON object; "typ", if present,
 * "JWT" or "at+jwt", case-insensitive, "application/" allowed; no "crit");
 * its "alg"; the key (the header's "kid", or without one the only key
 * whose type fits the alg); the alg against the key (its type and curve,
 * and the JWK's own "alg" when it has one); the signature; then the
 * claims: "iss" equal to expect->issuer, "aud" holding expect->audience,
 * "exp" (required) and "nbf" (if present) with expect->leeway_s of skew
 * ("iat" is not checked); and last the tenant: the string value of
 * expect->tenant_claim, 1 to GW_JWT_TENANT_MAX bytes without control
 * characters, copied into tenant (tenant_len bytes, GW_JWT_TENANT_SIZE or
 * more); anything else is NO_TENANT. It is the claim's text: the caller
 * makes a tenant name of it (gw_auth: "u-" and a hash when it is none).
 *
 * Returns the first failure, with a short sentence in why (why_len bytes)
 * for a WWW-Authenticate error_description: it names the check, never the
 * token's text or a key. On OK, why is "". */
gw_jwt_verdict_t gw_jwt_verify (const gw_jwks_t *keys, const char *token,
                                const gw_jwt_expect_t *expect, char *tenant, size_t tenant_len,
                                char *why, size_t why_len);

/* The verdict's name ("ok", "malformed", "unknown_key", ...), for logs. */
const char *gw_jwt_verdict_name (gw_jwt_verdict_t verdict);

#endif
