/* mcptape views: helpers shared by the session page and the diff page (no libraries). */
"use strict";

const DATA = JSON.parse(document.getElementById("mcptape-data").textContent);
const REDACTED = "[REDACTED]";
const LONG_STRING = 160;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function fmtMs(ms) {
  if (ms === undefined || ms === null) return "";
  if (ms >= 10000) return (ms / 1000).toFixed(1) + " s";
  if (ms >= 100) return ms.toFixed(0) + " ms";
  return ms.toFixed(1) + " ms";
}

function escapePointer(key) {
  return String(key).replace(/~/g, "~0").replace(/\//g, "~1");
}

/* A JSON value as a foldable, highlighted tree. `marks`: pointer -> css class, for diff highlights;
   `folded`: pointers drawn closed (like every `_meta`) unless a mark lies under them. */
function jsonTree(value, options) {
  const opts = Object.assign({ marks: null, folded: null, openDepth: 4, base: "" }, options || {});
  const root = el("div", { class: "json" });
  root.append(jsonNode(value, opts.base, 0, opts));
  return root;
}

function markOf(ptr, opts) {
  if (!opts.marks) return "";
  return opts.marks.get(ptr) || "";
}

function jsonScalar(value, ptr, opts) {
  if (typeof value === "string") return jsonString(value, ptr, opts);
  const cls = value === null ? "j-null" : typeof value === "number" ? "j-num" : "j-bool";
  return el("span", { class: cls + " " + markOf(ptr, opts), "data-ptr": ptr }, JSON.stringify(value));
}

function jsonString(value, ptr, opts) {
  const redacted = value.includes(REDACTED);
  const cls = "j-str" + (redacted ? " redacted" : "") + " " + markOf(ptr, opts);
  const text = JSON.stringify(value);
  const span = el("span", { class: cls, "data-ptr": ptr, title: redacted ? "redacted before it was written to the cassette" : null });
  if (text.length <= LONG_STRING) {
    span.textContent = text;
    return span;
  }
  const head = el("span", {}, text.slice(0, LONG_STRING));
  const rest = el("span", { class: "j-rest", hidden: true }, text.slice(LONG_STRING));
  const more = el("button", {
    class: "more", type: "button",
    onclick: (e) => { e.stopPropagation(); rest.hidden = !rest.hidden; more.textContent = rest.hidden ? `… +${text.length - LONG_STRING} chars` : "fold"; },
  }, `… +${text.length - LONG_STRING} chars`);
  span.append(head, rest, " ", more);
  return span;
}

function jsonNode(value, ptr, depth, opts) {
  if (value === null || typeof value !== "object") return jsonScalar(value, ptr, opts);
  const isArray = Array.isArray(value);
  const keys = isArray ? value.map((_, i) => i) : Object.keys(value);
  const [open, close] = isArray ? ["[", "]"] : ["{", "}"];
  if (keys.length === 0) return el("span", { class: "j-punct " + markOf(ptr, opts), "data-ptr": ptr }, open + close);
  const fold = el("span", { class: "j-fold " + markOf(ptr, opts), "data-ptr": ptr });
  const foldable = ptr.endsWith("/_meta") || (opts.folded && opts.folded.has(ptr));
  const envelope = foldable && !(opts.marks && [...opts.marks.keys()].some((m) => m.startsWith(ptr)));
  const closed = envelope || depth >= opts.openDepth || (isArray && keys.length > 50);
  if (closed) fold.classList.add("closed");
  const toggle = el("span", { class: "j-toggle", role: "button", title: "fold / unfold" });
  const count = el("span", { class: "j-count" }, ` ${keys.length} ${isArray ? "item" : "key"}${keys.length === 1 ? "" : "s"} `);
  const body = el("div", { class: "j-body" });
  let filled = false;
  const fill = () => {
    if (filled) return;
    filled = true;
    keys.forEach((k, i) => {
      const childPtr = ptr + "/" + escapePointer(k);
      const line = el("div", { class: "j-line" });
      if (!isArray) line.append(el("span", { class: "j-key" }, JSON.stringify(k)), el("span", { class: "j-punct" }, ": "));
      line.append(jsonNode(value[k], childPtr, depth + 1, opts));
      if (i < keys.length - 1) line.append(el("span", { class: "j-punct" }, ","));
      body.append(line);
    });
  };
  if (!closed) fill();
  toggle.addEventListener("click", (e) => { e.stopPropagation(); fill(); fold.classList.toggle("closed"); });
  count.addEventListener("click", (e) => { e.stopPropagation(); fill(); fold.classList.remove("closed"); });
  fold.append(toggle, el("span", { class: "j-punct" }, open), count, body, el("span", { class: "j-punct" }, close));
  return fold;
}

function unfoldAll(root) {
  for (let round = 0; round < 64; round++) {
    const closed = root.querySelectorAll(".j-fold.closed > .j-toggle");
    if (!closed.length) return;
    closed.forEach((t) => t.click());
  }
}

function unfoldButton(tree) {
  return el("button", { type: "button", class: "unfold", onclick: () => unfoldAll(tree) }, "unfold all");
}

function chip(text, cls) {
  return el("span", { class: "chip " + (cls || "") }, text);
}

function tabs(container, entries) {
  const bar = el("nav", { class: "tabs", role: "tablist" });
  const panes = el("div", { class: "panes" });
  const buttons = [];
  entries.forEach(([id, label, build], i) => {
    const pane = el("section", { id: "pane-" + id, class: "pane", hidden: i !== 0 });
    let built = false;
    const show = () => {
      if (!built) { pane.append(build()); built = true; }
      for (const p of panes.children) p.hidden = p !== pane;
      for (const b of buttons) b.classList.toggle("active", b.dataset.tab === id);
    };
    const button = el("button", { type: "button", class: "tab" + (i === 0 ? " active" : ""), "data-tab": id, onclick: show }, label);
    buttons.push(button);
    bar.append(button);
    panes.append(pane);
    if (i === 0) { pane.append(build()); built = true; }
  });
  container.append(bar, panes);
}
