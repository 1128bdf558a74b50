// CODEBOX_MCP_TOOLS=e2b through the official SDK client: the E2B sandbox
// MCP server's ten tools (chrishayuk/mcp-code-sandbox) with its names,
// arguments and result shapes, in the flow its README describes
// (create_sandbox, execute_code keeping state, install_package,
// write_file / list_files / read_file, get_sandbox_status, close_sandbox,
// then create_run_close), over stdio and Streamable HTTP; what a model
// reads (the JSON text of the seed's dicts, images as image content); bad
// input as tool errors (unknown sandbox, hostile paths, missing
// arguments); a tenant seeing only its own sandboxes; and the set beside
// codebox's own, in either order.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import {
  callTool, connect, isPng, removeDir, startServer, tempDir, textOf, TOOL_NAMES,
} from './helpers.js';

const T = { timeout: 120000 };

/* The seed's tools, in its order. */
const E2B_TOOLS = [
  'create_sandbox', 'close_sandbox', 'get_sandbox_status', 'execute_code', 'install_package',
  'create_run_close', 'list_files', 'read_file', 'write_file', 'upload_file',
];

/* The seed's arguments: required ones, and the optional ones with their
 * defaults (FastMCP's schemas). */
const E2B_ARGS = {
  create_sandbox: { required: ['session_id'] },
  close_sandbox: { required: ['session_id'] },
  get_sandbox_status: { required: [], optional: { session_id: null } },
  execute_code: { required: ['session_id', 'code'] },
  install_package: { required: ['session_id', 'package_name'] },
  create_run_close: { required: ['code'] },
  list_files: { required: ['session_id'], optional: { path: '/' } },
  read_file: { required: ['session_id', 'file_path'] },
  write_file: { required: ['session_id', 'file_path', 'content'] },
  upload_file: {
    required: ['session_id', 'file_name', 'file_content'], optional: { destination_path: '/' },
  },
};

/* A 1x1 red PNG. */
const RED_PIXEL =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC';

/* The dict a seed's tool answered, as the model reads it: the JSON text
 * of the first content item, which must say what structuredContent says. */
function dictOf(result) {
  const text = textOf(result);
  let dict;
  assert.doesNotThrow(() => { dict = JSON.parse(text); }, `not JSON: ${text}`);
  assert.deepEqual(dict, result.structuredContent);
  return dict;
}

/* A find-links folder with a wheel (cbx_dep, VALUE = 41) the kernel user
 * can read, built by the system Python's zipfile. */
