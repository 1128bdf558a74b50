// MCP Apps in a real browser (issue 45): an SDK client that declares the
// io.modelcontextprotocol/ui extension finds exec_code's view in
// tools/list, reads it with resources/read, runs a cell with rich outputs
// (a pandas DataFrame, a Plotly and a Vega-Lite chart, a matplotlib PNG,
// Markdown, LaTeX), and hands the view and the CallToolResult to a minimal
// host page (fixtures/apps_host.js: the ext-apps AppBridge, the view in an
// <iframe sandbox="allow-scripts"> with the spec's default CSP) in
// Debian's headless Chromium driven by playwright-core. The test reads the
// DOM inside the frame: the table's rows and cells, the charts' SVG marks,
// the image, KaTeX's MathML; the view's reported height; no request left
// the page. A second cell shows hostile HTML and Markdown
// (fixtures/xss_payloads.js): none of it may run, load or navigate, and
// the text around it still shows. Screenshots go to BUILD/apps-shots/
// (BUILD: the folder of the codebox binary); with MCP_APP_SCREENSHOT=PATH
// the rich one is also written to PATH (how docs/img/mcp-app-outputs.png
// is made). Needs `make apps` (make mcp-test runs it) and chromium
// (make test-deps).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { chromium } from 'playwright-core';

import { CODEBOX_BIN, HERE, callTool, connect, startServer, textOf } from './helpers.js';
import { ALL_IDS, ATTACKER, hostileCell } from './fixtures/xss_payloads.js';

const APPS_CAPS = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } };
const APPS_DIR = resolve(HERE, '../../gateway/mcp/apps');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const HOST_URL = 'http://codebox-host.test/';
const SHOTS = join(dirname(CODEBOX_BIN), 'apps-shots');
const WAIT = { timeout: 15000 };

/* The DataFrame: 12 rows the table must show, cell by cell. */
const CITIES = ['Lyon', 'Oslo', 'Lima', 'Kobe', 'Graz', 'Pune', 'Cork', 'Bern', 'Nice', 'Fez',
  'Hue', 'Ufa'];
const ROWS = CITIES.map((city, i) => ({ city, temp_c: (3.1 + i * 1.7).toFixed(1), rain_mm: 20 + ((i * 37) % 90) }));
const VEGA_POINTS = 12;

const RICH_CELL = `import pandas as pd
import matplotlib.pyplot as plt
from IPython.display import display, Markdown, Latex
df = pd.DataFrame({'city': ${JSON.stringify(CITIES)},
                   'temp_c': [${ROWS.map((r) => r.temp_c).join(', ')}],
                   'rain_mm': [${ROWS.map((r) => r.rain_mm).join(', ')}]})
display({'application/vnd.plotly.v1+json': {'data': [{'type': 'bar', 'x': list(df.city),
         'y': [int(v) for v in df.rain_mm], 'marker': {'color': '#4c78a8'}}],
         'layout': {'title': {'text': 'Rain by city (Plotly)'}, 'height': 210,
                    'margin': {'t': 36, 'b': 30, 'l': 40, 'r': 10}}},
         'text/plain': 'Figure()'}, raw=True)
display(df)
display({'application/vnd.vegalite.v5+json': {'data': {'values': df.to_dict(orient='records')},
         'mark': 'point', 'title': 'Vega-Lite', 'width': 300, 'height': 160,
         'encoding': {'x': {'field': 'temp_c', 'type': 'quantitative'},
                      'y': {'field': 'rain_mm', 'type': 'quantitative'}}},
         'text/plain': 'alt.Chart(...)'}, raw=True)
fig, ax = plt.subplots(figsize=(4, 2))
ax.plot(df.temp_c, df.rain_mm, 'o-')
ax.set_title('matplotlib')
plt.show()
display(Markdown('**Markdown** with a list:\\n\\n- first item\\n- second item\\n\\n'
                 'Euler: $e^{i\\\\pi} + 1 = 0$, prices $5 and $10 stay text.\\n\\n'
                 '$$\\\\sqrt{2}$$'))
display(Latex(r'$$\\bar{x} = \\frac{1}{n}\\sum_{i=1}^{n} x_i$$'))
from IPython.display import JSON
display(JSON({'station': 'Lyon', 'readings': [3.1, 4.8], 'meta': {'unit': 'C', 'ok': True}}))
print('rows:', len(df))`;

