// fleet.js - the fleet view: every host with its state, last seen, kernel,
// labels, alerts and sparklines, from one call to GET /api/v1/fleet?layout=columns
// per refresh (bucket times once, one value array per host and sparkline: a
// third of the bytes of [ts, v] pairs at 1,000 hosts). Sorting and
// filtering are client-side and kept in the hash (#/fleet?q=&state=&sort=&label=).
// The table is virtual (only the rows on screen exist), so 1,000 hosts
// render as fast as a screenful; its columns share the window's width
// (layoutColumns), so it fits from 1280 px up without cutting a value
// that has no tooltip.
import { getJSON } from "./api.js";
import { chipText, chipTitle, compareAlerts, SEV_RANK } from "./alertfmt.js";
import { h } from "./dom.js";
import { fmtAge, fmtAgo, fmtNum, fmtPct, fmtRatio, fmtRate, fmtTime, text } from "./format.js";
import { makeHash, poll, replaceHash, setStatus } from "./nav.js";
import { mountRegressionBanner } from "./regression.js";
import { lastValue, maxValue, sparkline } from "./spark.js";

const WINDOW_S = 3600;
const RANK = { critical: 2, warning: 1, ok: 0 };
const ROW_H = 31;	// px, fixed by app.css (#fleet-table tbody tr)
const OVERSCAN = 12;	// rows kept beyond the screen on each side
const SPARK_H = 22;
// the request index.html's inline script sends before the modules load
export const FLEET_PARAMS = { window: WINDOW_S, layout: "columns" };

// A performance mark, once per page (bench/browser.mjs times the first load).
function mark(name) {
  if (!performance.getEntriesByName(name).length) performance.mark(name);
}

// After the next frame was rendered, or 100 ms when frames are not being
// rendered (a hidden tab).
const afterPaint = () => new Promise((r) => {
  const t = setTimeout(r, 100);
  requestAnimationFrame(() => setTimeout(() => { clearTimeout(t); r(); }, 0));
});

// The sparkline columns: key in host.spark, label, formatter, fixed y max.
const SPARKS = [
  { key: "psi_memory_some", label: "PSI mem some", fmt: fmtPct, color: "var(--c-purple)", title: "PSI memory some avg10, %" },
  { key: "refault_file", label: "File refaults", fmt: (v) => fmtRate(v), color: "var(--c-orange)", title: "workingset_refault_file, pages per second" },
  { key: "reclaim_efficiency", label: "Reclaim eff.", fmt: fmtRatio, color: "var(--c-green)", yMax: 1, title: "pgsteal / pgscan of all reclaim (5.8+: anon + file, a cgroup's limit reclaim too; before: kswapd + direct)" },
];

// The columns: sort key, heading, least width (px) and share of the width
// left over, and the width of the value beside a sparkline.
export const COLUMNS = [
  { key: "state", label: "State", min: 98, grow: 0 },
  { key: "host", label: "Host", min: 110, grow: 1.4 },
  { key: "labels", label: "Labels", min: 86, grow: 1, sort: null },
  { key: "kernel", label: "Kernel", min: 118, grow: 0.5 },
  { key: "last_seen", label: "Last seen", min: 112, grow: 0 },
  { key: "alerts", label: "Alerts", min: 160, grow: 1.6 },
  { key: "psi_memory_some", label: "PSI mem some", min: 118, grow: 0.7, spark: 54 },
  { key: "refault_file", label: "File refaults", min: 122, grow: 0.7, spark: 60 },
  { key: "reclaim_efficiency", label: "Reclaim eff.", min: 104, grow: 0.7, spark: 44 },
  { key: "swap", label: "Swap in / out", min: 134, grow: 0.7, spark: 84 },
];

