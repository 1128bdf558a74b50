// The MCP Inspector CLI (the local install, no network) against codebox:
// list the tools and call exec_code, over stdio and over Streamable HTTP.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';

import { CODEBOX_BIN, codeboxEnv, HERE, removeDir, startServer, tempDir, TOOL_NAMES } from './helpers.js';

const run = promisify(execFile);
const INSPECTOR = join(HERE, 'node_modules/@modelcontextprotocol/inspector/cli/build/cli.js');
const T = { timeout: 60000 };

/* Runs `mcp-inspector --cli TARGET... ARGS...` and parses its JSON output. */
async function inspector(target, args) {
  const { stdout } = await run(process.execPath, [INSPECTOR, '--cli', ...target, ...args], {
    env: codeboxEnv(),
    timeout: 45000,
    maxBuffer: 16 << 20,
  });
  return JSON.parse(stdout);
}

describe('MCP Inspector CLI', () => {
  let server;
  let dir;

  before(async () => {
    server = await startServer();
    dir = tempDir('inspector');
  });

  after(async () => {
    if (server) await server.stop();
    removeDir(dir);
  });

  const targets = {
    stdio: () => [CODEBOX_BIN, 'mcp', '--state-dir', dir],
    http: () => [server.url, '--transport', 'http'],
  };

  for (const [kind, target] of Object.entries(targets)) {
    test(`${kind}: tools/list shows the 11 tools`, T, async () => {
      const out = await inspector(target(), ['--method', 'tools/list']);
      const names = out.tools.map((t) => t.name);
      for (const name of TOOL_NAMES) assert.ok(names.includes(name), `${name} in ${names}`);
    });

    test(`${kind}: tools/call exec_code runs Python`, T, async () => {
      const out = await inspector(target(), [
        '--method', 'tools/call', '--tool-name', 'exec_code',
        '--tool-arg', `session_id=inspector-${kind}`,
        '--tool-arg', 'code=import sys; print(6 * 7, sys.version_info[0])',
      ]);
      assert.equal(out.isError, false, JSON.stringify(out));
      assert.equal(out.structuredContent.status, 'completed');
      assert.equal(out.structuredContent.stdout, '42 3\n');
      assert.equal(out.content[0].type, 'text');
    });
  }
});
