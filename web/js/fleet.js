// fleet.js - the fleet view: every host with its state, last seen, kernel and
// sparklines, from one call to GET /api/v1/fleet every 10 s. Sorting and
// filtering are client-side and kept in the hash (#/fleet?q=&state=&sort=).
import { api } from "./api.js";
import { h } from "./dom.js";
import { fmtAgo, fmtPct, fmtRatio, fmtRate, fmtTime } from "./format.js";
import { makeHash, poll, replaceHash, setStatus } from "./nav.js";
import { lastValue, maxValue, sparkline } from "./spark.js";

const POLL_MS = 10000;
const WINDOW_S = 3600;
const POINTS = 60;
const RANK = { critical: 2, warning: 1, ok: 0 };

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
    case "swap": return (lastValue(hst.spark?.swap_in) || 0) + (lastValue(hst.spark?.swap_out) || 0);
    default: return lastValue(hst.spark?.[key]) ?? -1;
  }
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
  const table = h("table", { class: "grid", id: "fleet-table" }, h("thead", {}, thead), tbody);

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
    const stateCls = "st-" + hst.state + (hst.stale ? " stale" : "");
    const alerts = (hst.open_alerts || []).map((a) =>
      h("a", { class: "chip " + a.severity, href: makeHash("alerts", "", { host: hst.host, state: "open" }), title: a.cgroup || "host-wide" },
        a.kind + (a.cgroup ? " (" + a.cgroup.split("/").pop() + ")" : "")));
    const sparkCells = SPARKS.map((s) => {
      const pts = sp[s.key] || [];
      return h("td", { class: "spark-cell", dataset: { spark: s.key } },
        sparkline([{ points: pts, color: s.color }], t0, t1, { yMax: s.yMax ?? null, title: s.title + " (max " + s.fmt(maxValue(pts)) + ")" }),
        h("span", { class: "spark-val" }, s.fmt(lastValue(pts))));
    });
    const swapIn = sp.swap_in || [], swapOut = sp.swap_out || [];
    sparkCells.push(h("td", { class: "spark-cell", dataset: { spark: "swap" } },
      sparkline([{ points: swapIn, color: "#1f6feb" }, { points: swapOut, color: "#cf1322" }], t0, t1, { title: "pswpin (blue) / pswpout (red), pages/s" }),
      h("span", { class: "spark-val" }, fmtRate(lastValue(swapIn)) + " / " + fmtRate(lastValue(swapOut)))));
    return h("tr", { class: stateCls, dataset: { host: hst.host, state: hst.state, stale: hst.stale ? "1" : "0" } },
      h("td", {}, h("span", { class: "badge " + hst.state }, hst.state), hst.stale ? [" ", h("span", { class: "badge stale", title: "no sample for 3 intervals" }, "stale")] : null),
      h("td", { class: "host" }, h("a", { href: makeHash("host", hst.host, {}) }, hst.host)),
      h("td", {}, labelText(hst.labels).map((l) => h("span", { class: "chip" }, l))),
      h("td", { class: "mono" }, hst.kernel || "\u2013"),
      h("td", { title: fmtTime(hst.last_seen_ts) }, fmtAgo(hst.last_seen_ts, st.data.now_ts)),
      h("td", { class: "alerts-cell" }, alerts.length ? alerts : h("span", { class: "muted" }, "none")),
      ...sparkCells);
  }

  function renderBody() {
    if (!st.data) return;
    const hosts = st.data.hosts || [];
    const shown = hosts.filter((x) => matches(x, st.q, st.state));
    const dir = st.asc ? 1 : -1;
    shown.sort((a, b) => {
      const va = sortValue(a, st.sort), vb = sortValue(b, st.sort);
      if (va < vb) return -dir;
      if (va > vb) return dir;
      return a.host < b.host ? -1 : a.host > b.host ? 1 : 0;
    });
    const t1 = st.data.now_ts, t0 = t1 - WINDOW_S;
    tbody.replaceChildren(...shown.map((x) => row(x, t0, t1)));
    if (shown.length === 0) {
      tbody.appendChild(h("tr", {}, h("td", { colspan: cols.length, class: "empty" },
        hosts.length ? "no host matches the filter" : "no host has reported yet")));
    }
    const bad = hosts.filter((x) => x.state !== "ok").length;
    const stale = hosts.filter((x) => x.stale).length;
    count.textContent = `${shown.length} of ${hosts.length} hosts \u00b7 ${bad} with open alerts \u00b7 ${stale} stale`;
  }

  input.addEventListener("input", () => { st.q = input.value.trim(); syncHash(); renderBody(); });
  sel.addEventListener("change", () => { st.state = sel.value; syncHash(); renderBody(); });

  el.append(
    h("h1", {}, "Fleet"),
    h("div", { class: "toolbar" }, h("label", { for: "fleet-filter" }, "Filter"), input,
      h("label", { for: "fleet-state" }, "State"), sel, count,
      h("span", { class: "muted" }, "\u00b7 sparklines: last hour"),
      h("a", { class: "cmp-link", id: "fleet-compare", href: makeHash("compare", "", { group_by: "kernel" }), title: "reclaim figures of two kernel releases side by side" }, "compare kernels")),
    table);
  renderHead();

  const stop = poll(async (signal) => {
    try {
      st.data = await api.fleet(WINDOW_S, POINTS, signal);
      renderBody();
      setStatus("updated " + fmtTime(Date.now() / 1000).slice(11));
    } catch (e) {
      if (e.name === "AbortError") return;
      setStatus("fleet: " + e.message, true);
      if (!st.data) tbody.replaceChildren(h("tr", {}, h("td", { colspan: cols.length, class: "error" }, "could not load the fleet: " + e.message)));
    }
  }, POLL_MS);

  return { destroy: stop };
}
