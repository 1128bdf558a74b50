// `codebox mcp` spoken raw over its pipes: one JSON-RPC message per line on
// stdout and nothing else there, ids echoed with their JSON type, errors
// for bad input, and a clean exit at end of input.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';

import { CODEBOX_BIN, codeboxEnv, removeDir, tempDir } from './helpers.js';

const T = { timeout: 30000 };

describe('codebox mcp over raw stdio', () => {
  let proc;
  let dir;
  let stderr = '';
  const waiting = new Map();     // id (as JSON) -> resolve
  const stray = [];              // lines that are not JSON, or unexpected messages
  let exited;

  const send = (msg) => proc.stdin.write(`${typeof msg === 'string' ? msg : JSON.stringify(msg)}\n`);
  const reply = (id) => new Promise((res) => waiting.set(JSON.stringify(id), res));
  const ask = (msg) => {
    const p = reply(msg.id);
    send(msg);
    return p;
  };

  before(async () => {
    dir = tempDir('raw-stdio');
    proc = spawn(CODEBOX_BIN, ['mcp', '--state-dir', dir], {
      env: codeboxEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    exited = new Promise((res) => proc.on('exit', (code, signal) => res(code ?? signal)));
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', (c) => {
      stderr += c;
    });
    createInterface({ input: proc.stdout }).on('line', (line) => {
      let msg;
      try {
        msg = JSON.parse(line);
      } catch {
        stray.push(line);
        return;
      }
      const key = JSON.stringify(msg.id ?? null);
      if ('id' in msg && waiting.has(key)) {
        waiting.get(key)(msg);
        waiting.delete(key);
      } else if (!msg.method) {
        stray.push(line);
      }
    });
    const init = await ask({
      jsonrpc: '2.0', id: 'init', method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    assert.equal(init.result.serverInfo.name, 'codebox');
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  });

  after(async () => {
    if (proc.exitCode === null) proc.kill('SIGKILL');
    removeDir(dir);
  });

  test('ids come back with their JSON type (0, string, large integer)', T, async () => {
    assert.deepEqual(await ask({ jsonrpc: '2.0', id: 0, method: 'ping' }),
      { jsonrpc: '2.0', id: 0, result: {} });
    assert.deepEqual(await ask({ jsonrpc: '2.0', id: '0', method: 'ping' }),
      { jsonrpc: '2.0', id: '0', result: {} });
    assert.deepEqual(await ask({ jsonrpc: '2.0', id: 9007199254740991, method: 'ping' }),
      { jsonrpc: '2.0', id: 9007199254740991, result: {} });
  });

  test('a line that is not JSON gets a parse error with id null', T, async () => {
    const p = reply(null);
    send('{"jsonrpc": "2.0", "id": 5, "method": ');
    const msg = await p;
    assert.equal(msg.error.code, -32700);
  });

  test('a batch is refused as an invalid request', T, async () => {
    const p = reply(null);
    send([{ jsonrpc: '2.0', id: 1, method: 'ping' }]);
    const msg = await p;
    assert.equal(msg.error.code, -32600);
  });

  test('server/discover without its _meta is invalid params; an unknown method is not found; the server keeps serving', T, async () => {
    const msg = await ask({ jsonrpc: '2.0', id: 'd', method: 'server/discover', params: {} });
    assert.equal(msg.error.code, -32602);
    assert.match(msg.error.message, /protocolVersion/);
    const unknown = await ask({ jsonrpc: '2.0', id: 'u', method: 'no/such/method', params: {} });
    assert.equal(unknown.error.code, -32601);
    const pong = await ask({ jsonrpc: '2.0', id: 'p', method: 'ping' });
    assert.deepEqual(pong.result, {});
  });

  test('a request with non-object params is invalid params', T, async () => {
    const msg = await ask({ jsonrpc: '2.0', id: 'bad', method: 'tools/list', params: [1] });
    assert.equal(msg.error.code, -32602);
  });

  test('a tool call answers on stdout; logs stay on stderr', T, async () => {
    const msg = await ask({
      jsonrpc: '2.0', id: 42, method: 'tools/call',
      params: { name: 'exec_code', arguments: { session_id: 'raw', code: 'print("hi")' } },
    });
    assert.equal(msg.result.structuredContent.stdout, 'hi\n');
    assert.deepEqual(stray, [], 'every stdout line is an expected JSON-RPC message');
    assert.match(stderr, /codebox: /, 'logs go to stderr');
  });

  test('end of input shuts down cleanly (exit 0)', T, async () => {
    proc.stdin.end();
    const code = await exited;
    assert.equal(code, 0, stderr.split('\n').slice(-10).join('\n'));
  });
});
