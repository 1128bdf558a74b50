// The Streamable HTTP transport of codebox at /mcp, spoken raw with fetch:
// session ids, status codes, DNS-rebinding checks, notifications, SSE
// replies and the JSON types of ids and progress tokens.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { readMessages, startServer } from './helpers.js';

const T = { timeout: 30000 };
const VERSION = '2025-11-25';

describe('Streamable HTTP at /mcp, raw', () => {
  let server;

  const post = (body, headers = {}) =>
    fetch(server.url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  /* initialize + notifications/initialized; resolves with the session id. */
  async function openSession() {
    const r = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: VERSION,
        capabilities: {},
        clientInfo: { name: 'raw-fetch', version: '1.0.0' },
      },
    });
    assert.equal(r.status, 200);
    const [msg] = await readMessages(r);
    assert.equal(msg.result.protocolVersion, VERSION);
    const session = r.headers.get('mcp-session-id');
    assert.ok(session, 'initialize issues Mcp-Session-Id');
    const n = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, {
      'Mcp-Session-Id': session,
      'MCP-Protocol-Version': VERSION,
    });
    assert.equal(n.status, 202);
    return session;
  }

  const inSession = (session) => ({ 'Mcp-Session-Id': session, 'MCP-Protocol-Version': VERSION });

  before(async () => {
    server = await startServer();
  });

  after(async () => {
    if (server) await server.stop();
  });

  test('POST of a request without Mcp-Session-Id is 400', T, async () => {
    const r = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.equal(r.status, 400);
    assert.match(await r.text(), /Mcp-Session-Id/);
  });

  test('an unknown Mcp-Session-Id is 404', T, async () => {
    const r = await post({ jsonrpc: '2.0', id: 1, method: 'ping' },
      inSession('00000000-0000-0000-0000-000000000000'));
    assert.equal(r.status, 404);
  });

  test('GET /mcp is 405 with Allow', T, async () => {
    const session = await openSession();
    const r = await fetch(server.url, {
      headers: { Accept: 'text/event-stream', ...inSession(session) },
    });
    assert.equal(r.status, 405);
    assert.match(r.headers.get('allow') ?? '', /POST/);
  });

  test('DELETE ends the MCP session; later requests get 404', T, async () => {
    const session = await openSession();
    const ok = await post({ jsonrpc: '2.0', id: 2, method: 'ping' }, inSession(session));
    assert.equal(ok.status, 200);
    const d = await fetch(server.url, { method: 'DELETE', headers: inSession(session) });
    assert.ok(d.status === 200 || d.status === 204, `DELETE status ${d.status}`);
    const after = await post({ jsonrpc: '2.0', id: 3, method: 'ping' }, inSession(session));
    assert.equal(after.status, 404);
    const again = await fetch(server.url, { method: 'DELETE', headers: inSession(session) });
    assert.equal(again.status, 404);
  });

  test('an Origin of http://evil.example is 403', T, async () => {
    const r = await post({
      jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    }, { Origin: 'http://evil.example' });
    assert.equal(r.status, 403);
    assert.equal(r.headers.get('mcp-session-id'), null, 'no session for a refused request');
    const local = await post({
      jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    }, { Origin: `http://localhost:${server.port}` });
    assert.equal(local.status, 200, 'a local Origin is fine');
  });

  test('a Host that is not a local name is refused', T, async () => {
    // fetch does not let us set Host; node:http does
    const { request } = await import('node:http');
    const status = await new Promise((res, rej) => {
      const req = request({
        host: '127.0.0.1', port: server.port, path: '/mcp', method: 'POST',
        headers: {
          Host: 'evil.example', 'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
        },
      }, (r) => {
        r.resume();
        res(r.statusCode);
      });
      req.on('error', rej);
      req.end(JSON.stringify({
        jsonrpc: '2.0', id: 1, method: 'initialize',
        params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }));
    });
    assert.ok(status >= 400 && status < 500, `status ${status}`);
  });

  test('a notification is 202 with no body', T, async () => {
    const session = await openSession();
    const r = await post({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
      inSession(session));
    assert.equal(r.status, 202);
    assert.equal(await r.text(), '');
    const cancel = await post({
      jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 12345 },
    }, inSession(session));
    assert.equal(cancel.status, 202, 'cancelling an unknown request is harmless');
  });

  test('request id 0 comes back as the number 0, a string id as a string', T, async () => {
    const session = await openSession();
    const zero = await readMessages(await post({ jsonrpc: '2.0', id: 0, method: 'ping' },
      inSession(session)));
    assert.deepEqual(zero, [{ jsonrpc: '2.0', id: 0, result: {} }]);
    const str = await readMessages(await post({ jsonrpc: '2.0', id: '7', method: 'ping' },
      inSession(session)));
    assert.deepEqual(str, [{ jsonrpc: '2.0', id: '7', result: {} }]);
    // and on an SSE reply (tools/call)
    const sse = await post({
      jsonrpc: '2.0', id: 0, method: 'tools/call',
      params: { name: 'list_kernels', arguments: {} },
    }, inSession(session));
    assert.equal(sse.status, 200);
    const msgs = await readMessages(sse);
    const response = msgs.find((m) => 'result' in m || 'error' in m);
    assert.strictEqual(response.id, 0);
    assert.equal(response.result.isError, false);
  });

  test('progress over SSE echoes the progressToken with its JSON type', T, async () => {
    const session = await openSession();
    const call = (id, token) => post({
      jsonrpc: '2.0', id, method: 'tools/call',
      params: {
        name: 'exec_code',
        arguments: {
          session_id: 'raw-progress',
          code: 'import time\nfor i in range(4):\n    print(i, flush=True)\n    time.sleep(0.3)',
        },
        _meta: { progressToken: token },
      },
    }, inSession(session));
    for (const [id, token] of [[10, 0], [11, 'tok-1']]) {
      const r = await call(id, token);
      assert.match(r.headers.get('content-type') ?? '', /text\/event-stream/);
      const msgs = await readMessages(r);
      const progress = msgs.filter((m) => m.method === 'notifications/progress');
      assert.ok(progress.length >= 2, `progress notes: ${JSON.stringify(msgs)}`);
      for (const p of progress) assert.strictEqual(p.params.progressToken, token);
      const last = msgs[msgs.length - 1];
      assert.strictEqual(last.id, id, 'the response comes last');
      assert.equal(last.result.structuredContent.stdout, '0\n1\n2\n3\n');
    }
  });

  test('a client that drops its SSE stream mid-call has the execution interrupted', T, async () => {
    const session = await openSession();
    const run = (id, code, signal) => fetch(server.url, {
      method: 'POST',
      signal,
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        ...inSession(session),
      },
      body: JSON.stringify({
        jsonrpc: '2.0', id, method: 'tools/call',
        params: { name: 'exec_code', arguments: { session_id: 'raw-gone', code } },
      }),
    }).then(readMessages);
    await run(20, 'mark = 7');
    const controller = new AbortController();
    const pending = run(21, 'import time\nwhile True:\n    time.sleep(0.05)', controller.signal);
    setTimeout(() => controller.abort(), 1500);
    await assert.rejects(pending);
    // the next call in the session must not wait behind the abandoned one
    const patience = new AbortController();
    const timer = setTimeout(() => patience.abort(), 5000);
    const t0 = Date.now();
    let msgs;
    try {
      msgs = await run(22, 'print(mark)', patience.signal);
    } catch {
      assert.fail('no answer within 5 s: the abandoned execution was not interrupted');
    } finally {
      clearTimeout(timer);
    }
    assert.ok(Date.now() - t0 < 5000);
    assert.equal(msgs[msgs.length - 1].result.structuredContent.stdout, '7\n');
  });

  test('JSON-RPC errors: parse error, invalid request, unknown method', T, async () => {
    const session = await openSession();
    const parse = await readMessages(await post('{"jsonrpc": "2.0", "id": 1, "method"',
      inSession(session)));
    assert.equal(parse[0].error.code, -32700);
    assert.strictEqual(parse[0].id, null);
    const invalid = await readMessages(await post({ jsonrpc: '1.0', id: 5, method: 'ping' },
      inSession(session)));
    assert.equal(invalid[0].error.code, -32600);
    const unknown = await readMessages(await post({ jsonrpc: '2.0', id: 6, method: 'no/such/method' },
      inSession(session)));
    assert.deepEqual(unknown[0].id, 6);
    assert.equal(unknown[0].error.code, -32601);
  });

  test('an unsupported MCP-Protocol-Version is 400', T, async () => {
    const session = await openSession();
    const r = await post({ jsonrpc: '2.0', id: 1, method: 'ping' },
      { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '1999-01-01' });
    assert.equal(r.status, 400);
  });

  test('initialize negotiates down to 2025-06-18 and 2025-03-26', T, async () => {
    for (const version of ['2025-06-18', '2025-03-26']) {
      const r = await post({
        jsonrpc: '2.0', id: 1, method: 'initialize',
        params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      });
      const [msg] = await readMessages(r);
      assert.equal(msg.result.protocolVersion, version);
    }
    const r = await post({
      jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2099-01-01', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    });
    const [msg] = await readMessages(r);
    assert.equal(msg.result.protocolVersion, VERSION, 'an unknown version gets the newest');
  });
});
