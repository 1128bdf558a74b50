// sanitize.js: turns untrusted HTML (a kernel's text/html output, Markdown
// rendered by marked) into inert DOM nodes for the view. The HTML is parsed
// with DOMParser, whose documents run no scripts and fire no events, then
// everything that could run code or leave the frame is removed before the
// nodes are adopted into the page: script-like elements, event-handler
// attributes, javascript: and other non-data URLs, forms, nested frames.
// What is left (tables, styles, images from data: URLs, SVG drawing) is what
// a DataFrame or a styled table needs. Runs in the view's frame.

const DROP_ELEMENTS = new Set([
  "script", "noscript", "iframe", "frame", "frameset", "object", "embed", "applet",
  "base", "meta", "link", "form", "portal", "template", "slot",
]);

// Attributes that hold a URL; only fragment links and data: images stay.
const URL_ATTRIBUTES = new Set(["href", "src", "xlink:href", "action", "formaction",
  "poster", "background", "srcset", "ping", "lowsrc", "dynsrc"]);

function safeUrl(name, value) {
  const v = value.trim().toLowerCase();
  if (v.startsWith("#"))
    return true;
  if (name !== "href" && /^data:image\/(png|jpeg|gif|webp);/.test(v))
    return true;
  return false;
}

function cleanElement(el) {
  for (const attr of Array.from(el.attributes)) {
    const name = attr.name.toLowerCase();
    if (name.startsWith("on") || name === "srcdoc" || name === "formaction")
      el.removeAttribute(attr.name);
    else if (URL_ATTRIBUTES.has(name) && !safeUrl(name, attr.value))
      el.removeAttribute(attr.name);
    else if (name === "style" && /url\s*\(|expression\s*\(/i.test(attr.value))
      el.removeAttribute(attr.name);
  }
  if (el.localName === "a") {
    el.setAttribute("rel", "noopener noreferrer");
    el.removeAttribute("target");
  }
}

// Removes remote loads from a <style> element's text: @import and url(...)
// other than data: (the frame's CSP blocks them anyway; this keeps the
// console quiet and the rule set readable).
function cleanStyle(el) {
  el.textContent = el.textContent
    .replace(/@import[^;]*;/gi, "")
    .replace(/url\(\s*(['"]?)(?!data:)[^)]*\1\s*\)/gi, "none");
}

// Returns a DocumentFragment of the sanitized nodes of html.
export function sanitizeHtml(html) {
  const doc = new DOMParser().parseFromString(`<!DOCTYPE html><body>${html}`, "text/html");
  const walker = doc.createTreeWalker(doc.body, NodeFilter.SHOW_ELEMENT);
  const drop = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const name = node.localName;
    if (DROP_ELEMENTS.has(name) || (node.namespaceURI !== "http://www.w3.org/1999/xhtml"
        && (name === "script" || name === "foreignobject" || name === "use"
            || name === "animate" || name === "set")))
      drop.push(node);
    else {
      cleanElement(node);
      if (name === "style")
        cleanStyle(node);
    }
  }
  for (const node of drop)
    node.remove();
  const fragment = document.createDocumentFragment();
  for (const node of Array.from(doc.body.childNodes))
    fragment.appendChild(document.adoptNode(node));
  return fragment;
}
