// `codebox mcp` spoken raw in the stateless revision 2026-07-28: no
// initialize, every request with its _meta; a task over stdio (create,
// tasks/get, tasks/cancel), subscriptions/listen with taskIds, ended by
// notifications/cancelled; and a 2025 initialize on the same pipe after.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';

import { CODEBOX_BIN, codeboxEnv, removeDir, tempDir } from './helpers.js';

const T = { timeout: 60000 };
const TASKS = 'io.modelcontextprotocol/tasks';
const meta = (capabilities = {}) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': capabilities,
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

describe('codebox mcp over raw stdio, 2026-07-28', () => {
  let proc;
  let dir;
  const waiting = new Map();
  const notes = [];
  let nextId = 1;

  const ask = (method, params, caps) => {
    const id = nextId++;
    const p = new Promise((res) => waiting.set(JSON.stringify(id), res));
    proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method,
      params: { ...params, _meta: meta(caps) } })}\n`);
    return p;
  };

  before(() => {
    dir = tempDir('stdio-2026');
    proc = spawn(CODEBOX_BIN, ['mcp', '--state-dir', dir], {
      env: codeboxEnv({ CODEBOX_POOL_SIZE: '0' }), stdio: ['pipe', 'pipe', 'ignore'] });
    createInterface({ input: proc.stdout }).on('line', (line) => {
      const msg = JSON.parse(line);
      const key = JSON.stringify(msg.id ?? null);
      if ('id' in msg && waiting.has(key)) {
        waiting.get(key)(msg);
        waiting.delete(key);
      } else notes.push(msg);
    });
  });

  after(() => {
    if (proc.exitCode === null) proc.kill('SIGKILL');
    removeDir(dir);
  });

  test('server/discover needs no handshake', T, async () => {
    const r = await ask('server/discover', {});
    assert.equal(r.result.resultType, 'complete');
    assert.equal(r.result.supportedVersions[0], '2026-07-28');
    const list = await ask('tools/list', {});
    assert.ok(list.result.tools.length > 5);
    assert.equal(list.result.cacheScope, 'public');
  });

  test('a task over stdio: created, followed on a listen stream, done; a cancelled one ends cancelled', T, async () => {
    const caps = { extensions: { [TASKS]: {} } };
    const created = await ask('tools/call', { name: 'exec_code', arguments: {
      session_id: 'st', code: 'import time; time.sleep(2); print("ok")' } }, caps);
    assert.equal(created.result.resultType, 'task', JSON.stringify(created));
    const taskId = created.result.taskId;
    const listenId = nextId;
    const listen = ask('subscriptions/listen', { notifications: { taskIds: [taskId] } }, caps);
    let final;
    for (let i = 0; i < 300 && !final; i++) {
      await sleep(100);
      final = notes.find((n) => n.method === 'notifications/tasks' && n.params.status === 'completed');
    }
    assert.ok(final, JSON.stringify(notes));
    assert.equal(final.params._meta['io.modelcontextprotocol/subscriptionId'], listenId);
    assert.equal(final.params.result.structuredContent.stdout, 'ok\n');
    const ack = notes.find((n) => n.method === 'notifications/subscriptions/acknowledged');
    assert.deepEqual(ack.params.notifications, { taskIds: [taskId] });
    /* the client ends its subscription */
    proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled',
      params: { requestId: listenId } })}\n`);
    const got = await ask('tasks/get', { taskId }, caps);
    assert.equal(got.result.status, 'completed');
    const slow = await ask('tools/call', { name: 'exec_code', arguments: {
      session_id: 'st', code: 'import time; time.sleep(60)' } }, caps);
    assert.equal(slow.result.resultType, 'task');
    const cancel = await ask('tasks/cancel', { taskId: slow.result.taskId }, caps);
    assert.deepEqual(cancel.result, { resultType: 'complete' });
    let status;
    for (let i = 0; i < 100 && status !== 'cancelled'; i++) {
      status = (await ask('tasks/get', { taskId: slow.result.taskId }, caps)).result.status;
      if (status !== 'cancelled') await sleep(100);
    }
    assert.equal(status, 'cancelled');
    assert.equal(await Promise.race([listen, sleep(200).then(() => 'open')]), 'open',
      'a listen has no answer of its own');
  });

  test('a 2025 client on the same pipe still initializes', T, async () => {
    const id = nextId++;
    const p = new Promise((res) => waiting.set(JSON.stringify(id), res));
    proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: {
      protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } })}\n`);
    const r = await p;
    assert.equal(r.result.protocolVersion, '2025-11-25');
  });
});
