// CODEBOX_MCP_TOOLS=code-box through the official SDK client: Code Box's
// (CodeBoxMCP's) seven tools with its argument names and answers. Its
// README's calls, in its order (session_info first, upload_file, exec_code
// that loads then reuses, saving to output/, exec_sql inline and as a CSV,
// list_artifacts, list_sessions, destroy_session), over stdio and over the
// SDK's SSEClientTransport pointed at /mcp (Code Box's AutoGen
// SseServerParams line); the model's text is the same dict as
// structuredContent; bad input as Code Box's status "error" with isError;
// tenants kept apart; Code Box's client headers; combined with codebox's own set (the set named first
// wins a name); and, against Azurite, new_artifacts[].sas_url that download
// the files.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';

import { callTool, connect, HERE, isPng, removeDir, startServer, tempDir } from './helpers.js';

const T = { timeout: 180000 };

/* Code Box's tools, in its README's order. */
const CODE_BOX_TOOLS = ['exec_code', 'exec_sql', 'upload_file', 'list_artifacts',
  'session_info', 'list_sessions', 'destroy_session'];

const SALES = 'region,units\nnorth,12\nsouth,30\nwest,7\n';

/* The dict a Code Box tool answered: the content's text (what the model
 * reads) parsed, which must be structuredContent too. */
function dictOf(r) {
  assert.equal(r.content[0].type, 'text');
  const dict = JSON.parse(r.content[0].text);
  assert.deepEqual(r.structuredContent, dict);
  return dict;
}

/* A success: isError false, status "success". */
function success(r) {
  const d = dictOf(r);
  assert.equal(r.isError, false, r.content[0].text);
  assert.equal(d.status, 'success', r.content[0].text);
  return d;
}

/* A failure: isError and Code Box's {status: "error", error}. */
function failure(r, pattern) {
  const d = dictOf(r);
  assert.equal(r.isError, true, r.content[0].text);
  assert.equal(d.status, 'error');
  assert.equal(typeof d.error, 'string');
  if (pattern) assert.match(d.error, pattern);
  return d;
}

/* An HTTP server on loopback with the files given ({path: text}). */
async function fileServer(files) {
  const srv = createServer((req, res) => {
    const body = files[new URL(req.url, 'http://x').pathname];
    if (body === undefined) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/csv' });
    res.end(body);
  });
  await new Promise((res) => srv.listen(0, '127.0.0.1', res));
  return { base: `http://127.0.0.1:${srv.address().port}`, close: () => srv.close() };
}

/* The SDK client on the 2024-11-05 transport at /mcp, as AutoGen's
 * SseServerParams(url=".../mcp") connects; headers on every request. */
async function connectAtMcp(server, headers) {
  const client = new Client({ name: 'autogen-like', version: '1.0.0' }, { capabilities: {} });
  // the SDK sends requestInit's headers with the stream's GET and each POST
  const transport = new SSEClientTransport(new URL('/mcp', server.url),
    headers ? { requestInit: { headers } } : undefined);
  await client.connect(transport);
  return { client, close: () => client.close() };
}

