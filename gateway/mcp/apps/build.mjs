// build.mjs: writes the MCP Apps view ui://codebox/outputs.html as ONE
// self-contained file, build/mcp-app-outputs.html at the top of the repo
// (or the path given as the first argument): src/viewer.js and the
// libraries it imports (pinned by package-lock.json) bundled by esbuild
// into one inline script, src/viewer.css inline. The page loads nothing:
// the host's frame allows no origin (MCP Apps' default CSP: inline
// scripts and styles, data: images, no connect, no eval). The page also
// carries its own CSP (a <meta> first in <head>): only the inline script
// whose SHA-256 it names may run, so a handler or <script> that got past
// the sanitizer is blocked even where the host allows 'unsafe-inline'
// (both policies apply; a resource must pass each).
// Run: npm ci && node build.mjs   (or `make apps` from the top).
import { build } from "esbuild";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync, mkdirSync, renameSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = resolve(process.argv[2] ?? resolve(here, "../../../build/mcp-app-outputs.html"));

const result = await build({
  entryPoints: [resolve(here, "src/viewer.js")],
  bundle: true,
  format: "iife",
  platform: "browser",
  target: "es2020",
  minify: true,
  legalComments: "none",
  write: false,
  logLevel: "warning",
});
let js = result.outputFiles[0].text;
// an inline script ends at the first "</script" whatever the JS means by it
js = js.replace(/<\/(script)/gi, "<\\/$1").replace(/<!--/g, "<\\!--");
const css = readFileSync(resolve(here, "src/viewer.css"), "utf8");
let page = readFileSync(resolve(here, "src/viewer.html"), "utf8")
  .replace("/*CSS*/", () => css)
  .replace("/*JS*/", () => js);

// The hash is of the script's text as the HTML parser hands it over: the
// parser would turn CR and NUL into other characters, so there must be none
// (esbuild writes ASCII with escapes). No 'unsafe-inline', no
// 'unsafe-hashes', no 'unsafe-eval': handlers, javascript: URLs, injected
// scripts and eval are refused. Styles may be inline (the kernel's HTML,
// Plotly and Vega add <style> elements); images only from data: URLs; no
// fetch, worker, frame, font, media, form target or <base>.
const hashes = [];
for (const m of page.matchAll(/<script(\s[^>]*)?>([\s\S]*?)<\/script>/gi)) {
  if (/[\r\0]/.test(m[2]))
    throw new Error("build.mjs: an inline script holds CR or NUL: its hash would not match");
  hashes.push(`'sha256-${createHash("sha256").update(m[2], "utf8").digest("base64")}'`);
}
const csp = ["default-src 'none'", `script-src ${hashes.join(" ")}`,
  "style-src 'unsafe-inline'", "img-src data:", "base-uri 'none'", "form-action 'none'"]
  .join("; ");
if (!page.includes("<!--CSP-->"))
  throw new Error("build.mjs: src/viewer.html has no <!--CSP--> slot");
page = page.replace("<!--CSP-->",
                    `<meta http-equiv="Content-Security-Policy" content="${csp}">`);

// nothing may point outside the page (the frame would block it anyway)
for (const pattern of [/<script[^>]+src=/i, /<link[^>]+href=/i, /@import\s/i]) {
  if (pattern.test(page))
    throw new Error(`build.mjs: the page would load something: ${pattern}`);
}
// and the shell itself has no handler attribute (the CSP would refuse it)
if (/<[^>]+\son[a-z]+\s*=/i.test(page.replace(/<script>[\s\S]*?<\/script>/gi, "")))
  throw new Error("build.mjs: src/viewer.html has an inline event handler");
mkdirSync(dirname(out), { recursive: true });
writeFileSync(`${out}.tmp`, page);
renameSync(`${out}.tmp`, out);
console.log(`build.mjs: wrote ${out} (${(page.length / 1024).toFixed(0)} KiB; script ${(js.length / 1024).toFixed(0)} KiB; CSP ${csp.replace(/'sha256-[^']+'/g, "'sha256-…'")})`);
