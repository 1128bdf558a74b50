// MCP 2026-07-28 on the wire, with raw HTTP: server/discover, the _meta
// and header rules and their errors (status and code), cacheable lists,
// Mcp-Param-Session-Id against session_id, tasks (create, get, cancel →
// kernel interrupt, input() through tasks/update, tenancy), and
// subscriptions/listen (task status, resources list changes).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { startServer } from './helpers.js';

const V = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';

function meta(capabilities = {}) {
  return {
    'io.modelcontextprotocol/protocolVersion': V,
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': capabilities,
  };
}

let nextId = 1;

/* One POST; returns { status, headers, messages } (SSE or JSON). */
async function post(url, method, params, { headers = {}, token, caps, raw } = {}) {
  const name = params?.name ?? params?.uri ?? params?.taskId;
  const h = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': V,
    'Mcp-Method': method,
    ...(name !== undefined ? { 'Mcp-Name': name } : {}),
    ...(params?.arguments?.session_id ? { 'Mcp-Param-Session-Id': params.arguments.session_id } : {}),
    ...(token ? { Authorization: `Bearer ${token}` } : {}),
    ...headers,
  };
  for (const [k, v] of Object.entries(h)) if (v === null) delete h[k];
  const body = raw ?? JSON.stringify({ jsonrpc: '2.0', id: nextId++, method,
    params: { ...params, _meta: meta(caps) } });
  const res = await fetch(url, { method: 'POST', headers: h, body });
  const text = await res.text();
  const messages = res.headers.get('content-type')?.includes('text/event-stream')
    ? text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)))
    : text ? [JSON.parse(text)] : [];
  return { status: res.status, headers: res.headers, messages, reply: messages.at(-1) };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/* Polls tasks/get until the task's status is one of want (30 s at most). */
async function waitTask(url, taskId, want, opts = {}) {
  for (let i = 0; i < 300; i++) {
    const { reply } = await post(url, 'tasks/get', { taskId }, { caps: { extensions: { [TASKS]: {} } }, ...opts });
    assert.ok(reply.result, JSON.stringify(reply));
    if (want.includes(reply.result.status)) return reply.result;
    await sleep(100);
  }
  throw new Error(`task ${taskId} never reached ${want}`);
}

