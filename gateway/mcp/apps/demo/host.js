// host.js: a minimal MCP Apps host for trying the view in a browser with no
// MCP server: for each output of sample-result.json it loads the view in a
// sandboxed iframe (allow-scripts only, MCP Apps' default CSP as a <meta>),
// answers ui/initialize with the ext-apps AppBridge and sends the tool
// input and a tool result holding that one output. Logs what the bridge
// sees to the console, where a headless run can read it. Runs in the demo
// host page (build-demo.mjs).
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

const CSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; "
  + "style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; "
  + "connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'self'";

const viewHtml = JSON.parse(document.getElementById("view-html").textContent)
  .replace("<head>", `<head><meta http-equiv="Content-Security-Policy" content="${CSP}">`);
const sample = JSON.parse(document.getElementById("sample-result").textContent);

async function mount(index, result) {
  const box = document.createElement("figure");
  const caption = document.createElement("figcaption");
  const outputs = result._meta["codebox/outputs"];
  caption.textContent = `${index}: ${outputs.map((o) => o.type + (o.data ? " " + Object.keys(o.data)[0] : "")).join(", ")}`;
  const iframe = document.createElement("iframe");
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.srcdoc = viewHtml;
  box.append(caption, iframe);
  document.getElementById("views").appendChild(box);
  const bridge = new AppBridge(null, { name: "codebox-demo-host", version: "0.1.0" }, {}, {
    hostContext: { theme: "light", displayMode: "inline", platform: "web",
                   containerDimensions: { maxHeight: 600 } },
  });
  bridge.onsizechange = ({ height }) => {
    if (height != null)
      iframe.style.height = `${height}px`;
    console.log(`view ${index}: size height=${height}`);
  };
  bridge.oninitialized = async () => {
    console.log(`view ${index}: initialized`);
    await bridge.sendToolInput({ arguments: { session_id: "demo", code: "# sample" } });
    await bridge.sendToolResult(result);
    console.log(`view ${index}: tool result sent`);
  };
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
}

const all = sample._meta["codebox/outputs"];
const single = new URLSearchParams(location.search).has("single");
if (single) {
  document.getElementById("views").style.gridTemplateColumns = "1fr";
  mount(0, sample);
}
else
  all.forEach((output, i) => mount(i, { ...sample, _meta: { "codebox/outputs": [output] } }));
