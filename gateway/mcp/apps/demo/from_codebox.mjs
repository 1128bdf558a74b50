// from_codebox.mjs: a real result for the demo host. Starts build/codebox
// (a scratch state folder, loopback, a free port), asks it as a
// 2026-07-28 client that declares io.modelcontextprotocol/ui to run a cell
// (a pandas DataFrame, a Plotly and a Vega-Lite bundle, Markdown, LaTeX)
// with exec_code, and writes the CallToolResult to the path given
// (default build/apps-shots/real-result.json). shot.sh --real uses it.
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const top = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
const out = resolve(process.argv[2] ?? join(top, 'build/apps-shots/real-result.json'));
const V = '2026-07-28';
const CAPS = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } };
const CELL = `import pandas as pd
from IPython.display import display, Markdown, Latex
df = pd.DataFrame({'city': ['Lyon', 'Oslo', 'Lima', 'Kobe'], 'temp_c': [14.2, 3.9, 19.0, 16.5],
                   'rain_mm': [61, 72, 5, 110]})
print('rows:', len(df))
display({'application/vnd.plotly.v1+json': {'data': [{'type': 'bar', 'x': list(df.city),
         'y': list(df.rain_mm), 'name': 'rain'}], 'layout': {'title': {'text': 'rain (Plotly)'},
         'height': 300}}, 'text/plain': 'Figure()'}, raw=True)
display({'application/vnd.vegalite.v5+json': {'data': {'values': df.to_dict(orient='records')},
         'mark': 'point', 'encoding': {'x': {'field': 'temp_c', 'type': 'quantitative'},
         'y': {'field': 'rain_mm', 'type': 'quantitative'}}, 'title': 'Vega-Lite'},
         'text/plain': 'alt.Chart(...)'}, raw=True)
display(Markdown('**Markdown** with a list:\\n\\n- one\\n- two'))
display(Latex(r'$$\\sum_{i=1}^n i = \\frac{n(n+1)}{2}$$'))
df`;

const dir = mkdtempSync(join(tmpdir(), 'codebox-apps-demo-'));
chmodSync(dir, 0o755);
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CODEBOX_')));
const proc = spawn(join(top, 'build/codebox'), ['serve', '--port', '0', '--state-dir', dir],
                   { env: { ...env, CODEBOX_POOL_SIZE: '0' }, stdio: ['ignore', 'ignore', 'pipe'] });
let log = '';
const port = await new Promise((res, rej) => {
  const timer = setTimeout(() => rej(new Error(`no banner in 15 s:\n${log}`)), 15000);
  proc.stderr.setEncoding('utf8');
  proc.stderr.on('data', (c) => {
    log += c;
    const m = /serving http:\/\/127\.0\.0\.1:(\d+)/.exec(log);
    if (m) { clearTimeout(timer); res(Number(m[1])); }
  });
  proc.on('exit', () => rej(new Error(`codebox exited:\n${log}`)));
});
try {
  const args = { session_id: 'demo', code: CELL };
  const res = await fetch(`http://127.0.0.1:${port}/mcp`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': V, 'Mcp-Method': 'tools/call', 'Mcp-Name': 'exec_code',
      'Mcp-Param-Session-Id': 'demo' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: {
      name: 'exec_code', arguments: args, _meta: {
        'io.modelcontextprotocol/protocolVersion': V,
        'io.modelcontextprotocol/clientInfo': { name: 'apps-demo', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': CAPS } } }),
  });
  const text = await res.text();
  const lines = text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
  const reply = lines.length ? lines.at(-1) : JSON.parse(text);
  if (!reply.result)
    throw new Error(`no result: ${text.slice(0, 2000)}`);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(reply.result, null, 1));
  const outputs = reply.result._meta?.['codebox/outputs'] ?? [];
  console.log(`from_codebox.mjs: wrote ${out}: ${outputs.length} outputs in _meta, isError ${reply.result.isError}`);
} finally {
  proc.kill('SIGTERM');
  await new Promise((r) => proc.on('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
