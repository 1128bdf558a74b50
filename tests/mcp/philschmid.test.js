// philschmid/code-sandbox-mcp's own clients against `codebox mcp`, call
// for call: its examples/test_local_client_python.py and
// test_local_client_js.py (the Python `mcp` package's stdio_client with
// StdioServerParameters(command=...) and nothing else, so the server gets
// the SDK's default environment and no flags; initialize; list_tools and
// print the names; call run_python_code / run_javascript_code; print
// content[0].text and the time taken), with `codebox mcp` as the command.
// The TypeScript SDK's StdioClientTransport does what the Python one does
// (the same default environment: HOME, LOGNAME, PATH, SHELL, TERM, USER;
// structuredContent checked against the tool's outputSchema). Then the
// checks of its tests/test_integration.py and test_server.py on the same
// tools (names listed; text back; "error" in the text of a failing cell).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  getDefaultEnvironment, StdioClientTransport,
} from '@modelcontextprotocol/sdk/client/stdio.js';

import { CODEBOX_BIN } from './helpers.js';

const T = { timeout: 90000 };

/* What the Python SDK gives a server started with env=None: its default
 * environment (the TypeScript SDK's is the same list), plus the
 * sanitizers' settings of a sanitizer build (make check sets them). */
function scriptEnv() {
  const env = getDefaultEnvironment();
  for (const k of ['ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS'])
    if (process.env[k]) env[k] = process.env[k];
  return env;
}

/* Where `codebox mcp` without --state-dir keeps its sessions
 * (gw_state_dir_for_stdio): BASE/stdio/PID, with BASE the per-user
 * default for the SDK's default environment. */
function stdioStateDir(pid) {
  const base = process.geteuid() === 0 ? '/var/lib/codebox'
    : join(getDefaultEnvironment().HOME, '.local/state/codebox');   // no XDG_STATE_HOME in it
  return join(base, 'stdio', String(pid));
}

/* One run of a test_local_client_*.py script: what it prints, line by
 * line, and what the tests need beside it. */
async function runScript(tool, code) {
  const printed = [];
  // StdioServerParameters(command="code-sandbox-mcp"): no args, no env
  const transport = new StdioClientTransport({ command: CODEBOX_BIN, args: ['mcp'],
    env: scriptEnv(), stderr: 'pipe' });
  let log = '';
  transport.stderr.setEncoding('utf8');
  transport.stderr.on('data', (chunk) => {
    log += chunk;
  });
  const session = new Client({ name: 'mcp', version: '0.1.0' });
  await session.connect(transport);          // session.initialize()
  const stateDir = stdioStateDir(transport.pid);
  const during = existsSync(stateDir);
  let r;
  let tools;
  let seconds;
  try {
    tools = await session.listTools();
    printed.push(tools.tools.map((t) => t.name));
    const start = Date.now();
    r = await session.callTool({ name: tool, arguments: { code } });
    printed.push(r.content[0].text);
    seconds = (Date.now() - start) / 1000;
    printed.push(`Time taken: ${seconds} seconds`);
  } finally {
    await session.close();
  }
  // the client's close ends the server; its folder goes with it
  for (let i = 0; i < 100 && existsSync(stateDir); i++)
    await new Promise((res) => setTimeout(res, 100));
  return { printed, r, tools, seconds, log, stateDir, during };
}

function assertToolNames(names) {
  // tests/test_server.py: both tools are listed
  assert.ok(names.includes('run_python_code'), names);
  assert.ok(names.includes('run_javascript_code'), names);
}

test('test_local_client_python.py: run_python_code prints Hello, World!', T, async () => {
  const run = await runScript('run_python_code', "print('Hello, World!')");
  assertToolNames(run.printed[0]);
  assert.equal(run.r.isError, false, JSON.stringify(run.r));
  assert.equal(run.r.content[0].type, 'text', JSON.stringify(run.r));
  // what the script prints: the program's output, nothing around it
  assert.equal(run.printed[1], 'Hello, World!\n', JSON.stringify(run.r));
  assert.ok(run.seconds < 60, run.printed[2]);
  assert.ok(run.during, `no state folder at ${run.stateDir}; stderr:\n${run.log}`);
  assert.ok(!existsSync(run.stateDir), `${run.stateDir} left behind`);
  assert.match(run.log, /mcp stdin closed/, run.log);
  assert.doesNotMatch(run.log, /ERROR: \w+Sanitizer|runtime error:/);
});

test('test_local_client_js.py: run_javascript_code prints Hello, World!', T, async () => {
  const run = await runScript('run_javascript_code', "console.log('Hello, World!');");
  assertToolNames(run.printed[0]);
  assert.equal(run.r.isError, false, JSON.stringify(run.r));
  assert.equal(run.r.content[0].type, 'text', JSON.stringify(run.r));
  assert.equal(run.printed[1], 'Hello, World!\n', JSON.stringify(run.r));
  assert.ok(run.seconds < 60, run.printed[2]);
  assert.ok(run.during && !existsSync(run.stateDir), run.stateDir);
  assert.doesNotMatch(run.log, /ERROR: \w+Sanitizer|runtime error:/);
});

test('tests/test_integration.py: text back, "error" in a failing cell\'s text', T, async () => {
  const transport = new StdioClientTransport({ command: CODEBOX_BIN, args: ['mcp'],
    env: scriptEnv(), stderr: 'ignore' });
  const client = new Client({ name: 'fastmcp', version: '2.0.0' });
  await client.connect(transport);
  try {
    const call = (name, code) => client.callTool({ name, arguments: { code } });
    // test_run_python_code_integration
    let r = await call('run_python_code', "print('Hello, World!')");
    assert.equal(typeof r.content[0].text, 'string');
    assert.ok(r.content[0].text.length > 0, JSON.stringify(r));
    // test_run_python_code_integration_with_error: its indented lines
    // are an IndentationError before google.genai is even looked for
    r = await call('run_python_code', `from google.genai import genai
    client = genai.Client()
    response = client.generate_content("Hello, world!")
    print(response.text)
    `);
    assert.ok(r.content[0].text.toLowerCase().includes('error'), JSON.stringify(r));
    assert.match(r.content[0].text, /IndentationError: unexpected indent/, r.content[0].text);
    assert.equal(r.isError, true);
    // test_run_javascript_code_integration
    r = await call('run_javascript_code', "console.log('Hello, World!');");
    assert.equal(r.content[0].text, 'Hello, World!\n', JSON.stringify(r));
    // test_run_javascript_code_integration_with_error
    r = await call('run_javascript_code', 'const x = 1 / 0; console.log(y);');
    assert.ok(r.content[0].text.toLowerCase().includes('error'), JSON.stringify(r));
    assert.match(r.content[0].text, /ReferenceError: y is not defined/, r.content[0].text);
    assert.equal(r.isError, true);
  } finally {
    await client.close();
  }
});