/* Code Box's README, in its order, for session sid. */
async function readmeCalls(client, sid, files) {
  // "First call: session_info to discover absolute paths"
  const info = success(await callTool(client, 'session_info', { session_id: sid }));
  assert.equal(info.session_id, sid);
  assert.equal(info.input_dir, `${info.workdir}/input`);
  assert.equal(info.output_dir, `${info.workdir}/output`);
  assert.equal(info.blob_upload_enabled, false);
  assert.equal(info.blob_container, null);
  for (const k of ['session_ttl', 'idle_timeout', 'exec_timeout', 'download_timeout',
    'max_download_size', 'blob_sas_expiry_hours'])
    assert.ok(Number.isInteger(info.effective_config[k]) && info.effective_config[k] > 0, k);

  // upload_file: blob_url into input/, saved_path for exec_code
  const up = success(await callTool(client, 'upload_file', {
    session_id: sid, blob_url: `${files.base}/exports/sales.csv?sv=2024&sig=abc`,
  }));
  assert.equal(up.saved_path, `${info.input_dir}/sales.csv`);
  assert.equal(up.size_bytes, SALES.length);
  assert.ok(up.message.includes(up.saved_path), up.message);

  // exec_code: load once...
  let d = success(await callTool(client, 'exec_code', {
    session_id: sid, language: 'python',
    code: `import pandas as pd\ndf = pd.read_csv(r'${up.saved_path}')\nprint(len(df), "rows")`,
  }));
  assert.equal(d.session_id, sid);
  assert.match(d.output, /3 rows/);
  assert.deepEqual(d.new_artifacts, []);

  // ...then reuse what is in memory and save outputs to output/ by absolute path
  d = success(await callTool(client, 'exec_code', {
    session_id: sid, language: 'python',
    code: "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
      + `plt.bar(df['region'], df['units'])\nplt.savefig(r'${info.output_dir}/units.png')\n`
      + `df.to_csv(r'${info.output_dir}/units.csv', index=False)\nprint("total", df['units'].sum())`,
  }));
  assert.match(d.output, /total 49/);
  // the files are new_artifacts', not listed again in the text
  assert.doesNotMatch(d.output, /New artifacts|units\.png/);
  const byName = Object.fromEntries(d.new_artifacts.map((a) => [a.filename, a]));
  assert.deepEqual(Object.keys(byName).sort(), ['units.csv', 'units.png']);
  assert.equal(byName['units.png'].path, `${info.output_dir}/units.png`);
  assert.equal(byName['units.png'].extension, '.png');
  assert.equal(byName['units.csv'].extension, '.csv');
  assert.ok(byName['units.png'].size_bytes > 100);
  assert.equal(byName['units.csv'].size_bytes, SALES.length);
  for (const a of d.new_artifacts)
    assert.ok(!('sas_url' in a), 'no blob storage: no sas_url');  // as Code Box
  assert.deepEqual(d.all_artifacts.map((a) => a.filename).sort(), ['units.csv', 'units.png']);

  // exec_sql: a few rows inline, as objects by column
  d = success(await callTool(client, 'exec_sql', {
    session_id: sid, query: 'SELECT category_id, name FROM categories ORDER BY category_id',
  }));
  assert.equal(d.delivery, 'inline');
  assert.deepEqual(d.columns, ['category_id', 'name']);
  assert.ok(d.rows.length > 0);
  assert.equal(d.row_count, d.rows.length);
  assert.deepEqual(Object.keys(d.rows[0]), ['category_id', 'name']);
  assert.equal(d.rows[0].category_id, 1);

  // ...many rows: a CSV in input/, loaded with pd.read_csv
  d = success(await callTool(client, 'exec_sql', { session_id: sid, query: 'SELECT * FROM customers' }));
  assert.equal(d.delivery, 'file');
  assert.ok(d.row_count > 30, JSON.stringify(d));
  assert.equal(d.column_count, d.columns.length);
  assert.ok(d.file_path.startsWith(`${info.input_dir}/`), d.file_path);
  assert.equal(d.file_path, `${info.input_dir}/${d.file_name}`);
  assert.ok(!('rows' in d));
  const csv = success(await callTool(client, 'exec_code', {
    session_id: sid, language: 'python', code: `print(len(pd.read_csv(r'${d.file_path}')))`,
  }));
  assert.equal(csv.output.trim(), String(d.row_count));

  // list_artifacts, list_sessions
  d = success(await callTool(client, 'list_artifacts', { session_id: sid }));
  assert.deepEqual(d.artifacts.map((a) => a.filename).sort(), ['units.csv', 'units.png']);
  assert.equal(d.count, 2);
  d = success(await callTool(client, 'list_sessions', {}));
  const mine = d.sessions.find((s) => s.session_id === sid);
  assert.ok(mine, JSON.stringify(d));
  assert.equal(mine.workdir, info.workdir);
  assert.ok(Number.isInteger(mine.age_seconds) && Number.isInteger(mine.idle_seconds));
  assert.equal(d.count, d.sessions.length);

  // "Call destroy_session when done"
  d = success(await callTool(client, 'destroy_session', { session_id: sid }));
  assert.equal(d.session_id, sid);
  assert.match(d.message, new RegExp(`'${sid}'`));
  d = success(await callTool(client, 'list_sessions', {}));
  assert.ok(!d.sessions.some((s) => s.session_id === sid));
  failure(await callTool(client, 'list_artifacts', { session_id: sid }), new RegExp(sid));
}

