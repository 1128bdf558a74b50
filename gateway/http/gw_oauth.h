/* gw_oauth: codebox as an OAuth 2.1 resource server (CODEBOX_OAUTH_ISSUER):
 * the issuer's metadata (RFC 8414, else OpenID discovery) names its
 * jwks_uri; its keys are fetched at start, again every
 * CODEBOX_OAUTH_JWKS_REFRESH seconds (a thread of its own), and at once
 * when a token names a key it does not know (in the caller's thread, at
 * most once per S_UNKNOWN_KID_GAP seconds, bounded by a short timeout). A
 * bearer JWT is checked by gw_jwt: a key of the issuer, its algorithm,
 * iss, aud (CODEBOX_OAUTH_AUDIENCE, default CODEBOX_PUBLIC_URL + /mcp),
 * exp, nbf; the tenant is CODEBOX_OAUTH_TENANT_CLAIM's value. It also
 * makes the protected-resource metadata (RFC 9728) and the 401's
 * WWW-Authenticate value.
 *
 * Threads: made and destroyed by the starting thread; gw_oauth_check and
 * the getters from any thread (the keys are swapped under a lock). */
#ifndef GW_OAUTH_H
#define GW_OAUTH_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

typedef struct gw_oauth gw_oauth_t;

#define GW_OAUTH_CLAIM_MAX 256  /* a tenant claim's value, its end included
                                   (GW_JWT_TENANT_SIZE) */

typedef struct {
    const char *issuer;         /* required */
    const char *audience;       /* "" : public_url + "/mcp" */
    const char *public_url;     /* may be "" when audience is set */
    const char *tenant_claim;   /* "" : "sub" */
    long refresh_s;             /* between key refreshes */
} gw_oauth_settings_t;

/* A resource server for settings; fetches the issuer's metadata and keys
 * (a failure is logged and retried by the refresh thread: tokens are
 * refused until keys come). NULL with a sentence in err for settings that
 * cannot work (an issuer or audience that is not an http(s) URL). */
gw_oauth_t *gw_oauth_new (const gw_oauth_settings_t *settings, char *err, size_t err_len);
void gw_oauth_destroy (gw_oauth_t **self_p);

/* Checks a bearer token. True with the tenant claim's value (in claim,
 * GW_OAUTH_CLAIM_MAX bytes); false with why (a short sentence for
 * error_description, no token text). */
bool gw_oauth_check (gw_oauth_t *self, const char *token, char *claim, size_t claim_len,
                     char *why, size_t why_len);

/* The protected-resource metadata document (new reference). */
json_t *gw_oauth_resource_metadata (const gw_oauth_t *self);

/* The WWW-Authenticate value of a 401: Bearer resource_metadata="..." and,
 * when error is not NULL, error="invalid_token" with error_description. */
void gw_oauth_challenge (const gw_oauth_t *self, const char *error_description, char *out,
                         size_t out_len);

/* True for the protected-resource metadata paths. */
bool gw_oauth_metadata_path (const char *path);

#endif