function makeWheel() {
  const dir = tempDir('wheels');
  const script = `
import base64, hashlib, os, sys, zipfile
name, version = "cbx_dep", "1.0"
dist = "%s-%s.dist-info" % (name, version)
entries = {"cbx_dep/__init__.py": "VALUE = 41\\n",
           dist + "/METADATA": "Metadata-Version: 2.1\\nName: %s\\nVersion: %s\\n" % (name, version),
           dist + "/WHEEL": "Wheel-Version: 1.0\\nGenerator: codebox-tests\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"}
record = ["%s,sha256=%s,%d" % (p, base64.urlsafe_b64encode(hashlib.sha256(d.encode()).digest()).rstrip(b"=").decode(), len(d))
          for p, d in entries.items()] + [dist + "/RECORD,,"]
entries[dist + "/RECORD"] = "\\n".join(record) + "\\n"
path = os.path.join(sys.argv[1], "%s-%s-py3-none-any.whl" % (name, version))
with zipfile.ZipFile(path, "w") as z:
    for p, d in entries.items():
        z.writestr(p, d)
os.chmod(path, 0o644)
`;
  const r = spawnSync('/usr/bin/python3', ['-c', script, dir], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  chmodSync(dir, 0o755);
  return dir;
}

for (const kind of ['stdio', 'http']) {
  describe(`e2b over ${kind}: the seed's documented flow`, () => {
    let server = null;
    let conn;
    let client;
    let wheels;
    let stateDir;

    before(async () => {
      wheels = makeWheel();
      stateDir = tempDir('e2b');
      const env = {
        CODEBOX_MCP_TOOLS: 'e2b', CODEBOX_PIP_FIND_LINKS: wheels,
        CODEBOX_PACKAGE_DENY: 'cbx-evil',
      };
      if (kind === 'http') server = await startServer({ env, stateDir });
      conn = await connect(kind, { server, env, stateDir });
      client = conn.client;
    });

    after(async () => {
      if (conn) await conn.close().catch(() => {});
      if (server) await server.stop();
      if (wheels) removeDir(wheels);
      if (stateDir) removeDir(stateDir);
    });

    test('tools/list: the seed\'s ten tools and arguments, nothing of codebox\'s', T, async () => {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name), E2B_TOOLS);
      for (const tool of tools) {
        const want = E2B_ARGS[tool.name];
        const schema = tool.inputSchema;
        assert.equal(schema.type, 'object');
        assert.deepEqual([...(schema.required ?? [])].sort(), [...want.required].sort(), tool.name);
        for (const [arg, value] of Object.entries(want.optional ?? {})) {
          assert.ok(schema.properties[arg], `${tool.name}.${arg}`);
          assert.deepEqual(schema.properties[arg].default, value, `${tool.name}.${arg}`);
        }
        for (const arg of want.required) assert.ok(schema.properties[arg], `${tool.name}.${arg}`);
        assert.ok(tool.description.length > 20, tool.name);
        assert.equal(typeof tool.annotations.readOnlyHint, 'boolean');
      }
      const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
      assert.equal(byName.get_sandbox_status.annotations.readOnlyHint, true);
      assert.equal(byName.execute_code.annotations.readOnlyHint, false);
      assert.equal(byName.close_sandbox.annotations.destructiveHint, true);
      for (const name of TOOL_NAMES.filter((n) => !E2B_TOOLS.includes(n))) {
        const r = await callTool(client, name, { session_id: 'x', code: '1' })
          .catch((e) => ({ thrown: e }));
        assert.ok(r.thrown || r.isError, `${name}: ${JSON.stringify(r)}`);
      }
    });

    test('create_sandbox, execute_code keeping state, images, errors', T, async () => {
      let r = await callTool(client, 'create_sandbox', { session_id: 'flow' });
      assert.equal(r.isError, false, JSON.stringify(r));
      assert.equal(textOf(r), 'Sandbox created successfully with session ID: flow');
      r = await callTool(client, 'create_sandbox', { session_id: 'flow' });
      assert.equal(r.isError, false);
      assert.match(textOf(r), /Sandbox with session ID flow already exists/);

      r = await callTool(client, 'execute_code', { session_id: 'flow', code: 'x = 41\nprint("set")' });
      assert.equal(r.isError, false, JSON.stringify(r));
      let d = dictOf(r);
      assert.deepEqual(d.logs, { stdout: ['set\n'], stderr: [] });
      assert.equal(d.error, null);

      r = await callTool(client, 'execute_code', {
        session_id: 'flow',
        code: 'import sys\nprint(x + 1)\nsys.stderr.write("careful\\n")\nx * 2',
      });
      assert.equal(r.isError, false, JSON.stringify(r));
      d = dictOf(r);
      assert.equal(d.logs.stdout.join(''), '42\n');
      assert.equal(d.logs.stderr.join(''), 'careful\n');
      assert.equal(d.error, null);
      assert.deepEqual(d.results.map((x) => [x.is_main_result, x.text]), [[true, '82']]);

      r = await callTool(client, 'execute_code', {
        session_id: 'flow',
        code: 'import base64\nfrom IPython.display import Image, display\n'
          + `display(Image(data=base64.b64decode("${RED_PIXEL}")))\nprint("drawn")`,
      });
      assert.equal(r.isError, false, JSON.stringify(r));
      assert.equal(r.content[0].type, 'text');
      assert.match(dictOf(r).logs.stdout.join(''), /drawn/);
      const images = r.content.filter((c) => c.type === 'image');
      assert.equal(images.length, 1);
      assert.equal(images[0].mimeType, 'image/png');
      assert.ok(isPng(images[0].data));

      r = await callTool(client, 'execute_code', { session_id: 'flow', code: 'print("before")\n1/0' });
      assert.equal(r.isError, true);
      d = dictOf(r);
      assert.deepEqual(d.logs.stdout, ['before\n']);
      assert.equal(d.error.name, 'ZeroDivisionError');
      assert.match(d.error.value, /division by zero/);
      assert.match(d.error.traceback, /ZeroDivisionError/);
      assert.doesNotMatch(d.error.traceback, /\x1b\[/);
    });

    test('install_package: pip under the package policy, then importable', T, async () => {
      let r = await callTool(client, 'install_package', { session_id: 'flow', package_name: 'cbx-dep' });
      assert.equal(r.isError, false, JSON.stringify(r));
      let d = dictOf(r);
      assert.equal(d.package, 'cbx-dep');
      assert.match(d.output.stdout.join(''), /Successfully installed cbx[-_]dep-1\.0/);
      assert.equal(d.error, null);
      r = await callTool(client, 'execute_code', {
        session_id: 'flow', code: 'import cbx_dep\nprint("value", cbx_dep.VALUE)',
      });
      assert.equal(r.isError, false, JSON.stringify(r));
      assert.equal(dictOf(r).logs.stdout.join(''), 'value 41\n');

      r = await callTool(client, 'install_package', { session_id: 'flow', package_name: 'cbx-evil' });
      assert.equal(r.isError, true);
      d = dictOf(r);
      assert.match(d.error, /Refused 'cbx-evil'/);
      assert.match(d.error, /CODEBOX_PACKAGE_DENY/);
      r = await callTool(client, 'install_package', {
        session_id: 'flow', package_name: '--index-url http://evil.example/simple',
      });
      assert.equal(r.isError, true);
      assert.match(dictOf(r).error, /Refused '--index-url' \(rule: option\)/);
    });

    test('write_file, upload_file, list_files, read_file: what code sees', T, async () => {
      let r = await callTool(client, 'write_file', {
        session_id: 'flow', file_path: 'notes/data.txt', content: 'hello from write_file\n',
      });
      assert.equal(r.isError, false, JSON.stringify(r));
      let d = dictOf(r);
      assert.equal(d.message, 'File written successfully');
      assert.match(d.path, /\/notes\/data\.txt$/);
      const written = d.path;

      r = await callTool(client, 'upload_file', {
        session_id: 'flow', file_name: 'table.csv', file_content: 'a,b\n1,2\n',
        destination_path: 'input',
      });
      assert.equal(r.isError, false, JSON.stringify(r));
      d = dictOf(r);
      assert.equal(d.message, 'File uploaded successfully');
      assert.match(d.path, /\/input\/table\.csv$/);
      r = await callTool(client, 'upload_file', {
        session_id: 'flow', file_name: 'top.txt', file_content: 'at the top',
      });
      assert.equal(r.isError, false, JSON.stringify(r));
      assert.match(dictOf(r).path, /\/top\.txt$/);

      r = await callTool(client, 'execute_code', {
        session_id: 'flow',
        code: 'print(open("notes/data.txt").read(), end="")\nprint(open("input/table.csv").read(), end="")\n'
          + 'print(open("top.txt").read())\nopen("output/made.txt", "w").write("made by code")',
      });
      assert.equal(r.isError, false, JSON.stringify(r));
      assert.equal(dictOf(r).logs.stdout.join(''), 'hello from write_file\na,b\n1,2\nat the top\n');

      r = await callTool(client, 'list_files', { session_id: 'flow' });
      assert.equal(r.isError, false, JSON.stringify(r));
      d = dictOf(r);
      assert.equal(d.path, '/');
      const top = Object.fromEntries(d.files.map((f) => [f.name, f]));
      assert.equal(top['top.txt'].type, 'file');
      assert.equal(top.notes.type, 'dir');
      assert.equal(top.output.type, 'dir');
      r = await callTool(client, 'list_files', { session_id: 'flow', path: 'output' });
      d = dictOf(r);
      const made = d.files.find((f) => f.name === 'made.txt');
      assert.ok(made, JSON.stringify(d));
      assert.equal(made.size, 12);
      assert.match(made.path, /\/output\/made\.txt$/);

      for (const file_path of ['notes/data.txt', written]) {
        r = await callTool(client, 'read_file', { session_id: 'flow', file_path });
        assert.equal(r.isError, false, JSON.stringify(r));
        d = dictOf(r);
        assert.equal(d.path, file_path);
        assert.equal(d.content, 'hello from write_file\n');
      }
      r = await callTool(client, 'read_file', { session_id: 'flow', file_path: made.path });
      assert.equal(dictOf(r).content, 'made by code');
    });

    test('get_sandbox_status, close_sandbox, then the sandbox is gone', T, async () => {
      let r = await callTool(client, 'get_sandbox_status', { session_id: 'flow' });
      assert.equal(r.isError, false, JSON.stringify(r));
      let d = dictOf(r);
      assert.equal(d.status, 'active');
      assert.equal(d.session_id, 'flow');
      assert.equal(typeof d.interpreter_type, 'string');
      await callTool(client, 'create_sandbox', { session_id: 'second' });
      r = await callTool(client, 'get_sandbox_status', {});
      d = dictOf(r);
      assert.deepEqual([...d.active_sessions].sort(), ['flow', 'second']);
      assert.equal(d.active_sandbox_count, 2);

      r = await callTool(client, 'close_sandbox', { session_id: 'flow' });
      assert.equal(r.isError, false);
      assert.match(textOf(r), /Sandbox with session ID flow has been successfully closed/);
      r = await callTool(client, 'execute_code', { session_id: 'flow', code: 'print(x)' });
      assert.equal(r.isError, true);
      assert.equal(dictOf(r).error, 'No sandbox found with session ID: flow. Create a sandbox first.');
      // as the seed: closing again is no error, so clients do not retry
      r = await callTool(client, 'close_sandbox', { session_id: 'flow' });
      assert.equal(r.isError, false);
      assert.match(textOf(r), /is not active or has already been closed/);
      d = dictOf(await callTool(client, 'get_sandbox_status', {}));
      assert.deepEqual(d.active_sessions, ['second']);
      await callTool(client, 'close_sandbox', { session_id: 'second' });
    });

    test('create_run_close: one run in a sandbox of its own, closed after', T, async () => {
      const r = await callTool(client, 'create_run_close', { code: 'print("once")\n6 * 7' });
      assert.equal(r.isError, false, JSON.stringify(r));
      const d = dictOf(r);
      assert.deepEqual(d.logs.stdout, ['once\n']);
      assert.equal(d.error, null);
      assert.equal(d.results[0].text, '42');
      assert.equal(d.sandbox_closed, true);
      assert.equal(d.sandbox_removed, true);
      assert.equal(typeof d.sandbox_status, 'string');
      assert.deepEqual(dictOf(await callTool(client, 'get_sandbox_status', {})).active_sessions, []);
      const again = await callTool(client, 'create_run_close', { code: 'print(kept)' });
      assert.equal(again.isError, true);
      assert.equal(dictOf(again).error.name, 'NameError');
    });
  });
}