const ENV = { CODEBOX_MCP_TOOLS: 'code-box', CODEBOX_POOL_SIZE: '1',
  CODEBOX_DOWNLOAD_ALLOW_PRIVATE: '1' };

for (const kind of ['sse-at-mcp', 'stdio']) {
  describe(`code-box over ${kind}`, () => {
    let server = null;
    let conn;
    let client;
    let files;

    before(async () => {
      files = await fileServer({ '/exports/sales.csv': SALES });
      if (kind === 'stdio') {
        conn = await connect('stdio', { env: ENV });
      } else {
        server = await startServer({ env: ENV });
        conn = await connectAtMcp(server);
      }
      client = conn.client;
    });

    after(async () => {
      if (conn) await conn.close().catch(() => {});
      if (server) assert.equal(await server.stop(), 0);
      files?.close();
    });

    test('tools/list: Code Box\'s seven tools with its argument names', T, async () => {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name), CODE_BOX_TOOLS);
      const schema = Object.fromEntries(tools.map((t) => [t.name, t.inputSchema]));
      assert.deepEqual(schema.exec_code.required, ['session_id', 'language', 'code']);
      assert.deepEqual(Object.keys(schema.exec_code.properties), ['session_id', 'language', 'code']);
      assert.deepEqual(schema.exec_sql.required, ['session_id', 'query']);
      assert.deepEqual(Object.keys(schema.upload_file.properties), ['session_id', 'blob_url', 'filename']);
      assert.deepEqual(schema.upload_file.required, ['session_id']);
      for (const name of ['list_artifacts', 'session_info', 'destroy_session'])
        assert.deepEqual(schema[name].required, ['session_id'], name);
      assert.deepEqual(schema.list_sessions.properties, {});
      assert.match(tools[0].description, /new_artifacts\[\]\.sas_url/);
    });

    test('its README\'s calls, in its order', T, async () => {
      await readmeCalls(client, `readme-${kind}`, files);
    });

    test('a plot shown comes back as an image after the dict', T, async () => {
      const r = await callTool(client, 'exec_code', {
        session_id: `img-${kind}`, language: 'python',
        code: "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
          + 'plt.plot([1, 3, 2])\nplt.show()\nprint("drawn")',
      });
      const d = success(r);
      assert.match(d.output, /drawn/);
      const images = r.content.filter((c) => c.type === 'image');
      assert.equal(images.length, 1);
      assert.ok(isPng(images[0].data));
    });

    test('its usage guide resource', T, async () => {
      const { resources } = await client.listResources();
      assert.ok(resources.some((x) => x.uri === 'code-interpreter://usage-guide'));
      const { contents } = await client.readResource({ uri: 'code-interpreter://usage-guide' });
      assert.match(contents[0].text, /session_info/);
      assert.match(contents[0].text, /sas_url/);
    });
  });
}

