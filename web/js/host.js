// host.js - the host view: reclaim figures for one host, or for one of its
// cgroups with the host's own figures below them (an alert on a cgroup is
// read against the whole machine), on a shared time axis. Sources
// (docs/api.md):
//   GET /api/v1/hosts/{host}              facts in the header
//   GET /api/v1/hosts/{host}/cgroups      the cgroup picker (one entry a path)
//   GET /api/v1/hosts/{host}/metrics      which names exist (older kernels,
//                                         cgroup v1 or v2, both on a hybrid host)
//   GET /api/v1/hosts/{host}/series_batch every metric of a section in two
//                                         requests (hostplan.js: which, and
//                                         how many points)
//   GET /api/v1/alerts?host=&since=&until= shaded intervals and the alert strip
// Range: ?range=15m..30d follows now; ?from= alone follows now from then
// (an open alert's link); ?from=&to= is a fixed window (drag-zoom, the
// zoom buttons, a custom range, a resolved alert's link). Every window is
// refreshed at the header's interval (a past one at most every minute).
// Charts with nothing to show (all zero, no value in the window, names the
// kernel lacks) are folded into one line each under the section.
import { api, getJSON } from "./api.js";
import { chipText, chipTitle, compareAlerts } from "./alertfmt.js";
import { createChart } from "./charts.js";
import { h } from "./dom.js";
import { CGROUP_FIGURES, HOST_FIGURES, activity, assemble, index, inferPageSize } from "./figures.js";
import { RANGES, batchPath, namesFor, pointsFor, requestsFor, windowOf } from "./hostplan.js";
import { fmtAgo, fmtClock, fmtTime, fromInputTime, parseTime, shortPath, text, toInputTime, zoneLabel } from "./format.js";
import { isOutage, makeHash, poll, setStatus } from "./nav.js";

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

// The cgroup picker's entries from GET .../cgroups: one per path (a hybrid
// host lists a path twice, v1 and v2: one cgroup to the reader), and the
// version-specific entry of a link that names one. Long paths shortened
// (shortPath, the full one in the title); the paths in alerted (a Set)
// first, marked with a warning sign.
export function cgroupChoices(list, cgroup = "", version = 0, alerted = new Set()) {
  const by = new Map();
  for (const c of list || []) {
    if (!by.has(c.path)) by.set(c.path, []);
    by.get(c.path).push(c.version);
  }
  const out = [...by.entries()].map(([path, versions]) => ({ value: path, path, version: 0, versions: versions.sort(),
    label: (alerted.has(path) ? "\u26a0 " : "") + shortPath(path),
    title: path + " \u2014 " + (versions.length > 1 ? "cgroup v1 (memory) and v2 (pressure), read as one" : "cgroup v" + versions[0]) +
      (alerted.has(path) ? "; has an alert in this range" : "") }));
  // the cgroups with an alert first (the one to look at), then by path
  out.sort((x, y) => (alerted.has(y.path) ? 1 : 0) - (alerted.has(x.path) ? 1 : 0));
  if (cgroup && version) out.push({ value: cgroup + "\u0000" + version, path: cgroup, version, versions: [version],
    label: shortPath(cgroup) + " (v" + version + " only)", title: cgroup + " \u2014 only the cgroup v" + version + " hierarchy" });
  return out;
}

// The next wider or narrower window: {range} or {from, to} (from alone:
// follow now). dir: "out" (twice as long), "in" (half), "earlier" and
// "later" (half a window).
export function shiftWindow(win, dir, now = Date.now() / 1000) {
  const span = win.until - win.since, mid = (win.since + win.until) / 2;
  const keys = Object.keys(RANGES);
  const fixed = (a, b) => (b >= now - 1 ? { from: Math.floor(a) } : { from: Math.floor(a), to: Math.ceil(b) });
  switch (dir) {
    case "out":
      if (win.rangeKey) {
        const next = keys.find((k) => RANGES[k] > span + 1);
        return next ? { range: next } : { from: Math.floor(now - 2 * span) };
      }
      if (!win.fixed) return { from: Math.floor(now - 2 * span) };
      return fixed(Math.max(0, mid - span), Math.min(now, mid + span));
    case "in":
      if (!win.fixed) return { from: Math.floor(now - span / 2) };
      return { from: Math.floor(mid - span / 4), to: Math.ceil(mid + span / 4) };
    case "earlier":
      return { from: Math.floor(win.since - span / 2), to: Math.ceil(win.until - span / 2) };
    case "later": {
      const b = Math.min(now, win.until + span / 2);
      return fixed(b - span, b);
    }
    default:
      return null;
  }
}

