// MCP 2026-07-28 with the official SDK v2 client (@modelcontextprotocol/client
// 2.4.0): pinned to 2026-07-28 and in auto mode, over Streamable HTTP and
// stdio; sessions kept across stateless calls by their session_id (sent as
// Mcp-Param-Session-Id), and a kernel's input() answered through the
// client's elicitation handler (an input_required result and its retry).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { CODEBOX_BIN, codeboxEnv, removeDir, startServer, tempDir, textOf } from './helpers.js';

/* A v2 client; answers elicitations with answer (when given). Records the
 * headers of every HTTP request it sends. */
async function connectV2(kind, { server, mode, answer, stateDir } = {}) {
  const capabilities = answer !== undefined ? { elicitation: {} } : {};
  const client = new Client({ name: 'codebox-v2-tests', version: '1.0.0' },
    { versionNegotiation: { mode }, capabilities });
  const asked = [];
  if (answer !== undefined) {
    client.setRequestHandler('elicitation/create', async (req) => {
      asked.push(req.params);
      return { action: 'accept', content: { value: answer } };
    });
  }
  const sent = [];
  let transport;
  if (kind === 'stdio') {
    transport = new StdioClientTransport({
      command: CODEBOX_BIN, args: ['mcp', '--state-dir', stateDir], env: codeboxEnv(),
      stderr: 'ignore',
    });
  } else {
    transport = new StreamableHTTPClientTransport(new URL(server.url), {
      fetch: async (url, init) => {
        sent.push(Object.fromEntries(new Headers(init?.headers ?? {}).entries()));
        return fetch(url, init);
      },
    });
  }
  await client.connect(transport);
  return { client, asked, sent };
}

const call = (client, name, args) => client.callTool({ name, arguments: args });

for (const kind of ['http', 'stdio']) {
  describe(`SDK v2 client over ${kind}`, () => {
    let server;
    let stateDir;

    before(async () => {
      if (kind === 'http') server = await startServer({ env: { CODEBOX_POOL_SIZE: '0' } });
      else stateDir = tempDir('v2-stdio');
    });

    after(async () => {
      if (server) await server.stop();
      if (stateDir) removeDir(stateDir);
    });

    test('pinned to 2026-07-28: discover, stateless calls, state kept by session_id', async () => {
      const { client, sent } = await connectV2(kind, { server, stateDir,
        mode: { pin: '2026-07-28' } });
      try {
        assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
        const { tools } = await client.listTools();
        const exec = tools.find((t) => t.name === 'exec_code');
        assert.equal(exec.inputSchema.properties.session_id['x-mcp-header'], 'Session-Id');
        let r = await call(client, 'exec_code', { session_id: 'v2', code: 'x = 6 * 7' });
        assert.equal(r.isError, false, textOf(r));
        r = await call(client, 'exec_code', { session_id: 'v2', code: 'print(x)' });
        assert.equal(textOf(r).trim(), '42');
        if (kind === 'http') {
          const calls = sent.filter((h) => h['mcp-method'] === 'tools/call');
          assert.ok(calls.length >= 2);
          for (const h of calls) {
            assert.equal(h['mcp-protocol-version'], '2026-07-28');
            assert.equal(h['mcp-name'], 'exec_code');
            assert.equal(h['mcp-param-session-id'], 'v2');
            assert.equal(h['mcp-session-id'], undefined, 'no MCP session in 2026-07-28');
          }
          assert.equal(sent[0]['mcp-method'], 'server/discover');
        }
      } finally {
        await client.close();
      }
    });

    test('input() asks the client (elicitation) and gets its answer', async () => {
      const { client, asked } = await connectV2(kind, { server, stateDir,
        mode: { pin: '2026-07-28' }, answer: 'Ada' });
      try {
        const r = await call(client, 'exec_code', {
          session_id: 'ask', code: 'name = input("Your name? ")\nprint("hello", name)' });
        assert.equal(r.isError, false, textOf(r));
        assert.equal(textOf(r), 'hello Ada\n');
        assert.equal(asked.length, 1);
        assert.equal(asked[0].message, 'Your name? ');
        assert.equal(asked[0].requestedSchema.required[0], 'value');
        /* twice in one cell: two rounds */
        const two = await call(client, 'run_python_code', {
          code: 'a = input("a? ")\nb = input("b? ")\nprint(a + b)' });
        assert.equal(textOf(two), 'AdaAda\n');
        assert.equal(asked.length, 3);
      } finally {
        await client.close();
      }
    });

    test('without the elicitation capability input() fails at once', async () => {
      const { client } = await connectV2(kind, { server, stateDir,
        mode: { pin: '2026-07-28' } });
      try {
        const r = await call(client, 'exec_code', { session_id: 'noask', code: 'input("x? ")' });
        assert.equal(r.structuredContent.status, 'error');
        assert.equal(r.structuredContent.error.ename, 'StdinNotImplementedError');
      } finally {
        await client.close();
      }
    });

    test('auto mode picks 2026-07-28; legacy mode still initializes (2025-11-25)', async () => {
      for (const [mode, version] of [['auto', '2026-07-28'], ['legacy', '2025-11-25']]) {
        const { client } = await connectV2(kind, { server, stateDir, mode });
        try {
          assert.equal(client.getNegotiatedProtocolVersion(), version, mode);
          const r = await call(client, 'exec_code', { session_id: `m-${mode}`, code: '1 + 1' });
          assert.equal(textOf(r).trim(), '2');
        } finally {
          await client.close();
        }
      }
    });
  });
}
