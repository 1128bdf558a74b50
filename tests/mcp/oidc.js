// An OpenID provider for the OAuth tests: the certified `oidc-provider`
// started in-process on 127.0.0.1 and a random port, with dynamic client
// registration, PKCE (S256) required, resource indicators (RFC 8707) whose
// access tokens are JWTs for the resource asked for, client credentials for
// a static client, and an interaction that logs in one fixed account and
// consents by itself, so the whole authorization code flow can be walked
// with plain fetch (`authorize`). Its signing keys are ours (an RS256 and an
// ES256 key): `setKeys` publishes another set at the same URL (a rotation),
// and `mint` signs any token with any key, to forge the tokens a resource
// server must refuse.
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';

import Provider from 'oidc-provider';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';

export const ACCOUNT = 'alice';
export const SCOPE = 'mcp';

/* The static confidential client of the client credentials grant. */
export const OPS_CLIENT = { id: 'ops', secret: 'ops-secret-of-the-oauth-tests' };

let keySerial = 0;

/* A new signing key: { kid, alg, privateKey, publicJwk, privateJwk }.
 * kid defaults to a fresh name; pass one to make a key that impersonates
 * another. */
export async function newKey(alg = 'RS256', kid = `k${++keySerial}-${alg.toLowerCase()}`) {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const base = { kid, alg, use: 'sig' };
  return {
    kid,
    alg,
    privateKey,
    publicKey,
    publicJwk: { ...(await exportJWK(publicKey)), ...base },
    privateJwk: { ...(await exportJWK(privateKey)), ...base },
  };
}

const b64url = (v) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

/* A JWT with the given header and payload and no signature (alg none). */
export function unsignedJwt(payload, header = { alg: 'none', typ: 'at+jwt' }) {
  return `${b64url(header)}.${b64url(payload)}.`;
}

/* A JWT signed with HMAC-SHA256 whose secret is the text given (the
 * algorithm-confusion attack passes an RSA public key's PEM). */
export function hmacJwt(payload, secret, header = { alg: 'HS256', typ: 'at+jwt' }) {
  const input = `${b64url(header)}.${b64url(payload)}`;
  const sig = createHmac('sha256', secret).update(input).digest('base64url');
  return `${input}.${sig}`;
}

/* Our own account store: every subject exists and has only its sub. */
async function findAccount(_ctx, sub) {
  return { accountId: sub, async claims() { return { sub }; } };
}

/* The provider's configuration for a key set. tokenAlg() names the
 * algorithm access tokens are signed with (its first key of that alg). */
function configuration(keys, tokenAlg) {
  return {
    clients: [{
      client_id: OPS_CLIENT.id,
      client_secret: OPS_CLIENT.secret,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
    }],
    jwks: { keys: keys.map((k) => k.privateJwk) },
    cookies: { keys: ['cookie-key-of-the-oauth-tests'] },
    findAccount,
    scopes: ['openid', 'offline_access', SCOPE],
    pkce: { required: () => true },
    ttl: {
      AccessToken: 600, AuthorizationCode: 60, ClientCredentials: 600, Grant: 600,
      IdToken: 600, Interaction: 600, Session: 600,
    },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        /* A token asked for without a resource is for no resource (opaque). */
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => ({
          scope: SCOPE,
          audience: resource,
          accessTokenTTL: 600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: tokenAlg() } },
        }),
      },
    },
  };
}

/* The interaction: logs ACCOUNT in, then grants whatever the client asked
 * for (OIDC scopes, claims and resource scopes); no page, only redirects. */
function autoInteraction(provider) {
  return async (ctx, next) => {
    if (!ctx.path.startsWith('/interaction/')) return next();
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    const { prompt, params, session } = details;
    let result;
    if (prompt.name === 'login') {
      result = { login: { accountId: ACCOUNT } };
    } else if (prompt.name === 'consent') {
      const grant = details.grantId
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
      const d = prompt.details;
      if (d.missingOIDCScope) grant.addOIDCScope(d.missingOIDCScope.join(' '));
      if (d.missingOIDCClaims) grant.addOIDCClaims(d.missingOIDCClaims);
      for (const [resource, scopes] of Object.entries(d.missingResourceScopes ?? {}))
        grant.addResourceScope(resource, scopes.join(' '));
      result = { consent: { grantId: await grant.save() } };
    } else {
      result = { error: 'access_denied', error_description: `no such prompt: ${prompt.name}` };
    }
    const to = await provider.interactionResult(ctx.req, ctx.res, result,
      { mergeWithLastSubmission: false });
    ctx.status = 303;
    ctx.redirect(to);
  };
}