describe('MCP 2026-07-28 over raw HTTP', () => {
  let server;
  let url;
  const alice = 'alice-token';

  before(async () => {
    server = await startServer({ env: { CODEBOX_POOL_SIZE: '0',
      CODEBOX_API_TOKENS: `alice:${alice},bob:bob-token` } });
    url = server.url;
  });

  after(async () => {
    if (server) await server.stop();
  });

  test('server/discover: versions of both eras, capabilities, cache hints, no MCP session', async () => {
    const { status, headers, reply } = await post(url, 'server/discover', {}, { token: alice });
    assert.equal(status, 200);
    assert.equal(headers.get('mcp-session-id'), null);
    const r = reply.result;
    assert.equal(r.resultType, 'complete');
    assert.deepEqual(r.supportedVersions.slice(0, 2), [V, '2025-11-25']);
    assert.ok(r.capabilities.tools && r.capabilities.resources.listChanged);
    assert.deepEqual(r.capabilities.extensions, { [TASKS]: {} });
    assert.equal(r._meta['io.modelcontextprotocol/serverInfo'].name, 'codebox');
    assert.ok(Number.isInteger(r.ttlMs) && r.ttlMs >= 0);
  });

  test('the era\'s errors: status and code, in the specification\'s order', async () => {
    const cases = [
      /* no version header at all */
      [{ headers: { 'MCP-Protocol-Version': null } }, 400, -32020],
      /* _meta without its version */
      [{ raw: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} }) }, 400, -32602],
      [{ headers: { 'MCP-Protocol-Version': '2025-11-25' } }, 400, -32020],
      [{ headers: { 'Mcp-Method': 'prompts/list' } }, 400, -32020],
      [{ headers: { 'Mcp-Method': null } }, 400, -32020],
    ];
    for (const [opts, status, code] of cases) {
      const r = await post(url, 'tools/list', {}, { token: alice, ...opts });
      assert.equal(r.status, status, JSON.stringify(opts));
      assert.equal(r.reply.error.code, code, JSON.stringify(r.reply));
      assert.notEqual(r.reply.id, null);
    }
    /* an unknown version: what is supported, what was asked */
    const body = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list',
      params: { _meta: { ...meta(), 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } } });
    const u = await post(url, 'tools/list', {}, { token: alice, raw: body,
      headers: { 'MCP-Protocol-Version': '2099-01-01' } });
    assert.equal(u.status, 400);
    assert.equal(u.reply.error.code, -32022);
    assert.deepEqual(u.reply.error.data, { supported: [V], requested: '2099-01-01' });
    /* the methods the era removed */
    for (const m of ['initialize', 'ping', 'logging/setLevel', 'tasks/list', 'no/such']) {
      const r = await post(url, m, {}, { token: alice });
      assert.equal(r.status, 404, m);
      assert.equal(r.reply.error.code, -32601, m);
    }
    /* Mcp-Name must repeat the tool's name */
    const n = await post(url, 'tools/call', { name: 'list_kernels', arguments: {} },
      { token: alice, headers: { 'Mcp-Name': 'exec_code' } });
    assert.equal(n.status, 400);
    assert.equal(n.reply.error.code, -32020);
    /* a notification is accepted as ever */
    const note = await post(url, 'notifications/cancelled', { requestId: 1 }, { token: alice,
      raw: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }) });
    assert.equal(note.status, 202);
  });

  test('lists carry resultType, ttlMs and cacheScope; tools declare x-mcp-header', async () => {
    for (const [m, scope] of [['tools/list', 'public'], ['prompts/list', 'public'],
      ['resources/list', 'private'], ['resources/templates/list', 'public']]) {
      const { reply } = await post(url, m, {}, { token: alice });
      assert.equal(reply.result.resultType, 'complete', m);
      assert.equal(reply.result.cacheScope, scope, m);
      assert.ok(Number.isInteger(reply.result.ttlMs), m);
    }
    const { reply } = await post(url, 'tools/list', {}, { token: alice });
    for (const t of reply.result.tools)
      if (t.inputSchema.properties?.session_id)
        assert.equal(t.inputSchema.properties.session_id['x-mcp-header'], 'Session-Id', t.name);
    const missing = await post(url, 'resources/read', { uri: 'artifact://nope/x.txt' }, { token: alice });
    assert.equal(missing.reply.error.code, -32602);
    assert.equal(missing.reply.error.data.uri, 'artifact://nope/x.txt');
  });

  test('Mcp-Param-Session-Id must agree with session_id (literal or base64)', async () => {
    const args = { session_id: 'hdr', code: '1' };
    const ok = await post(url, 'tools/call', { name: 'exec_code', arguments: args }, { token: alice });
    assert.equal(ok.reply.result.structuredContent.status, 'completed');
    const b64 = `=?base64?${Buffer.from('hdr').toString('base64')}?=`;
    const ok2 = await post(url, 'tools/call', { name: 'exec_code', arguments: args },
      { token: alice, headers: { 'Mcp-Param-Session-Id': b64 } });
    assert.equal(ok2.reply.result.structuredContent.status, 'completed');
    for (const bad of ['other', null, '=?base64?aGRz?=', '=?base64?aGR!?=']) {
      const r = await post(url, 'tools/call', { name: 'exec_code', arguments: args },
        { token: alice, headers: { 'Mcp-Param-Session-Id': bad } });
      assert.equal(r.status, 400, String(bad));
      assert.equal(r.reply.error.code, -32020, String(bad));
    }
  });

  test('a long call of a client that declared tasks becomes a task; tasks/get gives its result', async () => {
    const caps = { extensions: { [TASKS]: {} } };
    const { reply } = await post(url, 'tools/call', { name: 'exec_code', arguments: {
      session_id: 'task', code: 'import time; time.sleep(2); print("slept")' } }, { token: alice, caps });
    const created = reply.result;
    assert.equal(created.resultType, 'task', JSON.stringify(reply));
    assert.equal(created.status, 'working');
    assert.match(created.createdAt, /^\d{4}-\d\d-\d\dT/);
    assert.ok(created.ttlMs > 0 && created.pollIntervalMs > 0);
    assert.equal(created.result, undefined);
    /* another tenant does not see it */
    const other = await post(url, 'tasks/get', { taskId: created.taskId }, { token: 'bob-token', caps });
    assert.equal(other.reply.error.code, -32602);
    /* a client without the extension may not ask */
    const nocap = await post(url, 'tasks/get', { taskId: created.taskId }, { token: alice });
    assert.equal(nocap.reply.error.code, -32021);
    assert.deepEqual(nocap.reply.error.data, { requiredCapabilities: { extensions: { [TASKS]: {} } } });
    const done = await waitTask(url, created.taskId, ['completed', 'failed', 'cancelled'], { token: alice });
    assert.equal(done.status, 'completed');
    assert.equal(done.result.structuredContent.stdout, 'slept\n');
    assert.equal(done.result.resultType, undefined);
    /* a quick call stays a plain one */
    const quick = await post(url, 'tools/call', { name: 'exec_code', arguments: {
      session_id: 'task', code: 'print(1)' } }, { token: alice, caps });
    assert.equal(quick.reply.result.resultType, 'complete');
    /* a task whose code raised: its result is an error, with the output so far */
    const raising = await post(url, 'tools/call', { name: 'exec_code', arguments: {
      session_id: 'task', code: 'import time; print("before", flush=True); time.sleep(2); 1/0' } },
    { token: alice, caps });
    assert.equal(raising.reply.result.resultType, 'task', JSON.stringify(raising.reply));
    const failed = await waitTask(url, raising.reply.result.taskId,
      ['completed', 'failed', 'cancelled'], { token: alice });
    assert.equal(failed.result.isError, true, JSON.stringify(failed));
    assert.match(failed.result.content[0].text, /before\n[\s\S]*ZeroDivisionError/);
  });

  test('a long exec_sql becomes a task too', async () => {
    const caps = { extensions: { [TASKS]: {} } };
    const query = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c '
      + 'WHERE x < 15000000) SELECT count(*) FROM c';
    const { reply } = await post(url, 'tools/call', { name: 'exec_sql', arguments: {
      session_id: 'sqltask', query } }, { token: alice, caps });
    assert.equal(reply.result.resultType, 'task', JSON.stringify(reply));
    const done = await waitTask(url, reply.result.taskId, ['completed', 'failed', 'cancelled'],
      { token: alice });
    assert.equal(done.status, 'completed');
    assert.deepEqual(done.result.structuredContent.rows, [[15000000]]);
  });

  test('tasks/cancel interrupts the kernel; the session lives on', async () => {
    const caps = { extensions: { [TASKS]: {} } };
    const { reply } = await post(url, 'tools/call', { name: 'exec_code', arguments: {
      session_id: 'cancel', code: 'import time; time.sleep(60)' } }, { token: alice, caps });
    assert.equal(reply.result.resultType, 'task');
    const ack = await post(url, 'tasks/cancel', { taskId: reply.result.taskId }, { token: alice, caps });
    assert.deepEqual(ack.reply.result, { resultType: 'complete' });
    const t = await waitTask(url, reply.result.taskId, ['completed', 'failed', 'cancelled'], { token: alice });
    assert.equal(t.status, 'cancelled');
    const after = await post(url, 'tools/call', { name: 'exec_code', arguments: {
      session_id: 'cancel', code: 'print("alive")' } }, { token: alice });
    assert.equal(after.reply.result.structuredContent.stdout, 'alive\n');
    /* cancel again: still an acknowledgement */
    const again = await post(url, 'tasks/cancel', { taskId: reply.result.taskId }, { token: alice, caps });
    assert.deepEqual(again.reply.result, { resultType: 'complete' });
  });

  test('a task whose code calls input() waits in input_required; tasks/update answers', async () => {
    const caps = { elicitation: {}, extensions: { [TASKS]: {} } };
    const { reply } = await post(url, 'tools/call', { name: 'exec_code', arguments: {
      session_id: 'tin', code: 'import time; time.sleep(1.5); print("got", input("Continue? "))' } },
    { token: alice, caps });
    assert.equal(reply.result.resultType, 'task');
    const waiting = await waitTask(url, reply.result.taskId, ['input_required'], { token: alice });
    const [key] = Object.keys(waiting.inputRequests);
    assert.equal(waiting.inputRequests[key].method, 'elicitation/create');
    assert.equal(waiting.inputRequests[key].params.message, 'Continue? ');
    const ack = await post(url, 'tasks/update', { taskId: reply.result.taskId,
      inputResponses: { [key]: { action: 'accept', content: { value: 'yes' } } } }, { token: alice, caps });
    assert.deepEqual(ack.reply.result, { resultType: 'complete' });
    const done = await waitTask(url, reply.result.taskId, ['completed'], { token: alice });
    assert.equal(done.result.structuredContent.stdout, 'got yes\n');
  });

  test('input() as input_required: a wrong requestState is refused, the right one resumes', async () => {
    const caps = { elicitation: {} };
    const params = { name: 'exec_code', arguments: { session_id: 'mrtr', code: 'print(input("q? "))' } };
    const first = await post(url, 'tools/call', params, { token: alice, caps });
    const r1 = first.reply.result;
    assert.equal(r1.resultType, 'input_required');
    assert.equal(typeof r1.requestState, 'string');
    const tampered = await post(url, 'tools/call', { ...params, requestState: `${r1.requestState}x`,
      inputResponses: { input: { action: 'accept', content: { value: 'no' } } } }, { token: alice, caps });
    assert.equal(tampered.reply.error.code, -32602);
    /* another tenant cannot answer it */
    const bob = await post(url, 'tools/call', { ...params, requestState: r1.requestState,
      inputResponses: { input: { action: 'accept', content: { value: 'bob' } } } }, { token: 'bob-token', caps });
    assert.equal(bob.reply.error.code, -32602);
    /* no answer: asked again */
    const again = await post(url, 'tools/call', { ...params, requestState: r1.requestState,
      inputResponses: { input: 12 } }, { token: alice, caps });
    assert.equal(again.reply.result.resultType, 'input_required');
    const done = await post(url, 'tools/call', { ...params, requestState: r1.requestState,
      inputResponses: { input: { action: 'accept', content: { value: 'yes' } } } }, { token: alice, caps });
    assert.equal(done.reply.result.structuredContent.stdout, 'yes\n');
  });

  test('subscriptions/listen: acknowledged, then task status and resources list changes', async () => {
    const caps = { extensions: { [TASKS]: {} } };
    const { reply } = await post(url, 'tools/call', { name: 'exec_code', arguments: {
      session_id: 'listen', code: 'import time; time.sleep(2.5); open("output/made.txt", "w").write("x")' } },
    { token: alice, caps });
    const taskId = reply.result.taskId;
    assert.ok(taskId, JSON.stringify(reply));
    const ctl = new AbortController();
    const res = await fetch(url, { method: 'POST', signal: ctl.signal, headers: {
      'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': V, 'Mcp-Method': 'subscriptions/listen',
      Authorization: `Bearer ${alice}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'listen:0', method: 'subscriptions/listen', params: {
      _meta: meta(caps), notifications: { resourcesListChanged: true, toolsListChanged: true,
        taskIds: [taskId] } } }) });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /text\/event-stream/);
    const seen = [];
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    const deadline = Date.now() + 15000;
    while (Date.now() < deadline && !(seen.some((m) => m.method === 'notifications/tasks'
        && m.params.status === 'completed')
        && seen.some((m) => m.method === 'notifications/resources/list_changed'))) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (line.startsWith('data: ')) seen.push(JSON.parse(line.slice(6)));
      }
    }
    ctl.abort();
    assert.equal(seen[0].method, 'notifications/subscriptions/acknowledged');
    assert.deepEqual(seen[0].params.notifications, { resourcesListChanged: true, taskIds: [taskId] });
    for (const m of seen) assert.equal(m.params._meta['io.modelcontextprotocol/subscriptionId'], 'listen:0');
    const final = seen.find((m) => m.method === 'notifications/tasks' && m.params.status === 'completed');
    assert.ok(final, JSON.stringify(seen));
    assert.equal(final.params.taskId, taskId);
    assert.ok(seen.some((m) => m.method === 'notifications/resources/list_changed'), JSON.stringify(seen));
    assert.ok(!seen.some((m) => m.method === 'notifications/tools/list_changed'));
  });
});