describe('e2b: bad input is a tool error the model can act on', () => {
  let conn;
  let client;
  let stateDir;

  before(async () => {
    stateDir = tempDir('e2b-bad');
    conn = await connect('stdio', {
      stateDir,
      env: { CODEBOX_MCP_TOOLS: 'e2b', CODEBOX_EXEC_TIMEOUT: '3', CODEBOX_MODEL_TEXT_BYTES: '4096' },
    });
    client = conn.client;
    const r = await callTool(client, 'create_sandbox', { session_id: 'box' });
    assert.equal(r.isError, false, JSON.stringify(r));
  });

  after(async () => {
    if (conn) await conn.close().catch(() => {});
    if (stateDir) removeDir(stateDir);
  });

  test('an unknown sandbox, for every tool that takes one', T, async () => {
    const calls = {
      execute_code: { code: '1' },
      install_package: { package_name: 'cbx-dep' },
      list_files: {},
      read_file: { file_path: 'a.txt' },
      write_file: { file_path: 'a.txt', content: 'x' },
      upload_file: { file_name: 'a.txt', file_content: 'x' },
      get_sandbox_status: {},
    };
    for (const [name, args] of Object.entries(calls)) {
      const r = await callTool(client, name, { session_id: 'nosuch', ...args });
      assert.equal(r.isError, true, name);
      assert.match(dictOf(r).error, /No sandbox found with session ID: nosuch/, name);
    }
    // nothing was made on the way
    assert.deepEqual(dictOf(await callTool(client, 'get_sandbox_status', {})).active_sessions, ['box']);
  });

  test('missing or mistyped arguments', T, async () => {
    const cases = [
      ['create_sandbox', {}, /session_id is required/],
      ['execute_code', { session_id: 'box' }, /code is required/],
      ['execute_code', { code: '1' }, /session_id is required/],
      ['execute_code', { session_id: 7, code: '1' }, /session_id must be a string/],
      ['install_package', { session_id: 'box' }, /package_name is required/],
      ['install_package', { session_id: 'box', package_name: '  ' }, /package_name is required/],
      ['create_run_close', {}, /code is required/],
      ['read_file', { session_id: 'box' }, /file_path is required/],
      ['write_file', { session_id: 'box', file_path: 'a.txt' }, /content are required/],
      ['upload_file', { session_id: 'box', file_name: 'a.txt' }, /file_content are required/],
    ];
    for (const [name, args, message] of cases) {
      const r = await callTool(client, name, args).catch((e) => ({ thrown: e }));
      if (r.thrown) {
        // the SDK may refuse what its schema forbids before sending
        assert.match(String(r.thrown), /session_id|code|file|package|argument|valid/i, name);
        continue;
      }
      assert.equal(r.isError, true, `${name} ${JSON.stringify(args)}`);
      assert.match(textOf(r), message, `${name} ${JSON.stringify(args)}`);
    }
  });

  test('sandbox IDs that could be paths are refused', T, async () => {
    for (const session_id of ['../evil', '.hidden', 'a/b', 'x'.repeat(65)]) {
      const r = await callTool(client, 'create_sandbox', { session_id });
      assert.equal(r.isError, true, session_id);
      assert.match(textOf(r), /Failed to create sandbox/);
      const c = await callTool(client, 'close_sandbox', { session_id });
      assert.equal(c.isError, true, session_id);
    }
    assert.ok(!existsSync(join(stateDir, '..', 'evil')));
  });

  test('hostile paths: nothing outside the sandbox\'s folder is read or written', T, async () => {
    let r = await callTool(client, 'execute_code', {
      session_id: 'box', code: 'import os\nos.symlink("/etc", "etc_link")\nprint("linked")',
    });
    assert.equal(r.isError, false, JSON.stringify(r));
    const cases = [
      ['read_file', { file_path: '../../../../etc/passwd' }, /Error reading file: .*"\.\."/],
      ['read_file', { file_path: '/etc/passwd' }, /Error reading file: '\/etc\/passwd' is outside/],
      ['read_file', { file_path: 'etc_link/passwd' }, /Error reading file: .*leads outside/],
      ['list_files', { path: '..' }, /Error listing files/],
      ['list_files', { path: '/etc' }, /Error listing files: .*outside/],
      ['list_files', { path: 'etc_link' }, /Error listing files: .*leads outside/],
      ['write_file', { file_path: '../escaped.txt', content: 'x' }, /Error writing file/],
      ['write_file', { file_path: 'etc_link/escaped.txt', content: 'x' }, /Error writing file: .*leads outside/],
      ['upload_file', { file_name: '../escaped.txt', file_content: 'x' }, /Error uploading file/],
      ['upload_file', { file_name: 'escaped.txt', file_content: 'x', destination_path: '/tmp' },
        /Error uploading file: '\/tmp' is outside/],
      ['upload_file', { file_name: 'escaped.txt', file_content: 'x', destination_path: '../..' },
        /Error uploading file/],
    ];
    for (const [name, args, message] of cases) {
      r = await callTool(client, name, { session_id: 'box', ...args });
      assert.equal(r.isError, true, `${name} ${JSON.stringify(args)}: ${textOf(r)}`);
      const d = dictOf(r);
      assert.match(d.error, message, `${name} ${JSON.stringify(args)}`);
      assert.doesNotMatch(textOf(r), /root:x:0:0/);
    }
    assert.ok(!existsSync(join(stateDir, 'escaped.txt')));
    assert.ok(!existsSync('/etc/escaped.txt'));
    assert.ok(!existsSync('/tmp/escaped.txt'));
  });

  test('a run that times out: isError, TimeoutError, the sandbox still usable', T, async () => {
    let r = await callTool(client, 'execute_code', {
      session_id: 'box', code: 'import time\nprint("started")\ntime.sleep(30)',
    });
    assert.equal(r.isError, true);
    const d = dictOf(r);
    assert.deepEqual(d.logs.stdout, ['started\n']);
    assert.equal(d.error.name, 'TimeoutError');
    assert.match(d.error.value, /timed out/);
    r = await callTool(client, 'execute_code', { session_id: 'box', code: 'print("still here")' });
    assert.equal(r.isError, false, JSON.stringify(r));
  });

  test('long output: the text keeps head and tail and says where the whole is', T, async () => {
    const r = await callTool(client, 'execute_code', {
      session_id: 'box', code: 'for i in range(3000):\n    print("line", i)',
    });
    assert.equal(r.isError, false, JSON.stringify(r));
    const text = textOf(r);
    assert.ok(text.length < 8192, `${text.length} bytes of text`);
    const shown = JSON.parse(text);
    const out = shown.logs.stdout.join('');
    assert.match(out, /^line 0\n/);
    assert.match(out, /line 2999\n$/);
    const m = /left out here; the whole output is saved as (\S+): read_file/.exec(out);
    assert.ok(m, out.slice(0, 3000));
    // structuredContent keeps it all
    assert.equal(r.structuredContent.logs.stdout.join('').split('\n').length, 3001);
    const whole = await callTool(client, 'read_file', { session_id: 'box', file_path: m[1] });
    assert.equal(whole.isError, false, JSON.stringify(whole));
    assert.match(dictOf(whole).content, /^line 0\nline 1\n/);
  });
});