describe('code-box: bad input is status "error" with isError', () => {
  let conn;
  let client;
  let files;

  before(async () => {
    files = await fileServer({ '/a.csv': SALES });
    // no CODEBOX_DOWNLOAD_ALLOW_PRIVATE: loopback downloads are refused
    conn = await connect('stdio', { env: { CODEBOX_MCP_TOOLS: 'code-box', CODEBOX_POOL_SIZE: '1' } });
    client = conn.client;
  });

  after(async () => {
    if (conn) await conn.close().catch(() => {});
    files?.close();
  });

  test('code that raises: status error, the exception, the traceback in output', T, async () => {
    const r = await callTool(client, 'exec_code', {
      session_id: 'bad', language: 'python', code: 'print("before")\n1/0',
    });
    const d = failure(r, /ZeroDivisionError: division by zero/);
    assert.match(d.output, /before/);
    assert.match(d.output, /Traceback|ZeroDivisionError/);
    assert.deepEqual(d.new_artifacts, []);
    // the session goes on
    const ok = success(await callTool(client, 'exec_code', {
      session_id: 'bad', language: 'python', code: 'print(2 + 2)',
    }));
    assert.equal(ok.output.trim(), '4');
  });

  test('unknown sessions: list_artifacts and destroy_session do not make one', T, async () => {
    failure(await callTool(client, 'list_artifacts', { session_id: 'nosuch' }), /nosuch/);
    failure(await callTool(client, 'destroy_session', { session_id: 'nosuch' }), /nosuch/);
    const d = success(await callTool(client, 'list_sessions', {}));
    assert.ok(!d.sessions.some((s) => s.session_id === 'nosuch'));
  });

  test('hostile session ids are refused by every tool', T, async () => {
    for (const id of ['../../etc', 'a/b', '.hidden', 'x'.repeat(65), '']) {
      for (const [tool, args] of [
        ['exec_code', { language: 'python', code: 'print(1)' }],
        ['session_info', {}], ['list_artifacts', {}], ['destroy_session', {}],
        ['exec_sql', { query: 'SELECT 1' }],
        ['upload_file', { blob_url: 'https://example.com/a.csv' }],
      ]) {
        const r = await callTool(client, tool, { session_id: id, ...args });
        failure(r, /session_id/);
      }
    }
  });

  test('missing or wrong arguments name what is wrong', T, async () => {
    failure(await callTool(client, 'exec_code', { language: 'python', code: '1' }),
      /session_id is required/);
    failure(await callTool(client, 'exec_code', { session_id: 's', code: '1' }),
      /language is required/);
    failure(await callTool(client, 'exec_code', { session_id: 's', language: 'python' }),
      /Code is empty/);
    failure(await callTool(client, 'exec_code', { session_id: 's', language: 'python', code: '  \n' }),
      /Code is empty/);
    failure(await callTool(client, 'exec_code', { session_id: 5, language: 'python', code: '1' }),
      /must be a string/);
    failure(await callTool(client, 'upload_file', { session_id: 's' }), /Provide 'blob_url'/);
    failure(await callTool(client, 'upload_file', { session_id: 's', blob_url: '' }),
      /Provide 'blob_url'/);
    failure(await callTool(client, 'exec_sql', { session_id: 's', query: ' ' }), /Query is empty/);
    failure(await callTool(client, 'session_info', {}), /session_id is required/);
  });

  test('a session speaks the language it was made with', T, async () => {
    success(await callTool(client, 'exec_code', { session_id: 'py', language: 'Python', code: '1' }));
    failure(await callTool(client, 'exec_code', {
      session_id: 'py', language: 'javascript', code: 'console.log(1)',
    }), /Language 'javascript' is not enabled in session 'py'.*another session_id/);
    const js = success(await callTool(client, 'exec_code', {
      session_id: 'js', language: 'js', code: 'console.log(6 * 7)',
    }));
    assert.equal(js.output.trim(), '42');
    failure(await callTool(client, 'exec_code', { session_id: 'cobol', language: 'cobol', code: 'x' }),
      /cobol/);
  });

  test('exec_sql only reads', T, async () => {
    const before = success(await callTool(client, 'exec_sql', {
      session_id: 'sql', query: 'SELECT count(*) AS n FROM customers',
    }));
    for (const query of ['DELETE FROM customers', 'DROP TABLE customers',
      "UPDATE customers SET first_name = 'x'", 'SELECT 1; DELETE FROM customers'])
      failure(await callTool(client, 'exec_sql', { session_id: 'sql', query }));
    const later = success(await callTool(client, 'exec_sql', {
      session_id: 'sql', query: 'SELECT count(*) AS n FROM customers',
    }));
    assert.deepEqual(later.rows, before.rows);
    assert.ok(before.rows[0].n > 0);
  });

  test('upload_file: only public http(s) addresses, names kept inside input/', T, async () => {
    failure(await callTool(client, 'upload_file', { session_id: 'up', blob_url: 'file:///etc/passwd' }),
      /file:\/\/ URLs are not allowed/);
    failure(await callTool(client, 'upload_file', { session_id: 'up', blob_url: 'not a url' }),
      /not a valid URL/);
    failure(await callTool(client, 'upload_file', { session_id: 'up', blob_url: `${files.base}/a.csv` }),
      /loopback|private|refused/i);
  });
});

