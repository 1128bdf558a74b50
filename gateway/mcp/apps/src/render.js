// render.js: renders one exec_code result's outputs in the view as Jupyter
// would: streams, then each result and display by its richest MIME type
// (Plotly and Vega-Lite live, HTML such as DataFrames as tables, SVG,
// PNG/JPEG, Markdown, LaTeX typeset by KaTeX, JSON as a tree, plain text),
// then the error. Kernel HTML is untrusted: it is sanitized and put in its
// own shadow root, so its styles stay inside it. Runs in the view's frame.

import { Marked } from "marked";
import katex from "katex";
import Plotly from "plotly.js-strict-dist-min";
import embed from "vega-embed";
import { expressionInterpreter } from "vega-interpreter";
import { sanitizeHtml } from "./sanitize.js";

// The MIME types shown, richest first (Jupyter's order, widgets aside).
const ORDER = [
  "application/vnd.plotly.v1+json",
  "application/vnd.vegalite.v6+json",
  "application/vnd.vegalite.v5+json",
  "application/vnd.vegalite.v4+json",
  "application/vnd.vega.v6+json",
  "application/vnd.vega.v5+json",
  "text/html",
  "image/svg+xml",
  "image/png",
  "image/jpeg",
  "image/gif",
  "text/markdown",
  "text/latex",
  "application/json",
  "text/plain",
];

const MAX_CHART_HEIGHT = 460;

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className)
    node.className = className;
  if (text !== undefined)
    node.textContent = text;
  return node;
}

// Jupyter bundles may hold a string or a list of lines.
function asText(value) {
  return Array.isArray(value) ? value.join("") : String(value ?? "");
}

// Tracebacks and some streams carry ANSI colours; the view shows plain text.
function stripAnsi(text) {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;]*[A-Za-z]/g, "");
}

function asJson(value) {
  return typeof value === "string" ? JSON.parse(value) : value;
}

function shadowHost(fragment, className) {
  const host = el("div", className);
  const root = host.attachShadow({ mode: "open" });
  const style = document.createElement("style");
  style.textContent = `:host{display:block;overflow:auto;max-width:100%}
table{border-collapse:collapse;font-size:12px;font-variant-numeric:tabular-nums}
th,td{padding:4px 8px;border-bottom:1px solid var(--color-border-secondary,#ddd);text-align:right}
thead th{border-bottom:1px solid var(--color-border-primary,#999)}
tbody tr:nth-child(odd){background:var(--color-background-secondary,#f5f5f5)}
img{max-width:100%}`;
  root.appendChild(style);
  root.appendChild(fragment);
  root.addEventListener("click", followFragmentLink);
  return host;
}

// The sanitizer leaves only fragment links (#id). In a srcdoc frame they
// resolve against the host page's URL, so following one would load the
// host's page in the frame: scroll to the target in this shadow root
// instead.
function followFragmentLink(event) {
  const link = event.composedPath().find((n) => n.localName === "a" || n.localName === "area");
  if (!link)
    return;
  event.preventDefault();
  const href = link.getAttribute("href") ?? link.getAttribute("xlink:href") ?? "";
  let id = href.slice(1);
  try {
    id = decodeURIComponent(id);
  } catch {
    // not percent-encoded: the id as written
  }
  if (href.startsWith("#") && id)
    event.currentTarget.getElementById(id)?.scrollIntoView({ block: "nearest" });
}

function renderHtml(html) {
  return shadowHost(sanitizeHtml(asText(html)), "out-html");
}

// Math in Markdown, as Jupyter shows it: $$...$$ as a block or inline, and
// $...$ inline when the dollars hug the formula ("$5 and $10" stays text).
// KaTeX writes MathML, which the sanitizer keeps.
function mathMarkup(tex, displayMode) {
  return katex.renderToString(tex, { displayMode, output: "mathml", throwOnError: false });
}

const markdown = new Marked({
  async: false,
  extensions: [
    {
      name: "mathBlock",
      level: "block",
      start: (src) => src.match(/^ {0,3}\$\$/m)?.index,
      tokenizer(src) {
        const m = /^ {0,3}\$\$([\s\S]+?)\$\$ *(?:\n|$)/.exec(src);
        if (m)
          return { type: "mathBlock", raw: m[0], text: m[1].trim() };
      },
      renderer: (token) => `<div class="math-block">${mathMarkup(token.text, true)}</div>`,
    },
    {
      name: "mathInline",
      level: "inline",
      start: (src) => src.indexOf("$"),
      tokenizer(src) {
        const m = /^\$\$([^$]+?)\$\$|^\$([^\s$](?:[^$\n]*?[^\s$\\])?)\$(?!\d)/.exec(src);
        if (m)
          return { type: "mathInline", raw: m[0], text: m[1] ?? m[2], display: m[1] !== undefined };
      },
      renderer: (token) => mathMarkup(token.text, token.display),
    },
  ],
});

function renderMarkdown(md) {
  return shadowHost(sanitizeHtml(markdown.parse(asText(md))), "out-markdown");
}

// text/latex is usually "$$...$$", "$...$", "\[...\]" or an environment.
function renderLatex(tex) {
  let src = asText(tex).trim();
  const m = src.match(/^\$\$([\s\S]*)\$\$$/) || src.match(/^\\\[([\s\S]*)\\\]$/)
    || src.match(/^\$([\s\S]*)\$$/);
  if (m)
    src = m[1];
  const box = el("div", "out-latex");
  // MathML output: the browser typesets it, no font files (the frame may load
  // none); sanitized too, in case a KaTeX bug lets kernel text through
  box.appendChild(sanitizeHtml(katex.renderToString(src, { displayMode: true, output: "mathml",
                                                           throwOnError: false })));
  return box;
}