describe('e2b: a tenant sees only its own sandboxes', () => {
  let server;
  const clients = {};

  before(async () => {
    server = await startServer({
      env: { CODEBOX_MCP_TOOLS: 'e2b', CODEBOX_API_TOKENS: 'alice:alice-token,bob:bob-token' },
    });
    for (const who of ['alice', 'bob']) {
      const client = new Client({ name: `e2b-${who}`, version: '1.0.0' }, { capabilities: {} });
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { Authorization: `Bearer ${who}-token` } },
      }));
      clients[who] = client;
    }
  });

  after(async () => {
    for (const c of Object.values(clients)) await c.close().catch(() => {});
    if (server) await server.stop();
  });

  test('alice\'s sandbox does not exist for bob', T, async () => {
    const { alice, bob } = clients;
    assert.equal((await callTool(alice, 'create_sandbox', { session_id: 'mine' })).isError, false);
    await callTool(alice, 'write_file', { session_id: 'mine', file_path: 'secret.txt', content: 's3cret' });
    for (const [name, args] of [['execute_code', { code: 'print(1)' }],
      ['read_file', { file_path: 'secret.txt' }], ['list_files', {}],
      ['get_sandbox_status', {}]]) {
      const r = await callTool(bob, name, { session_id: 'mine', ...args });
      assert.equal(r.isError, true, name);
      assert.match(textOf(r), /No sandbox found with session ID: mine/, name);
      assert.doesNotMatch(textOf(r), /s3cret/);
    }
    assert.deepEqual(dictOf(await callTool(bob, 'get_sandbox_status', {})).active_sessions, []);
    // bob's sandbox of the same name is his own
    assert.equal((await callTool(bob, 'create_sandbox', { session_id: 'mine' })).isError, false);
    const r = await callTool(bob, 'list_files', { session_id: 'mine' });
    assert.ok(!dictOf(r).files.some((f) => f.name === 'secret.txt'));
    const a = await callTool(alice, 'read_file', { session_id: 'mine', file_path: 'secret.txt' });
    assert.equal(dictOf(a).content, 's3cret');
  });
});

