/* mcptape views: the page of one cassette (`mcptape show FILE --format html`). */
"use strict";

const ROW_H = 34;
const ROWS = DATA.rows;
const BY_SEQ = new Map();
ROWS.forEach((r, i) => { if (!BY_SEQ.has(r.seq)) BY_SEQ.set(r.seq, i); });

function rowClass(r) {
  if (r.kind === "http") return "transport";
  if (r.kind === "stderr") return "stderr";
  if (r.kind !== "message") return "process";
  const what = r.what.replace(/^\[batch\] /, "");
  if (what === "result") return "result";
  if (what.startsWith("error")) return "error";
  if (what === "invalid") return "error";
  if (r.id === undefined || r.id === null) return "notification";
  return r.dir === "server->client" ? "server-request" : "request";
}

function rowLabel(r) {
  return r.what + (r.id !== undefined && r.id !== null ? ` #${r.id}` : "");
}

const state = { text: "", method: "", tool: "", transport: false, selected: -1, view: [], haystack: null };

function haystack(i) {
  if (!state.haystack) state.haystack = new Array(ROWS.length);
  let h = state.haystack[i];
  if (h === undefined) {
    const r = ROWS[i];
    h = (r.what + " " + r.summary + " " + JSON.stringify(r.msg === undefined ? "" : r.msg) + " " + (r.http ? JSON.stringify(r.http) : "")).toLowerCase();
    state.haystack[i] = h;
  }
  return h;
}

function visible(i) {
  const r = ROWS[i];
  if (r.kind === "http" && !state.transport) return false;
  if (state.method && r.method !== state.method && r.own !== state.method) return false;
  if (state.tool && r.tool !== state.tool) return false;
  if (state.text && !haystack(i).includes(state.text)) return false;
  return true;
}

function buildView() {
  const view = [];
  let session = null;
  const several = DATA.sessions.length > 1;
  for (let i = 0; i < ROWS.length; i++) {
    if (!visible(i)) continue;
    if (several && ROWS[i].session !== session) {
      session = ROWS[i].session;
      view.push(-session);  /* a session boundary */
    }
    view.push(i);
  }
  state.view = view;
}

function header() {
  const h = DATA.header;
  const messages = ROWS.filter((r) => r.kind === "message").length;
  const facts = [
    chip(h.transport, "transport-chip"),
    DATA.target ? el("code", { class: "target" }, DATA.target) : null,
    el("span", {}, "recorded " + (h.recorded_at || "?")),
    el("span", {}, "protocol " + (DATA.versions.join(", ") || "unknown")),
    el("span", {}, `${messages} messages, ${ROWS.length} events`),
    DATA.sessions.length > 1 ? el("span", {}, `${DATA.sessions.length} client sessions`) : null,
  ];
  const warn = DATA.warnings.map((w) => el("div", { class: "warning" }, "⚠ " + w));
  return el("header", { class: "top" }, el("h1", {}, el("span", { class: "brand" }, "mcptape"), " ", DATA.name),
    el("div", { class: "facts" }, facts), warn);
}

function options(select, counts, all) {
  select.append(el("option", { value: "" }, all));
  for (const [k, n] of [...counts.entries()].sort()) select.append(el("option", { value: k }, `${k} (${n})`));
}

function countBy(...keys) {
  const m = new Map();
  for (const r of ROWS) for (const v of new Set(keys.map((k) => r[k]))) if (v) m.set(v, (m.get(v) || 0) + 1);
  return m;
}

