// MCP Apps (issue 45, the io.modelcontextprotocol/ui extension): a client
// that declares it sees the tools that run code point at the view
// ui://codebox/outputs.html, reads the view (one self-contained HTML page,
// text/html;profile=mcp-app, no origins in its CSP) and gets each call's
// output items, MIME bundles whole, in the result's _meta; a client that
// does not declare it sees exactly what it saw before. Both eras: the SDK
// client over Streamable HTTP and stdio (initialize), raw 2026-07-28
// requests over HTTP and stdio (the capabilities in each request's _meta),
// tasks and input() round trips included. The outputs are bounded: an
// image over CODEBOX_MAX_IMAGE_BYTES and what passes
// CODEBOX_MCP_APP_OUTPUT_BYTES become a note ("codebox/omitted"), the
// model's content unchanged. The drop-in tool sets' code tools (e2b,
// codebox-ai) get the view too. Needs `make apps` (the view beside the
// binary), which `make mcp-test` runs first.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';

import {
  callTool, CODEBOX_BIN, codeboxEnv, connect, removeDir, startServer, tempDir, textOf,
} from './helpers.js';

const UI = 'io.modelcontextprotocol/ui';
const MIME = 'text/html;profile=mcp-app';
const VIEW = 'ui://codebox/outputs.html';
const APPS_CAPS = { extensions: { [UI]: { mimeTypes: [MIME] } } };
const TASKS = 'io.modelcontextprotocol/tasks';
const T = { timeout: 120000 };
const V = '2026-07-28';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/* One raw POST of the 2026-07-28 era with caps as the request's client
 * capabilities; its last JSON-RPC message. */
let nextId = 1;
async function post(url, method, params, caps = {}) {
  const name = params.name ?? params.uri ?? params.taskId;
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': V, 'Mcp-Method': method,
      ...(name !== undefined ? { 'Mcp-Name': name } : {}),
      ...(params.arguments?.session_id ? { 'Mcp-Param-Session-Id': params.arguments.session_id } : {}) },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: {
      'io.modelcontextprotocol/protocolVersion': V,
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': caps } } }),
  });
  assert.equal(res.status, 200, method);
  const text = await res.text();
  const lines = text.split('\n').filter((l) => l.startsWith('data: '));
  return JSON.parse(lines.length ? lines.at(-1).slice(6) : text);
}

/* The outputs the view gets of a result (throws when there are none). */
function outputsOf(result) {
  const outputs = result._meta?.['codebox/outputs'];
  assert.ok(Array.isArray(outputs), `no outputs in _meta: ${JSON.stringify(result._meta)}`);
  return outputs;
}

/* A cell that shows a chart and prints, for the short checks. */
const SMALL = "from IPython.display import display\n"
  + "display({'application/vnd.vegalite.v5+json': {'mark': 'bar', 'data': {'values': "
  + "[{'a': 'x', 'b': 2}]}}, 'text/plain': 'chart'}, raw=True)\nprint('printed')";

