// viewer.js: the entry of the MCP Apps view ui://codebox/outputs.html. It
// connects to the host with the ext-apps App bridge (postMessage JSON-RPC:
// ui/initialize, then ui/notifications/tool-result), takes the outputs of
// the tool result and renders them with render.js. The data only ever comes
// from the host through the bridge: the view fetches nothing. Runs in the
// view's frame (the host's sandboxed iframe).

import { App, applyDocumentTheme, applyHostStyleVariables } from "@modelcontextprotocol/ext-apps";
import { renderOutputs } from "./render.js";

const MAX_HEIGHT = 500;
const OUTPUTS_META_KEY = "codebox/outputs";

// Today's exec_code result has no MIME bundles; until the gateway sends them
// (result._meta["codebox/outputs"] or structuredContent.outputs, the REST
// `output` items), rebuild what it can: streams, texts, images from content.
function outputsFromToday(result) {
  const sc = result.structuredContent ?? {};
  const images = (result.content ?? []).filter((c) => c.type === "image");
  const svgs = (result.content ?? []).filter(
    (c) => c.type === "resource" && c.resource?.mimeType === "image/svg+xml");
  const out = [];
  if (sc.stdout)
    out.push({ type: "stream", name: "stdout", content: sc.stdout });
  if (sc.stderr)
    out.push({ type: "stream", name: "stderr", content: sc.stderr });
  for (const d of sc.displays ?? []) {
    if ((d.mime === "image/png" || d.mime === "image/jpeg") && images.length)
      out.push({ type: "display", data: { [d.mime]: images.shift().data } });
    else if (d.mime === "image/svg+xml" && svgs.length)
      out.push({ type: "display", data: { "image/svg+xml": svgs.shift().resource.text } });
    else if (typeof d.text === "string")
      out.push({ type: "display", data: { "text/plain": d.text } });
  }
  if (sc.result !== null && sc.result !== undefined)
    out.push({ type: "result", data: { "text/plain": String(sc.result) } });
  if (sc.error)
    out.push({ type: "error", ename: sc.error.ename, evalue: sc.error.evalue, traceback: [] });
  if (!out.length) {
    const text = (result.content ?? []).find((c) => c.type === "text");
    if (text)
      out.push({ type: "stream", name: "stdout", content: text.text });
  }
  return out;
}

export function outputsOf(result) {
  const fromMeta = result?._meta?.[OUTPUTS_META_KEY];
  if (Array.isArray(fromMeta))
    return fromMeta;
  if (Array.isArray(result?.structuredContent?.outputs))
    return result.structuredContent.outputs;
  return outputsFromToday(result ?? {});
}

function applyContext(ctx) {
  if (!ctx)
    return;
  if (ctx.theme)
    applyDocumentTheme(ctx.theme);
  if (ctx.styles?.variables)
    applyHostStyleVariables(ctx.styles.variables);
  const dims = ctx.containerDimensions;
  const limit = Math.min(MAX_HEIGHT, dims?.height ?? dims?.maxHeight ?? MAX_HEIGHT);
  document.documentElement.style.setProperty("--view-max-height", `${limit}px`);
}

const root = document.getElementById("outputs");
const status = document.getElementById("status");

function show(result) {
  status.textContent = result?.isError ? "The code did not complete." : "";
  renderOutputs(root, outputsOf(result));
}

// For tests and for pages that embed the view without a host.
window.codeboxRender = show;

const app = new App({ name: "codebox-outputs", version: "0.1.0" },
                    { availableDisplayModes: ["inline"] }, { autoResize: true });
// set before connect, so that a result sent right after initialization is seen
app.ontoolresult = show;
app.ontoolcancelled = () => {
  status.textContent = "The call was cancelled.";
};
app.onhostcontextchanged = applyContext;
app.connect().then(() => applyContext(app.getHostContext()),
                   (err) => { status.textContent = `Not connected to a host: ${err}`; });
