// Durable sessions (issue 42) through the official SDK client: a session
// idle past CODEBOX_IDLE_PAUSE is listed as paused, its next exec_code
// starts a kernel again and the first answer's text says so (variables
// gone, files kept); and a session outlives its server: over HTTP a
// `codebox serve` restarted on the same state folder, over stdio a
// `codebox mcp` started again with the same --state-dir.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { callTool, connect, removeDir, startServer, tempDir } from './helpers.js';

const NOTICE = 'the kernel was restarted (the session was paused)';
const ENV = { CODEBOX_POOL_SIZE: '0', CODEBOX_IDLE_PAUSE: '2', CODEBOX_CLEANUP_INTERVAL: '1' };
const T = { timeout: 120000 };

const allText = (result) => (result.content ?? []).filter((c) => c.type === 'text')
  .map((c) => c.text).join('\n');
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

async function waitPaused(client, id) {
  for (let i = 0; i < 100; i++) {
    // what the model reads: the text (indented JSON) names it and says paused
    const r = await callTool(client, 'list_sessions', {});
    const entry = JSON.parse(allText(r)).sessions.find((s) => s.session_id === id);
    if (entry?.status === 'paused') return entry;
    await sleep(200);
  }
  throw new Error(`${id} never listed as paused`);
}

describe('durable sessions through the SDK', () => {
  test('pause, then exec_code wakes it and says so once', T, async () => {
    const server = await startServer({ env: ENV });
    const conn = await connect('http', { server });
    try {
      const c = conn.client;
      let r = await callTool(c, 'exec_code', { session_id: 'p', code: "v = 1\nopen('f.txt','w').write('kept')" });
      assert.equal(r.isError, false, allText(r));
      await waitPaused(c, 'p');
      const info = await callTool(c, 'session_info', { session_id: 'p' });
      assert.match(allText(info), /paused/, allText(info));
      r = await callTool(c, 'exec_code', { session_id: 'p', code: "print(open('f.txt').read(), 'v' in dir())" });
      const text = allText(r);
      assert.ok(text.includes(NOTICE), text);
      assert.match(text, /kept False/);
      r = await callTool(c, 'exec_code', { session_id: 'p', code: 'print(2)' });
      assert.ok(!allText(r).includes(NOTICE), allText(r));
    } finally {
      await conn.close();
      await server.stop();
    }
  });

  for (const kind of ['http', 'stdio']) {
    test(`a session outlives its server (${kind})`, T, async () => {
      const dir = tempDir('durable');
      const env = { ...ENV, CODEBOX_IDLE_PAUSE: '0' };
      try {
        let server = kind === 'http' ? await startServer({ env, stateDir: dir }) : null;
        let conn = await connect(kind, { server, stateDir: dir, env });
        let r = await callTool(conn.client, 'exec_code', { session_id: 'keep', code: "open('k.txt','w').write('still here')" });
        assert.equal(r.isError, false, allText(r));
        await conn.close();
        if (server) await server.stop();
        server = kind === 'http' ? await startServer({ env, stateDir: dir }) : null;
        conn = await connect(kind, { server, stateDir: dir, env });
        try {
          await waitPaused(conn.client, 'keep');
          r = await callTool(conn.client, 'exec_code', { session_id: 'keep', code: "print(open('k.txt').read())" });
          const text = allText(r);
          assert.ok(text.includes('still here') && text.includes(NOTICE), text);
        } finally {
          await conn.close();
          if (server) await server.stop();
        }
      } finally {
        removeDir(dir);
      }
    });
  }
});