function timelinePane() {
  const transportCount = ROWS.filter((r) => r.kind === "http").length;
  const text = el("input", { id: "filter-text", type: "search", placeholder: "Filter: method, tool, any text in the JSON…", autocomplete: "off" });
  const method = el("select", { id: "filter-method", "aria-label": "method" });
  const tool = el("select", { id: "filter-tool", "aria-label": "tool" });
  options(method, countBy("method", "own"), "all methods");
  options(tool, countBy("tool"), "all tools, prompts, resources");
  const transport = el("input", { id: "filter-transport", type: "checkbox" });
  const count = el("span", { id: "row-count", class: "count" });
  const bar = el("div", { class: "toolbar" }, text, method, tool,
    transportCount ? el("label", { class: "check" }, transport, ` HTTP transport events (${transportCount})`) : null, count);
  const spacer = el("div", { class: "spacer" });
  const list = el("div", { id: "timeline", class: "timeline", tabindex: "0" }, spacer);
  const lanes = el("div", { class: "lanes" }, el("span", { class: "lane-head client" }, "Client"), el("span", { class: "lane-head server" }, "Server"));
  const detail = el("aside", { id: "detail", class: "detail" }, el("p", { class: "hint" }, "Select a message to see its full JSON, its HTTP metadata and the messages it is linked to."));
  const pane = el("div", { class: "split" }, el("div", { class: "left" }, bar, lanes, list), detail);

  let timer = 0;
  const refilter = () => {
    state.text = text.value.trim().toLowerCase();
    state.method = method.value;
    state.tool = tool.value;
    state.transport = transport.checked;
    buildView();
    spacer.style.height = state.view.length * ROW_H + "px";
    const shown = state.view.filter((v) => v >= 0).length;
    count.textContent = `${shown} of ${ROWS.length} rows`;
    count.dataset.shown = String(shown);
    list.scrollTop = 0;
    draw();
  };
  text.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(refilter, ROWS.length > 2000 ? 120 : 0); });
  for (const c of [method, tool, transport]) c.addEventListener("change", refilter);

  let frame = 0;
  const draw = () => {
    frame = 0;
    const first = Math.max(0, Math.floor(list.scrollTop / ROW_H) - 8);
    const last = Math.min(state.view.length, Math.ceil((list.scrollTop + list.clientHeight) / ROW_H) + 8);
    const nodes = [];
    for (let v = first; v < last; v++) nodes.push(drawRow(state.view[v], v));
    spacer.replaceChildren(...nodes);
  };
  list.addEventListener("scroll", () => { if (!frame) frame = requestAnimationFrame(draw); });
  new ResizeObserver(() => draw()).observe(list);
  list.addEventListener("keydown", (e) => {
    if (e.key !== "ArrowDown" && e.key !== "ArrowUp") return;
    e.preventDefault();
    const at = state.view.indexOf(state.selected);
    let v = at + (e.key === "ArrowDown" ? 1 : -1);
    while (v >= 0 && v < state.view.length && state.view[v] < 0) v += e.key === "ArrowDown" ? 1 : -1;
    if (v >= 0 && v < state.view.length) select(state.view[v]);
  });

  const select = (i) => {
    state.selected = i;
    const v = state.view.indexOf(i);
    if (v >= 0) {
      const top = v * ROW_H;
      if (top < list.scrollTop || top + ROW_H > list.scrollTop + list.clientHeight) list.scrollTop = top - list.clientHeight / 3;
    }
    detail.replaceChildren(...showDetail(ROWS[i], select));
    detail.scrollTop = 0;
    draw();
  };
  list.addEventListener("click", (e) => {
    const row = e.target.closest(".row");
    if (row) select(Number(row.dataset.index));
  });
  window.mcptapeSelect = (seq) => select(BY_SEQ.get(seq));
  requestAnimationFrame(() => {
    refilter();
    const first = state.view.find((v) => v >= 0);
    if (first !== undefined) select(first);
  });
  return pane;
}

function drawRow(i, v) {
  if (i < 0) {
    const s = DATA.sessions[-i - 1];
    return el("div", { class: "row session-mark", style: `top:${v * ROW_H}px` },
      el("span", {}, `client session ${s.n}`), s.id && s.id.length > 3 ? el("code", {}, s.id) : null);
  }
  const r = ROWS[i];
  const cls = rowClass(r);
  const bubble = el("span", { class: "bubble " + cls, title: r.summary },
    el("b", {}, rowLabel(r)), r.summary ? el("span", { class: "sum" }, r.summary) : null);
  const fromClient = r.dir === "client->server";
  const fromServer = r.dir === "server->client" || r.kind === "stderr" || r.kind === "exit";
  const lat = r.latency !== undefined ? fmtMs(r.latency) : "";
  const node = el("div", {
    class: `row ${cls}${i === state.selected ? " selected" : ""}`, style: `top:${v * ROW_H}px`,
    "data-index": i, "data-seq": r.seq, role: "button",
  },
  el("span", { class: "seq" }, "#" + r.seq),
  el("span", { class: "time" }, fmtMs(r.t)),
  el("span", { class: "lane client" }, fromClient ? [bubble, el("span", { class: "arrow" }, "→")] : null),
  el("span", { class: "lane server" }, fromServer ? [el("span", { class: "arrow" }, r.kind === "message" || r.kind === "http" ? "←" : "·"), bubble] : null),
  el("span", { class: "lat", title: lat ? "latency: request to response" : null }, lat));
  if (!fromClient && !fromServer) node.querySelector(".lane.server").append(bubble);
  return node;
}

