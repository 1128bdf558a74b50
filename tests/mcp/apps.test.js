// MCP Apps (issue 45, the io.modelcontextprotocol/ui extension): a client
// that declares it sees exec_code and the one-shot tools point at the view
// ui://codebox/outputs.html, reads the view (one self-contained HTML page,
// text/html;profile=mcp-app, no origins in its CSP) and gets each call's
// output items, MIME bundles whole, in the result's _meta; a client that
// does not declare it sees exactly what it saw before. Both eras: the SDK
// client over Streamable HTTP (initialize), raw 2026-07-28 requests (the
// capabilities in each request's _meta). Needs `make apps` (the view
// beside the binary), which `make mcp-test` runs first.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { callTool, connect, startServer, textOf } from './helpers.js';

const UI = 'io.modelcontextprotocol/ui';
const MIME = 'text/html;profile=mcp-app';
const VIEW = 'ui://codebox/outputs.html';
const APPS_CAPS = { extensions: { [UI]: { mimeTypes: [MIME] } } };
const T = { timeout: 120000 };

const CELL = 'import pandas as pd\n'
  + 'from IPython.display import display\n'
  + "display({'application/vnd.plotly.v1+json': {'data': [{'type': 'bar', 'x': ['a', 'b'], "
  + "'y': [1, 3]}], 'layout': {}}, 'text/plain': 'Figure()'}, raw=True)\n"
  + "pd.DataFrame({'city': ['Lyon', 'Oslo'], 'temp': [14.2, 3.9]})";

describe('MCP Apps', () => {
  let server;
  let withApps;
  let without;

  before(async () => {
    server = await startServer({ env: { CODEBOX_POOL_SIZE: '0' } });
    withApps = await connect('http', { server, capabilities: APPS_CAPS });
    without = await connect('http', { server });
  });

  after(async () => {
    for (const c of [withApps, without]) if (c) await c.close().catch(() => {});
    if (server) await server.stop();
  });

  test('tools/list: the code tools point at the view, only for a client that declared it', async () => {
    const tools = (await withApps.client.listTools()).tools;
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    for (const name of ['exec_code', 'run_python_code', 'run_javascript_code'])
      assert.equal(byName[name]?._meta?.ui?.resourceUri, VIEW, name);
    assert.equal(byName.list_files?._meta?.ui, undefined, 'a file tool has no view');
    const plain = (await without.client.listTools()).tools;
    assert.deepEqual(plain.filter((t) => t._meta?.ui).map((t) => t.name), []);
    assert.deepEqual(plain.map((t) => t.name), tools.map((t) => t.name));
  });

  test('resources/read: the view is one self-contained HTML page asking for no origin', async () => {
    const { contents } = await withApps.client.readResource({ uri: VIEW });
    assert.equal(contents.length, 1);
    const [view] = contents;
    assert.equal(view.uri, VIEW);
    assert.equal(view.mimeType, MIME);
    assert.match(view.text, /^<!DOCTYPE html>/);
    assert.ok(view.text.length > 100000, `a page of ${view.text.length} bytes has no libraries`);
    assert.doesNotMatch(view.text, /<script[^>]+src=|<link[^>]+href=/i, 'it loads nothing');
    const csp = view._meta?.ui?.csp;
    assert.ok(csp, JSON.stringify(view._meta));
    assert.deepEqual([csp.connectDomains, csp.resourceDomains, csp.frameDomains], [[], [], []]);
  });

  test('exec_code: the outputs come whole in _meta for the view; the model\'s content is unchanged', T, async () => {
    const rich = await callTool(withApps.client, 'exec_code', { session_id: 'apps', code: CELL },
      { timeout: 110000 });
    assert.equal(rich.isError, false, textOf(rich));
    const outputs = rich._meta?.['codebox/outputs'];
    assert.ok(Array.isArray(outputs), JSON.stringify(rich._meta));
    const plotly = outputs.find((o) => o.type === 'display');
    assert.deepEqual(plotly?.data?.['application/vnd.plotly.v1+json']?.data?.[0]?.y, [1, 3],
      JSON.stringify(plotly));
    const frame = outputs.find((o) => o.type === 'result');
    assert.match(frame?.data?.['text/html'] ?? '', /<table[\s\S]*Lyon[\s\S]*Oslo/);
    const plain = await callTool(without.client, 'exec_code', { session_id: 'plain', code: CELL },
      { timeout: 110000 });
    assert.equal(plain.isError, false, textOf(plain));
    assert.equal(plain._meta?.['codebox/outputs'], undefined, 'no outputs for a plain client');
    assert.equal(textOf(rich), textOf(plain).replace(/plain/g, 'apps'));
    assert.match(textOf(rich), /city\s+temp\n0\s+Lyon\s+14\.2/, textOf(rich));
  });

  test('2026-07-28: the capabilities of each request decide, and such a list is private', async () => {
    const list = async (caps) => {
      const res = await fetch(server.url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/list' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': caps } } }),
      });
      assert.equal(res.status, 200);
      const text = await res.text();
      const line = text.split('\n').find((l) => l.startsWith('data: '));
      return JSON.parse(line ? line.slice(6) : text).result;
    };
    const ui = await list(APPS_CAPS);
    assert.equal(ui.tools.find((t) => t.name === 'exec_code')._meta?.ui?.resourceUri, VIEW);
    assert.equal(ui.cacheScope, 'private');
    const plain = await list({});
    assert.equal(plain.tools.find((t) => t.name === 'exec_code')._meta?.ui, undefined);
    assert.equal(plain.cacheScope, 'public');
    const other = await list({ extensions: { [UI]: { mimeTypes: ['text/uri-list'] } } });
    assert.equal(other.tools.find((t) => t.name === 'exec_code')._meta?.ui, undefined,
      'a host that renders no HTML gets no view');
  });
});
