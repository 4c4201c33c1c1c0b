// host.js - the host view: reclaim figures for one host (or one of its
// cgroups) on a shared time axis. Sources (docs/api.md):
//   GET /api/v1/hosts/{host}              facts in the header
//   GET /api/v1/hosts/{host}/cgroups      the cgroup picker
//   GET /api/v1/hosts/{host}/metrics      which names exist (older kernels)
//   GET /api/v1/hosts/{host}/series_batch every metric of the view in two
//                                         requests (hostplan.js: which, and
//                                         how many points)
//   GET /api/v1/alerts?host=&since=&until= shaded intervals and the alert strip
// Range: ?range=15m..30d follows now (refreshed by polling); ?from=&to= is a
// fixed window (drag-zoom and alert links set it).
import { api, getJSON } from "./api.js";
import { createChart } from "./charts.js";
import { h } from "./dom.js";
import { CGROUP_FIGURES, HOST_FIGURES, assemble, index, inferPageSize } from "./figures.js";
import { RANGES, batchPath, namesFor, pointsFor, requestsFor, windowOf } from "./hostplan.js";
import { fmtAgo, fmtDuration, fmtTime, parseTime } from "./format.js";
import { makeHash, poll, setStatus } from "./nav.js";

// A performance mark, once per page (the first load of a view is what
// bench/browser.mjs times, and where it spends it).
function mark(name) {
  if (!performance.getEntriesByName(name).length) performance.mark(name);
}

const CHART_H = 190;

// A new task (the page can handle input and render in between).
const nextTask = () => new Promise((r) => setTimeout(r, 0));
// After the next frame was rendered (uPlot draws in a microtask, so the
// charts created so far are on screen), or 100 ms when frames are not being
// rendered (a hidden tab).
const afterPaint = () => new Promise((r) => {
  const t = setTimeout(r, 100);
  requestAnimationFrame(() => setTimeout(() => { clearTimeout(t); r(); }, 0));
});

// The plan js/boot.js follows (hostplan.js startEarly), once:
// the first load of this hash then asks for the same window and points, so
// that api.js hands over the answers already on their way. A promise of
// {win, points, names} or null.
function takePlan(hash) {
  const p = window.vmscopeEarlyPlan;
  window.vmscopeEarlyPlan = null;
  return p && p.key === hash ? p.plan : null;
}