// Column widths (px) for a table width: every column its least width, the
// rest shared by grow. Sparkline canvases take what their value leaves.
// hostPx: the longest host name as shown (px): the Host column gets it
// first, up to a quarter of the width, taken from Labels and Kernel (cut
// with a tooltip) before any other column.
const GIVE = { labels: 56, kernel: 72 };	// the least Labels and Kernel keep for the host
export function layoutColumns(width, hostPx = 0) {
  const mins = COLUMNS.map((c) => c.min);
  const hi = COLUMNS.findIndex((c) => c.key === "host");
  const want = Math.min(Math.ceil(hostPx) + 18, Math.floor(width / 4));
  if (want > mins[hi]) {
    let need = want - mins[hi];
    const spare = width - mins.reduce((a, b) => a + b, 0);
    const free = Math.max(0, Math.min(need, spare));
    mins[hi] += free;
    need -= free;
    for (const [k, floor] of Object.entries(GIVE)) {
      const i = COLUMNS.findIndex((c) => c.key === k);
      const take = Math.min(need, Math.max(0, mins[i] - floor));
      mins[i] -= take;
      mins[hi] += take;
      need -= take;
    }
  }
  const least = mins.reduce((s, m) => s + m, 0);
  const grow = COLUMNS.reduce((s, c) => s + c.grow, 0);
  const extra = Math.max(0, width - least);
  const w = COLUMNS.map((c, i) => Math.floor(mins[i] + (extra * c.grow) / grow));
  const spark = COLUMNS.map((c, i) => (c.spark ? Math.max(40, Math.min(160, w[i] - c.spark - 12 - 6)) : 0));
  return { widths: w, spark };
}

// The dot-suffix every dotted host name of the fleet shares (".prod.example.com"),
// when at least two have it: left out of the Host column (the tooltip and the
// host view have the whole name), so that the part that differs shows.
export function commonSuffix(names) {
  const dotted = (names || []).filter((n) => typeof n === "string" && n.includes("."));
  if (dotted.length < 2) return "";
  let parts = dotted[0].split(".").slice(1);
  for (const n of dotted.slice(1)) {
    const p = n.split(".").slice(1);
    let k = 0;
    while (k < parts.length && k < p.length && parts[parts.length - 1 - k] === p[p.length - 1 - k]) k++;
    parts = parts.slice(parts.length - k);
  }
  return parts.length ? "." + parts.join(".") : "";
}

// A host name as its cell shows it: without the fleet's common suffix
// (marked by a trailing "…"), and longer than fit characters cut in its
// middle, keeping its start and the end (where numbered names differ).
export function hostShown(name, suffix, fit) {
  let s = String(name);
  let cut = "";
  if (suffix && s.endsWith(suffix) && s.length > suffix.length) {
    s = s.slice(0, -suffix.length);
    cut = "\u2026";
  }
  if (fit > 8 && s.length + cut.length > fit) {
    const tail = Math.ceil((fit - 1) * 0.65), head = Math.max(2, fit - 1 - tail);
    return s.slice(0, head) + "\u2026" + s.slice(s.length - tail);
  }
  return s + cut;
}

// The "+N" chip's tooltip: every alert of the host, one line each; an
// alert that ended again and again (a flapping detector) is one line
// "ended ×N in the hour" with its latest.
export function moreTitle(all, now) {
  const lines = [], ended = new Map();
  for (const a of all) {
    if (a.state !== "resolved") { lines.push((a.silenced ? "silenced: " : "") + chipTitle(a, now).replace("\n", " \u2014 ")); continue; }
    const k = a.kind + "\u0000" + (a.cgroup || "");
    if (!ended.has(k)) { ended.set(k, { a, n: 0 }); lines.push(k); }
    ended.get(k).n++;
  }
  return lines.map((l) => {
    const e = ended.get(l);
    if (!e) return l;
    const line = chipTitle(e.a, now).replace("\n", " \u2014 ");
    return "ended: " + (e.n > 1 ? line.replace(/^(\S+ \([^)]*\) on [^:]*): /, "$1: \u00d7" + e.n + " in the hour, the latest ") : line);
  }).join("\n");
}

