/* gw_auth: bearer tokens and the tenants they belong to, from
 * CODEBOX_API_TOKENS ("token" or "tenant:token", comma-separated), and,
 * with CODEBOX_OAUTH_ISSUER, the issuer's JWT access tokens (gw_oauth),
 * whose tenant claim names the tenant. With neither every caller is the
 * tenant "default". Tokens are compared in constant time and never
 * logged. Built at start-up, then read-only: any thread may check. */
#ifndef GW_AUTH_H
#define GW_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "gw_oauth.h"

typedef struct gw_auth gw_auth_t;

/* Parses the token list (NULL or "" = no tokens). Returns NULL with a
 * sentence in err for an empty token or tenant name, or a tenant name
 * outside [A-Za-z0-9_.-]. */
gw_auth_t *gw_auth_new (const char *tokens, char *err, size_t err_len);
void gw_auth_destroy (gw_auth_t **self_p);

/* Accepts the issuer's tokens too (oauth taken; destroyed with self). */
void gw_auth_set_oauth (gw_auth_t *self, gw_oauth_t *oauth);
/* The resource server, or NULL. */
gw_oauth_t *gw_auth_oauth (const gw_auth_t *self);

/* True when tokens are configured (static or OAuth). */
bool gw_auth_enabled (const gw_auth_t *self);

/* Checks an Authorization header value (may be NULL): "Bearer T", or
 * "token T" as Jupyter's clients send it: a static token, else the
 * issuer's JWT. On success writes the tenant into tenant (tenant_len
 * bytes) and returns true (a claim that is no tenant name, or a static
 * token's tenant, or "default", becomes "u-" and 16 hex digits of its
 * SHA-256). On failure challenge holds the
 * WWW-Authenticate value to send ("" : plain "Bearer"). */
bool gw_auth_check (const gw_auth_t *self, const char *authorization, char *tenant,
                    size_t tenant_len, char *challenge, size_t challenge_len);

#endif