/* Checks that outputs hold SMALL's chart and print. */
function assertSmall(outputs) {
  const chart = outputs.find((o) => o.data?.['application/vnd.vegalite.v5+json']);
  assert.equal(chart?.data['application/vnd.vegalite.v5+json'].mark, 'bar', JSON.stringify(outputs));
  assert.ok(outputs.some((o) => o.type === 'stream' && /printed/.test(o.content)),
    JSON.stringify(outputs));
}


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

  test('2026-07-28: the view is static: hosts may keep it ten minutes, whoever asked', async () => {
    const read = await post(server.url, 'resources/read', { uri: VIEW }, APPS_CAPS);
    assert.equal(read.result.contents[0].mimeType, 'text/html;profile=mcp-app');
    assert.equal(read.result.ttlMs, 600000);
    assert.equal(read.result.cacheScope, 'public');
    const again = await post(server.url, 'resources/read', { uri: VIEW }, {});
    assert.equal(again.result.contents[0].text, read.result.contents[0].text);
    assert.equal(again.result.cacheScope, 'public');
  });

  test('2026-07-28 tasks: a task of a declaring client carries the outputs in tasks/get\'s result', T, async () => {
    const run = async (caps, session) => {
      const created = await post(server.url, 'tools/call', { name: 'exec_code', arguments: {
        session_id: session, code: `import time; time.sleep(2)\n${SMALL}` } }, caps);
      assert.equal(created.result?.resultType, 'task', JSON.stringify(created));
      for (let i = 0; i < 600; i++) {
        const got = await post(server.url, 'tasks/get', { taskId: created.result.taskId }, caps);
        if (got.result.status !== 'working') {
          assert.equal(got.result.status, 'completed', JSON.stringify(got));
          return got.result.result;
        }
        await sleep(100);
      }
      throw new Error('the task never ended');
    };
    const rich = await run({ extensions: { [TASKS]: {}, [UI]: { mimeTypes: [MIME] } } }, 'tapps');
    assertSmall(outputsOf(rich));
    const plain = await run({ extensions: { [TASKS]: {} } }, 'tplain');
    assert.equal(plain._meta?.['codebox/outputs'], undefined, JSON.stringify(plain._meta));
    assert.equal(textOf(rich), textOf(plain));
    assert.match(textOf(rich), /printed/);
  });

  test('2026-07-28 input(): the call resumed with the answer carries the outputs', T, async () => {
    const run = async (caps, session) => {
      const params = { name: 'exec_code', arguments: { session_id: session,
        code: `print('got', input('q? '))\n${SMALL}` } };
      const first = await post(server.url, 'tools/call', params, caps);
      assert.equal(first.result?.resultType, 'input_required', JSON.stringify(first));
      const done = await post(server.url, 'tools/call', { ...params,
        requestState: first.result.requestState,
        inputResponses: { input: { action: 'accept', content: { value: 'yes' } } } }, caps);
      assert.equal(done.result?.isError, false, JSON.stringify(done));
      return done.result;
    };
    const rich = await run({ elicitation: {}, extensions: { [UI]: { mimeTypes: [MIME] } } }, 'iapps');
    const outputs = outputsOf(rich);
    assertSmall(outputs);
    assert.ok(outputs.some((o) => o.type === 'stream' && /got yes/.test(o.content)));
    const plain = await run({ elicitation: {} }, 'iplain');
    assert.equal(plain._meta?.['codebox/outputs'], undefined);
    assert.equal(textOf(rich), textOf(plain));
  });

  test('2026-07-28 input(): a run that ended while it waited (timed out) answers with its outputs too', T, async () => {
    const caps = { elicitation: {}, extensions: { [UI]: { mimeTypes: [MIME] } } };
    const params = { name: 'exec_code', arguments: { session_id: 'iend', timeout: 1,
      code: "print('before', flush=True); input('q? ')" } };
    const first = await post(server.url, 'tools/call', params, caps);
    assert.equal(first.result?.resultType, 'input_required', JSON.stringify(first));
    await sleep(3000);
    const done = await post(server.url, 'tools/call', { ...params,
      requestState: first.result.requestState,
      inputResponses: { input: { action: 'accept', content: { value: 'late' } } } }, caps);
    assert.equal(done.result?.structuredContent?.status, 'timeout', JSON.stringify(done).slice(0, 500));
    const outputs = outputsOf(done.result);
    assert.deepEqual(outputs.map((o) => o.type), ['stream', 'error']);
    assert.equal(outputs[0].content, 'before\n');
  });

  /* A PNG of w x h random pixels (seeded: the same each run), and an
     image over the 256 KiB image limit, one under it, one beside an SVG. */
  const IMAGES = 'import base64, random, struct, zlib\n'
    + 'from IPython.display import display\n'
    + 'def png(w, h, seed):\n'
    + '    random.seed(seed)\n'
    + "    rows = b''.join(b'\\x00' + random.randbytes(w * 3) for _ in range(h))\n"
    + '    def chunk(t, d):\n'
    + "        return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))\n"
    + "    return (b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0))\n"
    + "            + chunk(b'IDAT', zlib.compress(rows)) + chunk(b'IEND', b''))\n"
    + 'b64 = lambda b: base64.b64encode(b).decode()\n'
    + "display({'image/png': b64(png(600, 600, 1)), 'text/plain': '<big>'}, raw=True)\n"
    + "display({'image/png': b64(png(8, 8, 2)), 'text/plain': '<small>'}, raw=True)\n"
    + "display({'image/png': b64(png(500, 500, 3)), 'image/svg+xml': "
    + "'<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"9\" height=\"9\"/>', 'text/plain': '<both>'}, raw=True)\n"
    + "print('end')";

  /* Runs code for both clients (sessions NAME-a and NAME-p); checks that
     the model's content and structuredContent are the same for both (the
     session names aside) and gives the rich result. */
  async function both(code, name) {
    const rich = await callTool(withApps.client, 'exec_code', { session_id: `${name}-a`, code },
      { timeout: 110000 });
    const plain = await callTool(without.client, 'exec_code', { session_id: `${name}-p`, code },
      { timeout: 110000 });
    const same = (v) => JSON.parse(JSON.stringify(v).replaceAll(`${name}-a`, `${name}-p`));
    assert.deepEqual(same(rich.content), plain.content, 'the model reads the same');
    const { duration_ms: d1, ...sc1 } = same(rich.structuredContent);
    const { duration_ms: d2, ...sc2 } = plain.structuredContent;
    assert.deepEqual(sc1, sc2);
    assert.equal(plain._meta?.['codebox/outputs'], undefined);
    return rich;
  }

  test('an image over CODEBOX_MAX_IMAGE_BYTES is a note in _meta; the model still gets its downscaled copy', T, async () => {
    const rich = await both(IMAGES, 'img');
    assert.equal(rich.isError, false, textOf(rich));
    const outputs = outputsOf(rich);
    const [big, small, mixed] = outputs.filter((o) => o.type === 'display');
    assert.equal(big.data['image/png'], undefined, 'the large PNG is not sent twice');
    const omitted = big['codebox/omitted'];
    assert.deepEqual(omitted.mimeTypes, ['image/png'], JSON.stringify(big));
    assert.ok(omitted.bytes > 1000000 && omitted.bytes < 1200000, JSON.stringify(omitted));
    assert.equal(omitted.items, 1);
    assert.match(omitted.text, /image\/png of 1\.\d MB not shown here: over the 262\.1 kB image limit/);
    assert.deepEqual(big.data, { 'text/plain': omitted.text }, 'the note is what a plain view shows');
    assert.match(small.data['image/png'], /^iVBORw0KGgo/, 'a small image stays');
    assert.equal(small['codebox/omitted'], undefined);
    assert.equal(mixed.data['image/png'], undefined);
    assert.match(mixed.data['image/svg+xml'], /^<svg/, 'the SVG beside it stays');
    assert.equal(mixed.data['text/plain'], '<both>');
    assert.deepEqual(mixed['codebox/omitted'].mimeTypes, ['image/png']);
    assert.ok(outputs.some((o) => o.type === 'stream' && o.content === 'end\n'));
    assert.ok(JSON.stringify(outputs).length < 20000, `${JSON.stringify(outputs).length} bytes`);
    /* the model: the large image downscaled with its link, the small one whole */
    const images = rich.content.filter((c) => c.type === 'image');
    assert.equal(images.length, 3, JSON.stringify(rich.content.map((c) => c.type)));
    assert.ok(Buffer.from(images[0].data, 'base64').length <= 262144);
    assert.ok(rich.content.some((c) => c.type === 'resource_link' && c.mimeType === 'image/png'));
  });

  test('outputs past CODEBOX_MCP_APP_OUTPUT_BYTES become one note; later ones that fit still come', T, async () => {
    const code = 'from IPython.display import display, HTML\n'
      + "for i in range(30):\n    display(HTML('<p>part %d</p>' % i + '<b></b>' * 15000))\n"
      + "raise ValueError('boom')";
    const rich = await both(code, 'many');
    assert.equal(rich.isError, true);
    assert.match(textOf(rich), /part 29[\s\S]*ValueError: boom/, 'the model sees all of it');
    const outputs = outputsOf(rich);
    const size = JSON.stringify(outputs).length;
    assert.ok(size <= 2097152 + 4096, `${size} bytes of outputs`);
    const html = outputs.filter((o) => o.data?.['text/html']);
    assert.ok(html.length >= 15 && html.length < 30, `${html.length} HTML outputs kept`);
    assert.match(html[0].data['text/html'], /^<p>part 0<\/p>/);
    const notes = outputs.filter((o) => o['codebox/omitted']);
    assert.equal(notes.length, 1, JSON.stringify(notes));
    const [note] = notes;
    assert.equal(note.type, 'display');
    assert.equal(note['codebox/omitted'].items, 30 - html.length);
    assert.deepEqual([...note['codebox/omitted'].mimeTypes].sort(), ['text/html', 'text/plain']);
    assert.ok(note['codebox/omitted'].bytes > 100000 * (30 - html.length));
    assert.match(note.data['text/plain'], /^\[\d+ outputs \(text\/(html|plain), text\/(html|plain)\) of \d+\.\d MB not shown here: past the 2\.1 MB one call may send this view/);
    assert.equal(outputs.indexOf(note), html.length, 'the note stands where they were');
    assert.equal(outputs.at(-1).type, 'error', 'the error after them still comes');
    assert.equal(outputs.at(-1).evalue, 'boom');
  });
});

