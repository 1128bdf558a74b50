// JupyterLab's own kernel client, @jupyterlab/services (what the browser
// runs; here in Node with `ws`), against codebox's Jupyter API: it lists
// kernelspecs, starts a kernel, negotiates the v1 binary websocket
// subprotocol, executes with outputs and an image, keeps state, answers
// input(), opens a comm with binary buffers, interrupts, restarts and
// shuts down; and, on a server that pauses idle sessions, reconnects to a
// paused kernel: it hears the kernel restarted and goes on with the new one.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, chmodSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { unmountBelow } from '../mcp/unmount.js';
import { KernelManager, KernelSpecAPI, ServerConnection } from '@jupyterlab/services';

const BIN = process.env.CODEBOX_BIN;
let server, state, settings, manager, kernel;

function startServer (env = { CODEBOX_POOL_SIZE: '1' }) {
  const dir = mkdtempSync(join(tmpdir(), 'codebox-jlab-'));
  chmodSync(dir, 0o755);
  const p = spawn(BIN, ['serve', '--port', '0', '--state-dir', join(dir, 's')], {
    env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe']
  });
  p.dir = dir;
  return new Promise((resolve, reject) => {
    let log = '';
    p.stderr.on('data', (d) => {
      log += d;
      const m = /serving http:\/\/127\.0\.0\.1:(\d+)/.exec(log);
      if (m && !p.port) { p.port = Number(m[1]); resolve(p); }
    });
    p.on('exit', (code) => reject(new Error(`codebox serve exited ${code}: ${log}`)));
  });
}

before(async () => {
  server = await startServer();
  state = server.dir;
  settings = ServerConnection.makeSettings({
    baseUrl: `http://127.0.0.1:${server.port}/`,
    wsUrl: `ws://127.0.0.1:${server.port}/`,
    WebSocket,
    fetch: globalThis.fetch,
    token: ''
  });
  manager = new KernelManager({ serverSettings: settings });
  await manager.ready;
});

after(async () => {
  manager?.dispose();
  server?.kill('SIGTERM');
  await new Promise((resolve) => server ? server.on('exit', resolve) : resolve());
  unmountBelow(state);   /* what a server that had to be killed left mounted */
  rmSync(state, { recursive: true, force: true });
});

async function run (code, hooks = {}) {
  const outputs = [];
  const future = kernel.requestExecute({ code, allow_stdin: !!hooks.onStdin });
  future.onIOPub = (msg) => { if (msg.header.msg_type !== 'status') outputs.push(msg); };
  if (hooks.onStdin) future.onStdin = (msg) => hooks.onStdin(msg, future);
  const reply = await future.done;
  return { reply, outputs };
}

test('kernelspecs and a kernel on the v1 subprotocol', async () => {
  const specs = await KernelSpecAPI.getSpecs(settings);
  assert.equal(specs.default, 'python3');
  assert.ok(specs.kernelspecs.python3.resources['logo-64x64']);
  kernel = await manager.startNew({ name: 'python3' });
  const info = await kernel.info;
  assert.equal(info.language_info.name, 'python');
  assert.equal(kernel._ws.protocol, 'v1.kernel.websocket.jupyter.org');
});

test('outputs, state and an image', async () => {
  let { reply, outputs } = await run("x = 6 * 7\nprint('hello')\nx");
  assert.equal(reply.content.status, 'ok');
  const stream = outputs.find((m) => m.header.msg_type === 'stream');
  const result = outputs.find((m) => m.header.msg_type === 'execute_result');
  assert.equal(stream.content.text, 'hello\n');
  assert.equal(result.content.data['text/plain'], '42');
  ({ outputs } = await run('%matplotlib inline\nimport matplotlib.pyplot as plt\n' +
                           'plt.plot([1, 2, 3]); plt.show()'));
  const image = outputs.find((m) => m.header.msg_type === 'display_data');
  assert.ok(image.content.data['image/png'].length > 1000);
});

test('input() answered by this client', async () => {
  const { outputs } = await run("name = input('who? ')\nprint('hi', name)", {
    onStdin: (msg, future) => {
      assert.equal(msg.content.prompt, 'who? ');
      future.sendInputReply({ status: 'ok', value: 'lab' }, msg.header);
    }
  });
  assert.equal(outputs.find((m) => m.header.msg_type === 'stream').content.text, 'hi lab\n');
});