describe('code-box: hostile file names and tenants', () => {
  let server;
  let files;
  const TOKENS = { alice: 'tok-alice-1234567890', bob: 'tok-bob-1234567890' };

  before(async () => {
    files = await fileServer({ '/a.csv': SALES });
    server = await startServer({ env: { ...ENV,
      CODEBOX_API_TOKENS: `alice:${TOKENS.alice},bob:${TOKENS.bob}` } });
  });

  after(async () => {
    if (server) assert.equal(await server.stop(), 0);
    files?.close();
  });

  test('a filename with ../ lands inside input/', T, async () => {
    const c = await connectAtMcp(server, { Authorization: `Bearer ${TOKENS.alice}` });
    try {
      const info = success(await callTool(c.client, 'session_info', { session_id: 'names' }));
      for (const filename of ['../../escape.csv', '/etc/cron.d/x.csv', '..']) {
        const d = success(await callTool(c.client, 'upload_file', {
          session_id: 'names', blob_url: `${files.base}/a.csv`, filename,
        }));
        assert.ok(d.saved_path.startsWith(`${info.input_dir}/`), d.saved_path);
        assert.ok(!d.saved_path.slice(info.input_dir.length).includes('..'), d.saved_path);
      }
      assert.ok(!existsSync(join(server.stateDir, 'escape.csv')));
      assert.ok(!existsSync(join(server.stateDir, '@alice', 'escape.csv')));
    } finally {
      await c.close();
    }
  });

  test('Code Box\'s client headers lower the limits (X-Exec-Timeout, X-Sql-Max-Inline-Rows)', T,
    async () => {
      const c = await connectAtMcp(server, { Authorization: `Bearer ${TOKENS.alice}`,
        'X-Exec-Timeout': '2', 'X-Sql-Max-Inline-Rows': '2' });
      try {
        const info = success(await callTool(c.client, 'session_info', { session_id: 'limits' }));
        assert.equal(info.effective_config.exec_timeout, 2);
        assert.equal(info.effective_config.sql_max_inline_rows, 2);
        const t0 = Date.now();
        const d = failure(await callTool(c.client, 'exec_code', {
          session_id: 'limits', language: 'python', code: 'import time\ntime.sleep(30)',
        }), /time limit/);
        assert.ok(Date.now() - t0 < 20000, 'interrupted at the header\'s limit');
        assert.equal(d.session_id, 'limits');
        const q = success(await callTool(c.client, 'exec_sql', {
          session_id: 'limits', query: 'SELECT * FROM categories',
        }));
        assert.equal(q.delivery, 'file');
      } finally {
        await c.close();
      }
    });

  test('one tenant never sees nor ends another\'s session', T, async () => {
    const alice = await connectAtMcp(server, { Authorization: `Bearer ${TOKENS.alice}` });
    const bob = await connectAtMcp(server, { Authorization: `Bearer ${TOKENS.bob}` });
    try {
      success(await callTool(alice.client, 'exec_code', {
        session_id: 'shared', language: 'python',
        code: "secret = 'alice only'\nopen('output/a.txt', 'w').write(secret)",
      }));
      let d = success(await callTool(bob.client, 'list_sessions', {}));
      assert.ok(!d.sessions.some((s) => s.session_id === 'shared'));
      failure(await callTool(bob.client, 'list_artifacts', { session_id: 'shared' }));
      failure(await callTool(bob.client, 'destroy_session', { session_id: 'shared' }));
      // bob's own 'shared' is a new, empty session
      d = dictOf(await callTool(bob.client, 'exec_code', {
        session_id: 'shared', language: 'python', code: 'print(secret)',
      }));
      assert.equal(d.status, 'error');
      assert.match(d.error, /NameError/);
      d = success(await callTool(alice.client, 'exec_code', {
        session_id: 'shared', language: 'python', code: 'print(secret)',
      }));
      assert.equal(d.output.trim(), 'alice only');
      d = success(await callTool(alice.client, 'list_artifacts', { session_id: 'shared' }));
      assert.deepEqual(d.artifacts.map((a) => a.filename), ['a.txt']);
    } finally {
      await alice.close();
      await bob.close();
    }
  });
});

