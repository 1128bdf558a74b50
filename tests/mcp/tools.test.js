// The MCP tools, resources and protocol utilities of codebox through the
// official SDK client, once over stdio (`codebox mcp`) and once over
// Streamable HTTP (`codebox serve`), with real Python and JavaScript kernels.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import {
  CallToolResultSchema,
  EmptyResultSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

import { callTool, connect, isPng, startServer, textOf, TOOL_NAMES } from './helpers.js';

/* A 1x1 red PNG. */
const RED_PIXEL =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC';

const T = { timeout: 60000 };

for (const kind of ['stdio', 'http']) {
  describe(`MCP over ${kind}`, () => {
    let server = null;
    let conn;
    let client;
    const sid = (name) => `${name}-${kind}`;
    const exec = (session, code, extra = {}, options) =>
      callTool(client, 'exec_code', { session_id: session, code, ...extra }, options);

    before(async () => {
      if (kind === 'http') server = await startServer();
      conn = await connect(kind, { server });
      client = conn.client;
    });

    after(async () => {
      if (conn) await conn.close().catch(() => {});
      if (server) await server.stop();
    });

    test('initialize names codebox and its capabilities', () => {
      assert.equal(client.getServerVersion().name, 'codebox');
      const caps = client.getServerCapabilities();
      assert.ok(caps.tools, 'tools capability');
      assert.ok(caps.resources, 'resources capability');
      assert.ok(caps.logging, 'logging capability');
    });

    test('tools/list shows the 11 tools, each with an object inputSchema', async () => {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      for (const name of TOOL_NAMES) assert.ok(names.includes(name), `${name} in ${names}`);
      assert.equal(new Set(names).size, names.length, 'no name twice');
      assert.ok(!names.some((n) => n.startsWith('test_')), 'no conformance fixtures by default');
      for (const tool of tools) {
        assert.equal(tool.inputSchema?.type, 'object', `${tool.name}.inputSchema.type`);
        assert.ok(tool.description?.length > 20, `${tool.name} has a description`);
      }
    });

    test('exec_code keeps state across calls in one session', T, async () => {
      const first = await exec(sid('state'), 'x = 41');
      assert.equal(first.isError, false, textOf(first));
      assert.equal(first.structuredContent.status, 'completed');
      const second = await exec(sid('state'), 'print(x + 1)');
      assert.equal(second.structuredContent.stdout, '42\n');
      assert.match(textOf(second), /42/);
      assert.ok(
        second.structuredContent.execution_count > first.structuredContent.execution_count,
        'execution_count grows',
      );
    });

    test('exec_code with language javascript keeps state in a JavaScript kernel', T, async () => {
      const first = await exec(sid('js'), 'var a = 40;', { language: 'javascript' });
      assert.equal(first.structuredContent.status, 'completed', textOf(first));
      const second = await exec(sid('js'), 'console.log(a + 2)');
      assert.equal(second.structuredContent.stdout.trim(), '42');
      const info = await callTool(client, 'session_info', { session_id: sid('js') });
      assert.equal(info.structuredContent.kernel, 'javascript');
    });

    // BUG: tool errors of exec_code/run_*_code carry structuredContent
    // {"error": TEXT}, which does not match their outputSchema (status
    // required, error an object): the SDK client turns the helpful isError
    // result into an MCP error -32602.
    const SCHEMA_BUG = T;   /* fixed: error results match the outputSchema */

    test('exec_code refuses another language in an existing session', SCHEMA_BUG, async () => {
      await exec(sid('state'), 'pass');
      const r = await exec(sid('state'), 'console.log(1)', { language: 'javascript' });
      assert.equal(r.isError, true);
      assert.match(textOf(r), /another session_id/);
    });

    test('run_javascript_code and run_python_code run once in fresh kernels', T, async () => {
      const js = await callTool(client, 'run_javascript_code', { code: 'console.log(6 * 7)' });
      assert.equal(js.structuredContent.status, 'completed', textOf(js));
      assert.equal(js.structuredContent.stdout.trim(), '42');
      const py = await callTool(client, 'run_python_code', { code: 'y = 5\nprint(y * 2)' });
      assert.equal(py.structuredContent.stdout, '10\n');
      const again = await callTool(client, 'run_python_code', { code: 'print(y)' });
      assert.equal(again.structuredContent.status, 'error', 'nothing persists');
      assert.match(textOf(again), /NameError/);
    });

    test('a matplotlib plot comes back as a PNG image item', T, async () => {
      const code = [
        'import matplotlib.pyplot as plt',
        'plt.plot([1, 3, 2])',
        'plt.title("codebox")',
        'plt.show()',
      ].join('\n');
      const r = await exec(sid('state'), code);
      assert.equal(r.structuredContent.status, 'completed', textOf(r));
      const images = r.content.filter((c) => c.type === 'image');
      assert.equal(images.length, 1, JSON.stringify(r.content.map((c) => c.type)));
      assert.equal(images[0].mimeType, 'image/png');
      assert.ok(isPng(images[0].data), 'base64 decodes to PNG bytes');
      assert.ok(
        r.structuredContent.displays.some((d) => d.mime === 'image/png'),
        JSON.stringify(r.structuredContent.displays),
      );
    });

    test('a huge plot arrives downscaled under the cap with a resource_link', T, async () => {
      const code = [
        'import numpy as np, matplotlib.pyplot as plt',
        'plt.figure(figsize=(16, 16), dpi=100)',
        'plt.imshow(np.random.default_rng(1).random((800, 800)))',
        'plt.show()',
      ].join('\n');
      const r = await exec(sid('huge'), code);
      assert.equal(r.structuredContent.status, 'completed', textOf(r));
      const images = r.content.filter((c) => c.type === 'image');
      assert.equal(images.length, 1, JSON.stringify(r.content.map((c) => c.type)));
      const bytes = Buffer.from(images[0].data, 'base64');
      assert.ok(isPng(images[0].data), 'the downscaled image is a PNG');
      assert.ok(bytes.length <= 262144, `inline image of ${bytes.length} bytes is under the cap`);
      const big = r.structuredContent.displays.find((d) => d.mime === 'image/png');
      assert.ok(big.bytes > 262144, `the original was ${big.bytes} bytes`);
      const links = r.content.filter((c) => c.type === 'resource_link');
      assert.equal(links.length, 1, JSON.stringify(r.content.map((c) => c.type)));
      assert.match(links[0].uri, new RegExp(`^artifact://${sid('huge')}/output/.+\\.png$`));
      const read = await client.readResource({ uri: links[0].uri });
      const full = Buffer.from(read.contents[0].blob, 'base64');
      assert.equal(full.length, big.bytes, 'the link serves the full image');
    });

    test('progress notifications carry output while a call runs', T, async () => {
      const code = [
        'import time',
        'for i in range(10):',
        '    print("tick", i, flush=True)',
        '    time.sleep(0.2)',
      ].join('\n');
      await exec(sid('progress'), 'pass'); // start the kernel first
      const notes = [];
      const started = Date.now();
      const r = await exec(sid('progress'), code, {}, {
        onprogress: (p) => notes.push({ ...p, at: Date.now() }),
      });
      const done = Date.now();
      assert.equal(r.structuredContent.status, 'completed', textOf(r));
      assert.ok(done - started >= 1800, 'the loop ran ~2 s');
      assert.ok(notes.length >= 3, `several progress notifications, got ${notes.length}`);
      assert.ok(notes[0].at < done - 1000, 'the first one came well before the result');
      for (let i = 1; i < notes.length; i++)
        assert.ok(notes[i].progress > notes[i - 1].progress, 'progress grows');
      const streamed = notes.map((n) => n.message ?? '').join('');
      assert.match(streamed, /tick 0/);
      assert.match(streamed, /tick 5/);
    });

    /* Runs an endless loop in session s, aborts the call after 1.5 s, and
     * returns the next call's result and how long it took. */
    async function abortThenRun(s, code) {
      const controller = new AbortController();
      const pending = exec(s, 'import time\nwhile True:\n    time.sleep(0.05)', {}, {
        signal: controller.signal,
      });
      setTimeout(() => controller.abort('test aborts'), 1500);
      await assert.rejects(pending);
      const t0 = Date.now();
      const next = await exec(s, code, {}, { timeout: 10000 });
      return { next, elapsed: Date.now() - t0 };
    }
    const serverLog = () => `server log:\n${conn.stderr().split('\n').slice(-15).join('\n')}`;

    test('aborting a call interrupts the kernel and keeps the session', T, async () => {
      const s = sid('abort');
      await exec(s, 'kept = "still here"');
      const { elapsed } = await abortThenRun(s, 'pass');
      assert.ok(elapsed < 5000, `next call answered in ${elapsed} ms`);
      const after = await exec(s, 'print(kept)');
      assert.equal(after.structuredContent.status, 'completed', `${textOf(after)}\n${serverLog()}`);
      assert.equal(after.structuredContent.stdout, 'still here\n', 'no restart: variables kept');
    });

    test('the call right after an aborted one runs (is not aborted by the kernel)', T, async () => {
      const s = sid('abort-next');
      await exec(s, 'kept = "still here"');
      for (let round = 0; round < 3; round++) {
        const { next, elapsed } = await abortThenRun(s, 'print(kept)');
        assert.ok(elapsed < 5000, `next call answered in ${elapsed} ms`);
        assert.equal(next.structuredContent.status, 'completed',
          `round ${round}: ${textOf(next)}\n${serverLog()}`);
        assert.equal(next.structuredContent.stdout, 'still here\n');
      }
    });

    test('two clients in parallel do not see each other\'s output', T, async () => {
      const other = await connect(kind, { server, name: 'second-client' });
      try {
        const loop = (word) =>
          `import time\nfor i in range(6):\n    print("${word}", i, flush=True)\n    time.sleep(0.15)`;
        const progressA = [];
        const progressB = [];
        const [a, b] = await Promise.all([
          callTool(client, 'exec_code', { session_id: sid('par-a'), code: loop('alpha') },
            { onprogress: (p) => progressA.push(p.message ?? '') }),
          callTool(other.client, 'exec_code', { session_id: sid('par-b'), code: loop('bravo') },
            { onprogress: (p) => progressB.push(p.message ?? '') }),
        ]);
        assert.match(a.structuredContent.stdout, /alpha 5/);
        assert.match(b.structuredContent.stdout, /bravo 5/);
        assert.doesNotMatch(a.structuredContent.stdout + progressA.join(''), /bravo/);
        assert.doesNotMatch(b.structuredContent.stdout + progressB.join(''), /alpha/);
      } finally {
        if (kind === 'http') await other.transport.terminateSession().catch(() => {});
        await other.close();
      }
    });

    test('write_file then read_file round-trips text and a PNG', T, async () => {
      const s = sid('files');
      const w = await callTool(client, 'write_file', {
        session_id: s, path: 'input/notes.txt', content: 'héllo\nwörld\n',
      });
      assert.equal(w.isError, false, textOf(w));
      const r = await callTool(client, 'read_file', { session_id: s, path: 'input/notes.txt' });
      assert.equal(r.isError, false, textOf(r));
      assert.equal(textOf(r), 'héllo\nwörld\n');

      const wp = await callTool(client, 'write_file', {
        session_id: s, path: 'input/pixel.png', content: RED_PIXEL, encoding: 'base64',
      });
      assert.equal(wp.isError, false, textOf(wp));
      const rp = await callTool(client, 'read_file', { session_id: s, path: 'input/pixel.png' });
      const image = rp.content.find((c) => c.type === 'image');
      assert.ok(image, JSON.stringify(rp.content));
      assert.equal(image.mimeType, 'image/png');
      assert.equal(image.data, RED_PIXEL);

      const seen = await exec(s, 'print(open("input/notes.txt", encoding="utf-8").read(), end="")');
      assert.equal(seen.structuredContent.stdout, 'héllo\nwörld\n', 'code opens it by path');
    });

    test('list_files lists a folder with name, size and kind', T, async () => {
      const s = sid('files');
      await callTool(client, 'write_file', { session_id: s, path: 'input/sub/x.csv', content: 'a,b\n' });
      const r = await callTool(client, 'list_files', { session_id: s, path: 'input' });
      assert.equal(r.isError, false, textOf(r));
      const entries = r.structuredContent.entries;
      const notes = entries.find((e) => e.name === 'notes.txt');
      assert.deepEqual(notes, { name: 'notes.txt', size: Buffer.byteLength('héllo\nwörld\n'), kind: 'file' });
      assert.equal(entries.find((e) => e.name === 'sub')?.kind, 'directory');
      const top = await callTool(client, 'list_files', { session_id: s });
      const names = top.structuredContent.entries.map((e) => e.name);
      assert.ok(names.includes('input') && names.includes('output'), names.join(','));
    });

    test('session_info gives workdir, input_dir and output_dir that code can use', T, async () => {
      const s = sid('state');
      const r = await callTool(client, 'session_info', { session_id: s });
      const info = r.structuredContent;
      assert.equal(info.session_id, s);
      assert.equal(info.kernel, 'python3');
      assert.equal(typeof info.workdir, 'string');
      assert.equal(info.input_dir, `${info.workdir}/input`);
      assert.equal(info.output_dir, `${info.workdir}/output`);
      const cwd = await exec(s, 'import os\nprint(os.getcwd())\nprint(os.path.isdir(' +
        JSON.stringify(info.output_dir) + '))');
      assert.equal(cwd.structuredContent.stdout, `${info.workdir}\nTrue\n`);
    });

    test('a code error returns the traceback and status error', T, async () => {
      const r = await exec(sid('state'), 'def f():\n    return 1 / 0\nf()');
      assert.equal(r.structuredContent.status, 'error');
      assert.equal(r.structuredContent.error?.ename, 'ZeroDivisionError');
      const text = textOf(r);
      assert.match(text, /ZeroDivisionError/);
      assert.match(text, /1 \/ 0/, 'the traceback shows the failing line');
      assert.doesNotMatch(text, /\x1b\[/, 'no ANSI colours');
    });

    test('exec_code misuse gives isError with a helpful message (SDK client)', SCHEMA_BUG, async () => {
      const noCode = await callTool(client, 'exec_code', { session_id: sid('state') });
      assert.equal(noCode.isError, true);
      assert.match(textOf(noCode), /code is required/);
      const badId = await exec('../x', 'print(1)');
      assert.equal(badId.isError, true);
      assert.match(textOf(badId), /invalid session_id/);
      const badKernel = await exec(sid('nokernel'), 'print(1)', { kernel: 'no-such-kernel' });
      assert.equal(badKernel.isError, true);
      assert.match(textOf(badKernel), /no-such-kernel/);
    });

    test('tool misuse gives isError with a helpful message', T, async () => {
      // client.request skips the SDK's outputSchema check (see the bug above)
      const raw = (name, args) =>
        client.request({ method: 'tools/call', params: { name, arguments: args } },
          CallToolResultSchema);
      const noCode = await raw('exec_code', { session_id: sid('state') });
      assert.equal(noCode.isError, true);
      assert.match(textOf(noCode), /code is required/);

      const badId = await raw('exec_code', { session_id: '../x', code: 'print(1)' });
      assert.equal(badId.isError, true);
      assert.match(textOf(badId), /invalid session_id '\.\.\/x'/);
      assert.match(textOf(badId), /A-Z a-z 0-9/);

      const badKernel = await raw('exec_code', {
        session_id: sid('nokernel'), code: 'print(1)', kernel: 'no-such-kernel',
      });
      assert.equal(badKernel.isError, true);
      assert.match(textOf(badKernel), /no-such-kernel/);
      assert.match(textOf(badKernel), /python3/, 'lists the kernels there are');

      const otherLanguage = await raw('exec_code', {
        session_id: sid('state'), code: '1', language: 'javascript',
      });
      assert.equal(otherLanguage.isError, true);
      assert.match(textOf(otherLanguage), /another session_id/);

      const badPath = await callTool(client, 'read_file', { session_id: sid('state'), path: '../../etc/passwd' });
      assert.equal(badPath.isError, true);

      const noSession = await callTool(client, 'destroy_session', { session_id: sid('never') });
      assert.equal(noSession.isError, true);
      assert.match(textOf(noSession), /list_sessions/);

      await assert.rejects(callTool(client, 'no_such_tool', {}), (e) => {
        assert.equal(e.code, -32602);
        assert.match(e.message, /tools\/list/);
        return true;
      });
    });

    test('list_kernels, list_sessions and destroy_session', T, async () => {
      const kernels = await callTool(client, 'list_kernels', {});
      const names = kernels.structuredContent.kernels.map((k) => k.name);
      assert.ok(names.includes('python3') && names.includes('javascript'), names.join(','));

      const s = sid('doomed');
      await exec(s, 'pass');
      let sessions = (await callTool(client, 'list_sessions', {})).structuredContent.sessions;
      const mine = sessions.find((x) => x.session_id === s);
      assert.ok(mine, 'listed');
      assert.equal(typeof mine.age_seconds, 'number');
      assert.equal(typeof mine.idle_seconds, 'number');
      assert.equal(typeof mine.workdir, 'string');
      const d = await callTool(client, 'destroy_session', { session_id: s });
      assert.equal(d.structuredContent.destroyed, true);
      sessions = (await callTool(client, 'list_sessions', {})).structuredContent.sessions;
      assert.ok(!sessions.some((x) => x.session_id === s), 'gone after destroy');
    });

    test('resources/list has the guide and sessions://; reads work', T, async () => {
      const { resources } = await client.listResources();
      const uris = resources.map((r) => r.uri);
      assert.ok(uris.includes('codebox://guide'), uris.join(' '));
      assert.ok(uris.includes('sessions://'), uris.join(' '));
      const guide = await client.readResource({ uri: 'codebox://guide' });
      assert.match(guide.contents[0].text, /session_id/);
      const list = await client.readResource({ uri: 'sessions://' });
      const ids = JSON.parse(list.contents[0].text).sessions.map((x) => x.session_id);
      assert.ok(ids.includes(sid('state')), ids.join(','));
    });

    test('resources/read of session://ID describes the session', T, async () => {
      const r = await client.readResource({ uri: `session://${sid('state')}` });
      assert.equal(r.contents[0].mimeType, 'application/json');
      const info = JSON.parse(r.contents[0].text);
      assert.equal(info.session_id, sid('state'));
      assert.equal(typeof info.workdir, 'string');
      await assert.rejects(client.readResource({ uri: 'session://no-such-session' }));
    });

    test('an artifact under output/ is listed as artifact://ID/output/... and reads back', T, async () => {
      const s = sid('art');
      const r = await exec(s, 'with open("output/report.txt", "w") as f:\n    f.write("the report\\n")');
      assert.equal(r.structuredContent.status, 'completed', textOf(r));
      assert.ok(
        JSON.stringify(r.structuredContent.new_artifacts).includes('report.txt'),
        JSON.stringify(r.structuredContent.new_artifacts),
      );
      const uri = `artifact://${s}/output/report.txt`;
      const { resources } = await client.listResources();
      const entry = resources.find((x) => x.uri === uri);
      assert.ok(entry, resources.map((x) => x.uri).join(' '));
      assert.equal(entry.mimeType, 'text/plain');
      const read = await client.readResource({ uri });
      assert.equal(read.contents[0].text, 'the report\n');
      const arts = await callTool(client, 'list_artifacts', { session_id: s });
      assert.ok(JSON.stringify(arts.structuredContent.artifacts).includes('report.txt'));
    });

    test('ping answers {}', async () => {
      assert.deepEqual(await client.ping(), {});
    });

    test('logging/setLevel filters notifications/message', T, async () => {
      const messages = [];
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
        messages.push(n.params);
      });
      assert.deepEqual(await client.setLoggingLevel('info'), {});
      await exec(sid('log-info'), 'pass');
      assert.ok(
        messages.some((m) => m.level === 'info' && String(m.data).includes(sid('log-info'))),
        JSON.stringify(messages),
      );
      await client.setLoggingLevel('error');
      const before = messages.length;
      await exec(sid('log-error'), 'pass');
      assert.equal(messages.length, before, 'no info message once the level is error');
      await assert.rejects(client.setLoggingLevel('loud'), (e) => e.code === -32602);
      await client.setLoggingLevel('info');
    });

    test('an unknown method is method not found', async () => {
      await assert.rejects(
        client.request({ method: 'codebox/no-such-method', params: {} }, EmptyResultSchema),
        (e) => {
          assert.equal(e.code, -32601);
          return true;
        },
      );
      assert.deepEqual(await client.ping(), {}, 'still serving');
    });

    if (kind === 'http') {
      test('codebox serve ends cleanly on SIGTERM', T, async () => {
        await conn.transport.terminateSession();
        await conn.close();
        conn = null;
        const code = await server.stop();
        server = null;
        assert.equal(code, 0);
      });
    }
  });
}