// Label keys the hosts carry, most common first.
export function labelKeys(hosts) {
  const n = new Map();
  for (const x of hosts || []) for (const k of Object.keys(x.labels || {})) n.set(k, (n.get(k) || 0) + 1);
  return [...n.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map((e) => e[0]);
}

function labelText(labels) {
  return Object.entries(labels || {}).map(([k, v]) => k + "=" + text(v));
}

// The host's alerts as the fleet shows them: open ones (worst, newest
// first), then those that ended within the window.
// A host that went silent within CAUSE_S after a worse alert ended (an OOM
// kill, then nothing): that alert first, marked as what came before the
// silence ("cause"), since it is the likely story of the dead host.
const CAUSE_S = 600;
export function hostAlerts(hst) {
  const open = (hst.open_alerts || []).map((a) => ({ ...a, host: hst.host, state: "open" })).sort(compareAlerts);
  const ended = (hst.resolved_alerts || []).map((a) => ({ ...a, host: hst.host, state: "resolved" }))
    .sort((x, y) => (y.ended_at_ts || 0) - (x.ended_at_ts || 0));
  const silent = open.find((a) => a.kind === "host_silent");
  const cause = silent && ended.find((a) => (SEV_RANK[a.severity] || 0) > (SEV_RANK[silent.severity] || 0) &&
    a.ended_at_ts <= silent.started_at_ts + 60 && a.ended_at_ts >= silent.started_at_ts - CAUSE_S);
  if (cause) return [{ ...cause, before_silence: true }, ...open, ...ended.filter((a) => a !== cause)];
  return [...open, ...ended];
}

// Sort key of the default order: worst state first, then the host whose
// worst alert started most recently, then silent hosts.
function stateKey(hst) {
  const open = hst.open_alerts || [];
  let newest = 0;
  for (const a of open) if ((SEV_RANK[a.severity] || 0) === RANK[hst.state] && (a.started_at_ts || 0) > newest) newest = a.started_at_ts;
  return RANK[hst.state] * 1e11 + (hst.stale ? 5e10 : 0) + newest / 100;
}

// The value a column sorts by.
function sortValue(hst, key) {
  switch (key) {
    case "state": return stateKey(hst);
    case "host": return hst.host;
    case "kernel": return hst.kernel || "";
    case "last_seen": return hst.last_seen_ts || 0;
    case "alerts": return (hst.open_alerts || []).length * 1000 + (hst.resolved_alerts || []).length;
    case "swap": return (lastOf(hst, "swap_in") || 0) + (lastOf(hst, "swap_out") || 0);
    default: return lastOf(hst, key) ?? -1;
  }
}

// A sparkline's last non-null value (sorting): from the columns when the
// answer had them, else from the [ts, v] points.
function lastOf(hst, key) {
  if (hst.lastSpark) return hst.lastSpark[key] ?? null;
  return lastValue(hst.spark?.[key]);
}

// The columnar answer turned into the documented per-host [ts, v] points
// (what spark.js draws); null values stay as gaps. The points of a host are
// built only when its row is drawn (a getter, kept once built): building
// them for 1,000 hosts x 5 lines up front was 300,000 small arrays, most of
// the fleet page's script and garbage-collector time. The last values,
// which sorting needs for every host, are taken from the columns directly.
export function fromColumns(data) {
  if (data.layout !== "columns") return data;
  const ts = data.ts || [];
  for (const hst of data.hosts || []) {
    const cols = hst.spark || {};
    const sp = {}, last = {};
    for (const k of Object.keys(cols)) {
      const vals = cols[k] || [];
      let i = vals.length - 1;
      while (i >= 0 && vals[i] === null) i--;
      last[k] = i >= 0 ? vals[i] : null;
      let pts = null;
      Object.defineProperty(sp, k, {
        enumerable: true,
        get() {
          if (!pts) {
            pts = new Array(vals.length);
            for (let j = 0; j < vals.length; j++) pts[j] = [ts[j], vals[j]];
          }
          return pts;
        },
      });
    }
    hst.spark = sp;
    hst.lastSpark = last;
  }
  return data;
}

// The text filter matches host, kernel, labels ("k=v") and the kind and
// cgroup of the host's open and recently ended alerts; several words must
// all match.
export function matches(hst, q, state) {
  if (state === "stale" && !hst.stale) return false;
  if (state === "problem" && hst.state === "ok") return false;
  if (["ok", "warning", "critical"].includes(state) && hst.state !== state) return false;
  if (!q) return true;
  const hay = [hst.host, hst.kernel || "", ...labelText(hst.labels)];
  for (const a of [...(hst.open_alerts || []), ...(hst.resolved_alerts || [])]) hay.push(a.kind || "", a.cgroup || "");
  const low = hay.map((s) => s.toLowerCase());
  // words separated by spaces: each must match ("thrash dc=fra1")
  return q.toLowerCase().split(/\s+/).filter(Boolean).every((w) => low.some((s) => s.includes(w)));
}

export function mount(el, route) {
  const st = {
    q: route.params.get("q") || "",
    state: route.params.get("state") || "all",
    sort: route.params.get("sort") || "state",
    asc: route.params.get("asc") === "1",
    label: route.params.get("label") || "",
    data: null,
  };

  const input = h("input", { type: "search", placeholder: "host, label, kernel, alert kind, cgroup", id: "fleet-filter", value: st.q, size: 30 });
  const sel = h("select", { id: "fleet-state" },
    ["all", "problem", "critical", "warning", "ok", "stale"].map((s) =>
      h("option", { value: s, selected: s === st.state }, s === "problem" ? "warning+critical" : s)));
  const labelSel = h("select", { id: "fleet-label", title: "what the Labels column shows" });
  const count = h("span", { class: "muted", id: "fleet-count" });
  const tbody = h("tbody", {}, h("tr", {}, h("td", { colspan: COLUMNS.length, class: "empty" }, "loading the fleet\u2026")));
  const thead = h("tr");
  const colgroup = h("colgroup");
  const table = h("table", { class: "grid fleet data", id: "fleet-table" }, colgroup, h("thead", {}, thead), tbody);
  const wrap = h("div", { class: "fleet-wrap" }, table);
  // one tile per state: the fleet's health at a glance, and a filter
  const tiles = h("div", { class: "tiles", id: "fleet-tiles" });
  function renderTiles(hosts) {
    const n = { critical: 0, warning: 0, ok: 0, stale: 0 };
    for (const x of hosts) { n[x.state] = (n[x.state] || 0) + 1; if (x.stale) n.stale++; }
    tiles.replaceChildren(...["critical", "warning", "ok", "stale"].map((k) =>
      h("button", {
        type: "button",
        class: "tile " + k + (n[k] ? "" : " zero") + (st.state === k ? " on" : ""), dataset: { tile: k },
        "aria-pressed": st.state === k ? "true" : "false",
        title: "show only " + (k === "stale" ? "silent" : k) + " hosts (click again for all)",
        onclick: () => { st.state = st.state === k ? "all" : k; sel.value = st.state; syncHash(); renderBody(); },
      }, h("span", { class: "n" }, String(n[k])), h("span", { class: "k" }, k === "stale" ? "silent" : k))));
  }

  function syncHash() {
    replaceHash(makeHash("fleet", "", { q: st.q, state: st.state === "all" ? "" : st.state, sort: st.sort === "state" ? "" : st.sort,
      asc: st.asc ? "1" : "", label: st.label }));
  }

  // column widths from the window's width (no layout to read: main's
  // padding is 2 x 14 px), as shares of the table, so that it fits its box
  // whatever a scrollbar takes; rows rebuilt when they change
  let layout = null;
  // the Host column's font measured once; the names' widths as shown
  let measure = null;
  const textPx = (t) => {
    if (!measure) {
      measure = document.createElement("canvas").getContext("2d");
      const f = getComputedStyle(document.body);
      measure.font = "600 " + f.fontSize + " " + f.fontFamily;
    }
    return measure.measureText(t).width;
  };
  let suffix = "", hostPx = 0, charPx = 8;
  function measureHosts() {
    const names = (st.data?.hosts || []).map((x) => x.host);
    suffix = commonSuffix(names);
    let longest = "";
    for (const n of names) { const t = hostShown(n, suffix, 0); if (t.length > longest.length) longest = t; }
    hostPx = longest ? textPx(longest) : 0;
    charPx = longest ? hostPx / longest.length : 8;
  }
  const hostFit = () => Math.max(8, Math.floor((layout.widths[1] - 18) / charPx));

  function applyLayout() {
    const next = layoutColumns(Math.max(0, window.innerWidth - 28), hostPx);
    const changed = !layout || next.widths.join() !== layout.widths.join();
    layout = next;
    if (changed) {
      const total = layout.widths.reduce((a, b) => a + b, 0) || 1;
      colgroup.replaceChildren(...layout.widths.map((w) => h("col", { style: "width:" + (100 * w / total).toFixed(3) + "%" })));
    }
    return changed;
  }

  function renderHead() {
    thead.replaceChildren(...COLUMNS.map((c) => {
      const label = c.key === "labels" ? (st.label ? "Label " + st.label : "Labels") : c.label;
      if (c.sort === null) return h("th", { scope: "col" }, label);
      const on = st.sort === c.key;
      const dir = on ? (st.asc ? "ascending" : "descending") : "none";
      return h("th", { scope: "col", class: "sortable" + (on ? " sorted" + (st.asc ? " asc" : "") : ""), dataset: { sort: c.key }, "aria-sort": dir },
        h("button", {
          type: "button", class: "sort",
          "aria-label": "sort by " + label.toLowerCase() + (on ? ", now " + dir + "; press to reverse" : ""),
          onclick: () => {
            if (st.sort === c.key) st.asc = !st.asc;
            else { st.sort = c.key; st.asc = c.key === "host" || c.key === "kernel"; }
            syncHash(); renderHead(); renderBody();
            const again = thead.querySelector(`th[data-sort="${c.key}"] button`);
            if (again) again.focus();
          },
        }, label));
    }));
  }

  function renderLabelPicker(hosts) {
    const keys = labelKeys(hosts);
    if (st.label && !keys.includes(st.label)) keys.push(st.label);
    labelSel.replaceChildren(h("option", { value: "" }, "all labels"),
      ...keys.map((k) => h("option", { value: k, selected: k === st.label }, k)));
    labelSel.value = st.label;
  }

  // The Alerts cell: the first alert as a chip "thrash · 38m" (its summary
  // as tooltip, a link to that alert), "+N" for the others with all of
  // them in its tooltip; alerts that ended within the hour are marked.
  function alertsCell(hst, now) {
    const all = hostAlerts(hst);
    if (!all.length) return h("td", { class: "alerts-cell" }, h("span", { class: "muted" }, "none"));
    const first = all[0];
    const link = (a, cls, txt, title) => h("a", {
      class: "chip " + cls, href: makeHash("alerts", "", { host: hst.host, state: "all", id: a ? a.id : "" }), title,
      dataset: a ? { alertId: a.id } : {},
    }, txt);
    // the kind may be cut ("swap_imb…"), the age never; an alert that came
    // just before the host went silent reads "oom_kill → silent · 21m"
    let [kind, ...age] = chipText(first, now).split(" \u00b7 ");
    if (first.before_silence) {
      const silent = all.find((a) => a.kind === "host_silent");
      kind = first.kind + " \u2192 silent";
      age = [fmtAge(now - silent.started_at_ts)];
    }
    const kids = [link(first, (first.state === "resolved" && !first.before_silence ? "resolved " : "") + first.severity + (first.silenced ? " silenced" : ""),
      [h("span", { class: "k" }, kind), h("span", { class: "t" }, " \u00b7 " + age.join(" \u00b7 "))],
      chipTitle(first, now) + (first.before_silence ? "\nthen the host went silent" : "") +
      (first.silenced ? "\nsilenced: its notifications are held back" : ""))];
    if (all.length > 1) {
      const rest = all.slice(1);
      kids.push(link(null, "more", "+" + rest.length, moreTitle(all, now)));
    }
    return h("td", { class: "alerts-cell" }, kids);
  }

  function row(hst, t0, t1) {
    const sp = hst.spark || {};
    const now = st.data.now_ts;
    const stateCls = "st-" + hst.state + (hst.stale ? " stale" : "");
    // a silent host's values are its last ones, not its state now
    const when = hst.stale ? " at " + fmtTime(hst.last_seen_ts) + " (its last sample)" : " now";
    const sparkCells = SPARKS.map((s, i) => {
      const pts = sp[s.key] || [];
      const val = s.fmt(lastValue(pts));
      return h("td", { class: "spark-cell", dataset: { spark: s.key }, title: s.title + ": " + val + when + ", max " + s.fmt(maxValue(pts)) + " in the hour" },
        sparkline([{ points: pts, color: s.color }], t0, t1, { w: layout.spark[6 + i], h: SPARK_H, yMax: s.yMax ?? null }),
        h("span", { class: "spark-val" }, val));
    });
    const swapIn = sp.swap_in || [], swapOut = sp.swap_out || [];
    const si = lastValue(swapIn), so = lastValue(swapOut);
    sparkCells.push(h("td", { class: "spark-cell", dataset: { spark: "swap" }, title: "pswpin (blue) / pswpout (red): " + fmtRate(si, "pages") + " in, " + fmtRate(so, "pages") + " out" },
      sparkline([{ points: swapIn, color: "var(--c-blue)" }, { points: swapOut, color: "var(--c-red)" }], t0, t1, { w: layout.spark[9], h: SPARK_H }),
      h("span", { class: "spark-val" }, fmtNum(si) + " / " + fmtNum(so))));
    const labels = labelText(hst.labels);
    const labelCell = st.label
      ? h("td", { class: "labels", title: st.label + "=" + text(hst.labels?.[st.label]) }, text(hst.labels?.[st.label]))
      : h("td", { class: "labels", title: labels.join(", ") || "no labels" }, labels.length ? labels.join(", ") : h("span", { class: "muted" }, "\u2013"));
    const age = now - (hst.last_seen_ts || 0);
    const tr = h("tr", { class: stateCls, dataset: { host: hst.host, state: hst.state, stale: hst.stale ? "1" : "0" } },
      h("td", {}, h("span", { class: "badge " + hst.state }, hst.state)),
      h("td", { class: "host", title: hst.host }, h("a", { href: makeHash("host", hst.host, {}) }, hostShown(hst.host, suffix, hostFit()))),
      labelCell,
      h("td", { class: "mono", title: text(hst.kernel) }, text(hst.kernel)),
      h("td", { class: "seen", title: "last sample " + fmtTime(hst.last_seen_ts) + " (" + fmtAgo(hst.last_seen_ts, now) + " at the answer's time)" + (hst.stale ? "; no sample for 3 intervals: silent" : "") },
        hst.last_seen_ts ? fmtAge(age) : "\u2013", hst.stale ? [" ", h("span", { class: "badge stale" }, "silent")] : null),
      alertsCell(hst, now),
      ...sparkCells);
    return tr;
  }

  // The table is virtual: every row has the same height (ROW_H, nothing
  // wraps), only the rows on screen plus OVERSCAN on each side exist, and
  // two spacer rows keep the scroll height of the whole list. 1,000 hosts
  // cost the same to render as 60.
  const view = { shown: [], a: 0, b: 0, t0: 0, t1: 0, trs: new Map() };
  const spacer = (px) => h("tr", { class: "spacer", "aria-hidden": "true" },
    h("td", { colspan: COLUMNS.length, style: "height:" + px + "px" }));

  // Rows [a, b) that must exist for the current scroll position.
  function needed(overscan) {
    const top = tbody.getBoundingClientRect().top;
    const first = Math.max(0, Math.floor(-top / ROW_H) - overscan);
    const last = Math.min(view.shown.length, Math.ceil((window.innerHeight - top) / ROW_H) + overscan);
    return [first, Math.max(first, last)];
  }

  // Make the rows on screen and overscan more on each side exist, when a
  // row on screen is missing (a scroll), or always with force (new data,
  // every row rebuilt) or grow (more overscan, the rows there kept). Rows
  // of the same data already built are kept (view.trs, index -> row): a
  // scroll or the overscan added after the first frame builds only the new
  // ones.
  function paintRows(force, overscan = OVERSCAN, grow = false) {
    if (!force && !grow) {
      const [va, vb] = needed(0);
      if (va >= view.a && vb <= view.b) return;
    }
    const [a, b] = needed(overscan);
    const keep = force ? new Map() : view.trs;
    const trs = new Map();
    for (let i = a; i < b; i++) trs.set(i, keep.get(i) || row(view.shown[i], view.t0, view.t1));
    view.a = a;
    view.b = b;
    view.trs = trs;
    tbody.replaceChildren(...(a > 0 ? [spacer(a * ROW_H)] : []), ...trs.values(),
      ...(b < view.shown.length ? [spacer((view.shown.length - b) * ROW_H)] : []));
  }

  let scrollQueued = false;
  const onScroll = () => {
    if (scrollQueued) return;
    scrollQueued = true;
    requestAnimationFrame(() => { scrollQueued = false; paintRows(false); });
  };
  let resizeTimer = null;
  const onResize = () => {
    onScroll();
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => { if (applyLayout() && st.data) renderBody(); }, 150);
  };
  window.addEventListener("scroll", onScroll, { passive: true });
  window.addEventListener("resize", onResize);

  function renderBody(first = false) {
    if (!st.data) return;
    const hosts = st.data.hosts || [];
    const shown = hosts.filter((x) => matches(x, st.q, st.state));
    const dir = st.asc ? 1 : -1;
    const keyed = shown.map((x) => [sortValue(x, st.sort), x]);
    keyed.sort(([va, a], [vb, b]) => {
      if (va < vb) return -dir;
      if (va > vb) return dir;
      return a.host < b.host ? -1 : a.host > b.host ? 1 : 0;
    });
    view.shown = keyed.map((k) => k[1]);
    view.t1 = st.data.now_ts;
    view.t0 = view.t1 - WINDOW_S;
    if (shown.length === 0) {
      tbody.replaceChildren(h("tr", {}, h("td", { colspan: COLUMNS.length, class: "empty" },
        hosts.length ? "no host matches the filter" : "no host has reported yet")));
    } else {
      // the first render builds the rows on screen only, the overscan ones
      // after that frame (fewer rows and sparkline canvases before the
      // table first shows)
      paintRows(true, first ? 0 : OVERSCAN);
    }
    renderTiles(hosts);
    const bad = hosts.filter((x) => x.state !== "ok").length;
    const stale = hosts.filter((x) => x.stale).length;
    count.textContent = `${shown.length} of ${hosts.length} hosts \u00b7 ${bad} with open alerts \u00b7 ${stale} silent`;
  }

  input.addEventListener("input", () => { st.q = input.value.trim(); syncHash(); renderBody(); });
  sel.addEventListener("change", () => { st.state = sel.value; syncHash(); renderBody(); });
  labelSel.addEventListener("change", () => { st.label = labelSel.value; syncHash(); renderHead(); renderBody(); });

  // open kernel regressions (regression.js), above the table
  const regressions = h("div", { id: "fleet-regressions" });
  const banner = mountRegressionBanner(regressions);
  el.append(
    h("div", { class: "fleet-head" }, h("h1", {}, "Fleet"), tiles),
    regressions,
    h("div", { class: "toolbar" }, h("label", { for: "fleet-filter" }, "Filter"), input,
      h("label", { for: "fleet-state" }, "State"), sel,
      h("label", { for: "fleet-label" }, "Label column"), labelSel, count,
      h("span", { class: "muted" }, "\u00b7 sparklines: last hour"),
      h("a", { class: "cmp-link", id: "fleet-compare", href: makeHash("compare", "", { group_by: "kernel" }), title: "reclaim figures of two kernel releases side by side" }, "compare kernels")),
    wrap);
  applyLayout();
  renderHead();

  let rendered = false;
  const stop = poll(async (signal) => {
    try {
      st.data = fromColumns(await getJSON("fleet", FLEET_PARAMS, signal));
    } catch (e) {
      if (e.name === "AbortError" || (e.status === 0 || e.status >= 500)) throw e;	// poll: stale, retried
      setStatus("fleet: " + e.message, true);
      if (!st.data) tbody.replaceChildren(h("tr", {}, h("td", { colspan: COLUMNS.length, class: "error" }, "could not load the fleet: " + e.message)));
      throw e;
    }
    const first = !rendered;
    rendered = true;
    if (first) renderLabelPicker(st.data.hosts);
    measureHosts();
    applyLayout();
    renderBody(first);
    if (first) {
      // for bench/browser.mjs: the table with its visible sparklines
      // built, then that frame painted (the page answers input), then the
      // overscan rows
      mark("fleet-rendered");
      await afterPaint();
      if (signal.aborted) return;
      mark("fleet-interactive");
      paintRows(false, OVERSCAN, true);
    }
    el.dataset.loaded = String(Date.now());
  });

  return {
    destroy: () => {
      stop();
      clearTimeout(resizeTimer);
      banner.destroy();
      window.removeEventListener("scroll", onScroll);
      window.removeEventListener("resize", onResize);
    },
  };
}