function renderImage(mime, data, metadata) {
  const img = el("img", "out-image");
  const text = asText(data);
  img.src = mime === "image/svg+xml"
    ? `data:image/svg+xml;charset=utf-8,${encodeURIComponent(text)}`
    : `data:${mime};base64,${text.replace(/\s+/g, "")}`;
  const meta = metadata?.[mime] ?? metadata;
  if (meta && typeof meta === "object") {
    if (Number.isFinite(meta.width))
      img.width = meta.width;
    if (Number.isFinite(meta.height))
      img.height = meta.height;
  }
  img.alt = mime;
  return img;
}

function renderPlotly(value) {
  const fig = asJson(value);
  const box = el("div", "out-plotly");
  const layout = { ...(fig.layout ?? {}) };
  layout.height = Math.min(Number(layout.height) || 420, MAX_CHART_HEIGHT);
  layout.autosize = true;
  box.style.height = `${layout.height}px`;
  // after it is in the page, so Plotly can measure the width
  queueMicrotask(() => {
    Plotly.newPlot(box, fig.data ?? [], layout, { responsive: true, displaylogo: false })
      .catch((err) => box.replaceWith(renderError("Plotly", String(err))));
  });
  return box;
}

function renderVega(mime, value) {
  const spec = asJson(value);
  const box = el("div", "out-vega");
  const mode = mime.includes("vegalite") ? "vega-lite" : "vega";
  queueMicrotask(() => {
    // ast + interpreter: Vega's default expression compiler needs eval
    embed(box, spec, { mode, renderer: "svg", actions: false, ast: true,
                       expr: expressionInterpreter })
      .catch((err) => box.replaceWith(renderError("Vega", String(err))));
  });
  return box;
}

// A collapsible tree: objects and arrays as <details>, open two levels deep.
function jsonTree(value, key, depth) {
  const label = key === undefined ? "" : `${key}: `;
  if (value === null || typeof value !== "object") {
    const leaf = el("div", "json-leaf");
    leaf.appendChild(el("span", "json-key", label));
    leaf.appendChild(el("span", `json-${value === null ? "null" : typeof value}`,
                        JSON.stringify(value)));
    return leaf;
  }
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  const node = el("details", "json-node");
  node.open = depth < 2;
  const brackets = Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`;
  node.appendChild(el("summary", null, `${label}${brackets}`));
  for (const [k, v] of entries.slice(0, 1000))
    node.appendChild(jsonTree(v, k, depth + 1));
  if (entries.length > 1000)
    node.appendChild(el("div", "json-more", `... ${entries.length - 1000} more`));
  return node;
}

function renderError(what, message) {
  return el("pre", "out-error", `${what}: ${message}`);
}

// Renders one MIME bundle by its richest type; null when it has none we show.
export function renderBundle(data, metadata) {
  for (const mime of ORDER) {
    if (!(mime in data))
      continue;
    const value = data[mime];
    try {
      if (mime.startsWith("application/vnd.plotly"))
        return renderPlotly(value);
      if (mime.startsWith("application/vnd.vega"))
        return renderVega(mime, value);
      if (mime === "text/html")
        return renderHtml(value);
      if (mime.startsWith("image/"))
        return renderImage(mime, value, metadata);
      if (mime === "text/markdown")
        return renderMarkdown(value);
      if (mime === "text/latex")
        return renderLatex(value);
      if (mime === "application/json")
        return jsonTree(asJson(value), undefined, 0);
      return el("pre", "out-text", stripAnsi(asText(value)));
    } catch (err) {
      return renderError(mime, String(err?.message ?? err));
    }
  }
  return null;
}

// Renders output items ({type:"stream"|"result"|"display"|"error", ...},
// the shape of the REST results' `output`) into parent.
// An item the gateway sent in part or as a note only carries
// "codebox/omitted": {mimeTypes, bytes, items, text} (a large image, or
// outputs past the bytes one call may send the view); its text is shown as
// one line, and is the item's whole data["text/plain"] when nothing richer
// was left.
export function renderOutputs(parent, outputs) {
  parent.replaceChildren();
  for (const item of outputs) {
    let node = null;
    const omitted = item["codebox/omitted"];
    const note = typeof omitted?.text === "string" ? omitted.text : null;
    if (item.type === "stream")
      node = el("pre", `out-stream out-${item.name === "stderr" ? "stderr" : "stdout"}`,
                stripAnsi(asText(item.content ?? item.text)));
    else if (item.type === "result" || item.type === "display") {
      const data = item.data ?? { "text/plain": item.content ?? "" };
      const onlyNote = note !== null && Object.keys(data).length === 1 && data["text/plain"] === note;
      node = onlyNote ? null : renderBundle(data, item.metadata);
    } else if (item.type === "error")
      node = el("pre", "out-error", stripAnsi(
        item.traceback?.length ? item.traceback.join("\n") : `${item.ename}: ${item.evalue}`));
    if (node || note !== null) {
      const cell = el("div", `output output-${item.type}`);
      if (node)
        cell.appendChild(node);
      if (note !== null)
        cell.appendChild(el("div", "out-omitted", note));
      parent.appendChild(cell);
    }
  }
  if (!parent.childElementCount)
    parent.appendChild(el("div", "out-empty", "(no output)"));
}
