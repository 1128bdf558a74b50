// Progress heartbeats and tool annotations, through the official SDK
// client. While a call that carries a progressToken runs, codebox sends a
// notifications/progress every few seconds whether or not the code
// prints, so a client that resets its timeout on progress
// (resetTimeoutOnProgress) keeps waiting for a long silent run; and every
// tool states its five annotations.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { callTool, connect, startServer, textOf, TOOL_NAMES } from './helpers.js';

const HEARTBEAT = /^running, (\d+) s$/;

/* Closes a stdio connection and checks that codebox mcp reported no
 * sanitizer error on its way out. */
async function closeStdio(conn) {
  await conn.close().catch(() => {});
  assert.doesNotMatch(conn.stderr(), /ERROR: \w+Sanitizer|runtime error:/);
}

/* Checks the notes an onprogress callback saw: progress grows strictly
 * (the MCP specification's rule) and every heartbeat's message says the
 * whole seconds so far, which never go back. Returns the heartbeats. */
function checkNotes(notes) {
  for (let i = 1; i < notes.length; i++)
    assert.ok(notes[i].progress > notes[i - 1].progress,
      `progress grows: ${JSON.stringify(notes.slice(i - 1, i + 1))}`);
  const beats = notes.filter((n) => HEARTBEAT.test(n.message ?? ''));
  let seconds = -1;
  for (const b of beats) {
    const n = Number(HEARTBEAT.exec(b.message)[1]);
    assert.ok(n >= seconds, `the seconds never go back: ${JSON.stringify(beats)}`);
    assert.ok(b.progress >= n, `progress is the seconds since the start: ${JSON.stringify(b)}`);
    seconds = n;
  }
  return beats;
}

describe('progress heartbeats', () => {
  let server;
  let http;

  before(async () => {
    server = await startServer();
    http = await connect('http', { server });
  });

  after(async () => {
    if (http) {
      await http.transport.terminateSession().catch(() => {});
      await http.close().catch(() => {});
    }
    // a clean stop (under AddressSanitizer: no leak, no error)
    if (server) assert.equal(await server.stop(), 0, server.stderr().slice(-3000));
  });

  // The acceptance test of issue 38: longer than the SDK's default request
  // timeout (60 s), with no output at all.
  test('a silent 75 s run completes for the SDK\'s default timeout with resetTimeoutOnProgress',
    { timeout: 180000 }, async () => {
      const session = 'silent-http';
      const warm = await callTool(http.client, 'exec_code', { session_id: session, code: 'pass' });
      assert.equal(warm.isError, false, textOf(warm));
      const notes = [];
      const r = await callTool(http.client, 'exec_code', {
        session_id: session,
        code: "import time\ntime.sleep(75)\nprint('done')",
      }, { onprogress: (p) => notes.push(p), resetTimeoutOnProgress: true });
      assert.equal(r.isError, false, textOf(r));
      assert.equal(r.structuredContent.stdout, 'done\n');
      assert.match(textOf(r), /done/);
      const beats = checkNotes(notes);
      assert.ok(beats.length >= 1, `heartbeats came: ${JSON.stringify(notes)}`);
      assert.equal(beats.length, notes.filter((n) => n.message !== 'done\n').length,
        `silent until the end: every note but the output is a heartbeat: ${JSON.stringify(notes)}`);
    });

  test('over stdio a silent run outlives a shorter timeout that progress resets',
    { timeout: 60000 }, async () => {
      const stdio = await connect('stdio');
      try {
        const session = 'silent-stdio';
        await callTool(stdio.client, 'exec_code', { session_id: session, code: 'pass' });
        const notes = [];
        const r = await callTool(stdio.client, 'exec_code', {
          session_id: session,
          code: "import time\ntime.sleep(12)\nprint('done')",
        }, { onprogress: (p) => notes.push(p), timeout: 8000, resetTimeoutOnProgress: true });
        assert.equal(r.isError, false, textOf(r));
        assert.equal(r.structuredContent.stdout, 'done\n');
        assert.ok(checkNotes(notes).length >= 1, `heartbeats came: ${JSON.stringify(notes)}`);
      } finally {
        await closeStdio(stdio);
      }
    });

  test('over the legacy SSE transport output and heartbeats share one growing progress',
    { timeout: 60000 }, async () => {
      const sse = await connect('sse', { server });
      try {
        const notes = [];
        const r = await callTool(sse.client, 'run_python_code', {
          code: "import time\nprint('start', flush=True)\ntime.sleep(8)\nprint('end')",
        }, { onprogress: (p) => notes.push(p), timeout: 30000 });
        assert.equal(r.isError, false, textOf(r));
        assert.equal(r.structuredContent.stdout, 'start\nend\n');
        checkNotes(notes);
        // output keeps its text as the message; the sleep after it is beaten
        const at = notes.findIndex((n) => n.message === 'start\n');
        assert.ok(at >= 0, `the output came as progress: ${JSON.stringify(notes)}`);
        assert.ok(notes.slice(at + 1).some((n) => HEARTBEAT.test(n.message ?? '')),
          `a heartbeat after the output: ${JSON.stringify(notes)}`);
      } finally {
        await sse.close().catch(() => {});
      }
    });

  test('every tool states its annotations: title and four boolean hints', async () => {
    const { tools } = await http.client.listTools();
    const names = tools.map((t) => t.name);
    for (const name of TOOL_NAMES) assert.ok(names.includes(name), `${name} in ${names}`);
    for (const tool of tools) {
      const a = tool.annotations;
      assert.ok(a, `${tool.name} has annotations`);
      assert.equal(typeof tool.title, 'string', `${tool.name}.title`);
      assert.equal(a.title, tool.title, `${tool.name}: annotations.title is its title`);
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'])
        assert.equal(typeof a[hint], 'boolean', `${tool.name}.annotations.${hint}`);
    }
    const hints = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
    const expect = (name, readOnly, destructive, idempotent, openWorld) =>
      assert.deepEqual(
        [hints[name].readOnlyHint, hints[name].destructiveHint, hints[name].idempotentHint,
          hints[name].openWorldHint],
        [readOnly, destructive, idempotent, openWorld], name);
    // code reaches the network only when the sandbox lets it (session_info says)
    const info = await callTool(http.client, 'session_info', { session_id: 'silent-http' });
    const network = info.structuredContent.sandbox.network === 'on';
    expect('exec_code', false, true, false, network);
    expect('run_python_code', false, true, false, network);
    for (const name of ['read_file', 'list_files', 'list_artifacts', 'session_info',
      'list_sessions', 'list_kernels', 'exec_sql'])
      expect(name, true, false, true, false);
    expect('write_file', false, true, true, false);
    expect('destroy_session', false, true, true, false);
    expect('upload_file', false, false, false, true);
    assert.equal(hints.install_package.openWorldHint, true);
    assert.equal(hints.install_package.readOnlyHint, false);
  });

  test('with CODEBOX_NETWORK=on the tools that run code are open-world', async () => {
    const stdio = await connect('stdio', { env: { CODEBOX_NETWORK: 'on' } });
    try {
      const { tools } = await stdio.client.listTools();
      for (const name of ['exec_code', 'run_python_code', 'run_javascript_code'])
        assert.equal(tools.find((t) => t.name === name).annotations.openWorldHint, true, name);
      assert.equal(tools.find((t) => t.name === 'read_file').annotations.openWorldHint, false);
    } finally {
      await closeStdio(stdio);
    }
  });
});