export function mount(el, route) {
  mark("host-mount");
  const hostName = route.arg;
  const cgroup = route.params.get("cgroup") || "";
  let win = windowOf(route.params);
  let plan = takePlan(location.hash);
  const ctl = new AbortController();
  const charts = new Map();
  let stopPoll = null;
  let alerts = [];
  let resolved = null;
  let pageSize = 4096;

  const nav = (params) => {
    location.hash = makeHash("host", hostName, { cgroup, ...params });
  };

  // header and toolbar
  const facts = h("div", { class: "facts muted" }, "loading\u2026");
  const rangeBtns = h("span", { class: "seg", id: "range-picker" },
    Object.keys(RANGES).map((k) => h("button", {
      class: k === win.rangeKey ? "on" : "", dataset: { range: k },
      onclick: () => nav({ range: k }),
    }, k)));
  const zoomInfo = win.fixed
    ? h("span", { class: "muted", id: "zoom-info" }, fmtTime(win.since) + " \u2192 " + fmtTime(win.until) + " ",
      h("button", { id: "zoom-reset", onclick: () => nav({ range: "1h" }) }, "back to last hour"))
    : h("span", { class: "muted" }, "drag on a chart to zoom");
  const cgSel = h("select", { id: "cgroup-picker", onchange: (e) => nav({ ...keepWindow(), cgroup: e.target.value }) },
    h("option", { value: "" }, "whole host"));
  const alertStrip = h("div", { class: "toolbar", id: "alert-strip" });
  const grid = h("div", { class: "charts", id: "charts" });

  function keepWindow() {
    return win.fixed ? { from: Math.round(win.since), to: Math.round(win.until) } : { range: win.rangeKey };
  }

  el.append(
    h("div", { class: "host-head" },
      h("h1", {}, h("a", { href: "#/fleet" }, "Fleet"), " / ", hostName, cgroup ? h("span", { class: "mono" }, " " + cgroup) : null),
      facts),
    h("div", { class: "toolbar" }, h("label", {}, "Range"), rangeBtns, zoomInfo,
      h("label", { for: "cgroup-picker" }, "Cgroup"), cgSel),
    alertStrip, grid);

  const figures = cgroup ? CGROUP_FIGURES : HOST_FIGURES;
  const panels = new Map();
  for (const fig of figures) {
    const body = h("div", { class: "plot" }, h("div", { class: "nodata" }, "loading\u2026"));
    const panel = h("div", { class: "panel chart", dataset: { fig: fig.id } },
      h("h3", {}, fig.title), h("div", { class: "sub" }, fig.sub), body);
    panels.set(fig.id, { panel, body });
    grid.append(panel);
  }

  const plotWidth = () => {
    const p = panels.values().next().value;
    return Math.max(300, (p ? p.panel.clientWidth : 600) - 18);
  };

  async function loadFacts() {
    const [info, cgs] = await Promise.all([api.host(hostName, ctl.signal), api.cgroups(hostName, ctl.signal)]);
    const labels = Object.entries(info.labels || {}).map(([k, v]) => h("span", { class: "chip" }, k + "=" + v));
    facts.replaceChildren(
      h("span", {}, "kernel ", h("span", { class: "mono" }, info.kernel || "\u2013")),
      h("span", { title: fmtTime(info.last_seen_ts) }, "last seen " + fmtAgo(info.last_seen_ts)),
      h("span", {}, (info.samples ?? "?") + " samples"),
      h("span", {}, (info.cgroups ?? 0) + " cgroups"),
      info.agent_version ? h("span", {}, "agent " + info.agent_version) : null,
      ...labels);
    for (const c of cgs.cgroups || []) {
      cgSel.append(h("option", { value: c.path, selected: c.path === cgroup },
        c.path + (c.version === 1 ? " (v1)" : "")));
    }
  }

  function renderAlertStrip() {
    const mine = alerts.filter((a) => !cgroup || a.cgroup === null || a.cgroup === cgroup);
    if (!mine.length) {
      alertStrip.replaceChildren(h("span", { class: "muted" }, "no alert in this range"));
      return;
    }
    alertStrip.replaceChildren(h("span", { class: "muted" }, "Alerts in range:"),
      ...mine.map((a) => h("a", {
        class: "chip " + a.severity, dataset: { alertId: a.id },
        href: makeHash("alerts", "", { host: hostName, kind: a.kind, state: "all" }),
        title: a.summary,
      }, a.kind + (a.cgroup ? " " + a.cgroup : "") + " \u00b7 " + fmtTime(parseTime(a.started_at)).slice(5, 16) +
        " \u00b7 " + (a.ended_at ? fmtDuration(parseTime(a.ended_at) - parseTime(a.started_at)) : "open"))));
  }

  function shaded() {
    return alerts
      .filter((a) => !cgroup || a.cgroup === null || a.cgroup === cgroup)
      .map((a) => ({ t0: parseTime(a.started_at), t1: parseTime(a.ended_at) ?? win.until, severity: a.severity }));
  }

  async function loadData(signal) {
    let points = pointsFor(window.innerWidth);
    const names = resolved.names;
    const early = plan ? await plan.catch(() => null) : null;
    plan = null;
    if (early && early.names === names.join(",")) {
      // boot.js's requests: same window, points and names
      win = early.win;
      points = early.points;
    } else if (!win.fixed) {
      win = windowOf(route.params);
    }
    const req = requestsFor(hostName, cgroup, win, names, points);
    const [batches, al] = await Promise.all([
      Promise.all(req.batches.map((b) => getJSON(batchPath(hostName), b, signal))),
      api.alerts(req.alerts, signal),
    ]);
    mark("host-data");	// bench/browser.mjs: the answers are in
    alerts = al.alerts || [];
    renderAlertStrip();
    const idx = index(new Map(batches.flatMap((b) => b.series || []).map((a) => [a.metric, a])));
    if (!cgroup) pageSize = inferPageSize(idx);
    mark("host-indexed");
    const ctx = {
      range: () => [win.since, win.until],
      alerts: shaded(),
      syncKey: "vmscope-host",
      onZoom: (a, b) => nav({ from: Math.floor(a), to: Math.ceil(b) }),
      width: plotWidth(),
      height: CHART_H,
    };
    // the charts in the first viewport first, then the page gets a frame
    // painted and can take input ("host-interactive"), then the others, one
    // task each, so that no single task holds the page for all of them
    // (in the first viewport: at least half of the panel above the fold)
    const fold = window.innerHeight;
    const above = (rf) => {
      const r = panels.get(rf.fig.id).panel.getBoundingClientRect();
      return r.top + r.height / 2 < fold;
    };
    const order = [...resolved.figs.filter(above), ...resolved.figs.filter((rf) => !above(rf))];
    const nAbove = resolved.figs.filter(above).length;
    for (const [n, rf] of order.entries()) {
      if (n >= nAbove) {
        await (n === nAbove ? afterPaint() : nextTask());
        if (signal.aborted) return;
        if (n === nAbove) mark("host-interactive");
      }
      const { body, panel } = panels.get(rf.fig.id);
      const lines = assemble(rf, idx, pageSize);
      const hasData = lines.some((l) => l.avg.some((v) => v !== null));
      panel.dataset.hasData = hasData ? "1" : "0";
      if (!lines.length || !hasData) {
        if (charts.has(rf.fig.id)) { charts.get(rf.fig.id).destroy(); charts.delete(rf.fig.id); }
        body.replaceChildren(h("div", { class: "nodata" }, lines.length ? "no data in this range" : "not reported by this " + (cgroup ? "cgroup" : "kernel")));
        continue;
      }
      const existing = charts.get(rf.fig.id);
      if (existing) {
        existing.ctx.alerts = ctx.alerts;
        existing.chart.update(lines, idx.x);
      } else {
        body.replaceChildren();
        const myCtx = { ...ctx };
        charts.set(rf.fig.id, { ctx: myCtx, chart: createChart(body, rf.fig, lines, idx.x, myCtx) });
        mark("chart " + rf.fig.id);
      }
    }
    if (nAbove === order.length) { await afterPaint(); mark("host-interactive"); }
    if (signal.aborted) return;
    el.dataset.loaded = String(Date.now());
    setStatus("updated " + fmtTime(Date.now() / 1000).slice(11));
  }

  async function start() {
    try {
      // the header facts and the cgroup picker are secondary: the charts
      // do not wait for them (an unknown host still fails both)
      const facts0 = loadFacts();
      facts0.catch((e) => {
        if (e.name !== "AbortError") facts.replaceChildren(h("span", { class: "error" }, "could not load the host's facts: " + e.message));
      });
      const m = await api.metrics(hostName, cgroup || undefined, ctl.signal);
      resolved = namesFor(m, cgroup);
      mark("host-names");
      if (win.fixed) {
        await loadData(ctl.signal);
      } else {
        const every = RANGES[win.rangeKey] <= 86400 ? 10000 : 60000;
        stopPoll = poll(async (signal) => {
          try {
            await loadData(signal);
          } catch (e) {
            if (e.name !== "AbortError") setStatus("host: " + e.message, true);
          }
        }, every);
      }
    } catch (e) {
      if (e.name === "AbortError") return;
      setStatus("host: " + e.message, true);
      const msg = e.status === 404 ? "unknown host " + hostName : "could not load: " + e.message;
      facts.replaceChildren(h("span", { class: "error" }, msg));
      grid.replaceChildren(h("div", { class: "panel empty" }, msg + " \u00b7 ", h("a", { href: "#/fleet" }, "back to the fleet")));
    }
  }

  let resizeTimer = null;
  const onResize = () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => { for (const c of charts.values()) c.chart.resize(plotWidth()); }, 150);
  };
  window.addEventListener("resize", onResize);
  start();

  return {
    destroy() {
      ctl.abort();
      if (stopPoll) stopPoll();
      clearTimeout(resizeTimer);
      window.removeEventListener("resize", onResize);
      for (const c of charts.values()) c.chart.destroy();
      charts.clear();
    },
  };
}