describe('code-box combined with other sets: the set named first wins a name', () => {
  test('code-box,codebox: Code Box\'s seven, then codebox\'s others, on the same sessions', T,
    async () => {
      const conn = await connect('stdio', { env: { CODEBOX_MCP_TOOLS: 'code-box,codebox' } });
      try {
        const { tools } = await conn.client.listTools();
        const names = tools.map((t) => t.name);
        assert.deepEqual(names.slice(0, 7), CODE_BOX_TOOLS);
        assert.deepEqual(names.slice(7).sort(), ['create_session', 'install_package',
          'list_files', 'list_kernels',
          'read_file', 'run_javascript_code', 'run_python_code', 'write_file']);
        assert.equal(new Set(names).size, names.length);
        // exec_code is Code Box's: language required, its answer
        assert.deepEqual(tools[0].inputSchema.required, ['session_id', 'language', 'code']);
        const d = success(await callTool(conn.client, 'exec_code', {
          session_id: 'mix', language: 'python', code: "open('output/made.txt', 'w').write('hi')",
        }));
        assert.deepEqual(d.new_artifacts.map((a) => a.filename), ['made.txt']);
        // codebox's write_file and read_file on the same session
        const w = await callTool(conn.client, 'write_file', {
          session_id: 'mix', path: 'output/notes.md', content: '# notes',
        });
        assert.equal(w.isError, false);
        const listed = success(await callTool(conn.client, 'list_artifacts', { session_id: 'mix' }));
        assert.deepEqual(listed.artifacts.map((a) => a.filename).sort(), ['made.txt', 'notes.md']);
        const rd = await callTool(conn.client, 'read_file', { session_id: 'mix', path: 'output/made.txt' });
        assert.equal(rd.content[0].text, 'hi');
        assert.match(conn.stderr(), /event=tool_shadowed .*tool=exec_code set=codebox by=code-box/);
      } finally {
        await conn.close();
      }
    });

  test('codebox,code-box: codebox\'s own list and answers', T, async () => {
    const conn = await connect('stdio', { env: { CODEBOX_MCP_TOOLS: 'codebox,code-box' } });
    try {
      const { tools } = await conn.client.listTools();
      const names = tools.map((t) => t.name);
      for (const name of CODE_BOX_TOOLS) assert.ok(names.includes(name), name);
      assert.equal(new Set(names).size, names.length);
      assert.equal(names.length, 15);     // codebox's own, none added
      const r = await callTool(conn.client, 'exec_code', { session_id: 'own', code: 'print(6 * 7)' });
      assert.equal(r.isError, false);
      assert.equal(r.structuredContent.stdout, '42\n');   // codebox's shape
      assert.equal(r.structuredContent.status, 'completed');
      // Code Box's guide comes with its set, named or not first
      const { resources } = await conn.client.listResources();
      assert.ok(resources.some((x) => x.uri === 'code-interpreter://usage-guide'));
    } finally {
      await conn.close();
    }
  });

  test('code-box,e2b: Code Box\'s upload_file, e2b\'s other nine', T, async () => {
    const conn = await connect('stdio', { env: { CODEBOX_MCP_TOOLS: 'code-box,e2b' } });
    try {
      const { tools } = await conn.client.listTools();
      const names = tools.map((t) => t.name);
      assert.deepEqual(names.slice(0, 7), CODE_BOX_TOOLS);
      assert.deepEqual(names.slice(7).sort(), ['close_sandbox', 'create_run_close', 'create_sandbox',
        'execute_code', 'get_sandbox_status', 'install_package', 'list_files', 'read_file',
        'write_file']);
      assert.deepEqual(Object.keys(tools[2].inputSchema.properties), ['session_id', 'blob_url',
        'filename']);
    } finally {
      await conn.close();
    }
  });

  test('code-box,codebox-ai: eight tools', T, async () => {
    const conn = await connect('stdio', { env: { CODEBOX_MCP_TOOLS: 'code-box, codebox-ai' } });
    try {
      const { tools } = await conn.client.listTools();
      assert.deepEqual(tools.map((t) => t.name), [...CODE_BOX_TOOLS, 'execute_code']);
      const r = await callTool(conn.client, 'execute_code', { code: 'print(6 * 7)' });
      assert.equal(r.isError, false);
      assert.match(r.content[0].text, /42/);
    } finally {
      await conn.close();
    }
  });
});

