// fleet.js - the fleet view: every host with its state, last seen, kernel and
// sparklines, from one call to GET /api/v1/fleet?layout=columns every 10 s
// (bucket times once, one value array per host and sparkline: a third of the
// bytes of [ts, v] pairs at 1,000 hosts). Sorting and filtering are
// client-side and kept in the hash (#/fleet?q=&state=&sort=). The table is
// virtual (only the rows on screen exist), so 1,000 hosts render as fast as
// a screenful.
import { getJSON } from "./api.js";
import { h } from "./dom.js";
import { fmtAgo, fmtPct, fmtRatio, fmtRate, fmtTime } from "./format.js";
import { makeHash, poll, replaceHash, setStatus } from "./nav.js";
import { mountRegressionBanner } from "./regression.js";
import { lastValue, maxValue, sparkline } from "./spark.js";

const POLL_MS = 10000;
const WINDOW_S = 3600;
const POINTS = 60;
const RANK = { critical: 2, warning: 1, ok: 0 };
const ROW_H = 31;	// px, fixed by app.css (#fleet-table tbody tr)
const OVERSCAN = 12;	// rows kept beyond the screen on each side
const SPARK_W = 96, SPARK_H = 22;

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
  { key: "psi_memory_some", label: "PSI mem some", fmt: fmtPct, color: "#8e44ad", title: "PSI memory some avg10, %" },
  { key: "refault_file", label: "File refaults", fmt: (v) => fmtRate(v), color: "#d46b08", title: "workingset_refault_file per second" },
  { key: "reclaim_efficiency", label: "Reclaim eff.", fmt: fmtRatio, color: "#2e8b57", yMax: 1, title: "pgsteal / pgscan (kswapd + direct)" },
];

function labelText(labels) {
  return Object.entries(labels || {}).map(([k, v]) => k + "=" + v);
}

