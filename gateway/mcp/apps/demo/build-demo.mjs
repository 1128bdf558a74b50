// build-demo.mjs: writes build/mcp-app-demo-host.html, the demo host
// (host.js bundled with the ext-apps AppBridge) with the built view and a
// tool result inlined (sample-result.json, or the path given: e.g. the
// one from_codebox.mjs wrote), to open in a browser: one frame per output,
// or ?single for the whole result in one frame. Run after build.mjs.
import { build } from "esbuild";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const buildDir = resolve(here, "../../../../build");
const view = readFileSync(resolve(buildDir, "mcp-app-outputs.html"), "utf8");
const sample = readFileSync(resolve(process.argv[2] ?? resolve(here, "sample-result.json")), "utf8");
const js = (await build({ entryPoints: [resolve(here, "host.js")], bundle: true, format: "iife",
                          minify: true, write: false, legalComments: "none" }))
  .outputFiles[0].text.replace(/<\/(script)/gi, "<\\/$1");
// JSON inside <script type="application/json">: "<\/" keeps "</script" out
const embed = (text) => JSON.stringify(JSON.parse(text)).replace(/<\//g, "<\\/");
const page = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>codebox MCP Apps demo host</title>
<style>body{font:13px system-ui;margin:12px;background:#eee}#views{display:grid;grid-template-columns:1fr 1fr;gap:10px}
figure{margin:0;background:#fff;border:1px solid #ccc}figcaption{font:11px monospace;padding:2px 6px;background:#ddd}
iframe{border:0;width:100%;height:60px;display:block}</style></head><body>
<div id="views"></div>
<script type="application/json" id="view-html">${JSON.stringify(view).replace(/<\//g, "<\\/")}</script>
<script type="application/json" id="sample-result">${embed(sample)}</script>
<script>${js}</script></body></html>`;
const out = resolve(buildDir, "mcp-app-demo-host.html");
writeFileSync(out, page);
console.log(`build-demo.mjs: wrote ${out} (${(page.length / 1024).toFixed(0)} KiB)`);