/* The host page: fixtures/apps_host.js bundled with the AppBridge. */
async function hostPage() {
  const require = createRequire(join(APPS_DIR, 'package.json'));
  const { build } = require('esbuild');
  const out = await build({ entryPoints: [join(HERE, 'fixtures/apps_host.js')], bundle: true,
    format: 'iife', write: false, legalComments: 'none', logLevel: 'warning',
    nodePaths: [join(APPS_DIR, 'node_modules')] });
  const js = out.outputFiles[0].text.replace(/<\/(script)/gi, '<\\/$1');
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>codebox MCP Apps host</title>
<style>body{font:14px system-ui,sans-serif;margin:0;background:#f3f3f1;color:#222}
#chat{max-width:760px;margin:0 auto;padding:14px}
.ask{background:#dfe8f5;border-radius:12px;padding:8px 12px;margin:0 0 10px auto;width:max-content;max-width:80%}
.turn{background:#fff;border:1px solid #ddd;border-radius:10px;padding:8px;margin-bottom:12px}
.call{font:12px ui-monospace,monospace;color:#666;margin-bottom:4px}
.turn pre{font:11px ui-monospace,monospace;color:#555;background:#f7f7f7;margin:0 0 6px;padding:4px 6px;border-radius:4px}
iframe{display:block;width:100%;height:40px;border:1px solid #e4e4e4;border-radius:6px}</style></head>
<body><div id="chat"><div class="ask">Show the weather table and a chart of the rain.</div></div>
<script>${js}</script></body></html>`;
}

describe('MCP Apps in a browser', () => {
  let server;
  let conn;
  let browser;
  let hostHtml;
  let view;

  before(async () => {
    for (const [what, path] of [['chromium', CHROMIUM], ['gateway/mcp/apps/node_modules', join(APPS_DIR, 'node_modules')]])
      assert.ok(existsSync(path), `${what} is missing (${path}): run make test-deps`);
    [server, browser, hostHtml] = await Promise.all([
      startServer({ env: { CODEBOX_POOL_SIZE: '0' } }),
      chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] }),
      hostPage(),
    ]);
    conn = await connect('http', { server, capabilities: APPS_CAPS });
    const exec = (await conn.client.listTools()).tools.find((t) => t.name === 'exec_code');
    const uri = exec?._meta?.ui?.resourceUri;
    assert.ok(uri, `exec_code names no view: ${JSON.stringify(exec?._meta)}`);
    const { contents } = await conn.client.readResource({ uri });
    assert.equal(contents[0]?.mimeType, 'text/html;profile=mcp-app');
    view = contents[0].text;
    mkdirSync(SHOTS, { recursive: true });
  });

  after(async () => {
    if (conn) await conn.close().catch(() => {});
    if (browser) await browser.close().catch(() => {});
    if (server) await server.stop();
  });

  /* A fresh page on the host; every request but the host page's first is
   * recorded and refused, every dialog recorded and dismissed. */
  async function openHost() {
    const context = await browser.newContext({ viewport: { width: 800, height: 760 } });
    const seen = { requests: [], dialogs: [], sockets: [] };
    let served = false;
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url === HOST_URL && !served) {
        served = true;
        return route.fulfill({ contentType: 'text/html', body: hostHtml });
      }
      // the host's URL again is a frame navigating (a srcdoc frame's
      // relative and "#" links resolve against the host page's URL)
      seen.requests.push(`${url} (${route.request().resourceType()}, frame ${route.request().frame().name() || 'main'})`);
      return route.abort();
    });
    const page = await context.newPage();
    page.on('dialog', (d) => {
      seen.dialogs.push(`${d.type()}: ${d.message()}`);
      d.dismiss().catch(() => {});
    });
    page.on('websocket', (ws) => seen.sockets.push(ws.url()));
    await page.goto(HOST_URL);
    return { context, page, seen };
  }

  async function mount(page, name, args, result) {
    await page.evaluate(([n, v, a, r]) => window.mountView(n, v, a, r), [name, view, args, result]);
    const frame = page.frame({ name });
    assert.ok(frame, `no frame named ${name}`);
    return frame;
  }

  test('rich outputs render in the sandboxed frame through the AppBridge', { timeout: 60000 }, async (t) => {
    const args = { session_id: 'browser', code: RICH_CELL };
    const result = await callTool(conn.client, 'exec_code', args, { timeout: 45000 });
    assert.equal(result.isError, false, textOf(result));
    assert.match(textOf(result), /Lyon[\s\S]*Ufa[\s\S]*rows: 12/, 'the model\'s text has the table');
    const { context, page, seen } = await openHost();
    try {
      const frame = await mount(page, 'rich', args, result);
      // the DataFrame: 12 body rows, each cell as pandas wrote it
      const rows = frame.locator('.out-html table tbody tr');
      await rows.nth(11).waitFor(WAIT);
      assert.equal(await rows.count(), 12);
      const cells = await rows.evaluateAll((trs) => trs.map((tr) =>
        [...tr.querySelectorAll('th,td')].map((c) => c.textContent.trim())));
      assert.deepEqual(cells, ROWS.map((r, i) => [String(i), r.city, r.temp_c, String(r.rain_mm)]));
      // Plotly: one bar per city, drawn as SVG paths
      const bars = frame.locator('.out-plotly .barlayer .point path');
      await bars.nth(CITIES.length - 1).waitFor(WAIT);
      assert.equal(await bars.count(), CITIES.length);
      // Vega-Lite: one symbol per row in the SVG renderer's marks
      const points = frame.locator('.out-vega svg .mark-symbol.role-mark path');
      await points.nth(VEGA_POINTS - 1).waitFor(WAIT);
      assert.equal(await points.count(), VEGA_POINTS);
      // matplotlib's PNG, decoded
      const img = frame.locator('img.out-image[src^="data:image/png;base64,"]');
      await img.waitFor(WAIT);
      assert.ok(await img.evaluate((i) => i.complete && i.naturalWidth > 100), 'the PNG decodes');
      // Markdown (in its shadow root) and KaTeX's MathML
      assert.equal(await frame.locator('.out-markdown strong').textContent(), 'Markdown');
      assert.equal(await frame.locator('.out-markdown li').count(), 2);
      // math in Markdown typeset as Jupyter does: inline $...$ and a $$ block,
      // dollars that do not hug a formula left as text
      const md = frame.locator('.out-markdown');
      assert.equal(await md.locator('p math').count(), 1, 'the inline formula');
      assert.equal(await md.locator('p math msup').count(), 1);
      assert.equal(await md.locator('.math-block math msqrt').count(), 1, 'the block formula');
      assert.match(await md.locator('p').nth(1).textContent(), /prices \$5 and \$10 stay text/);
      assert.equal(await frame.locator('.out-latex math mfrac').count(), 1);
      // application/json as a tree: objects and arrays fold, leaves typed
      const tree = frame.locator('details.json-node');
      assert.equal(await tree.count(), 3, 'the object, readings and meta');
      assert.equal(await tree.first().locator(':scope > summary').textContent(), '{3}');
      assert.equal(await frame.locator('.json-leaf', { hasText: 'station' })
        .locator('.json-string').textContent(), '"Lyon"');
      assert.equal(await frame.locator('.json-leaf', { hasText: 'ok' })
        .locator('.json-boolean').textContent(), 'true');
      assert.equal(await frame.locator('.out-stream').textContent(), 'rows: 12\n');
      // the spec's CSP holds in the frame: a remote image is refused there
      // (a securitypolicyviolation, no request)
      assert.equal(await frame.evaluate((src) => new Promise((res) => {
        document.addEventListener('securitypolicyviolation', (e) => res(e.effectiveDirective), { once: true });
        const probe = new Image();
        probe.onload = () => res('loaded');
        probe.onerror = () => setTimeout(() => res('failed without a CSP violation'), 500);
        probe.src = src;
      }), `${ATTACKER}/csp-probe.png`), 'img-src');
      // the height the view asked for through the bridge
      await page.waitForFunction(() => window.hostLog.sizes.rich.length > 0, null, WAIT);
      const log = await page.evaluate(() => window.hostLog);
      assert.deepEqual(log.events, ['rich: initialized', 'rich: tool result sent']);
      const height = log.sizes.rich.at(-1);
      assert.ok(height >= 300 && Math.max(...log.sizes.rich) <= 500,
        `reported heights ${log.sizes.rich}: at most 500 px, and the outputs fill it`);
      assert.deepEqual([seen.requests, seen.sockets, seen.dialogs], [[], [], []], 'nothing left the page');
      await page.waitForTimeout(300); // Plotly's and Vega's transitions end
      const shot = join(SHOTS, 'apps-browser.png');
      await page.locator('#chat').screenshot({ path: shot });
      if (process.env.MCP_APP_SCREENSHOT)
        await page.locator('#chat').screenshot({ path: resolve(process.env.MCP_APP_SCREENSHOT) });
      t.diagnostic(`screenshot: ${shot}`);
      console.log(`apps_browser: screenshot ${shot}`);
    } finally {
      await context.close();
    }
  });

  test('hostile HTML and Markdown from the kernel run nothing and load nothing', { timeout: 60000 }, async (t) => {
    const args = { session_id: 'browser', code: hostileCell() };
    const result = await callTool(conn.client, 'exec_code', args, { timeout: 45000 });
    assert.equal(result.isError, true, 'the cell ends raising');
    const outputs = result._meta?.['codebox/outputs'] ?? [];
    assert.equal(outputs.length, ALL_IDS.length, 'one output per case, the stream and the error');
    const { context, page, seen } = await openHost();
    try {
      const frame = await mount(page, 'hostile', args, result);
      await frame.locator('.out-error').waitFor(WAIT);
      await frame.locator('.out-plotly .main-svg').first().waitFor(WAIT);
      const dom = await frame.evaluate(readOutputs);
      const shot = join(SHOTS, 'apps-browser-hostile.png');
      await page.screenshot({ path: shot, fullPage: true });
      t.diagnostic(`${dom.clickable.length} elements to click; screenshot: ${shot}`);
      // a user clicks every link, button and summary the view shows
      const clicks = [];
      for (const [i, what] of dom.clickable.entries()) {
        const before = seen.requests.length;
        await frame.locator(`[data-test-click="${i}"]`).click({ force: true, timeout: 1000, noWaitAfter: true })
          .catch(() => {}); // hidden: nothing to click
        await page.waitForTimeout(40);
        if (seen.requests.length > before)
          clicks.push(`clicking ${what} loaded ${seen.requests.slice(before).join(', ')}`);
        if (frame.isDetached() || frame.url() !== 'about:srcdoc') {
          clicks.push(`after clicking ${what} the frame is at ${frame.url()}; the rest was not clicked`);
          break;
        }
      }
      await page.waitForTimeout(500);
      const ran = (await page.evaluate(() => window.hostLog.messages)).filter((m) => m.startsWith('xss-'));
      // the frame's flag after the clicks, or before them when they took the view away
      const inFrame = frame.isDetached() || frame.url() !== 'about:srcdoc'
        ? dom.xss : await frame.evaluate(() => window.xss ?? '');
      const quiet = ['svg-bundle', 'plotly-title', 'latex-href', 'json-keys', 'stream', 'traceback'];
      const report = {
        ran, inFrame, clicks, requests: seen.requests, sockets: seen.sockets, dialogs: seen.dialogs,
        leftovers: dom.leftovers,
        missing: ALL_IDS.filter((id) => !quiet.includes(id)
          && !(dom.text.includes(`safe-${id}`) && dom.text.includes(`still-${id}`))),
        asText: [/stream <img src=x onerror=/, /ValueError: <img src=x onerror=/, /plotly title link/,
          /latex link/, /<img src=x onerror="top\.postMessage\('xss-json-keys'[^\n]*"value"/]
          .filter((re) => !re.test(dom.text)).map(String),
      };
      assert.deepEqual(report, { ran: [], inFrame: '', clicks: [], requests: [], sockets: [], dialogs: [],
        leftovers: [], missing: [], asText: [] }, JSON.stringify(report, null, 1));
    } finally {
      await context.close();
    }
  });
});

/* Runs in the view's frame: walks #outputs and the open shadow roots in
 * it; returns the flag payloads set (window.xss), its text, what the
 * sanitizer left that could act (script-like elements, handlers,
 * javascript: and outside URLs) and the elements a user
 * could click (each marked data-test-click=N; "#" links last, since in a
 * srcdoc frame they resolve against the host page's URL). */
function readOutputs() {
  const text = [];
  const leftovers = [];
  const clickable = [];
  const walk = (root) => {
    text.push(root.textContent ?? '');
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot)
        walk(el.shadowRoot);
      const name = el.localName;
      if (['script', 'iframe', 'frame', 'object', 'embed', 'base', 'meta', 'link'].includes(name))
        leftovers.push(`<${name}>`);
      for (const a of el.attributes) {
        const v = a.value.replace(/[\s\u0000-\u001f]/g, '').toLowerCase();
        if (/^on/i.test(a.name) || /^(javascript|vbscript):/.test(v)
            || (/(href|src|action|data|ping)$/i.test(a.name) && /^(https?:|\/\/|data:text)/.test(v)))
          leftovers.push(`<${name} ${a.name}="${a.value.slice(0, 60)}">`);
      }
      if (!el.closest('.modebar') // Plotly's own buttons, not the kernel's
          && (['a', 'area', 'button', 'summary', 'maction', 'input', 'label', 'slot'].includes(name)
              || [...el.attributes].some((a) => /^(on|href$|xlink:href$|action$|formaction$)/i.test(a.name))))
        clickable.push(el);
    }
  };
  walk(document.getElementById('outputs'));
  const hash = (el) => (el.getAttribute('href') ?? '').startsWith('#');
  clickable.sort((a, b) => hash(a) - hash(b));
  return {
    xss: window.xss ?? '',
    text: text.join('\n'),
    leftovers,
    clickable: clickable.map((el, i) => {
      el.setAttribute('data-test-click', String(i));
      return el.outerHTML.slice(0, 80);
    }),
  };
}