describe('MCP Apps over stdio', () => {
  const env = { CODEBOX_POOL_SIZE: '0' };

  test('the SDK client over stdio: declared, it gets the view and the outputs; else nothing', T, async () => {
    const ui = await connect('stdio', { capabilities: APPS_CAPS, env });
    const plain = await connect('stdio', { env });
    try {
      const tools = (await ui.client.listTools()).tools;
      assert.equal(tools.find((t) => t.name === 'exec_code')._meta?.ui?.resourceUri, VIEW);
      const { contents } = await ui.client.readResource({ uri: VIEW });
      assert.equal(contents[0].mimeType, MIME);
      assert.match(contents[0].text, /^<!DOCTYPE html>/);
      const rich = await callTool(ui.client, 'exec_code', { session_id: 's', code: SMALL },
        { timeout: 110000 });
      assertSmall(outputsOf(rich));
      assert.deepEqual((await plain.client.listTools()).tools.filter((t) => t._meta?.ui), []);
      const bare = await callTool(plain.client, 'exec_code', { session_id: 's', code: SMALL },
        { timeout: 110000 });
      assert.equal(bare._meta?.['codebox/outputs'], undefined);
      assert.equal(textOf(bare), textOf(rich));
    } finally {
      await ui.close();
      await plain.close();
    }
  });

  test('raw 2026-07-28 over stdio: each request\'s capabilities decide', T, async () => {
    const dir = tempDir('apps-stdio');
    const proc = spawn(CODEBOX_BIN, ['mcp', '--state-dir', dir], {
      env: codeboxEnv(env), stdio: ['pipe', 'pipe', 'ignore'] });
    const waiting = new Map();
    createInterface({ input: proc.stdout }).on('line', (line) => {
      const msg = JSON.parse(line);
      waiting.get(msg.id)?.(msg);
    });
    let id = 0;
    const ask = (method, params, caps) => new Promise((res) => {
      waiting.set(++id, res);
      proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params,
        _meta: { 'io.modelcontextprotocol/protocolVersion': V,
          'io.modelcontextprotocol/clientCapabilities': caps } } })}\n`);
    });
    try {
      const list = await ask('tools/list', {}, APPS_CAPS);
      assert.equal(list.result.tools.find((t) => t.name === 'exec_code')._meta?.ui?.resourceUri,
        VIEW, JSON.stringify(list).slice(0, 300));
      assert.equal(list.result.cacheScope, 'private');
      const plainList = await ask('tools/list', {}, {});
      assert.equal(plainList.result.tools.find((t) => t.name === 'exec_code')._meta?.ui, undefined);
      const read = await ask('resources/read', { uri: VIEW }, APPS_CAPS);
      assert.equal(read.result.contents[0].mimeType, MIME);
      const call = { name: 'exec_code', arguments: { session_id: 'r', code: SMALL } };
      assertSmall(outputsOf((await ask('tools/call', call, APPS_CAPS)).result));
      const bare = (await ask('tools/call', call, {})).result;
      assert.equal(bare._meta?.['codebox/outputs'], undefined);
    } finally {
      proc.kill('SIGTERM');
      await new Promise((r) => (proc.exitCode !== null ? r() : proc.on('exit', r)));
      removeDir(dir);
    }
  });
});

describe('MCP Apps for the drop-in tool sets', () => {
  test('e2b: execute_code and create_run_close point at the view; their results carry the outputs', T, async () => {
    const server = await startServer({ env: { CODEBOX_POOL_SIZE: '0', CODEBOX_MCP_TOOLS: 'e2b' } });
    const ui = await connect('http', { server, capabilities: APPS_CAPS });
    const plain = await connect('http', { server });
    try {
      const tools = (await ui.client.listTools()).tools;
      assert.deepEqual(tools.filter((t) => t._meta?.ui?.resourceUri === VIEW).map((t) => t.name),
        ['execute_code', 'create_run_close']);
      assert.deepEqual((await plain.client.listTools()).tools.filter((t) => t._meta?.ui), []);
      for (const c of [ui, plain]) {
        const made = await callTool(c.client, 'create_sandbox', { session_id: `e2b-${c === ui}` });
        assert.equal(made.isError, false, textOf(made));
      }
      const rich = await callTool(ui.client, 'execute_code', { session_id: 'e2b-true', code: SMALL },
        { timeout: 110000 });
      assertSmall(outputsOf(rich));
      assert.deepEqual(JSON.parse(textOf(rich)).logs.stdout, ['printed\n'], 'the seed\'s dict as before');
      const bare = await callTool(plain.client, 'execute_code', { session_id: 'e2b-false', code: SMALL },
        { timeout: 110000 });
      assert.equal(bare._meta?.['codebox/outputs'], undefined);
      assert.equal(textOf(bare), textOf(rich));
      const once = await callTool(ui.client, 'create_run_close', { code: SMALL }, { timeout: 110000 });
      assertSmall(outputsOf(once));
      /* 2026-07-28: the request's capabilities decide */
      const list = await post(server.url, 'tools/list', {}, APPS_CAPS);
      assert.equal(list.result.tools.find((t) => t.name === 'execute_code')._meta?.ui?.resourceUri, VIEW);
    } finally {
      await ui.close().catch(() => {});
      await plain.close().catch(() => {});
      await server.stop();
    }
  });

  test('codebox-ai: its one-shot execute_code points at the view and carries the outputs', T, async () => {
    const server = await startServer({ env: { CODEBOX_POOL_SIZE: '0', CODEBOX_MCP_TOOLS: 'codebox-ai' } });
    const ui = await connect('http', { server, capabilities: APPS_CAPS });
    try {
      const [tool] = (await ui.client.listTools()).tools.filter((t) => t.name === 'execute_code');
      assert.equal(tool?._meta?.ui?.resourceUri, VIEW);
      const rich = await callTool(ui.client, 'execute_code', { code: SMALL }, { timeout: 110000 });
      assert.equal(rich.isError, false, textOf(rich));
      assertSmall(outputsOf(rich));
      const bare = (await post(server.url, 'tools/call', { name: 'execute_code',
        arguments: { code: SMALL } }, {})).result;
      assert.equal(bare._meta?.['codebox/outputs'], undefined);
      assert.equal(textOf(bare), textOf(rich));
    } finally {
      await ui.close().catch(() => {});
      await server.stop();
    }
  });
});
