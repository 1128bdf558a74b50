// create_session with named volumes, through the official MCP TypeScript SDK
// over Streamable HTTP: a volume made over REST is mounted at /volumes/NAME,
// what the kernel writes there outlives the session, and a volume that is
// not there is an error the model can act on.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { callTool, connect, startServer, textOf } from './helpers.js';

const T = { timeout: 120000 };

describe('create_session with volumes', () => {
  let server;
  let conn;
  const rest = (method, path, body) => fetch(`http://127.0.0.1:${server.port}${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : (typeof body === 'string' ? body : JSON.stringify(body)),
  });

  before(async () => {
    server = await startServer({ env: { CODEBOX_SANDBOX: 'bwrap' } });
    conn = await connect('http', { server });
  });
  after(async () => {
    await conn?.close();
    await server?.stop();
  });

  test('the kernel sees the volume; its files outlive the session', T, async () => {
    let r = await rest('POST', '/volumes', { name: 'work', size_mb: 8 });
    assert.equal(r.status, 201, await r.text());
    r = await rest('PUT', '/volumes/work/files/seed.txt', 'seeded');
    assert.equal(r.status, 201, await r.text());

    const made = await callTool(conn.client, 'create_session', {
      session_id: 'vol', volumes: [{ name: 'work' }],
    });
    assert.equal(made.isError, false, textOf(made));
    assert.deepEqual(made.structuredContent.volumes,
      [{ name: 'work', path: '/volumes/work', read_only: false }]);
    assert.match(textOf(made), /\/volumes\/work \(read-write\)/);

    const run = await callTool(conn.client, 'exec_code', {
      session_id: 'vol',
      code: "print(open('/volumes/work/seed.txt').read())\n"
        + "open('/volumes/work/result.txt', 'w').write('from MCP')",
    });
    assert.equal(run.isError, false, textOf(run));
    assert.equal(run.structuredContent.stdout, 'seeded\n');

    r = await rest('DELETE', '/volumes/work');
    assert.equal(r.status, 409, 'held while the session lives');
    const gone = await callTool(conn.client, 'destroy_session', { session_id: 'vol' });
    assert.equal(gone.isError, false, textOf(gone));
    r = await rest('GET', '/volumes/work/files/result.txt');
    assert.equal(r.status, 200);
    assert.equal(await r.text(), 'from MCP');
    r = await rest('DELETE', '/volumes/work');
    assert.equal(r.status, 204);
  });

  test('a volume that is not there: an error that says what to do', T, async () => {
    const r = await callTool(conn.client, 'create_session', {
      session_id: 'novol', volumes: [{ name: 'missing' }],
    });
    assert.equal(r.isError, true);
    assert.match(textOf(r), /no volume 'missing'.*POST \/volumes/);
    const list = await callTool(conn.client, 'list_sessions', {});
    assert.ok(!list.structuredContent.sessions.some((s) => s.session_id === 'novol'));
  });
});
