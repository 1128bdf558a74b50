// codebox as an OAuth 2.1 resource server (CODEBOX_OAUTH_ISSUER), tested
// against a real OpenID provider (oidc-provider, started by oidc.js) and the
// official SDK's OAuth client: discovery from the 401 (RFC 9728 metadata),
// dynamic registration, authorization code with PKCE and a resource
// indicator, then tools over MCP and REST with the token; tokens that must be
// refused (audience, expiry, nbf, issuer, a key not published, alg none,
// HMAC with the public key, a key dropped from the JWKS); static tokens and
// the Jupyter API beside it.
import assert from 'node:assert/strict';
import { createPublicKey } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

import { startServer, textOf } from './helpers.js';
import { ACCOUNT, OPS_CLIENT, SCOPE, freePort, hmacJwt, newKey, startIssuer, unsignedJwt } from './oidc.js';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const STATIC = 'static-token-beside-oauth';

/* The SDK's OAuthClientProvider as an app would write it, whose "browser"
 * is the issuer's scripted login and consent: redirectToAuthorization walks
 * the authorization URL and keeps the code the redirect brings back. */
class ScriptedOAuthClient {
  constructor(idp) {
    this.idp = idp;
    this.redirectUrl = 'http://127.0.0.1:9/oauth/callback';
    this.info = undefined;
    this.saved = undefined;
    this.verifier = undefined;
    this.authorizationUrl = null;
    this.code = null;
  }

  get clientMetadata() {
    return {
      client_name: 'codebox OAuth test',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: SCOPE,
    };
  }

  clientInformation() { return this.info; }
  saveClientInformation(info) { this.info = info; }
  tokens() { return this.saved; }
  saveTokens(tokens) { this.saved = tokens; }
  saveCodeVerifier(v) { this.verifier = v; }
  codeVerifier() { return this.verifier; }

  async redirectToAuthorization(url) {
    this.authorizationUrl = new URL(url);
    const back = await this.idp.authorize(url, this.redirectUrl);
    const error = back.searchParams.get('error');
    if (error) throw new Error(`authorization refused: ${error} ${back.searchParams.get('error_description')}`);
    this.code = back.searchParams.get('code');
  }
}

/* A raw MCP initialize with an optional bearer token: { status, auth, body }. */
async function initialize(url, token) {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...(token !== undefined ? { Authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {
      protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
  });
  return { status: res.status, auth: res.headers.get('www-authenticate') ?? '', body: await res.text() };
}

async function getJson(url, token) {
  const res = await fetch(url, { headers: token !== undefined ? { Authorization: `Bearer ${token}` } : {} });
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* not JSON: kept as text */ }
  return { status: res.status, auth: res.headers.get('www-authenticate') ?? '', json, text };
}

/* One auth-param of a WWW-Authenticate Bearer challenge, or null. */
function authParam(header, name) {
  const m = new RegExp(`(?:^|[\\s,])${name}="([^"]*)"`).exec(header);
  return m ? m[1] : null;
}

