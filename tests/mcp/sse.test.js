// The HTTP+SSE transport of 2024-11-05 at /sse, with the SDK's own
// SSEClientTransport (what AutoGen's SseServerParams and older clients
// use): the same tools, images, state between calls, tokens, the Origin
// check, and a stream that closes ends its MCP session.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';

import { callTool, connect, isPng, startServer, textOf, TOOL_NAMES } from './helpers.js';

const T = { timeout: 60000 };

describe('HTTP+SSE (2024-11-05) at /sse', () => {
  let server;
  before(async () => {
    server = await startServer({ env: { CODEBOX_POOL_SIZE: '0' } });
  });
  after(async () => {
    assert.equal(await server.stop(), 0);
  });

  test('tools, state and images over the SDK SSEClientTransport', T, async () => {
    const c = await connect('sse', { server });
    try {
      const { tools } = await c.client.listTools();
      for (const name of TOOL_NAMES)
        assert.ok(tools.some((t) => t.name === name), name);
      let r = await callTool(c.client, 'exec_code', { session_id: 'sse', code: 'x = 6 * 7' });
      assert.equal(r.isError, false, textOf(r));
      r = await callTool(c.client, 'exec_code', { session_id: 'sse', code: 'print(x)' });
      assert.equal(textOf(r).trim(), '42');
      r = await callTool(c.client, 'exec_code', {
        session_id: 'sse',
        code: "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
          + 'plt.plot([1, 2, 3])\nplt.show()',
      });
      const images = r.content.filter((i) => i.type === 'image');
      assert.equal(images.length, 1);
      assert.ok(isPng(images[0].data));
      r = await callTool(c.client, 'exec_code', { session_id: 'sse', code: '1/0' });
      assert.equal(r.structuredContent.error.ename, 'ZeroDivisionError');
    } finally {
      await c.close();
    }
  });

  test('the same transport pointed at /mcp (Code Box\'s AutoGen SseServerParams line)', T,
    async () => {
      // a GET /mcp asking for an event stream without an MCP session is the
      // 2024-11-05 transport (the spec's backwards-compatibility section)
      const client = new Client({ name: 'autogen-like', version: '1.0.0' }, { capabilities: {} });
      await client.connect(new SSEClientTransport(new URL('/mcp', server.url)));
      try {
        const r = await callTool(client, 'exec_code', { session_id: 'at-mcp', code: 'print(6 * 7)' });
        assert.equal(r.isError, false, textOf(r));
        assert.equal(textOf(r).trim(), '42');
      } finally {
        await client.close();
      }
      // Streamable HTTP's own GET (with its session) is still 405
      const init = await fetch(server.url, { method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {
          protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }) });
      const session = init.headers.get('mcp-session-id');
      assert.ok(session);
      const get = await fetch(server.url, { headers: { Accept: 'text/event-stream',
        'Mcp-Session-Id': session } });
      assert.equal(get.status, 405);
    });

  test('raw: endpoint event, 202, unknown session, closed stream', T, async () => {
    const base = new URL(server.url).origin;
    const ctl = new AbortController();
    const res = await fetch(`${base}/sse`, { headers: { Accept: 'text/event-stream' },
      signal: ctl.signal });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /text\/event-stream/);
    const reader = res.body.getReader();
    let text = '';
    while (!/\n\n/.test(text)) text += new TextDecoder().decode((await reader.read()).value);
    const m = /event: endpoint\ndata: (\/messages\?sessionId=([0-9a-f-]+))\n\n/.exec(text);
    assert.ok(m, text);
    const post = (url, body) => fetch(`${base}${url}`, { method: 'POST',
      headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    let r = await post(m[1], { jsonrpc: '2.0', id: 7, method: 'initialize', params: {
      protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    assert.equal(r.status, 202);
    while (!/"id":7/.test(text)) text += new TextDecoder().decode((await reader.read()).value);
    assert.match(text, /event: message\ndata: \{.*"protocolVersion":"2024-11-05"/);
    r = await post('/messages?sessionId=nope', { jsonrpc: '2.0', id: 1, method: 'ping' });
    assert.equal(r.status, 404);
    r = await post('/messages', { jsonrpc: '2.0', id: 1, method: 'ping' });
    assert.equal(r.status, 400);
    // a page of another origin is refused
    r = await fetch(`${base}/sse`, { headers: { Origin: 'http://evil.example' } });
    assert.equal(r.status, 403);
    // closing the stream ends the MCP session
    ctl.abort();
    for (let i = 0; i < 40; i++) {
      r = await post(m[1], { jsonrpc: '2.0', id: 2, method: 'ping' });
      if (r.status === 404) break;
      await new Promise((ok) => setTimeout(ok, 250));
    }
    assert.equal(r.status, 404, 'the session ends with its stream');
  });
});

describe('HTTP+SSE with tokens', () => {
  let server;
  before(async () => {
    server = await startServer({ env: { CODEBOX_POOL_SIZE: '0', CODEBOX_API_TOKENS: 'sekrit' } });
  });
  after(async () => {
    assert.equal(await server.stop(), 0);
  });

  test('a token is needed on /sse and /messages', T, async () => {
    const base = new URL(server.url).origin;
    assert.equal((await fetch(`${base}/sse`)).status, 401);
    assert.equal((await fetch(`${base}/messages?sessionId=x`, { method: 'POST' })).status, 401);
    const c = await connect('sse', { server, headers: { Authorization: 'Bearer sekrit' } });
    try {
      const r = await callTool(c.client, 'exec_code', { session_id: 't', code: 'print(1)' });
      assert.equal(textOf(r).trim(), '1');
    } finally {
      await c.close();
    }
  });
});
