/* fuzz_jwt: libFuzzer target for gw_jwks_parse (an issuer's JWKS) and
 * gw_jwt_verify (a bearer token: whoever calls the server controls every
 * byte of it).
 *
 * Input format: the JWKS text, a newline, then the token. Without a
 * newline the whole input is a JWKS. The expectations are fixed: issuer
 * FUZZ_ISS, audience FUZZ_AUD, tenant claim "sub", now FUZZ_NOW, 60 s of
 * leeway (the seeds in corpus/jwt/ are made for them by make_corpus.py).
 *
 * Checked properties (a failure aborts): a refused JWKS says why; a parsed
 * one has keys, each found by its kid; a verdict is one of the enum; OK
 * comes with an empty why and a tenant claim of 1-255 bytes without
 * control characters (gw_auth makes a tenant name of it); every refusal
 * leaves the tenant
 * empty and says why in printable ASCII; the same token gets the same
 * verdict twice. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_jwt.h"

#define FUZZ_ISS "https://issuer.example/"
#define FUZZ_AUD "https://codebox.example/mcp"
#define FUZZ_NOW 1750000000

static void
s_fail (const char *what)
{
    fprintf (stderr, "fuzz_jwt: %s\n", what);
    abort ();
}

static void
s_check_why (const char *why)
{
    if (!why[0])
        s_fail ("a refusal without a reason");
    for (const char *c = why; *c; c++)
        if (*c < 0x20 || *c > 0x7e)
            s_fail ("a reason that is not printable ASCII");
}

static void
s_check_keys (const gw_jwks_t *jwks)
{
    if (gw_jwks_size (jwks) == 0)
        s_fail ("a JWKS with no key was accepted");
    for (size_t i = 0; i < gw_jwks_size (jwks); i++) {
        const gw_jwk_t *key = gw_jwks_key (jwks, i);
        if (!key || !key->pkey || (key->kid && !gw_jwks_has_kid (jwks, key->kid)))
            s_fail ("a key that is not there, or not found by its kid");
        if (key->alg && !gw_jws_alg_fits (key->alg, key))
            s_fail ("a key kept with an alg that does not fit it");
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    const char *text = (const char *) data;
    const char *nl = memchr (text, '\n', size);
    size_t jwks_len = nl ? (size_t) (nl - text) : size;
    char err[256] = "";
    gw_jwks_t *jwks = gw_jwks_parse (text, jwks_len, err, sizeof err);
    if (!jwks) {
        s_check_why (err);
        return 0;
    }
    s_check_keys (jwks);
    if (nl) {
        size_t token_len = size - jwks_len - 1;
        char *token = malloc (token_len + 1);
        memcpy (token, nl + 1, token_len);
        token[token_len] = '\0';
        gw_jwt_expect_t expect = { FUZZ_ISS, FUZZ_AUD, "sub", FUZZ_NOW, 60 };
        char tenant[GW_JWT_TENANT_SIZE] = "x", why[256] = "x";
        gw_jwt_verdict_t v = gw_jwt_verify (jwks, token, &expect, tenant, sizeof tenant, why,
                                            sizeof why);
        if ((unsigned) v > GW_JWT_NO_TENANT)
            s_fail ("a verdict outside the enum");
        if (v == GW_JWT_OK) {
            size_t n = strlen (tenant);
            bool control = false;
            for (size_t i = 0; i < n; i++)
                control |= (unsigned char) tenant[i] < 0x20 || tenant[i] == 0x7f;
            if (why[0] || n == 0 || n > GW_JWT_TENANT_MAX || control)
                s_fail ("an accepted token with a bad tenant or a reason");
        } else {
            if (tenant[0])
                s_fail ("a refused token named a tenant");
            s_check_why (why);
        }
        char tenant2[GW_JWT_TENANT_SIZE], why2[256];
        if (gw_jwt_verify (jwks, token, &expect, tenant2, sizeof tenant2, why2, sizeof why2) != v
            || strcmp (tenant, tenant2) != 0 || strcmp (why, why2) != 0)
            s_fail ("the same token got another verdict");
        free (token);
    }
    gw_jwks_destroy (&jwks);
    return 0;
}