export function mount(el, route) {
  mark("host-mount");
  const hostName = route.arg;
  const cgroup = route.params.get("cgroup") || "";
  const cgv = cgroup ? Number(route.params.get("cgroup_version")) || 0 : 0;
  let win = windowOf(route.params);
  let plan = takePlan(location.hash);
  const ctl = new AbortController();
  let stopPoll = null;
  let alerts = [];
  let pageSize = 4096;
  let dead = false;	// an unknown host: nothing to refresh

  const nav = (params) => {
    location.hash = makeHash("host", hostName, { cgroup, cgroup_version: cgv || "", ...params });
  };

  // header and toolbar
  const facts = h("div", { class: "facts muted" }, "loading\u2026");
  const rangeBtns = h("span", { class: "seg", id: "range-picker", role: "group", "aria-label": "window ending now" },
    Object.keys(RANGES).map((k) => h("button", {
      type: "button", class: k === win.rangeKey ? "on" : "", dataset: { range: k },
      "aria-pressed": k === win.rangeKey ? "true" : "false", title: "the last " + k,
      onclick: () => nav({ range: k }),
    }, k)));
  const zbtn = (id, label, aria, dir) => h("button", { type: "button", id, "aria-label": aria, title: aria,
    onclick: () => { const p = shiftWindow(win, dir); if (p) nav(p); } }, label);
  const zoomBtns = h("span", { class: "seg", id: "zoom-buttons", role: "group", "aria-label": "zoom and move the window" },
    zbtn("zoom-earlier", "\u2190", "move the window earlier by half", "earlier"),
    zbtn("zoom-out", "\u2212", "zoom out: a window twice as long", "out"),
    zbtn("zoom-in", "+", "zoom in: half the window", "in"),
    zbtn("zoom-later", "\u2192", "move the window later by half", "later"));
  // the custom range's inputs are built when it is first opened (two
  // datetime inputs cost layout and their shadow trees on every load)
  const custom = h("details", { class: "custom-range", id: "custom-range" }, h("summary", {}, "custom range"));
  custom.addEventListener("toggle", () => {
    if (!custom.open || custom.querySelector("input")) return;
    const fromIn = h("input", { type: "datetime-local", id: "range-from", "aria-label": "custom range from (" + zoneLabel() + ")", value: toInputTime(win.since) });
    const toIn = h("input", { type: "datetime-local", id: "range-to", "aria-label": "custom range to (" + zoneLabel() + ")", value: toInputTime(win.until) });
    const rangeMsg = h("span", { class: "error", id: "range-msg", role: "alert" });
    custom.append(fromIn, " \u2192 ", toIn,
      h("button", { type: "button", id: "range-apply", onclick: () => {
        const a = fromInputTime(fromIn.value), b = fromInputTime(toIn.value);
        if (a === null || b === null || !(b > a)) { rangeMsg.textContent = "from must be before to"; return; }
        nav({ from: Math.floor(a), to: Math.ceil(b) });
      } }, "apply"), rangeMsg);
    fromIn.focus();
  });
  const winInfo = h("span", { class: "muted", id: "zoom-info" },
    (win.fixed ? fmtTime(win.since) + " \u2192 " + fmtTime(win.until) : win.from ? "from " + fmtTime(win.since) + " to now" : "drag on a chart to zoom") +
    " \u00b7 " + zoneLabel() + " ",
    win.rangeKey ? null : h("button", { type: "button", id: "zoom-reset", onclick: () => nav({ range: "1h" }) }, "back to last hour"));
  const cgSel = h("select", { id: "cgroup-picker", "aria-label": "cgroup", onchange: (e) => {
    const [path, v] = e.target.value.split("\u0000");
    location.hash = makeHash("host", hostName, { ...keepWindow(), cgroup: path, cgroup_version: v || "" });
  } }, h("option", { value: "" }, "whole host"));
  const alertStrip = h("div", { class: "toolbar", id: "alert-strip" });

  function keepWindow() {
    if (win.fixed) return { from: Math.round(win.since), to: Math.round(win.until) };
    if (win.from) return { from: win.from };
    return { range: win.rangeKey };
  }

  el.append(
    h("div", { class: "host-head" },
      h("h1", {}, h("a", { href: "#/fleet" }, "Fleet"), " / ", hostName, cgroup ? h("span", { class: "mono", title: cgroup }, " " + shortPath(cgroup)) : null),
      facts),
    h("div", { class: "toolbar" }, h("label", {}, "Range"), rangeBtns, zoomBtns, custom, winInfo,
      h("label", { for: "cgroup-picker" }, "Cgroup"), cgSel),
    alertStrip);

  // the sections: the cgroup's figures first, when one is chosen, then the host's
  const sections = [];
  const addSection = (cg, title) => {
    const figures = cg ? CGROUP_FIGURES : HOST_FIGURES;
    const grid = h("div", { class: "charts", dataset: { section: cg ? "cgroup" : "host" } });
    const quiet = h("div", { class: "panel quiet", hidden: true, dataset: { quiet: cg ? "cgroup" : "host" } });
    const sec = { cgroup: cg, version: cg ? cgv : 0, figures, grid, quiet, panels: new Map(), charts: new Map(), hidden: new Map(), resolved: null };
    if (title) el.append(h("h2", { class: "section-head" }, title));
    el.append(grid, quiet);
    for (const fig of figures) {
      const body = h("div", { class: "plot" }, h("div", { class: "nodata" }, "loading\u2026"));
      const panel = h("div", { class: "panel chart", dataset: { fig: fig.id } },
        h("h3", {}, fig.title), h("div", { class: "sub" }, fig.sub), body);
      sec.panels.set(fig.id, { panel, body });
      grid.append(panel);
    }
    sections.push(sec);
    return sec;
  };
  if (cgroup) {
    addSection(cgroup, "Cgroup " + shortPath(cgroup) + (cgv ? " (cgroup v" + cgv + ")" : ""));
    addSection("", "Whole host " + hostName);
  } else {
    addSection("", null);
  }
  el.querySelector(".charts").id = "charts";

  // A chart's width: one column of the grid (measured on the grid, not
  // on a panel: a panel folded into the "no activity" line measures 0)
  const plotWidth = () => {
    const col = parseFloat(getComputedStyle(sections[0].grid).gridTemplateColumns) || 0;
    return Math.max(300, col - 2 - 18);	// the panel's border, the plot's margins
  };

  // "last seen" counts on between refreshes (a host that stopped
  // reporting, or a server that stopped answering, does not stay "4 s ago")
  let seenTs = null;
  const seen = h("span", { class: "seen", id: "host-seen" });
  // past a minute without a sample, the host is marked silent (as the
  // fleet does: at least 60 s, 3 intervals)
  const drawSeen = () => {
    const silent = seenTs !== null && Date.now() / 1000 - seenTs > 60;
    seen.replaceChildren("last seen " + fmtAgo(seenTs),
      ...(silent ? [" ", h("span", { class: "badge stale" }, "silent since " + fmtClock(seenTs))] : []));
    seen.title = fmtTime(seenTs);
  };
  const seenTick = setInterval(() => { if (seenTs !== null) drawSeen(); }, 1000);

  // Asked again with every refresh: the newest sample's time.
  async function refreshSeen(signal) {
    const info = await api.host(hostName, signal);
    seenTs = info.last_seen_ts;
    drawSeen();
  }

  async function loadFacts() {
    const [info, cgs] = await Promise.all([api.host(hostName, ctl.signal), api.cgroups(hostName, ctl.signal)]);
    const labels = Object.entries(info.labels || {}).map(([k, v]) => h("span", { class: "chip" }, k + "=" + text(v)));
    seenTs = info.last_seen_ts;
    drawSeen();
    // (replaceChildren writes a null as "null": h() skips them)
    facts.replaceChildren(...[
      h("span", {}, "kernel ", h("span", { class: "mono" }, text(info.kernel))),
      seen,
      h("span", {}, text(info.samples) + " samples"),
      h("span", {}, text(info.cgroups ?? 0) + " cgroups"),
      info.agent_version ? h("span", {}, "agent " + info.agent_version) : null,
      ...labels].filter(Boolean));
    cgList = cgs.cgroups || [];
    renderPicker();
  }

  // the picker, again when the alerts of the window are known (the
  // cgroups with one come first)
  let cgList = null, pickerKey = "";
  function renderPicker() {
    if (!cgList) return;
    const alerted = new Set(alerts.filter((a) => a.cgroup).map((a) => a.cgroup));
    const key = [...alerted].sort().join("\n");
    if (cgSel.options.length > 1 && key === pickerKey) return;
    pickerKey = key;
    const sel = cgroup + (cgv ? "\u0000" + cgv : "");
    cgSel.replaceChildren(h("option", { value: "" }, "whole host"),
      ...cgroupChoices(cgList, cgroup, cgv, alerted).map((c) => h("option", { value: c.value, title: c.title, selected: c.value === sel }, c.label)));
  }

  function renderAlertStrip() {
    renderPicker();
    const mine = alerts.filter((a) => !cgroup || a.cgroup === null || a.cgroup === cgroup).sort(compareAlerts);
    if (!mine.length) {
      alertStrip.replaceChildren(h("span", { class: "muted" }, "no alert in this range"));
      return;
    }
    const now = Date.now() / 1000;
    alertStrip.replaceChildren(h("span", { class: "muted" }, "Alerts in range:"),
      ...mine.map((a) => h("a", {
        class: "chip " + a.severity + (a.ended_at ? " resolved" : "") + (a.silenced && !a.ended_at ? " silenced" : ""), dataset: { alertId: a.id },
        // a cgroup's alert seen from the whole host: its cgroup's figures
        href: a.cgroup && a.cgroup !== cgroup ? makeHash("host", hostName, { ...keepWindow(), cgroup: a.cgroup })
          : makeHash("alerts", "", { host: hostName, state: "all", id: a.id }),
        title: chipTitle(a, now) + (a.silenced && !a.ended_at ? "\nsilenced: its notifications are held back" : "") +
          (a.cgroup && a.cgroup !== cgroup ? "\n(opens cgroup " + a.cgroup + ")" : ""),
      }, chipText(a, now) + (a.cgroup ? " \u00b7 " + shortPath(a.cgroup.split("/").pop(), 32) : ""))));
  }

  function shaded(sec) {
    return alerts
      .filter((a) => !sec.cgroup || a.cgroup === null || a.cgroup === sec.cgroup)
      .map((a) => {
        const t1 = parseTime(a.ended_at);
        return { t0: parseTime(a.started_at), t1: t1 ?? win.until, open: t1 === null, severity: a.severity, kind: a.kind, cgroup: a.cgroup };
      });
  }

  // The names each section fetches (GET .../metrics, once).
  async function prepare(signal) {
    await Promise.all(sections.map(async (sec) => {
      if (sec.resolved) return;
      const m = await api.metrics(hostName, sec.cgroup || undefined, signal, sec.version || undefined);
      sec.resolved = namesFor(m, sec.cgroup);
    }));
    mark("host-names");
  }

  // Assembles a section's lines, folds what has nothing to show, and says so.
  function assembleSection(sec, idx) {
    const out = [];
    const quiet = { zero: [], empty: [], unreported: [] };
    for (const rf of sec.resolved.figs) {
      const lines = assemble(rf, idx, pageSize);
      const what = activity(lines);
      const { panel } = sec.panels.get(rf.fig.id);
      panel.dataset.hasData = what === "data" ? "1" : "0";
      panel.dataset.activity = what;
      panel.classList.toggle("folded", what !== "data");
      if (what !== "data") {
        quiet[what].push(rf.fig.title);
        const c = sec.charts.get(rf.fig.id);
        if (c) { c.chart.destroy(); sec.charts.delete(rf.fig.id); }
        sec.panels.get(rf.fig.id).body.replaceChildren(h("div", { class: "nodata" }, "nothing to show"));
        continue;
      }
      out.push({ rf, lines, x: idx.x });
    }
    const parts = [];
    const who = sec.cgroup ? "this cgroup" : "this kernel";
    if (quiet.zero.length) parts.push(h("span", { dataset: { fold: "zero" } }, h("b", {}, "No activity in this range"), " (all zero): " + quiet.zero.join(", ")));
    if (quiet.empty.length) parts.push(h("span", { dataset: { fold: "empty" } }, h("b", {}, "No samples in this range"), ": " + quiet.empty.join(", ")));
    if (quiet.unreported.length) parts.push(h("span", { dataset: { fold: "unreported" } }, h("b", {}, "Not reported by " + who), ": " + quiet.unreported.join(", ")));
    sec.quiet.replaceChildren(...parts.flatMap((p, i) => (i ? [" \u00b7 ", p] : [p])));
    sec.quiet.hidden = !parts.length;
    return out;
  }

  async function loadData(signal) {
    let points = pointsFor(window.innerWidth);
    const first = sections[0];
    const early = plan ? await plan.catch(() => null) : null;
    plan = null;
    if (early && early.names === first.resolved.names.join(",")) {
      // boot.js's requests: same window, points and names
      win = early.win;
      points = early.points;
    } else if (!win.fixed) {
      win = windowOf(route.params);
    }
    const reqs = sections.map((sec) => requestsFor(hostName, sec.cgroup, win, sec.resolved.names, points, sec.version));
    const [batches, al] = await Promise.all([
      Promise.all(sections.map((sec, i) => Promise.all(reqs[i].batches.map((b) => getJSON(batchPath(hostName), b, signal))))),
      api.alerts(reqs[0].alerts, signal),
    ]);
    mark("host-data");	// bench/browser.mjs: the answers are in
    alerts = al.alerts || [];
    renderAlertStrip();
    const todo = [];
    for (const [i, sec] of sections.entries()) {
      const idx = index(new Map(batches[i].flatMap((b) => b.series || []).map((a) => [a.metric, a])));
      if (!sec.cgroup) pageSize = inferPageSize(idx);
      const ctx = {
        range: () => [win.since, win.until],
        alerts: shaded(sec),
        syncKey: "vmscope-host",
        onZoom: (a, b) => nav({ from: Math.floor(a), to: Math.ceil(b) }),
        width: plotWidth(),
        height: CHART_H,
      };
      for (const x of assembleSection(sec, idx)) todo.push({ sec, ctx, ...x });
    }
    mark("host-indexed");
    // the charts in the first viewport first, then the page gets a frame
    // painted and can take input ("host-interactive"), then the others, one
    // task each, so that no single task holds the page for all of them
    // (in the first viewport: at least half of the panel above the fold)
    const fold = window.innerHeight;
    const above = (t) => {
      const r = t.sec.panels.get(t.rf.fig.id).panel.getBoundingClientRect();
      return r.top + r.height / 2 < fold;
    };
    const inView = todo.filter(above);
    const order = [...inView, ...todo.filter((t) => !above(t))];
    const nAbove = inView.length;
    for (const [n, t] of order.entries()) {
      if (n >= nAbove) {
        await (n === nAbove ? afterPaint() : nextTask());
        if (signal.aborted) return;
        if (n === nAbove) mark("host-interactive");
      }
      const { sec, rf, lines, ctx } = t;
      const { body } = sec.panels.get(rf.fig.id);
      const existing = sec.charts.get(rf.fig.id);
      if (existing) {
        existing.ctx.alerts = ctx.alerts;
        existing.chart.update(lines, t.x);
      } else {
        body.replaceChildren();
        if (!sec.hidden.has(rf.fig.id)) sec.hidden.set(rf.fig.id, new Set());
        const myCtx = { ...ctx, hidden: sec.hidden.get(rf.fig.id) };
        sec.charts.set(rf.fig.id, { ctx: myCtx, chart: createChart(body, rf.fig, lines, t.x, myCtx) });
        mark("chart " + rf.fig.id);
      }
    }
    if (nAbove === order.length) { await afterPaint(); mark("host-interactive"); }
    if (signal.aborted) return;
    el.dataset.loaded = String(Date.now());
  }

  function fail(e) {
    dead = true;
    setStatus("host: " + e.message, true);
    const msg = e.status === 404 ? (/cgroup/.test(e.message) ? e.message : "unknown host " + hostName) : "could not load: " + e.message;
    facts.replaceChildren(h("span", { class: "error" }, msg));
    for (const sec of sections) sec.grid.replaceChildren(h("div", { class: "panel empty" }, msg + " \u00b7 ", h("a", { href: "#/fleet" }, "back to the fleet")));
  }

  // the header facts and the cgroup picker are secondary: the charts do
  // not wait for them (an unknown host still fails both); lost in an
  // outage, they are asked for again with the data
  let factsLost = false;
  const getFacts = () => loadFacts().catch((e) => {
    if (e.name === "AbortError") return;
    factsLost = isOutage(e);
    facts.replaceChildren(h("span", { class: "error" }, "could not load the host's facts: " + e.message));
  });
  getFacts();
  // a past window changes little: refreshed at most every minute, as the
  // long ranges
  const longOrPast = (win.until - win.since > 86400) || (win.fixed && win.until < Date.now() / 1000 - 600);
  let runs = 0;
  stopPoll = poll(async (signal) => {
    if (dead) return;
    try {
      await prepare(signal);
      await loadData(signal);
      // the first run's facts come from getFacts; later runs ask again
      if (runs++ && !factsLost && seenTs !== null) await refreshSeen(signal);
    } catch (e) {
      if (e.name === "AbortError" || isOutage(e)) throw e;	// poll: stale, retried
      fail(e);
      throw e;
    }
    if (factsLost && !dead) {
      factsLost = false;
      getFacts();
    }
  }, { min: longOrPast ? 60000 : 0 });

  let resizeTimer = null;
  const onResize = () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => { for (const sec of sections) for (const c of sec.charts.values()) c.chart.resize(plotWidth()); }, 150);
  };
  window.addEventListener("resize", onResize);

  return {
    destroy() {
      ctl.abort();
      if (stopPoll) stopPoll();
      clearTimeout(resizeTimer);
      clearInterval(seenTick);
      window.removeEventListener("resize", onResize);
      for (const sec of sections) {
        for (const c of sec.charts.values()) c.chart.destroy();
        sec.charts.clear();
      }
    },
  };
}