describe('e2b over MCP 2026-07-28: a long execute_code becomes a task', () => {
  let server;
  const TASKS = 'io.modelcontextprotocol/tasks';
  let id = 1;

  /* One stateless POST declaring the tasks extension: its last message. */
  async function post(method, params) {
    const res = await fetch(server.url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method,
        'Mcp-Name': params.name ?? params.taskId,
        ...(params.arguments?.session_id
          ? { 'Mcp-Param-Session-Id': params.arguments.session_id } : {}),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: id++, method, params: { ...params, _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } },
      } } }),
    });
    const text = await res.text();
    const messages = res.headers.get('content-type')?.includes('text/event-stream')
      ? text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)))
      : [JSON.parse(text)];
    return messages.at(-1);
  }

  before(async () => {
    server = await startServer({ env: { CODEBOX_MCP_TOOLS: 'e2b' } });
  });

  after(async () => {
    if (server) await server.stop();
  });

  test('tasks/get gives the seed\'s dict', T, async () => {
    let reply = await post('tools/call', { name: 'create_sandbox', arguments: { session_id: 'slow' } });
    assert.equal(reply.result.isError, false, JSON.stringify(reply));
    reply = await post('tools/call', { name: 'execute_code', arguments: {
      session_id: 'slow', code: 'import time\ntime.sleep(2)\nprint("slept")' } });
    assert.equal(reply.result.resultType, 'task', JSON.stringify(reply));
    let task;
    for (let i = 0; i < 300; i++) {
      task = (await post('tasks/get', { taskId: reply.result.taskId })).result;
      if (task.status !== 'working') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(task.status, 'completed', JSON.stringify(task));
    const d = dictOf(task.result);
    assert.deepEqual(d.logs, { stdout: ['slept\n'], stderr: [] });
    assert.equal(d.error, null);
  });
});

