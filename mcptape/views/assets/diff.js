/* mcptape views: the page of a diff (`mcptape diff A B --format html`, `mcptape verify --format html`). */
"use strict";

const IMPACT_ORDER = { breaking: 0, behaviour: 1, compatible: 2, cosmetic: 3, envelope: 4 };
const SURFACE = new Set(["server", "tools", "prompts", "resources", "resourceTemplates"]);
const KNOWN_LISTS = new Set(["differences", "groups", "envelope"]);

function value(v, missing) {
  if (missing) return el("span", { class: "hint" }, "absent");
  if (v !== null && typeof v === "object") return jsonTree(v, { openDepth: 2 });
  return el("div", { class: "json" }, jsonScalar(v, "", {}));
}

/* One difference; with `group`, the same difference in several tools (one card naming them all). */
function diffRow(d, group) {
  const where = group ? group.where : d.exchange, path = group ? group.path : d.path;
  return el("div", { class: `diff-row ${d.kind} ${d.impact}`, "data-kind": d.kind, "data-section": d.section, "data-exchange": where, "data-path": path,
    "data-rows": group ? String(group.differences.length) : null },
    el("div", {}, el("span", { class: "kind " + d.kind }, d.kind), el("span", { class: "where" }, where),
      el("span", { class: "path" }, path || "/"), d.count > 1 ? chip(`${d.count}×`) : null),
    group ? el("div", { class: "items" }, "in ", group.items.map((n) => el("code", { class: "item" }, n))) : null,
    d.message ? el("div", { class: "why" }, d.message) : null,
    el("div", { class: "ab" },
      el("div", {}, el("div", { class: "tag" }, "A"), value(d.a, !("a" in d))),
      el("div", {}, el("div", { class: "tag" }, "B"), value(d.b, !("b" in d)))));
}

/* A difference's path is a pointer into the canonical exchange; on the page it lands in the request or the response. */
function markPointer(path) {
  if (!path || path === "/") return "";
  if (path.startsWith("/params")) return "/request" + path;
  if (path.startsWith("/result") || path.startsWith("/error")) return "/response" + path;
  return "";
}

/* The exchange as recorded; an input_required chain shows its rounds, then the final response the diff compared. */
function exchangeValue(e) {
  const v = { request: e.request };
  if (e.during) v.during = e.during;
  if (e.rounds) v.rounds = e.rounds;
  if (e.response) v.response = e.response;
  return v;
}

const ROUNDS = new Set(["/rounds"]);  /* an input_required chain's earlier rounds: folded, the final response in view */

function exchangeCard(key, diffs) {
  const first = diffs[0];
  const ex = (side, seq) => (seq === undefined ? null : DATA.exchanges[side][String(seq)]);
  const exA = ex("a", first.a_seq), exB = ex("b", first.b_seq);
  const marks = (cls) => {
    const m = new Map();
    for (const d of diffs) { const p = markPointer(d.path); if (p) m.set(p, cls); }
    return m;
  };
  const side = (label, e, cls) => el("div", {}, el("div", { class: "tag" }, label + (e ? ` · line ${e.seq}` + (e.latency !== undefined ? ` · ${fmtMs(e.latency)}` : "") : "")),
    e ? jsonTree(exchangeValue(e), { marks: marks(cls), folded: ROUNDS, openDepth: 5 }) : el("p", { class: "hint" }, "not in this cassette"));
  return el("article", { class: "exchange-card", "data-exchange": first.exchange },
    el("h3", {}, el("code", {}, first.exchange), " ", el("span", { class: "hint" }, `${diffs.length} difference${diffs.length === 1 ? "" : "s"}`)),
    diffs.map((d) => el("div", { class: "why change", "data-kind": d.kind, "data-section": d.section, "data-exchange": d.exchange, "data-path": d.path },
      el("span", { class: "kind " + d.kind }, d.kind), el("code", {}, d.path || "/"), " ", d.message || "")),
    el("details", { class: "rows" }, el("summary", {}, "values"), diffs.map((d) => diffRow(d))),
    el("div", { class: "ab" }, side("A", exA, "mark-a"), side("B", exB, "mark-b")));
}