describe('code-box in the 2026-07-28 era: a long exec_code becomes a task', () => {
  const TASKS = 'io.modelcontextprotocol/tasks';
  let server;
  let id = 1;

  /* One raw POST of the stateless era, declaring tasks; its last message. */
  async function post(method, params) {
    const res = await fetch(server.url, { method: 'POST', headers: {
      'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method,
      'Mcp-Name': params.name ?? params.taskId,
      ...(params.arguments?.session_id ? { 'Mcp-Param-Session-Id': params.arguments.session_id } : {}),
    }, body: JSON.stringify({ jsonrpc: '2.0', id: id++, method, params: { ...params, _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } },
    } } }) });
    const text = await res.text();
    const messages = res.headers.get('content-type')?.includes('text/event-stream')
      ? text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)))
      : [JSON.parse(text)];
    return messages.at(-1);
  }

  before(async () => {
    server = await startServer({ env: { CODEBOX_MCP_TOOLS: 'code-box', CODEBOX_POOL_SIZE: '1' } });
  });

  after(async () => {
    if (server) assert.equal(await server.stop(), 0);
  });

  test('tasks/get gives Code Box\'s answer', T, async () => {
    const reply = await post('tools/call', { name: 'exec_code', arguments: {
      session_id: 'task', language: 'python',
      code: "import time; time.sleep(2); open('output/late.txt', 'w').write('x'); print('slept')" } });
    assert.equal(reply.result.resultType, 'task', JSON.stringify(reply));
    let task;
    for (let i = 0; i < 300; i++) {
      task = (await post('tasks/get', { taskId: reply.result.taskId })).result;
      if (['completed', 'failed', 'cancelled'].includes(task.status)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(task.status, 'completed', JSON.stringify(task));
    const d = success(task.result);
    assert.match(d.output, /^slept\n/);
    assert.deepEqual(d.new_artifacts.map((a) => a.filename), ['late.txt']);
  });
});

/* ---- Azure Blob through Azurite (installed by `make deps`, as
 * tests/e2e/test_blob.py uses it) ---- */

const AZURITE = join(HERE, '..', 'azurite', 'node_modules', '.bin', 'azurite-blob');
const DEV_ACCOUNT = 'devstoreaccount1';
const DEV_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/'
  + 'K1SZFPTOtr/KBHBeksoGMGw==';

