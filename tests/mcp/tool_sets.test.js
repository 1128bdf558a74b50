// CODEBOX_MCP_TOOLS through the official SDK client: the default set
// (codebox's own tools), codebox-ai's execute_code(code, dependencies?)
// alone and beside codebox's, its text and image content, a raising cell's
// isError, dependencies installed first under the package policy, and an
// unknown set stopping the server at start.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';

import {
  callTool, CODEBOX_BIN, codeboxEnv, connect, isPng, removeDir, startServer, tempDir, textOf,
  TOOL_NAMES,
} from './helpers.js';

/* A 1x1 red PNG. */
const RED_PIXEL =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC';

const T = { timeout: 120000 };

/* codebox's own tools beyond helpers' TOOL_NAMES (files of their own). */
const CODEBOX_TOOLS = [...TOOL_NAMES, 'exec_sql', 'upload_file', 'install_package',
  'create_session'];

/* A find-links folder with two wheels the kernel user can read, built by
 * the system Python's zipfile (as tests/e2e/test_packages.py builds its). */
function makeWheels() {
  const dir = tempDir('wheels');
  const script = `
import base64, hashlib, os, sys, zipfile
def wheel(folder, name, version, files):
    dist = "%s-%s.dist-info" % (name, version)
    entries = dict(files)
    entries[dist + "/METADATA"] = "Metadata-Version: 2.1\\nName: %s\\nVersion: %s\\n" % (name, version)
    entries[dist + "/WHEEL"] = ("Wheel-Version: 1.0\\nGenerator: codebox-tests\\n"
                                "Root-Is-Purelib: true\\nTag: py3-none-any\\n")
    record = []
    for path, data in entries.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data.encode()).digest())
        record.append("%s,sha256=%s,%d" % (path, digest.rstrip(b"=").decode(), len(data)))
    record.append(dist + "/RECORD,,")
    entries[dist + "/RECORD"] = "\\n".join(record) + "\\n"
    path = os.path.join(folder, "%s-%s-py3-none-any.whl" % (name, version))
    with zipfile.ZipFile(path, "w") as z:
        for p, data in entries.items():
            z.writestr(p, data)
    os.chmod(path, 0o644)
wheel(sys.argv[1], "cbx_dep", "1.0", {"cbx_dep/__init__.py": "VALUE = 41\\n"})
wheel(sys.argv[1], "cbx_evil", "1.0", {"cbx_evil/__init__.py": "EVIL = True\\n"})
`;
  const r = spawnSync('/usr/bin/python3', ['-c', script, dir], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  chmodSync(dir, 0o755);
  return dir;
}

/* Starts `codebox mcp` with CODEBOX_MCP_TOOLS=value and no client: its
 * exit code and stderr (it must stop at start). */
function startFails(value) {
  const dir = tempDir('sets');
  const r = spawnSync(CODEBOX_BIN, ['mcp', '--state-dir', dir], {
    env: codeboxEnv({ CODEBOX_MCP_TOOLS: value }),
    input: '',
    encoding: 'utf8',
    timeout: 30000,
  });
  removeDir(dir);
  return r;
}

async function toolNames(client) {
  const { tools } = await client.listTools();
  return tools.map((t) => t.name);
}

describe('CODEBOX_MCP_TOOLS', () => {
  test('unset: codebox\'s own tools, as before, without execute_code', T, async () => {
    const conn = await connect('stdio');
    try {
      const names = await toolNames(conn.client);
      assert.deepEqual([...names].sort(), [...CODEBOX_TOOLS].sort());
    } finally {
      await conn.close();
    }
  });

  test('codebox: the same list as unset', T, async () => {
    const conn = await connect('stdio', { env: { CODEBOX_MCP_TOOLS: 'codebox' } });
    try {
      assert.deepEqual([...(await toolNames(conn.client))].sort(), [...CODEBOX_TOOLS].sort());
    } finally {
      await conn.close();
    }
  });

  // the instructions speak of the set named first: its tools, not another's
  for (const [value, mentions, never] of [
    ['codebox', /session_info/, /create_sandbox|execute_code/],
    ['codebox-ai,codebox', /execute_code.*fresh kernel/, /session_info|create_sandbox/],
    ['e2b,codebox', /create_sandbox.*close_sandbox/, /session_info|exec_code/],
    ['code-box', /exec_code.*new_artifacts/, /create_sandbox|execute_code/],
  ]) {
    test(`'${value}': the instructions name the first set's tools`, T, async () => {
      const conn = await connect('stdio', { env: { CODEBOX_MCP_TOOLS: value } });
      try {
        const text = conn.client.getInstructions();
        assert.match(text, mentions);
        assert.doesNotMatch(text, never);
      } finally {
        await conn.close();
      }
    });
  }

  test('codebox, codebox-ai: both sets, no name twice', T, async () => {
    const conn = await connect('stdio', { env: { CODEBOX_MCP_TOOLS: ' codebox , codebox-ai' } });
    try {
      const names = await toolNames(conn.client);
      assert.deepEqual([...names].sort(), [...CODEBOX_TOOLS, 'execute_code'].sort());
      assert.equal(new Set(names).size, names.length);
      const r = await callTool(conn.client, 'exec_code', { session_id: 'both', code: '6*7' });
      assert.match(textOf(r), /42/);
      const e = await callTool(conn.client, 'execute_code', { code: 'print(6*7)' });
      assert.equal(e.isError, false);
      assert.match(textOf(e), /42/);
    } finally {
      await conn.close();
    }
  });

  for (const value of ['nosuch', 'codebox,nosuch', ' , ']) {
    test(`'${value}' stops the server at start, naming what is wrong`, T, () => {
      const r = startFails(value);
      assert.notEqual(r.status, 0, `exit ${r.status}; stderr: ${r.stderr}`);
      assert.match(r.stderr, /CODEBOX_MCP_TOOLS/);
      const name = value.replace('codebox,', '').trim();
      if (name !== ',') assert.ok(r.stderr.includes(`'${name}'`), r.stderr);
    });
  }

  test('serve stops too', T, async () => {
    await assert.rejects(startServer({ env: { CODEBOX_MCP_TOOLS: 'codebox-ai,e3b' } }),
      /CODEBOX_MCP_TOOLS: unknown tool set 'e3b'/);
  });
});

for (const kind of ['stdio', 'http']) {
  describe(`codebox-ai alone over ${kind}`, () => {
    let server = null;
    let conn;
    let client;

    before(async () => {
      const env = { CODEBOX_MCP_TOOLS: 'codebox-ai' };
      if (kind === 'http') server = await startServer({ env });
      conn = await connect(kind, { server, env });
      client = conn.client;
    });

    after(async () => {
      if (conn) await conn.close().catch(() => {});
      if (server) await server.stop();
    });

    test('tools/list shows only execute_code(code, dependencies?)', T, async () => {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name), ['execute_code']);
      const schema = tools[0].inputSchema;
      assert.equal(schema.type, 'object');
      assert.deepEqual(schema.required, ['code']);
      assert.ok(schema.properties.code);
      assert.ok(schema.properties.dependencies);
      assert.equal(tools[0].annotations.readOnlyHint, false);
    });

    test('codebox\'s tools are not there', T, async () => {
      const r = await callTool(client, 'exec_code', { session_id: 'x', code: '1' })
        .catch((e) => ({ thrown: e }));
      assert.ok(r.thrown || r.isError, JSON.stringify(r));
    });

    test('execute_code: text, then the image the code displayed', T, async () => {
      const r = await callTool(client, 'execute_code', {
        code: 'import base64\nfrom IPython.display import Image, display\n'
          + 'print("hello from codebox-ai")\n'
          + `display(Image(data=base64.b64decode("${RED_PIXEL}")))\n21 * 2`,
      });
      assert.equal(r.isError, false, JSON.stringify(r));
      assert.equal(r.content[0].type, 'text');
      assert.match(r.content[0].text, /hello from codebox-ai/);
      assert.match(r.content[0].text, /42/);
      const images = r.content.filter((c) => c.type === 'image');
      assert.equal(images.length, 1);
      assert.equal(images[0].mimeType, 'image/png');
      assert.ok(isPng(images[0].data));
    });

    test('execute_code is one-shot: nothing persists', T, async () => {
      await callTool(client, 'execute_code', { code: 'kept = 1' });
      const r = await callTool(client, 'execute_code', { code: 'print(kept)' });
      assert.equal(r.isError, true);
      assert.match(textOf(r), /NameError/);
    });

    test('a raising cell is isError with its traceback', T, async () => {
      const r = await callTool(client, 'execute_code', { code: 'print("before")\n1/0' });
      assert.equal(r.isError, true);
      assert.match(textOf(r), /before/);
      assert.match(textOf(r), /ZeroDivisionError/);
    });

    test('dependencies that are not a list are a tool error', T, async () => {
      const r = await callTool(client, 'execute_code', { code: '1', dependencies: 'numpy' });
      assert.equal(r.isError, true);
      assert.match(textOf(r), /dependencies must be a list/);
    });

    test('an empty or null dependencies list just runs the code', T, async () => {
      for (const dependencies of [[], null]) {
        const r = await callTool(client, 'execute_code', { code: 'print(5)', dependencies });
        assert.equal(r.isError, false, JSON.stringify(r));
        assert.match(textOf(r), /5/);
      }
    });

    test('its resources: sessions:// and session://{session_id}', T, async () => {
      const { resources } = await client.listResources();
      assert.ok(resources.some((r) => r.uri === 'sessions://'));
      const { resourceTemplates } = await client.listResourceTemplates();
      assert.ok(resourceTemplates.some((t) => t.uriTemplate === 'session://{session_id}'));
      const list = await client.readResource({ uri: 'sessions://' });
      assert.ok(list.contents.length >= 1);
    });
  });
}