/* With codebox's own set: the order in CODEBOX_MCP_TOOLS decides which
 * tool a name is, and a name is offered once. */
for (const value of ['e2b,codebox', 'codebox,e2b']) {
  describe(`CODEBOX_MCP_TOOLS=${value}`, () => {
    let conn;
    let client;

    before(async () => {
      conn = await connect('stdio', { env: { CODEBOX_MCP_TOOLS: value } });
      client = conn.client;
    });

    after(async () => {
      if (conn) await conn.close().catch(() => {});
    });

    test('each name once, the earlier set\'s tool for a shared name', T, async () => {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      assert.equal(new Set(names).size, names.length, names.join(', '));
      for (const name of [...E2B_TOOLS, 'exec_code', 'session_info', 'list_sessions'])
        assert.ok(names.includes(name), name);
      const readFile = tools.find((t) => t.name === 'read_file');
      const e2bFirst = value.startsWith('e2b');
      assert.deepEqual(readFile.inputSchema.required,
        e2bFirst ? ['session_id', 'file_path'] : ['session_id', 'path']);
      const e2bNames = names.filter((n) => E2B_TOOLS.includes(n));
      if (e2bFirst) assert.deepEqual(names.slice(0, E2B_TOOLS.length), E2B_TOOLS);
      else assert.deepEqual(names.slice(0, TOOL_NAMES.length), TOOL_NAMES);
      assert.equal(e2bNames.length, E2B_TOOLS.length);
    });

    test('a sandbox is a session: both sets work on it', T, async () => {
      const id = value.replace(',', '-');
      let r = await callTool(client, 'create_sandbox', { session_id: id });
      assert.equal(r.isError, false, JSON.stringify(r));
      r = await callTool(client, 'execute_code', { session_id: id, code: 'shared = 6 * 7' });
      assert.equal(r.isError, false, JSON.stringify(r));
      r = await callTool(client, 'exec_code', { session_id: id, code: 'print(shared)' });
      assert.equal(r.isError, false, JSON.stringify(r));
      assert.match(textOf(r), /42/);
      r = await callTool(client, 'session_info', { session_id: id });
      assert.equal(r.structuredContent.session_id, id);
      const file = value.startsWith('e2b')
        ? { file_path: 'both.txt', content: 'from e2b' } : { path: 'both.txt', content: 'from e2b' };
      r = await callTool(client, 'write_file', { session_id: id, ...file });
      assert.equal(r.isError, false, JSON.stringify(r));
      r = await callTool(client, 'execute_code', { session_id: id, code: 'print(open("both.txt").read())' });
      assert.match(textOf(r), /from e2b/);
      r = await callTool(client, 'close_sandbox', { session_id: id });
      assert.match(textOf(r), /successfully closed/);
      r = await callTool(client, 'list_sessions', {});
      assert.ok(!r.structuredContent.sessions.some((s) => s.session_id === id));
    });
  });
}