/* A client connected over Streamable HTTP with a fixed bearer token. */
async function connectWithToken(url, token) {
  const client = new Client({ name: 'codebox-oauth-tests', version: '1.0.0' }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

/* The tokens codebox must refuse, each with the reason jose gives for it:
 * the provider's own verification must refuse it too, else the case would
 * test nothing. */
async function forgedTokens(idp, audience) {
  const now = Math.floor(Date.now() / 1000);
  const rsa = idp.keys.find((k) => k.alg === 'RS256');
  const impostor = await newKey('RS256', rsa.kid);
  const claims = { iss: idp.issuer, sub: ACCOUNT, aud: audience, iat: now, nbf: now, exp: now + 600 };
  const pem = createPublicKey({ key: rsa.publicJwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
  return [
    ['another audience', await idp.mint({ aud: `${new URL(audience).origin}/elsewhere` })],
    ['the issuer as audience', await idp.mint({ aud: idp.issuer })],
    ['expired', await idp.mint({ aud: audience, claims: { iat: now - 1200, nbf: now - 1200, exp: now - 600 } })],
    ['not yet valid (nbf)', await idp.mint({ aud: audience, claims: { nbf: now + 600, exp: now + 1200 } })],
    ['another issuer', await idp.mint({ aud: audience, claims: { iss: 'http://127.0.0.1:1' } })],
    ['a key not in the JWKS (same kid)', await idp.mint({ aud: audience, key: impostor })],
    ['alg none', unsignedJwt(claims, { alg: 'none', typ: 'at+jwt', kid: rsa.kid })],
    ['alg none, no kid', unsignedJwt(claims)],
    ['HS256 with the RSA public key as secret', hmacJwt(claims, pem, { alg: 'HS256', typ: 'at+jwt', kid: rsa.kid })],
    ['a broken signature', (await idp.mint({ aud: audience })).replace(/.{8}$/, 'AAAAAAAA')],
    ['not a JWT', 'not-a-jwt'],
  ];
}

describe('the OpenID provider of these tests, by itself', () => {
  let idp;
  const audience = 'http://127.0.0.1:1/mcp';

  before(async () => {
    idp = await startIssuer();
  });

  after(async () => {
    if (idp) await idp.stop();
  });

  test('discovery, public keys only, PKCE S256, registration, resource indicators', async () => {
    const meta = await (await fetch(`${idp.issuer}/.well-known/openid-configuration`)).json();
    assert.equal(meta.issuer, idp.issuer);
    assert.deepEqual(meta.code_challenge_methods_supported, ['S256']);
    assert.ok(meta.registration_endpoint, JSON.stringify(meta));
    assert.ok(meta.jwks_uri.startsWith(idp.issuer));
    const jwks = await (await fetch(meta.jwks_uri)).json();
    assert.deepEqual(jwks.keys.map((k) => k.kid).sort(), idp.keys.map((k) => k.kid).sort());
    for (const k of jwks.keys) assert.equal(k.d, undefined, 'a private part is published');
    /* a registered public client, refused without PKCE, sent on with it */
    const reg = await fetch(meta.registration_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:9/cb'], token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code'], response_types: ['code'], scope: SCOPE }),
    });
    const client = await reg.json();
    assert.equal(reg.status, 201, JSON.stringify(client));
    const ask = (extra) => idp.authorize(`${meta.authorization_endpoint}?${new URLSearchParams({
      response_type: 'code', client_id: client.client_id, redirect_uri: 'http://127.0.0.1:9/cb',
      scope: SCOPE, resource: audience, ...extra })}`, 'http://127.0.0.1:9/cb');
    const refused = await ask({});
    assert.equal(refused.searchParams.get('error'), 'invalid_request', String(refused));
    const plain = await ask({ code_challenge: 'x'.repeat(43), code_challenge_method: 'plain' });
    assert.equal(plain.searchParams.get('error'), 'invalid_request', String(plain));
    const sent = await ask({ code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' });
    assert.ok(sent.searchParams.get('code'), String(sent));
  });

  test('its tokens verify with the published keys; each forged one fails', async () => {
    const keys = createRemoteJWKSet(new URL(`${idp.issuer}/jwks`));
    const verify = (t) => jwtVerify(t, keys, { issuer: idp.issuer, audience, algorithms: ['RS256', 'ES256'] });
    for (const alg of ['RS256', 'ES256']) {
      idp.tokenAlg = alg;
      const issued = await idp.clientCredentials(audience);
      const { payload, protectedHeader } = await verify(issued);
      assert.equal(protectedHeader.alg, alg);
      assert.equal(protectedHeader.kid, idp.keys.find((k) => k.alg === alg).kid);
      assert.equal(payload.sub, OPS_CLIENT.id);
      assert.deepEqual([payload.aud].flat(), [audience]);
    }
    idp.tokenAlg = 'RS256';
    await verify(await idp.mint({ aud: audience }));
    await verify(await idp.mint({ aud: audience, key: idp.keys[1] }));
    for (const [what, token] of await forgedTokens(idp, audience))
      await assert.rejects(verify(token), `${what}: jose accepted it`);
  });

  test('a rotation drops the old key from the JWKS at the same URL', async () => {
    const old = idp.keys[0];
    const fresh = await newKey('RS256');
    idp.setKeys([fresh, idp.keys[1]]);
    const jwks = await (await fetch(`${idp.issuer}/jwks`)).json();
    assert.ok(!jwks.keys.some((k) => k.kid === old.kid));
    assert.ok(jwks.keys.some((k) => k.kid === fresh.kid));
    const token = await idp.clientCredentials(audience);
    assert.equal(decodeProtectedHeader(token).kid, fresh.kid);
  });
});

describe('codebox as an OAuth 2.1 resource server', () => {
  let idp;
  let server;
  let publicUrl;
  let audience;
  let mcpUrl;

  before(async () => {
    idp = await startIssuer();
    const port = await freePort();
    publicUrl = `http://127.0.0.1:${port}`;
    audience = `${publicUrl}/mcp`;
    server = await startServer({
      port,
      env: {
        CODEBOX_POOL_SIZE: '0',
        CODEBOX_OAUTH_ISSUER: idp.issuer,
        CODEBOX_PUBLIC_URL: publicUrl,
        CODEBOX_OAUTH_JWKS_REFRESH: '1',
        CODEBOX_API_TOKENS: `static:${STATIC}`,
      },
    });
    mcpUrl = server.url;
    assert.equal(mcpUrl, audience);
  });

  after(async () => {
    if (server) await server.stop();
    if (idp) await idp.stop();
  });

  test('discovery from the 401: WWW-Authenticate names the metadata, which names the issuer', async () => {
    const r = await initialize(mcpUrl);
    assert.equal(r.status, 401, r.body);
    assert.match(r.auth, /^Bearer\s/i, r.auth);
    const metadataUrl = authParam(r.auth, 'resource_metadata');
    assert.equal(metadataUrl, `${publicUrl}/.well-known/oauth-protected-resource/mcp`, r.auth);
    assert.equal(authParam(r.auth, 'error'), null, `no token sent, yet: ${r.auth}`);
    for (const url of [metadataUrl, `${publicUrl}/.well-known/oauth-protected-resource`]) {
      const m = await getJson(url);
      assert.equal(m.status, 200, `${url}: ${m.text}`);
      assert.equal(m.json.resource, audience);
      assert.deepEqual(m.json.authorization_servers, [idp.issuer]);
      assert.ok(m.json.bearer_methods_supported.includes('header'), m.text);
    }
  });

  test('the SDK\'s OAuth flow end to end, then exec_code and REST with the token', async () => {
    const oauth = new ScriptedOAuthClient(idp);
    const first = new Client({ name: 'codebox-oauth-tests', version: '1.0.0' }, { capabilities: {} });
    const t1 = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: oauth });
    await assert.rejects(first.connect(t1), UnauthorizedError);
    /* the SDK found the issuer from codebox's 401 and registered itself */
    assert.ok(oauth.info?.client_id, 'no dynamic registration');
    const asked = oauth.authorizationUrl;
    assert.equal(asked.origin, idp.issuer);
    assert.equal(asked.searchParams.get('code_challenge_method'), 'S256');
    assert.ok(asked.searchParams.get('code_challenge'));
    assert.equal(asked.searchParams.get('resource'), audience);
    assert.ok(oauth.code, 'the provider gave no code');
    await t1.finishAuth(oauth.code);
    await first.close().catch(() => {});

    const oauthToken = oauth.tokens()?.access_token;
    assert.ok(oauthToken, 'no access token');
    const claims = decodeJwt(oauthToken);
    assert.equal(claims.iss, idp.issuer);
    assert.equal(claims.sub, ACCOUNT);
    assert.deepEqual([claims.aud].flat(), [audience]);
    assert.equal(decodeProtectedHeader(oauthToken).kid, idp.keys[0].kid);

    const client = new Client({ name: 'codebox-oauth-tests', version: '1.0.0' }, { capabilities: {} });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: oauth }));
    try {
      const result = await client.callTool({ name: 'exec_code', arguments: { session_id: 'o1', code: 'print(6*7)' } });
      assert.ok(!result.isError, textOf(result));
      assert.match(textOf(result), /\b42\b/);
    } finally {
      await client.close();
    }

    /* REST with the same token: the session is the account's (tenant = sub) */
    const mine = await getJson(`${publicUrl}/sessions`, oauthToken);
    assert.equal(mine.status, 200, mine.text);
    const o1 = mine.json.sessions.find((s) => s.session_id === 'o1');
    assert.ok(o1, mine.text);
    /* its folder is the tenant's (STATE_DIR/@tenant/id) */
    assert.ok(existsSync(join(server.stateDir, `@${ACCOUNT}`, 'o1')),
              `no ${join(server.stateDir, `@${ACCOUNT}`, 'o1')}`);
    /* another tenant (the static token's) does not see it */
    const theirs = await getJson(`${publicUrl}/sessions`, STATIC);
    assert.equal(theirs.status, 200, theirs.text);
    assert.ok(!theirs.json.sessions.some((s) => s.session_id === 'o1'), theirs.text);
  });

  test('tokens signed with the issuer\'s keys and right claims are accepted (RS256, ES256)', async () => {
    for (const key of idp.keys) {
      const minted = await idp.mint({ aud: audience, key });
      assert.equal((await initialize(mcpUrl, minted)).status, 200, `minted with ${key.alg}`);
    }
    /* aud may be a list; one of its entries is enough */
    const several = await idp.mint({ aud: [`${publicUrl}/elsewhere`, audience] });
    assert.equal((await initialize(mcpUrl, several)).status, 200, 'aud as a list');
    idp.tokenAlg = 'ES256';
    try {
      const issued = await idp.clientCredentials(audience);
      assert.equal(decodeProtectedHeader(issued).alg, 'ES256');
      assert.equal((await initialize(mcpUrl, issued)).status, 200);
      const s = await getJson(`${publicUrl}/sessions`, issued);
      assert.equal(s.status, 200, s.text);
    } finally {
      idp.tokenAlg = 'RS256';
    }
  });

  test('refused tokens: 401 with error="invalid_token", on MCP and REST', async () => {
    const cases = await forgedTokens(idp, audience);
    cases.push(['the provider\'s token for another resource',
      await idp.clientCredentials(`${publicUrl}/elsewhere`)]);
    for (const [what, token] of cases) {
      const r = await initialize(mcpUrl, token);
      assert.equal(r.status, 401, `${what}: ${r.status} ${r.body}`);
      assert.equal(authParam(r.auth, 'error'), 'invalid_token', `${what}: ${r.auth}`);
      assert.equal(authParam(r.auth, 'resource_metadata'),
        `${publicUrl}/.well-known/oauth-protected-resource/mcp`, `${what}: ${r.auth}`);
      const rest = await getJson(`${publicUrl}/sessions`, token);
      assert.equal(rest.status, 401, `${what} over REST: ${rest.status} ${rest.text}`);
    }
  });

  test('a static token of CODEBOX_API_TOKENS still works beside OAuth', async () => {
    const r = await getJson(`${publicUrl}/sessions`, STATIC);
    assert.equal(r.status, 200, r.text);
    const client = await connectWithToken(mcpUrl, STATIC);
    try {
      const result = await client.callTool({ name: 'exec_code', arguments: { session_id: 's1', code: 'print(2+3)' } });
      assert.ok(!result.isError, textOf(result));
      assert.match(textOf(result), /\b5\b/);
    } finally {
      await client.close();
    }
    assert.equal((await getJson(`${publicUrl}/sessions`, 'static-token-but-wrong')).status, 401);
  });

  test('a subject that is no tenant name, or a static tenant\'s name, is a tenant of its own', async () => {
    const sessionsOf = async (token) => (await getJson(`${publicUrl}/sessions`, token)).json.sessions
      .map((x) => x.session_id);
    const make = async (token, id) => {
      const res = await fetch(`${publicUrl}/sessions`, {
        method: 'POST', body: JSON.stringify({ session_id: id }),
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' } });
      assert.ok(res.status === 200 || res.status === 201, await res.text());
    };
    /* Auth0's subjects look like this: accepted, their tenant "u-" and a hash */
    const auth0 = await idp.mint({ aud: audience, claims: { sub: 'auth0|5f1c' } });
    await make(auth0, 'a0');
    const hashed = readdirSync(server.stateDir).filter((n) => /^@u-[0-9a-f]{16}$/.test(n));
    assert.equal(hashed.length, 1, readdirSync(server.stateDir).join(' '));
    assert.ok(existsSync(join(server.stateDir, hashed[0], 'a0')));
    /* a user of the issuer named like the static tenant does not get its sessions */
    const impostor = await idp.mint({ aud: audience, claims: { sub: 'static' } });
    const theirs = await sessionsOf(STATIC);
    assert.ok(theirs.length > 0, 'the static tenant has sessions');
    const seen = await sessionsOf(impostor);
    assert.ok(!seen.some((id) => theirs.includes(id)), `${seen} against ${theirs}`);
    const alsoDefault = await idp.mint({ aud: audience, claims: { sub: 'default' } });
    await make(alsoDefault, 'd0');
    assert.ok(!existsSync(join(server.stateDir, 'd0')), 'not the default tenant');
  });

  test('the Jupyter API takes an OAuth token and refuses none', async () => {
    const token = await idp.clientCredentials(audience);
    const withToken = await getJson(`${publicUrl}/api/kernels`, token);
    assert.equal(withToken.status, 200, withToken.text);
    assert.ok(Array.isArray(withToken.json), withToken.text);
    const without = await getJson(`${publicUrl}/api/kernels`);
    assert.equal(without.status, 401, without.text);
  });

  test('a key dropped from the JWKS: its tokens are refused after a refresh, the new key\'s accepted', async () => {
    const old = idp.keys.find((k) => k.alg === 'RS256');
    const dropped = await idp.clientCredentials(audience);
    assert.equal(decodeProtectedHeader(dropped).kid, old.kid);
    assert.equal((await initialize(mcpUrl, dropped)).status, 200, 'the token before the rotation');

    const fresh = await newKey('RS256');
    idp.setKeys(idp.keys.map((k) => (k === old ? fresh : k)));
    /* CODEBOX_OAUTH_JWKS_REFRESH is 1 s: refused within a few refreshes */
    let r;
    const deadline = Date.now() + 10000;
    do {
      await sleep(1500);
      r = await initialize(mcpUrl, dropped);
    } while (r.status === 200 && Date.now() < deadline);
    assert.equal(r.status, 401, `still accepted 10 s after its key left the JWKS: ${r.body}`);
    assert.equal(authParam(r.auth, 'error'), 'invalid_token', r.auth);
    assert.equal((await getJson(`${publicUrl}/sessions`, dropped)).status, 401);

    const renewed = await idp.clientCredentials(audience);
    assert.equal(decodeProtectedHeader(renewed).kid, fresh.kid);
    assert.equal((await initialize(mcpUrl, renewed)).status, 200, 'the new key\'s token');
  });
});