/* Starts Azurite on a free loopback port; resolves when it listens. */
async function startAzurite() {
  assert.ok(existsSync(AZURITE), `Azurite is missing (${AZURITE}): run \`make deps\``);
  const probe = createServer();
  await new Promise((res) => probe.listen(0, '127.0.0.1', res));
  const port = probe.address().port;
  await new Promise((res) => probe.close(res));
  const dir = tempDir('azurite');
  const proc = spawn(AZURITE, ['--blobHost', '127.0.0.1', '--blobPort', String(port),
    '--inMemoryPersistence', '--disableTelemetry', '--skipApiVersionCheck', '--loose'],
  { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let log = '';
  proc.stdout.on('data', (c) => { log += c; });
  proc.stderr.on('data', (c) => { log += c; });
  const endpoint = `http://127.0.0.1:${port}/${DEV_ACCOUNT}`;
  for (let i = 0; ; i++) {
    try {
      await fetch(`http://127.0.0.1:${port}/`);
      break;
    } catch {
      assert.ok(i < 300 && proc.exitCode === null, `Azurite did not start:\n${log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    endpoint,
    connectionString: `DefaultEndpointsProtocol=http;AccountName=${DEV_ACCOUNT};`
      + `AccountKey=${DEV_KEY};BlobEndpoint=${endpoint};`,
    async stop() {
      try {
        process.kill(-proc.pid, 'SIGTERM');
      } catch { /* gone */ }
      await new Promise((r) => (proc.exitCode !== null ? r() : proc.on('exit', r)));
      removeDir(dir);
    },
  };
}

describe('code-box with blob storage: artifacts carry sas_url', () => {
  let azurite;
  let server;
  let conn;

  before(async () => {
    azurite = await startAzurite();
    // Code Box's own setting names, as its .env has them
    server = await startServer({ env: { CODEBOX_MCP_TOOLS: 'code-box', CODEBOX_POOL_SIZE: '1',
      AZURE_BLOB_CONNECTION_STRING: azurite.connectionString,
      AZURE_BLOB_CONTAINER_NAME: 'code-interpreter-artifacts' } });
    conn = await connectAtMcp(server);
  });

  after(async () => {
    if (conn) await conn.close().catch(() => {});
    if (server) assert.equal(await server.stop(), 0);
    if (azurite) await azurite.stop();
  });

  test('session_info says blob upload is on, and where', T, async () => {
    const d = success(await callTool(conn.client, 'session_info', { session_id: 'blob' }));
    assert.equal(d.blob_upload_enabled, true);
    assert.equal(d.blob_container, 'code-interpreter-artifacts');
  });

  test('new_artifacts[].sas_url download the very files; list_artifacts has them too', T,
    async () => {
      const r = await callTool(conn.client, 'exec_code', {
        session_id: 'blob', language: 'python',
        code: "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
          + "plt.plot([1, 2, 4])\nplt.savefig('output/growth.png')\n"
          + "open('output/table.csv', 'w').write('x,y\\n1,2\\n')",
      });
      const d = success(r);
      assert.deepEqual(d.new_artifacts.map((a) => a.filename).sort(), ['growth.png', 'table.csv']);
      const info = success(await callTool(conn.client, 'session_info', { session_id: 'blob' }));
      const host = join(server.stateDir, 'blob');
      for (const a of d.new_artifacts) {
        assert.ok(a.sas_url.startsWith(`${azurite.endpoint}/code-interpreter-artifacts/`), a.sas_url);
        assert.ok(r.content[0].text.includes(JSON.stringify(a.sas_url)), 'the model sees it');
        const sas = new URL(a.sas_url).searchParams;
        assert.equal(sas.get('sp'), 'r');           // read-only
        const res = await fetch(a.sas_url);
        assert.equal(res.status, 200, a.sas_url);
        const body = Buffer.from(await res.arrayBuffer());
        assert.ok(a.path.startsWith(`${info.output_dir}/`), a.path);
        assert.deepEqual(body, readFileSync(join(host, 'output', a.filename)));
        assert.equal(body.length, a.size_bytes);
      }
      // the container is private: no SAS, no file
      const bare = await fetch(d.new_artifacts[0].sas_url.split('?')[0]);
      assert.ok([403, 404].includes(bare.status), String(bare.status));
      const listed = success(await callTool(conn.client, 'list_artifacts', { session_id: 'blob' }));
      assert.equal(listed.count, 2);
      for (const a of listed.artifacts) {
        const res = await fetch(a.sas_url);
        assert.equal(res.status, 200);
        assert.deepEqual(Buffer.from(await res.arrayBuffer()),
          readFileSync(join(host, 'output', a.filename)));
      }
    });
});
