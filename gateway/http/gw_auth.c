/* gw_auth: token list parsing and constant-time checks, and bearer JWTs
 * handed to gw_oauth when an issuer is set. Any thread after start-up
 * (read-only here; gw_oauth locks what it refreshes). */
#include "gw_auth.h"
#include "gw_id.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "gw_oauth.h"

typedef struct {
    char tenant[GW_ID_SIZE];
    unsigned char digest[SHA256_DIGEST_LENGTH];   /* of the token */
} s_token_t;

struct gw_auth {
    s_token_t *tokens;
    size_t n;
    gw_oauth_t *oauth;          /* or NULL */
};

static bool
s_valid_tenant (const char *s, size_t n)
{
    if (n == 0 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum ((unsigned char) s[i]) && s[i] != '_' && s[i] != '.' && s[i] != '-')
            return false;
    return true;
}

gw_auth_t *
gw_auth_new (const char *tokens, char *err, size_t err_len)
{
    gw_auth_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    if (!tokens || !*tokens)
        return self;
    char *copy = strdup (tokens), *save = NULL;
    size_t max = 1;
    for (const char *p = tokens; *p; p++)
        max += *p == ',';
    self->tokens = calloc (max, sizeof *self->tokens);
    bool ok = copy && self->tokens;
    int index = 0;
    for (char *item = copy ? strtok_r (copy, ",", &save) : NULL; ok && item;
         item = strtok_r (NULL, ",", &save), index++) {
        while (isspace ((unsigned char) *item))
            item++;
        size_t len = strlen (item);
        while (len && isspace ((unsigned char) item[len - 1]))
            item[--len] = '\0';
        char *colon = strchr (item, ':');
        const char *token = colon ? colon + 1 : item;
        s_token_t *t = &self->tokens[self->n];
        if (colon && !s_valid_tenant (item, (size_t) (colon - item))) {
            snprintf (err, err_len, "CODEBOX_API_TOKENS: entry %d has a bad tenant name "
                      "(use 1-64 of A-Z a-z 0-9 _ . -)", index + 1);
            ok = false;
        } else if (!*token) {
            snprintf (err, err_len, "CODEBOX_API_TOKENS: entry %d has an empty token", index + 1);
            ok = false;
        } else {
            snprintf (t->tenant, sizeof t->tenant, "%.*s",
                      colon ? (int) (colon - item) : 7, colon ? item : "default");
            SHA256 ((const unsigned char *) token, strlen (token), t->digest);
            self->n++;
        }
    }
    if (ok && self->n == 0) {
        snprintf (err, err_len, "CODEBOX_API_TOKENS holds no token");
        ok = false;
    }
    free (copy);
    if (!ok)
        gw_auth_destroy (&self);
    return self;
}

void
gw_auth_destroy (gw_auth_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    if ((*self_p)->tokens)
        OPENSSL_cleanse ((*self_p)->tokens, (*self_p)->n * sizeof (s_token_t));
    free ((*self_p)->tokens);
    gw_oauth_destroy (&(*self_p)->oauth);
    free (*self_p);
    *self_p = NULL;
}

void
gw_auth_set_oauth (gw_auth_t *self, gw_oauth_t *oauth)
{
    gw_oauth_destroy (&self->oauth);
    self->oauth = oauth;
}

gw_oauth_t *
gw_auth_oauth (const gw_auth_t *self)
{
    return self ? self->oauth : NULL;
}

bool
gw_auth_enabled (const gw_auth_t *self)
{
    return self->n > 0 || self->oauth;
}

/* A tenant from a token's claim: the value where it is a tenant name that
 * no static token has (nor "default", theirs without a name), else "u-"
 * and 16 hex digits of its SHA-256 (an e-mail address, "auth0|123"...):
 * any subject is a tenant of its own, none makes a path, and no user of
 * the issuer, whatever name they chose, shares a static tenant. */
static void
s_claim_tenant (const gw_auth_t *self, const char *value, char *tenant, size_t tenant_len)
{
    bool taken = strcmp (value, "default") == 0;
    for (size_t i = 0; i < self->n && !taken; i++)
        taken = strcmp (value, self->tokens[i].tenant) == 0;
    if (!taken && s_valid_tenant (value, strlen (value))) {
        snprintf (tenant, tenant_len, "%s", value);
        return;
    }
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256 ((const unsigned char *) value, strlen (value), digest);
    snprintf (tenant, tenant_len, "u-");
    for (int i = 0; i < 8 && 2 + 2 * (size_t) i + 2 < tenant_len; i++)
        snprintf (tenant + 2 + 2 * i, 3, "%02x", digest[i]);
}

bool
gw_auth_check (const gw_auth_t *self, const char *authorization, char *tenant,
               size_t tenant_len, char *challenge, size_t challenge_len)
{
    if (challenge_len)
        challenge[0] = '\0';
    if (self->n == 0 && !self->oauth) {
        snprintf (tenant, tenant_len, "default");
        return true;
    }
    /* "Bearer T", or Jupyter's "token T" */
    const char *token = NULL;
    if (authorization && strncasecmp (authorization, "Bearer ", 7) == 0)
        token = authorization + 7;
    else if (authorization && strncasecmp (authorization, "token ", 6) == 0)
        token = authorization + 6;
    while (token && *token == ' ')
        token++;
    if (!token || !*token) {
        if (self->oauth)
            gw_oauth_challenge (self->oauth, NULL, challenge, challenge_len);
        return false;
    }
    /* comparing digests keeps the time independent of the token's length */
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256 ((const unsigned char *) token, strlen (token), digest);
    int found = -1;
    for (size_t i = 0; i < self->n; i++)
        if (CRYPTO_memcmp (digest, self->tokens[i].digest, sizeof digest) == 0)
            found = (int) i;
    if (found >= 0) {
        snprintf (tenant, tenant_len, "%s", self->tokens[found].tenant);
        return true;
    }
    if (!self->oauth)
        return false;
    char claim[GW_OAUTH_CLAIM_MAX], why[160] = "";
    if (gw_oauth_check (self->oauth, token, claim, sizeof claim, why, sizeof why)) {
        s_claim_tenant (self, claim, tenant, tenant_len);
        return true;
    }
    gw_oauth_challenge (self->oauth, why[0] ? why : "the token was refused", challenge,
                        challenge_len);
    return false;
}