// The value a column sorts by.
function sortValue(hst, key) {
  switch (key) {
    case "state": return RANK[hst.state] * 10 + (hst.stale ? 1 : 0);
    case "host": return hst.host;
    case "kernel": return hst.kernel || "";
    case "last_seen": return hst.last_seen_ts || 0;
    case "alerts": return (hst.open_alerts || []).length;
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

export function matches(hst, q, state) {
  if (state === "stale" && !hst.stale) return false;
  if (state === "problem" && hst.state === "ok") return false;
  if (["ok", "warning", "critical"].includes(state) && hst.state !== state) return false;
  if (!q) return true;
  const needle = q.toLowerCase();
  const hay = [hst.host, hst.kernel || "", ...labelText(hst.labels)];
  return hay.some((s) => s.toLowerCase().includes(needle));
}

export function mount(el, route) {
  const st = {
    q: route.params.get("q") || "",
    state: route.params.get("state") || "all",
    sort: route.params.get("sort") || "state",
    asc: route.params.get("asc") === "1",
    data: null,
  };

  const input = h("input", { type: "search", placeholder: "filter host, label, kernel", id: "fleet-filter", value: st.q, size: 28 });
  const sel = h("select", { id: "fleet-state" },
    ["all", "problem", "critical", "warning", "ok", "stale"].map((s) =>
      h("option", { value: s, selected: s === st.state }, s === "problem" ? "warning+critical" : s)));
  const count = h("span", { class: "muted", id: "fleet-count" });
  const tbody = h("tbody");
  const cols = [
    ["state", "State"], ["host", "Host"], [null, "Labels"], ["kernel", "Kernel"],
    ["last_seen", "Last seen"], ["alerts", "Open alerts"],
    ...SPARKS.map((s) => [s.key, s.label]), ["swap", "Swap in / out"],
  ];
  const thead = h("tr");
  // fixed column widths: the virtual table's rows must not change them
  const widths = [150, 125, 95, 130, 110, 185, 160, 160, 150, 205];
  const table = h("table", { class: "grid fleet", id: "fleet-table" },
    h("colgroup", {}, widths.map((w) => h("col", { style: "width:" + w + "px" }))),
    h("thead", {}, thead), tbody);
  // one tile per state: the fleet's health at a glance, and a filter
  const tiles = h("div", { class: "tiles", id: "fleet-tiles" });
  function renderTiles(hosts) {
    const n = { critical: 0, warning: 0, ok: 0, stale: 0 };
    for (const x of hosts) { n[x.state] = (n[x.state] || 0) + 1; if (x.stale) n.stale++; }
    tiles.replaceChildren(...["critical", "warning", "ok", "stale"].map((k) =>
      h("button", {
        class: "tile " + k + (n[k] ? "" : " zero") + (st.state === k ? " on" : ""), dataset: { tile: k },
        title: "show only " + k + " hosts (click again for all)",
        onclick: () => { st.state = st.state === k ? "all" : k; sel.value = st.state; syncHash(); renderBody(); },
      }, h("span", { class: "n" }, String(n[k])), h("span", { class: "k" }, k === "stale" ? "silent" : k))));
  }

  function syncHash() {
    replaceHash(makeHash("fleet", "", { q: st.q, state: st.state === "all" ? "" : st.state, sort: st.sort === "state" ? "" : st.sort, asc: st.asc ? "1" : "" }));
  }

  function renderHead() {
    thead.replaceChildren(...cols.map(([key, label]) => {
      if (!key) return h("th", {}, label);
      const cls = "sortable" + (st.sort === key ? " sorted" + (st.asc ? " asc" : "") : "");
      return h("th", {
        class: cls, dataset: { sort: key },
        onclick: () => {
          if (st.sort === key) st.asc = !st.asc;
          else { st.sort = key; st.asc = key === "host" || key === "kernel"; }
          syncHash(); renderHead(); renderBody();
        },
      }, label);
    }));
  }

  function row(hst, t0, t1) {
    const sp = hst.spark || {};
    const spark = (series, title, yMax) => sparkline(series, t0, t1, { w: SPARK_W, h: SPARK_H, yMax: yMax ?? null, title });
    const stateCls = "st-" + hst.state + (hst.stale ? " stale" : "");
    const alerts = (hst.open_alerts || []).map((a) =>
      h("a", { class: "chip " + a.severity, href: makeHash("alerts", "", { host: hst.host, state: "open" }), title: a.cgroup || "host-wide" },
        a.kind + (a.cgroup ? " (" + a.cgroup.split("/").pop() + ")" : "")));
    const sparkCells = SPARKS.map((s) => {
      const pts = sp[s.key] || [];
      return h("td", { class: "spark-cell", dataset: { spark: s.key } },
        spark([{ points: pts, color: s.color }], s.title + " (max " + s.fmt(maxValue(pts)) + ")", s.yMax),
        h("span", { class: "spark-val" }, s.fmt(lastValue(pts))));
    });
    const swapIn = sp.swap_in || [], swapOut = sp.swap_out || [];
    sparkCells.push(h("td", { class: "spark-cell", dataset: { spark: "swap" } },
      spark([{ points: swapIn, color: "#1f6feb" }, { points: swapOut, color: "#cf1322" }], "pswpin (blue) / pswpout (red), pages/s"),
      h("span", { class: "spark-val" }, fmtRate(lastValue(swapIn)) + " / " + fmtRate(lastValue(swapOut)))));
    const tr = h("tr", { class: stateCls, dataset: { host: hst.host, state: hst.state, stale: hst.stale ? "1" : "0" } },
      h("td", {}, h("span", { class: "badge " + hst.state }, hst.state), hst.stale ? [" ", h("span", { class: "badge stale", title: "no sample for 3 intervals" }, "stale")] : null),
      h("td", { class: "host" }, h("a", { href: makeHash("host", hst.host, {}) }, hst.host)),
      h("td", {}, labelText(hst.labels).map((l) => h("span", { class: "chip" }, l))),
      h("td", { class: "mono" }, hst.kernel || "\u2013"),
      h("td", { class: "seen", title: fmtTime(hst.last_seen_ts) }, fmtAgo(hst.last_seen_ts, st.data.now_ts)),
      h("td", { class: "alerts-cell" }, alerts.length ? alerts : h("span", { class: "muted" }, "none")),
      ...sparkCells);
    return tr;
  }

  // The table is virtual: every row has the same height (ROW_H, nothing
  // wraps), only the rows on screen plus OVERSCAN on each side exist, and
  // two spacer rows keep the scroll height of the whole list. 1,000 hosts
  // cost the same to render as 60.
  const view = { shown: [], a: 0, b: 0, t0: 0, t1: 0, trs: new Map() };
  const spacer = (px) => h("tr", { class: "spacer", "aria-hidden": "true" },
    h("td", { colspan: cols.length, style: "height:" + px + "px" }));

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
  window.addEventListener("scroll", onScroll, { passive: true });
  window.addEventListener("resize", onScroll);

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
      tbody.replaceChildren(h("tr", {}, h("td", { colspan: cols.length, class: "empty" },
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
    count.textContent = `${shown.length} of ${hosts.length} hosts \u00b7 ${bad} with open alerts \u00b7 ${stale} stale`;
  }

  input.addEventListener("input", () => { st.q = input.value.trim(); syncHash(); renderBody(); });
  sel.addEventListener("change", () => { st.state = sel.value; syncHash(); renderBody(); });

  // open kernel regressions (regression.js), above the table
  const regressions = h("div", { id: "fleet-regressions" });
  const banner = mountRegressionBanner(regressions);
  el.append(
    h("div", { class: "fleet-head" }, h("h1", {}, "Fleet"), tiles),
    regressions,
    h("div", { class: "toolbar" }, h("label", { for: "fleet-filter" }, "Filter"), input,
      h("label", { for: "fleet-state" }, "State"), sel, count,
      h("span", { class: "muted" }, "\u00b7 sparklines: last hour"),
      h("a", { class: "cmp-link", id: "fleet-compare", href: makeHash("compare", "", { group_by: "kernel" }), title: "reclaim figures of two kernel releases side by side" }, "compare kernels")),
    table);
  renderHead();

  let rendered = false;
  const stop = poll(async (signal) => {
    try {
      st.data = fromColumns(await getJSON("fleet", { window: WINDOW_S, points: POINTS, layout: "columns" }, signal));
      const first = !rendered;
      rendered = true;
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
      setStatus("updated " + fmtTime(Date.now() / 1000).slice(11));
    } catch (e) {
      if (e.name === "AbortError") return;
      setStatus("fleet: " + e.message, true);
      if (!st.data) tbody.replaceChildren(h("tr", {}, h("td", { colspan: cols.length, class: "error" }, "could not load the fleet: " + e.message)));
    }
  }, POLL_MS);

  return {
    destroy: () => {
      stop();
      banner.destroy();
      window.removeEventListener("scroll", onScroll);
      window.removeEventListener("resize", onScroll);
    },
  };
}
