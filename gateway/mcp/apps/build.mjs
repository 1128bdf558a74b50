// build.mjs: writes the MCP Apps view ui://codebox/outputs.html as ONE
// self-contained file, build/mcp-app-outputs.html at the top of the repo
// (or the path given as the first argument): src/viewer.js and the
// libraries it imports (pinned by package-lock.json) bundled by esbuild
// into one inline script, src/viewer.css inline. The page loads nothing:
// the host's frame allows no origin (MCP Apps' default CSP: inline
// scripts and styles, data: images, no connect, no eval).
// Run: npm ci && node build.mjs   (or `make apps` from the top).
import { build } from "esbuild";
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
const page = readFileSync(resolve(here, "src/viewer.html"), "utf8")
  .replace("/*CSS*/", () => css)
  .replace("/*JS*/", () => js);

// nothing may point outside the page (the frame would block it anyway)
for (const pattern of [/<script[^>]+src=/i, /<link[^>]+href=/i, /@import\s/i]) {
  if (pattern.test(page))
    throw new Error(`build.mjs: the page would load something: ${pattern}`);
}
mkdirSync(dirname(out), { recursive: true });
writeFileSync(`${out}.tmp`, page);
renameSync(`${out}.tmp`, out);
console.log(`build.mjs: wrote ${out} (${(page.length / 1024).toFixed(0)} KiB; script ${(js.length / 1024).toFixed(0)} KiB)`);
