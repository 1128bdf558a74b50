// sanitize.js: turns untrusted HTML (a kernel's text/html output, Markdown
// rendered by marked, KaTeX's MathML) into inert DOM nodes for the view.
// Kernel code is hostile: if any of its script or handlers ran here, it
// could use the ext-apps bridge to post messages as the user or call tools.
// DOMPurify (pinned in package.json) parses the HTML with DOMParser (an
// inert document: nothing runs, nothing loads) and keeps an allow-list;
// on top of its defaults we remove forms, frames, media, SVG animation,
// <use> and <foreignObject>, allow only fragment links (#...) and
// data:image/(png|jpeg|gif|webp) images, and keep CSS from loading anything
// (the browser's own CSS parser rewrites <style> and style="", dropping
// @import and every url() that is not a fragment or such a data: image).
// The result is a DocumentFragment: nothing is serialized and parsed again
// (no mutation XSS). What is left is what a DataFrame (pandas to_html,
// Styler with its <style> and ids), tables, SVG drawings and MathML need.
// The view's own CSP (build.mjs) blocks any script or handler that would
// still get through. Runs in the view's frame.

import createDOMPurify from "dompurify";

const purify = createDOMPurify(window);

const FORBID_TAGS = [
  "script", "noscript", "iframe", "frame", "frameset", "object", "embed", "applet",
  "portal", "fencedframe", "base", "meta", "link", "template", "slot",
  "form", "button", "select", "option", "optgroup", "textarea", "datalist", "output",
  "audio", "video", "source", "track", "picture",
  "animate", "animatecolor", "animatemotion", "animatetransform", "set", "discard",
  "use", "foreignobject", "feimage",
];

const FORBID_ATTR = ["srcset", "sizes", "action", "formaction", "method", "enctype",
  "ping", "target", "nonce", "integrity", "crossorigin", "srcdoc"];

// Attributes that hold a URL: a fragment (#...) anywhere, a data: image
// only as the source of an image; any other value is removed.
const URL_ATTRIBUTES = new Set(["href", "xlink:href", "src", "action", "formaction",
  "poster", "background", "srcset", "ping", "lowsrc", "dynsrc", "cite", "longdesc",
  "data", "codebase", "usemap", "icon", "manifest", "xml:base"]);
const IMAGE_TAGS = new Set(["img", "image"]);

const SVG_NAMESPACE = "http://www.w3.org/2000/svg";

const DATA_IMAGE = /^data:image\/(?:png|jpeg|gif|webp)[;,]/i;

function safeUrl(tag, name, value) {
  const v = value.trim();
  if (v.startsWith("#"))
    return true;
  return IMAGE_TAGS.has(tag) && (name === "src" || name.endsWith("href")) && DATA_IMAGE.test(v);
}

// CSS text that could load something: an escape (custom properties and
// var() keep them raw, and "\75rl(" is a url token), a url() that is not a
// fragment or a data: image, or image functions taking bare strings.
const CSS_URL = /url\(\s*(?:"([^"]*)"|'([^']*)'|([^"'()\s]*))\s*\)/gi;
const CSS_IMAGE_FUNCTION = /(?:image-set|image|src|cross-fade|element)\s*\(/i;

function cssLoads(text) {
  if (text.includes("\\"))
    return true;
  let urls = 0;
  for (const m of text.matchAll(CSS_URL)) {
    const url = (m[1] ?? m[2] ?? m[3]).trim();
    if (!url.startsWith("#") && !DATA_IMAGE.test(url))
      return true;
    urls++;
  }
  if ((text.match(/url\(/gi) ?? []).length !== urls)
    return true;
  if (CSS_IMAGE_FUNCTION.test(text)) {
    const strings = text.replace(CSS_URL, "").match(/"[^"]*"|'[^']*'/g) ?? [];
    return strings.some((s) => !DATA_IMAGE.test(s.slice(1, -1)));
  }
  return false;
}

// Removes the declarations of style (a CSSStyleDeclaration) that could
// load something; empties it if its text as a whole still could.
function cleanDeclarations(style) {
  for (const name of Array.from(style)) {
    if (cssLoads(style.getPropertyValue(name)))
      style.removeProperty(name);
  }
  if (cssLoads(style.cssText))
    style.cssText = "";
}

// Cleans a rule list in place (a sheet, @media, @supports, nested rules,
// @keyframes). Returns false if a rule could not be cleaned.
function cleanRules(list) {
  const rules = list.cssRules;
  for (let i = rules.length - 1; i >= 0; i--) {
    const rule = rules[i];
    if (rule.style)
      cleanDeclarations(rule.style);
    if (rule.cssRules) {
      if (!cleanRules(rule))
        return false;
    }
    else if (!rule.style && cssLoads(rule.cssText)) {
      // @property initial-value, @counter-style symbols, ...
      try {
        list.deleteRule(i);
      } catch {
        return false;
      }
    }
  }
  return true;
}

// A <style> element's text, parsed by the browser and written back without
// @import (constructed sheets ignore it) and without remote url()s.
function cleanStyleSheet(text) {
  const sheet = new CSSStyleSheet();
  try {
    sheet.replaceSync(text);
  } catch {
    return "";
  }
  if (!cleanRules(sheet))
    return "";
  return Array.from(sheet.cssRules, (rule) => rule.cssText).join("\n");
}

const scratch = document.createElement("div");

function cleanStyleAttribute(text) {
  scratch.style.cssText = text;
  cleanDeclarations(scratch.style);
  const clean = scratch.style.cssText;
  scratch.removeAttribute("style");
  return clean;
}

purify.addHook("uponSanitizeElement", (node, data) => {
  if (data.tagName === "style")
    node.textContent = cleanStyleSheet(node.textContent);
  // Markdown task lists: a checkbox stays, inert (no form, disabled below)
  else if (data.tagName === "input" && node.getAttribute("type")?.toLowerCase() !== "checkbox")
    node.remove();
});

purify.addHook("uponSanitizeAttribute", (node, data) => {
  const tag = node.nodeName.toLowerCase();
  const name = data.attrName;
  if (URL_ATTRIBUTES.has(name)) {
    if (!safeUrl(tag, name, data.attrValue))
      data.keepAttr = false;
  }
  else if (name === "style")
    data.attrValue = cleanStyleAttribute(data.attrValue);
  // SVG presentation attributes are CSS values: fill="url(#g)" stays
  else if (node.namespaceURI === SVG_NAMESPACE && name !== "id" && name !== "class"
           && cssLoads(data.attrValue))
    data.keepAttr = false;
});

purify.addHook("afterSanitizeAttributes", (node) => {
  if (node.nodeName.toLowerCase() === "input")
    node.setAttribute("disabled", "");
});

const CONFIG = {
  RETURN_DOM_FRAGMENT: true,
  // a leading <style> (pandas Styler) would otherwise go to <head> and be lost
  FORCE_BODY: true,
  FORBID_TAGS,
  FORBID_ATTR,
  // MathML annotations (KaTeX puts the TeX source there) are not shown
  ADD_FORBID_CONTENTS: ["annotation", "annotation-xml"],
};

// Returns a DocumentFragment of the sanitized nodes of html.
export function sanitizeHtml(html) {
  return purify.sanitize(String(html), CONFIG);
}