describe('execute_code with dependencies', () => {
  let wheels;
  let conn;

  before(async () => {
    wheels = makeWheels();
    conn = await connect('stdio', {
      env: {
        CODEBOX_MCP_TOOLS: 'codebox-ai',
        CODEBOX_PIP_FIND_LINKS: wheels,
        CODEBOX_PACKAGE_DENY: 'cbx-evil',
      },
    });
  });

  after(async () => {
    if (conn) await conn.close().catch(() => {});
    if (wheels) removeDir(wheels);
  });

  test('installed first, then importable by the code', T, async () => {
    const r = await callTool(conn.client, 'execute_code', {
      code: 'import cbx_dep\nprint("value", cbx_dep.VALUE)',
      dependencies: ['cbx-dep'],
    });
    assert.equal(r.isError, false, JSON.stringify(r));
    assert.match(textOf(r), /value 41/);
  });

  test('a refused one: isError naming the rule, the code not run', T, async () => {
    const r = await callTool(conn.client, 'execute_code', {
      code: 'print("ran")',
      dependencies: ['cbx-dep', 'cbx-evil'],
    });
    assert.equal(r.isError, true);
    assert.match(textOf(r), /Refused 'cbx-evil'/);
    assert.match(textOf(r), /CODEBOX_PACKAGE_DENY/);
    assert.doesNotMatch(textOf(r), /^ran/m);
  });

  test('one that does not exist: isError, the code not run', T, async () => {
    const r = await callTool(conn.client, 'execute_code', {
      code: 'print("ran")',
      dependencies: ['cbx-nowhere-to-be-found'],
    });
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.match(textOf(r), /could not be installed/);
  });
});