test('a comm with binary buffers both ways', async () => {
  await run([
    'def _t(comm, msg):',
    '    @comm.on_msg',
    '    def _(m):',
    "        comm.send({'n': len(m['buffers'])}, buffers=[bytes(b)[::-1] for b in m['buffers']])",
    "get_ipython().kernel.comm_manager.register_target('rev', _t)"
  ].join('\n'));
  const comm = kernel.createComm('rev');
  const got = new Promise((resolve) => { comm.onMsg = resolve; });
  await comm.open({}).done;
  comm.send({}, undefined, [new Uint8Array([1, 2, 3]).buffer]);
  const msg = await got;
  assert.deepEqual(msg.content.data, { n: 1 });
  const buf = msg.buffers[0];
  assert.deepEqual(Array.from(new Uint8Array(buf.buffer ?? buf, buf.byteOffset ?? 0,
                                             buf.byteLength)), [3, 2, 1]);
});

test('interrupt, restart and shutdown', async () => {
  const future = kernel.requestExecute({ code: "import time\nprint('go', flush=True)\ntime.sleep(60)" });
  await new Promise((resolve) => {
    future.onIOPub = (m) => { if (m.header.msg_type === 'stream') resolve(); };
  });
  await kernel.interrupt();
  // (done rejects with the reply when the reply is an error)
  const reply = await future.done.catch((e) => e);
  assert.equal(reply.content.ename, 'KeyboardInterrupt');
  await run('y = 1');
  await kernel.restart();
  const { reply: after } = await run('y');
  assert.equal(after.content.status, 'error');
  assert.equal(after.content.ename, 'NameError');
  await kernel.shutdown();
  const left = await (await fetch(`http://127.0.0.1:${server.port}/api/kernels`)).json();
  assert.deepEqual(left, []);
});

test('a paused kernel: JupyterLab hears it restarted and runs on the new one', async () => {
  const paused = await startServer({ CODEBOX_POOL_SIZE: '0', CODEBOX_IDLE_PAUSE: '2',
                                    CODEBOX_CLEANUP_INTERVAL: '1' });
  const base = `http://127.0.0.1:${paused.port}`;
  const s2 = ServerConnection.makeSettings({
    baseUrl: `${base}/`, wsUrl: `ws://127.0.0.1:${paused.port}/`, WebSocket,
    fetch: globalThis.fetch, token: ''
  });
  const m2 = new KernelManager({ serverSettings: s2 });
  try {
    await m2.ready;
    let k = await m2.startNew({ name: 'python3' });
    const model = { id: k.id, name: k.name };
    let reply = await k.requestExecute({ code: 'kept = 1' }).done;
    assert.equal(reply.content.status, 'ok');
    k.dispose();    /* the browser tab closed: the session may pause */
    for (let i = 0; ; i++) {
      const st = await (await fetch(`${base}/sessions/${model.id}`)).json();
      if (st.status === 'paused') break;
      assert.ok(i < 200, `never paused: ${JSON.stringify(st)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    k = m2.connectTo({ model });
    const seen = [];
    k.statusChanged.connect((_, status) => seen.push(status));
    /* JupyterLab turns a 'restarting' status into 'autorestarting' (its
       "Kernel Restarting" dialog) and reconnects */
    for (let i = 0; !seen.includes('autorestarting'); i++) {
      assert.ok(i < 300, `no restart heard: ${seen}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const future = k.requestExecute({ code: "print('kept' in dir())" });
    let text = '';
    future.onIOPub = (msg) => { if (msg.header.msg_type === 'stream') text += msg.content.text; };
    reply = await future.done;
    assert.equal(reply.content.status, 'ok');
    assert.equal(text, 'False\n');
    k.dispose();
  } finally {
    m2.dispose();
    paused.kill('SIGTERM');
    await new Promise((resolve) => paused.on('exit', resolve));
    unmountBelow(paused.dir);
    rmSync(paused.dir, { recursive: true, force: true });
  }
});