/* A free TCP port of 127.0.0.1 (listen on 0, read it, close). */
export function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

/* Starts the provider. Returns { issuer, port, keys, tokenAlg, setKeys(),
 * authorize(), clientCredentials(), mint(), stop() }. */
export async function startIssuer({ keys } = {}) {
  let handler = null;
  const server = createServer((req, res) => handler(req, res));
  await new Promise((res, rej) => {
    server.once('error', rej);
    server.listen(0, '127.0.0.1', res);
  });
  const { port } = server.address();
  const issuer = `http://127.0.0.1:${port}`;
  const self = {
    issuer,
    port,
    keys: keys ?? [await newKey('RS256'), await newKey('ES256')],
    /* the algorithm of the access tokens it issues from now on */
    tokenAlg: 'RS256',
    provider: null,

    /* Publishes keys instead (a rotation; the old ones are gone from
     * jwks_uri at once). The same URL; clients and grants are not kept. */
    setKeys(newKeys) {
      self.keys = newKeys;
      const provider = new Provider(issuer, configuration(newKeys, () => self.tokenAlg));
      provider.on('server_error', (_ctx, err) => console.error('oidc-provider:', err));
      provider.use(autoInteraction(provider));
      self.provider = provider;
      handler = provider.callback();
    },

    /* What a browser does with the authorization URL: follows redirects
     * (keeping cookies) through login and consent until one goes to
     * redirectUrl; returns that URL (code, state, iss). */
    async authorize(authorizationUrl, redirectUrl) {
      const jar = new Map();
      let url = new URL(authorizationUrl);
      for (let hop = 0; hop < 20; hop++) {
        const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
        const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
        for (const c of res.headers.getSetCookie()) {
          const [pair, ...attrs] = c.split(';');
          const i = pair.indexOf('=');
          const name = pair.slice(0, i).trim();
          const gone = attrs.some((a) => /^\s*expires=.*1970/i.test(a)) || pair.slice(i + 1) === '';
          if (gone) jar.delete(name);
          else jar.set(name, pair.slice(i + 1));
        }
        const location = res.headers.get('location');
        if (res.status < 300 || res.status >= 400 || !location) {
          throw new Error(`the provider answered ${res.status} at ${url}: ${await res.text()}`);
        }
        await res.arrayBuffer().catch(() => {});
        url = new URL(location, url);
        if (url.href.startsWith(String(redirectUrl))) return url;
      }
      throw new Error('the authorization never came back to the redirect URL');
    },

    /* An access token of the client credentials grant for resource, signed
     * with the provider's current key of tokenAlg. */
    async clientCredentials(resource) {
      const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${OPS_CLIENT.id}:${OPS_CLIENT.secret}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope: SCOPE }),
      });
      const body = await res.json();
      if (res.status !== 200) throw new Error(`token endpoint: ${res.status} ${JSON.stringify(body)}`);
      return body.access_token;
    },

    /* A JWT access token with the provider's claims for aud, changed by
     * claims (a value undefined removes the claim), signed with key (default:
     * the provider's first key) under header (kid and alg of the key unless
     * given). */
    async mint({ aud, claims = {}, key = self.keys[0], header = {} } = {}) {
      const now = Math.floor(Date.now() / 1000);
      const payload = {
        iss: issuer, sub: ACCOUNT, aud, iat: now, nbf: now, exp: now + 600,
        jti: `minted-${now}-${Math.random().toString(36).slice(2)}`,
        client_id: 'minted', scope: SCOPE, ...claims,
      };
      for (const [k, v] of Object.entries(payload)) if (v === undefined) delete payload[k];
      return new SignJWT(payload)
        .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'at+jwt', ...header })
        .sign(key.privateKey);
    },

    async stop() {
      server.closeAllConnections?.();
      await new Promise((res) => server.close(res));
    },
  };
  self.setKeys(self.keys);
  return self;
}
