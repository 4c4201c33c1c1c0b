// dom.js - a tiny element builder so views stay readable without a framework:
// h("td", {class: "num"}, "12") -> <td class="num">12</td>. Children may be
// strings, nodes, arrays or null (skipped). Text is always set as text, never
// parsed as HTML, so host names and alert summaries cannot inject markup, and
// control and bidirectional characters in it (and in titles) are shown
// escaped (format.js visible).
import { visible } from "./format.js";

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k === "title") el.setAttribute(k, visible(v));
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(visible(c)));
  }
}

// A colour a canvas understands (#rrggbb) for a CSS colour or a theme
// variable "var(--c-blue)" (css/app.css: its light or dark value). The
// theme's variables are read all at once, on first use: one computed
// style, instead of a forced style recalculation per colour while charts
// are being added to the page.
let theme = null;
export function cssColor(c) {
  if (c.charCodeAt(0) !== 118 /* v */) return c;
  if (!theme) {
    theme = new Map();
    const cs = getComputedStyle(document.documentElement);
    for (const name of ["--c-blue", "--c-red", "--c-orange", "--c-green", "--c-purple", "--c-teal", "--c-grey", "--c-brown",
      "--c-pink", "--c-olive", "--axis", "--grid", "--tick", "--spark-base"]) theme.set("var(" + name + ")", cs.getPropertyValue(name).trim());
  }
  let v = theme.get(c);
  if (v === undefined) {
    const m = /^var\((--[\w-]+)\)$/.exec(c);
    v = (m && getComputedStyle(document.documentElement).getPropertyValue(m[1]).trim()) || "#888888";
    theme.set(c, v);
  }
  return v;
}
if (typeof window !== "undefined" && window.matchMedia) {
  // the system switched between light and dark: the variables with it
  const mq = window.matchMedia("(prefers-color-scheme: dark)");
  if (mq.addEventListener) mq.addEventListener("change", () => { theme = null; });
}