function main() {
  const app = document.getElementById("app");
  const diffs = DATA.differences;
  const groupOf = new Map();
  for (const g of DATA.groups || []) for (const i of g.differences) groupOf.set(i, g);
  const surface = [];  // [difference, its group or null]: a group once, at its first row
  diffs.forEach((d, i) => {
    const g = groupOf.get(i) || null;
    if (SURFACE.has(d.section) && (!g || g.differences[0] === i)) surface.push([d, g]);
  });
  surface.sort(([x], [y]) => (IMPACT_ORDER[x.impact] ?? 9) - (IMPACT_ORDER[y.impact] ?? 9));
  const surfaceRows = diffs.filter((d) => SURFACE.has(d.section)).length;
  const exchanges = diffs.filter((d) => !SURFACE.has(d.section));
  const groups = new Map();
  for (const d of exchanges) {
    const k = `${d.exchange}|${d.a_seq}|${d.b_seq}`;
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k).push(d);
  }
  const side = (label, s, file) => el("div", { class: "side" }, el("span", { class: "label" }, label), el("code", {}, file),
    el("div", { class: "facts" }, el("span", {}, s.name), el("span", {}, `${s.era} ${s.protocol_version || "unknown version"}`), el("span", {}, `${s.calls} calls, ${s.exchanges} exchanges`)));
  const counts = Object.entries(DATA.counts).map(([k, n]) => el("div", { class: "count-box " + k, "data-count": k }, el("b", {}, String(n)), k));
  const out = el("main", { class: "diff" },
    el("div", { class: "verdict " + (DATA.equivalent ? "same" : "differs"), id: "verdict" }, DATA.summary),
    el("div", { class: "counts" }, counts),
    el("div", { class: "sides" }, side("A", DATA.a, DATA.files.a), side("B", DATA.b, DATA.files.b)),
    DATA.options.ignore.length ? el("div", { class: "facts" }, "ignored: ", DATA.options.ignore.map((p) => el("code", {}, p + " "))) : null);
  const entries = surfaceRows === surface.length ? "" : ` differences in ${surface.length} entries`;
  out.append(el("h2", { class: "section", id: "surface" }, `Server surface (${surfaceRows}${entries})`));
  if (!surface.length) out.append(el("p", { class: "hint" }, "The same tools, prompts and resources."));
  out.append(el("div", { id: "surface-diffs" }, surface.map(([d, g]) => diffRow(d, g))));
  out.append(el("h2", { class: "section", id: "exchanges" }, `Exchanges (${groups.size} changed)`));
  if (!groups.size) out.append(el("p", { class: "hint" }, "Every exchange answered the same."));
  out.append(el("div", { id: "exchange-diffs" }, [...groups.entries()].map(([k, ds]) => exchangeCard(k, ds))));
  const folded = [["envelope", "Envelope differences (not behaviour)"]];
  for (const [k, v] of Object.entries(DATA)) if (Array.isArray(v) && !KNOWN_LISTS.has(k) && v.length && typeof v[0] === "object" && "path" in v[0]) folded.push([k, k[0].toUpperCase() + k.slice(1)]);
  for (const [k, title] of folded) {
    const rows = DATA[k] || [];
    if (!rows.length) continue;
    out.append(el("details", { class: "folded", id: "folded-" + k }, el("summary", {}, `${title} (${rows.length})`), rows.map((d) => diffRow(d))));
  }
  app.replaceChildren(el("header", { class: "top" }, el("h1", {}, el("span", { class: "brand" }, "mcptape diff"), " ", DATA.files.a, " → ", DATA.files.b)), out);
  document.body.dataset.ready = "1";
}

main();