function linkButton(seq, label, select) {
  return el("button", { type: "button", class: "link", "data-seq": seq, onclick: () => select(BY_SEQ.get(seq)) }, label);
}

function showDetail(r, select) {
  const out = [];
  const cls = rowClass(r);
  out.push(el("h2", {}, chip(r.dir || r.kind, "dir " + cls), " ", rowLabel(r)));
  out.push(el("div", { class: "facts" }, `line ${r.seq} · ${fmtMs(r.t)} after the start`,
    DATA.sessions.length > 1 ? ` · client session ${r.session}` : "", r.latency !== undefined ? ` · answered in ${fmtMs(r.latency)}` : ""));
  const links = [];
  if (r.pair !== undefined) {
    const other = ROWS[BY_SEQ.get(r.pair)];
    const isAnswer = cls === "result" || cls === "error";
    links.push(el("div", {}, isAnswer ? "Answers request " : "Answered by ", linkButton(r.pair, `#${r.pair} ${other ? rowLabel(other) : ""}`, select),
      other && other.latency !== undefined ? ` after ${fmtMs(other.latency)}` : ""));
  }
  if (r.exchange !== undefined && r.exchange !== r.seq && r.pair !== r.exchange) {
    const req = ROWS[BY_SEQ.get(r.exchange)];
    links.push(el("div", {}, "Belongs to request ", linkButton(r.exchange, `#${r.exchange} ${req ? rowLabel(req) : ""}`, select)));
  }
  if (r.related && r.related.length) {
    links.push(el("div", {}, "Sent while it ran: ", r.related.map((s) => { const o = ROWS[BY_SEQ.get(s)]; return linkButton(s, `#${s} ${o ? rowLabel(o) : ""}`, select); })));
  }
  if (links.length) out.push(el("div", { class: "links" }, links));
  if (r.redacted && r.redacted.length) {
    out.push(el("div", { class: "redaction-note" }, "Redacted before writing: ", r.redacted.map((p) => el("code", {}, p))));
  }
  if (r.msg !== undefined && r.msg !== null) {
    const tree = typeof r.msg === "string" ? el("pre", { class: "raw" }, r.msg) : jsonTree(r.msg);
    out.push(el("h3", {}, r.kind === "message" ? "Message" : "Payload", typeof r.msg === "string" ? null : unfoldButton(tree)));
    out.push(el("div", { class: "full-json" }, tree));
  }
  if (r.http) {
    const { headers, ...meta } = r.http;
    out.push(el("h3", {}, "HTTP"));
    out.push(el("table", { class: "kv" }, Object.entries(meta).map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", {}, typeof v === "object" ? JSON.stringify(v) : String(v))))));
    if (headers) {
      const d = el("details", { class: "headers" }, el("summary", {}, `${Object.keys(headers).length} headers`),
        el("table", { class: "kv" }, Object.entries(headers).map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", { class: String(v).includes(REDACTED) ? "redacted" : "" }, String(v))))));
      out.push(d);
    }
  }
  return out;
}

function schemaArgs(schema) {
  if (!schema || typeof schema !== "object" || !schema.properties) return null;
  const required = new Set(schema.required || []);
  return el("table", { class: "args" }, el("tr", {}, el("th", {}, "argument"), el("th", {}, "type"), el("th", {}, "")),
    Object.entries(schema.properties).map(([name, p]) => el("tr", {},
      el("td", {}, el("code", {}, name), required.has(name) ? el("span", { class: "req", title: "required" }, " *") : ""),
      el("td", {}, p && (p.type || (p.anyOf && p.anyOf.map((x) => x.type).join(" | "))) || ""),
      el("td", { class: "desc" }, (p && (p.description || (p.title && p.title.toLowerCase() !== name.toLowerCase() ? p.title : ""))) || ""))));
}

function item(title, subtitle, description, extra) {
  return el("article", { class: "card" }, el("h3", {}, title, subtitle ? el("span", { class: "sub" }, subtitle) : null),
    description ? el("p", {}, description) : null, extra);
}

function surfacePane() {
  const s = DATA.surface;
  const out = el("div", { class: "surface" });
  const info = s.server || {};
  out.append(el("section", { class: "card server-card" },
    el("h2", {}, info.name || "server", " ", el("span", { class: "sub" }, info.version || "")),
    el("div", { class: "facts" }, el("span", {}, "protocol ", el("code", {}, [].concat(s.protocolVersion || "unknown").join(", ")))),
    el("div", { class: "chips capabilities" }, Object.entries(s.capabilities || {}).map(([k, v]) =>
      chip(k + (v && typeof v === "object" && Object.keys(v).length ? ": " + Object.keys(v).join(", ") : ""), "cap"))),
    s.instructions ? el("details", { class: "instructions", open: s.instructions.length < 400 }, el("summary", {}, "instructions"), el("div", {}, s.instructions)) : null,
    el("details", { class: "schema" }, el("summary", {}, "capabilities as JSON"), jsonTree(s.capabilities || {}))));
  const section = (title, items, render) => {
    out.append(el("h2", { class: "section" }, `${title} (${items.length})`));
    if (!items.length) out.append(el("p", { class: "hint" }, "none recorded"));
    out.append(el("div", { class: "cards" }, items.map(render)));
  };
  section("Tools", s.tools, (t) => {
    const ann = t.annotations ? Object.entries(t.annotations).filter(([, v]) => v !== false).map(([k, v]) => chip(v === true ? k : `${k}: ${v}`)) : [];
    return item(el("code", {}, t.name), t.title, t.description, [el("div", { class: "chips" }, ann), schemaArgs(t.inputSchema),
      el("details", { class: "schema" }, el("summary", {}, "input schema"), jsonTree(t.inputSchema || {})),
      t.outputSchema ? el("details", { class: "schema" }, el("summary", {}, "output schema"), jsonTree(t.outputSchema)) : null]);
  });
  section("Resources", s.resources, (r) => item(el("code", {}, r.uri), r.name + (r.mimeType ? " · " + r.mimeType : ""), r.description,
    el("details", {}, el("summary", {}, "JSON"), jsonTree(r))));
  section("Resource templates", s.resourceTemplates, (r) => item(el("code", {}, r.uriTemplate), r.name, r.description,
    el("details", {}, el("summary", {}, "JSON"), jsonTree(r))));
  section("Prompts", s.prompts, (p) => item(el("code", {}, p.name), p.title, p.description,
    p.arguments && p.arguments.length ? el("table", { class: "args" }, p.arguments.map((a) => el("tr", {}, el("td", {}, el("code", {}, a.name), a.required ? el("span", { class: "req" }, " *") : ""), el("td", { class: "desc" }, a.description || "")))) : null));
  return out;
}

function stderrPane() {
  if (!DATA.stderr.length) return el("p", { class: "hint" }, "The server wrote nothing to stderr (or the transport has none).");
  return el("pre", { class: "stderr-log" }, DATA.stderr.map((l) => el("div", {}, el("span", { class: "seq" }, `#${l.seq} ${fmtMs(l.t)}  `), l.text)));
}

function main() {
  const app = document.getElementById("app");
  app.replaceChildren(header());
  const s = DATA.surface;
  const n = s.tools.length + s.resources.length + s.resourceTemplates.length + s.prompts.length;
  tabs(app, [
    ["timeline", `Timeline (${ROWS.filter((r) => r.kind === "message").length})`, timelinePane],
    ["surface", `Server (${n})`, surfacePane],
    ["stderr", `stderr (${DATA.stderr.length})`, stderrPane],
    ["cassette", "Cassette header", () => jsonTree(DATA.header)],
  ]);
  document.body.dataset.ready = "1";
}

main();
