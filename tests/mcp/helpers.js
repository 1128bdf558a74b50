// Shared helpers of the MCP tests: where the codebox binary is, starting
// `codebox serve` on a free port, connecting the official SDK client over
// stdio or Streamable HTTP, and small readers of tool results.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { unmountBelow } from './unmount.js';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export const HERE = dirname(fileURLToPath(import.meta.url));
export const CODEBOX_BIN = process.env.CODEBOX_BIN
  ? resolve(process.env.CODEBOX_BIN)
  : resolve(HERE, '../../build/codebox');

/* The test build with the conformance suite's fixtures (make mcp-test). */
export const CONFORMANCE_BIN = process.env.CODEBOX_CONFORMANCE_BIN
  ? resolve(process.env.CODEBOX_CONFORMANCE_BIN)
  : resolve(HERE, '../../build/codebox-conformance');

export const TOOL_NAMES = [
  'exec_code', 'run_python_code', 'run_javascript_code', 'write_file', 'read_file',
  'list_files', 'list_artifacts', 'session_info', 'list_sessions', 'destroy_session',
  'list_kernels',
];

/* The environment codebox runs with: ours, minus any CODEBOX_ setting that
 * would change what the tests expect, plus extra. Warm kernels preload
 * nothing unless a test asks (each preload costs a core for about 1.5 s
 * and some 70 servers start in a run; tests/e2e/test_pool_preload.py
 * tests the preload, through MCP too). */
export function codeboxEnv(extra = {}) {
  const env = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('CODEBOX_') && v !== undefined) env[k] = v;
  env.CODEBOX_MCP_CONFORMANCE = '0';
  env.CODEBOX_POOL_PRELOAD = '';
  return { ...env, ...extra };
}

/* A fresh folder under tmp. 0755, not mkdtemp's 0700: when codebox runs as
 * root its kernels run as an unprivileged user, who must reach the session
 * folders below. */
export function tempDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), `codebox-mcp-${prefix}-`));
  chmodSync(dir, 0o755);
  return dir;
}

/* Undoes the mounts below dir, deepest first: a server that was killed
 * (or is killed by a client's close) cannot undo its session folders' own
 * file systems, and a mounted folder cannot be removed. */
export function removeDir(dir) {
  unmountBelow(dir);
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch {
    /* a kernel may still be writing; the OS cleans tmp */
  }
}

/* Starts `codebox serve --port PORT` (bin: another build; port 0 unless
 * given, a free one chosen by codebox) and resolves when it prints its banner.
 * Returns { url, port, proc, stderr(), stop() }; stop() sends SIGTERM
 * and resolves with the exit code. */
export function startServer({ env = {}, stateDir, bin = CODEBOX_BIN, port = 0 } = {}) {
  const dir = stateDir ?? tempDir('serve');
  const proc = spawn(bin, ['serve', '--port', String(port), '--state-dir', dir], {
    env: codeboxEnv(env),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  const exited = new Promise((res) => proc.on('exit', (code, signal) => res(code ?? signal)));
  return new Promise((res, rej) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      rej(new Error(`codebox serve printed no banner in 15 s; stderr:\n${log}`));
    }, 15000);
    proc.on('error', (e) => {
      clearTimeout(timer);
      rej(e);
    });
    proc.on('exit', () => {
      clearTimeout(timer);
      rej(new Error(`codebox serve exited early; stderr:\n${log}`));
    });
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', (chunk) => {
      log += chunk;
      const m = /serving http:\/\/127\.0\.0\.1:(\d+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        const port = Number(m[1]);
        res({
          port,
          url: `http://127.0.0.1:${port}/mcp`,
          proc,
          stateDir: dir,
          stderr: () => log,
          async stop() {
            if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
            const kill = setTimeout(() => proc.kill('SIGKILL'), 15000);
            const code = await exited;
            clearTimeout(kill);
            if (!stateDir) removeDir(dir);
            return code;
          },
        });
      }
    });
  });
}

/* A connected SDK client. kind is 'stdio' (spawns codebox mcp), 'http'
 * (Streamable HTTP; needs server.url) or 'sse' (the 2024-11-05 HTTP+SSE
 * transport at /sse; needs server.url; opts.headers go on every request);
 * opts.capabilities are the client's (initialize). Returns { client,
 * transport, kind, stderr(), close() }. */
export async function connect(kind, { server, stateDir, env = {}, name = 'codebox-tests',
  headers, capabilities = {} } = {}) {
  const client = new Client({ name, version: '1.0.0' }, { capabilities });
  let transport;
  let log = '';
  let ownDir = null;
  if (kind === 'stdio') {
    const dir = stateDir ?? (ownDir = tempDir('stdio'));
    transport = new StdioClientTransport({
      command: CODEBOX_BIN,
      args: ['mcp', '--state-dir', dir],
      env: codeboxEnv(env),
      stderr: 'pipe',
    });
    transport.stderr.setEncoding('utf8');
    transport.stderr.on('data', (chunk) => {
      log += chunk;
    });
  } else if (kind === 'sse') {
    const init = headers ? { headers } : undefined;
    transport = new SSEClientTransport(new URL('/sse', server.url), {
      requestInit: init,
      eventSourceInit: headers ? {
        fetch: (url, i) => fetch(url, { ...i, headers: { ...i?.headers, ...headers } }),
      } : undefined,
    });
  } else {
    transport = new StreamableHTTPClientTransport(new URL(server.url));
  }
  await client.connect(transport);
  return {
    kind,
    client,
    transport,
    stderr: () => (kind === 'stdio' ? log : server.stderr()),
    async close() {
      await client.close();
      if (ownDir) removeDir(ownDir);
    },
  };
}

/* The text of a CallToolResult's first text item. */
export function textOf(result) {
  const item = (result.content ?? []).find((c) => c.type === 'text');
  return item ? item.text : '';
}

export function callTool(client, name, args, options) {
  return client.callTool({ name, arguments: args }, undefined, options);
}

export const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function isPng(base64) {
  const bytes = Buffer.from(base64, 'base64');
  return bytes.length > 8 && bytes.subarray(0, 8).equals(PNG_MAGIC);
}

/* Reads an SSE or JSON reply of a raw POST into a list of JSON-RPC messages. */
export async function readMessages(response) {
  const type = response.headers.get('content-type') ?? '';
  const body = await response.text();
  if (type.includes('text/event-stream')) {
    const messages = [];
    for (const event of body.split(/\r?\n\r?\n/)) {
      const data = event
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data) messages.push(JSON.parse(data));
    }
    return messages;
  }
  return body ? [JSON.parse(body)] : [];
}
