// units.test.mjs - the dashboard's pure modules under node, no browser:
// number formatting, which metric names a figure picks on old and new
// kernels, how fetched series become chart arrays (sums, ratios, kB and
// page conversions, min/max bands), page-size inference, evidence units and
// alert links. Run by tests/web_units.sh. Prints "N passed, N failed".
import { fmtBytes, fmtDuration, fmtNum, fmtPct, fmtRate, fmtRatio, axisFormatter, visible } from "../../web/js/format.js";
import { CGROUP_FIGURES, HOST_FIGURES, assemble, index, inferPageSize, neededNames, resolve } from "../../web/js/figures.js";
import { alertLink } from "../../web/js/alerts.js";
import { evValue } from "../../web/js/alertfmt.js";
import { explain, KNOWN_KINDS } from "../../web/js/explain.js";
import { parseHash, makeHash } from "../../web/js/nav.js";
import { mergeIntervals } from "../../web/js/shade.js";
import { bannerItems, compareHref } from "../../web/js/regression.js";

let passed = 0, failed = 0;
function eq(name, got, want) {
  const g = JSON.stringify(got), w = JSON.stringify(want);
  if (g === w) passed++;
  else { failed++; console.log(`FAIL ${name}: got ${g}, want ${w}`); }
}

// formatting
eq("fmtNum K", fmtNum(1234), "1.23K");
eq("fmtNum M", fmtNum(40000000), "40M");
eq("fmtNum small", fmtNum(0.5), "0.5");
eq("fmtNum null", fmtNum(null), "\u2013");
eq("fmtBytes GiB", fmtBytes(3 * 2 ** 30), "3 GiB");
eq("fmtBytes MiB", fmtBytes(1.5 * 2 ** 20), "1.5 MiB");
eq("fmtBytes B", fmtBytes(512), "512 B");
eq("fmtRate", fmtRate(35996, "pg"), "36K pg/s");
eq("fmtPct", fmtPct(45), "45 %");
eq("fmtRatio", fmtRatio(0.384), "38 %");
eq("fmtDuration", fmtDuration(3725), "1 h 2 min");
eq("fmtDuration s", fmtDuration(42), "42 s");
eq("axis bytes", axisFormatter("bytes")(2.79 * 2 ** 30), "2.79G");
eq("axis rate", axisFormatter("pages/s")(40000), "40K/s");
// names from agents shown with their control and bidi characters written out
eq("visible bidi", visible("/x\u202egnp.exe"), "/x\\u202egnp.exe");
eq("visible isolates", visible("a\u2066b\u2069c\u200f"), "a\\u2066b\\u2069c\\u200f");
eq("visible controls", visible("a\u0001b\u007f\u009b"), "a\\u0001b\\u007f\\u009b");
eq("visible keeps text", visible("caf\u00e9 \u2192 r1\tx\ny"), "caf\u00e9 \u2192 r1\tx\ny");

// figure resolution on a 6.1 kernel
const have61 = new Set(["vmstat.workingset_refault_file", "vmstat.workingset_refault_anon", "vmstat.workingset_activate_file",
  "vmstat.workingset_activate_anon", "vmstat.pgscan_kswapd", "vmstat.pgsteal_kswapd", "vmstat.pgscan_direct", "vmstat.pgsteal_direct",
  "vmstat.allocstall_normal", "vmstat.allocstall_movable", "meminfo.SwapTotal", "meminfo.SwapFree", "vmstat.pswpin", "vmstat.pswpout"]);
const r61 = resolve(HOST_FIGURES, have61);
const fig = (r, id) => r.find((x) => x.fig.id === id);
eq("6.1 refault lines", fig(r61, "refaults").lines.map((l) => l.names), [["vmstat.workingset_refault_file"], ["vmstat.workingset_refault_anon"],
  ["vmstat.workingset_activate_file"], ["vmstat.workingset_activate_anon"]]);
eq("6.1 allocstall expands per zone", fig(r61, "allocstall").lines.map((l) => l.label), ["allocstall_movable", "allocstall_normal"]);
eq("6.1 reclaim has two efficiencies", fig(r61, "reclaim").lines.filter((l) => l.derive).map((l) => l.label), ["kswapd eff.", "direct eff."]);
eq("missing PSI leaves an empty figure", fig(r61, "psi").lines.length, 0);
eq("every figure kept", r61.length, HOST_FIGURES.length);

// 4.19: unsplit refaults; 4.4: per-zone scan counters, single allocstall
const rOld = resolve(HOST_FIGURES, new Set(["vmstat.workingset_refault", "vmstat.workingset_activate", "vmstat.allocstall",
  "vmstat.pgscan_kswapd_normal", "vmstat.pgscan_kswapd_dma32", "vmstat.pgsteal_kswapd_normal", "vmstat.pgsteal_kswapd_dma32"]));
eq("old kernel refault label", fig(rOld, "refaults").lines.map((l) => l.label), ["refault (all, <5.9)", "activate (all, <5.9)"]);
eq("old kernel zone sums", fig(rOld, "reclaim").lines.slice(0, 2).map((l) => l.names),
  [["vmstat.pgscan_kswapd_dma32", "vmstat.pgscan_kswapd_normal"], ["vmstat.pgsteal_kswapd_dma32", "vmstat.pgsteal_kswapd_normal"]]);
eq("old kernel efficiency from zone sums", fig(rOld, "reclaim").lines.map((l) => l.label), ["scan kswapd", "steal kswapd", "kswapd eff."]);
eq("old kernel single allocstall", fig(rOld, "allocstall").lines.map((l) => l.names), [["vmstat.allocstall"]]);

// cgroup v1 names
const rV1 = resolve(CGROUP_FIGURES, new Set(["stat.dirty", "stat.writeback", "stat.rss", "stat.cache", "memory_current"]));
eq("v1 dirty names", fig(rV1, "cg_dirty").lines.map((l) => l.names[0]), ["stat.dirty", "stat.writeback"]);
eq("v1 memory names", fig(rV1, "cg_memory").lines.map((l) => l.names[0]), ["memory_current", "stat.rss", "stat.cache"]);
// a 4.14 docker cgroup: no workingset counters, hierarchical totals: its major faults charted, its dirty from total_*
const rDock = resolve(CGROUP_FIGURES, new Set(["stat.total_pgmajfault", "stat.total_dirty", "stat.total_writeback", "memory_current"]));
eq("v1 hierarchy: major faults in the refaults chart", fig(rDock, "cg_refaults").lines.map((l) => [l.label, l.names[0]]), [["major faults", "stat.total_pgmajfault"]]);
eq("v1 hierarchy: dirty and writeback from total_*", fig(rDock, "cg_dirty").lines.map((l) => l.names[0]), ["stat.total_dirty", "stat.total_writeback"]);

// assembling: downsampled sums with bands, ratio, zone sum
const ds = (pts) => ({ downsampled: true, points: pts });
const idx = index(new Map([
  ["vmstat.pgscan_kswapd_normal", ds([[100, 80, 70, 90], [110, 40, 30, 50]])],
  ["vmstat.pgscan_kswapd_dma32", ds([[100, 20, 10, 30], [110, 0, 0, 0]])],
  ["vmstat.pgsteal_kswapd_normal", ds([[100, 50, 50, 50], [110, 10, 10, 10]])],
  ["vmstat.pgsteal_kswapd_dma32", ds([[100, 0, 0, 0]])],
]));
const lines = assemble(fig(rOld, "reclaim"), idx, 4096);
eq("x is the union of timestamps", idx.x, [100, 110]);
eq("zone sum avg", lines[0].avg, [100, 40]);
eq("zone sum band", [lines[0].min, lines[0].max], [[80, 30], [120, 50]]);
eq("sum with a missing bucket", lines[1].avg, [50, 10]);
eq("efficiency per bucket", lines[2].avg, [0.5, 0.25]);
eq("efficiency has no band", lines[2].min, null);

// columns answers (series_batch?layout=columns): the same arrays as points answers
{
  const idxC = index(new Map([
    ["vmstat.pgscan_kswapd_normal", { downsampled: true, ts: [100, 110], avg: [80, 40], min: [70, 30], max: [90, 50] }],
    ["vmstat.pgscan_kswapd_dma32", { downsampled: true, ts: [100, 110], avg: [20, 0], min: [10, 0], max: [30, 0] }],
    ["vmstat.pgsteal_kswapd_normal", { downsampled: true, ts: [100, 110], avg: [50, 10], min: [50, 10], max: [50, 10] }],
    ["vmstat.pgsteal_kswapd_dma32", { downsampled: true, ts: [100], avg: [0], min: [0], max: [0] }],
  ]));
  const lc = assemble(fig(rOld, "reclaim"), idxC, 4096);
  eq("columns: x is the union", idxC.x, [100, 110]);
  eq("columns: zone sums and bands as from points", [lc[0].avg, lc[0].min, lc[0].max, lc[1].avg, lc[2].avg], [[100, 40], [80, 30], [120, 50], [50, 10], [0.5, 0.25]]);
  const raw1 = index(new Map([["a", { downsampled: false, ts: [1, 2], v: [3, null] }]]));
  eq("columns: raw series", [raw1.x, raw1.byName.get("a").avg, raw1.byName.get("a").max], [[1, 2], [3, null], [3, null]]);
  // a 90 s hole in 10 s samples: a time without values in it, so no line crosses it
  const gap = index(new Map([["a", { downsampled: false, ts: [0, 10, 20, 30, 120, 130], v: [1, 2, 3, 4, 5, 6] }],
    ["b", { downsampled: false, ts: [0, 10, 20, 30, 120, 130], v: [6, 5, 4, 3, 2, 1] }]]));
  eq("a hole in the data: a time without values between its sides", [gap.x, gap.byName.get("a").avg, gap.byName.get("b").avg],
    [[0, 10, 20, 30, 40, 120, 130], [1, 2, 3, 4, null, 5, 6], [6, 5, 4, 3, null, 2, 1]]);
  const even = index(new Map([["a", { downsampled: false, ts: [0, 10, 21, 30, 40], v: [1, 2, 3, 4, 5] }]]));
  eq("jitter is not a hole", even.x, [0, 10, 21, 30, 40]);
}

// raw series: no band; kB and page conversions; swap used difference
const raw = (pts) => ({ downsampled: false, points: pts });
const haveD = new Set(["meminfo.Dirty", "vmstat.nr_dirty_threshold", "meminfo.SwapTotal", "meminfo.SwapFree", "vmstat.pswpin"]);
const rD = resolve(HOST_FIGURES, haveD);
const idxD = index(new Map([["meminfo.Dirty", raw([[1, 100]])], ["vmstat.nr_dirty_threshold", raw([[1, 10]])],
  ["meminfo.SwapTotal", raw([[1, 1000]])], ["meminfo.SwapFree", raw([[1, 400]])], ["vmstat.pswpin", raw([[1, 3]])]]));
const dl = assemble(fig(rD, "dirty"), idxD, 16384);
eq("Dirty kB to bytes", dl[0].avg, [102400]);
eq("threshold pages to bytes", dl[1].avg, [163840]);
eq("raw series have no band", dl[0].min, null);
eq("swap used = total - free", assemble(fig(rD, "swap"), idxD, 4096).find((l) => l.label === "swap used").avg, [614400]);
eq("needed names", neededNames(rD).sort(), [...haveD].sort());

// page size from meminfo Dirty / nr_dirty
eq("page size 16K", inferPageSize(index(new Map([["meminfo.Dirty", raw([[1, 1600], [2, 3200]])], ["vmstat.nr_dirty", raw([[1, 100], [2, 200]])]]))), 16384);
eq("page size default", inferPageSize(index(new Map([["meminfo.Dirty", raw([[1, 0]])], ["vmstat.nr_dirty", raw([[1, 0]])]]))), 4096);

// alerts: links, explanations (evidence: below)
const link = alertLink({ host: "db-07", cgroup: "/system.slice/pg.service", started_at: "2026-11-30T10:00:00Z", ended_at: "2026-11-30T10:20:00Z" }, 1796040000);
const pl = parseHash(link);
eq("alert link route", [pl.name, pl.arg, pl.params.get("cgroup")], ["host", "db-07", "/system.slice/pg.service"]);
eq("alert link window covers the alert", Number(pl.params.get("from")) < 1796032800 && Number(pl.params.get("to")) > 1796034000, true);
// an open alert's link follows now: the view keeps refreshing
const openLink = parseHash(alertLink({ host: "db-07", cgroup: null, started_at: "2026-11-30T10:00:00Z", ended_at: null }, 1796040000));
eq("an open alert's link has from and no to", [!!openLink.params.get("from"), openLink.params.get("to"), openLink.params.get("cgroup")], [true, null, null]);
eq("hash round trip", parseHash(makeHash("host", "a.b-c", { range: "6h" })).params.get("range"), "6h");
for (const k of ["thrash", "swap_imbalance", "writeback_storm", "direct_reclaim_stall", "oom_kill", "host_silent", "clock_skew"]) {
  eq("explanation for " + k, KNOWN_KINDS.includes(k) && explain(k).fixes.length > 0, true);
}
eq("unknown kind still explained", explain("new_kind").title, "new_kind");
eq("thrash names memory.low", explain("thrash").fixes.join(" ").includes("memory.low"), true);
eq("writeback names dirty_bytes", explain("writeback_storm").fixes.join(" ").includes("dirty_bytes"), true);
eq("swap imbalance names MADV_FREE", explain("swap_imbalance").fixes.join(" ").includes("MADV_FREE"), true);

// shading: overlapping intervals of one severity merged, criticals last
eq("merge overlapping", mergeIntervals([{ t0: 10, t1: 20, severity: "critical" }, { t0: 15, t1: 30, severity: "critical" },
  { t0: 40, t1: 50, severity: "critical" }, { t0: 12, t1: 14, severity: "warning" }]),
  [{ t0: 12, t1: 14, severity: "warning" }, { t0: 10, t1: 30, severity: "critical" }, { t0: 40, t1: 50, severity: "critical" }]);

// the fleet's columnar answer: points per host built on demand, last values for sorting
{
  const { fromColumns } = await import("../../web/js/fleet.js");
  const d = fromColumns({ layout: "columns", ts: [100, 110, 120], hosts: [
    { host: "a", spark: { refault_file: [1, 2, null], swap_in: [null, null, null] } }] });
  const a = d.hosts[0];
  eq("fromColumns last value skips trailing nulls", a.lastSpark, { refault_file: 2, swap_in: null });
  eq("fromColumns points on demand", a.spark.refault_file, [[100, 1], [110, 2], [120, null]]);
  eq("fromColumns points are built once", a.spark.refault_file === a.spark.refault_file, true);
  eq("fromColumns keeps the keys", Object.keys(a.spark), ["refault_file", "swap_in"]);
  eq("a points answer passes through", fromColumns({ hosts: [] }), { hosts: [] });
}

// the host view's request plan (hostplan.js), which index.html's inline
// script follows before the modules run: points from the window width, the
// names split in two batches, the page-size pair on a host only
{
  const { apiUrl } = await import("../../web/js/api.js");
  const { namesFor, pointsFor, requestsFor, windowOf } = await import("../../web/js/hostplan.js");
  eq("points at 1600 px: two columns, half the plot width", pointsFor(1600), 322);
  eq("points at 900 px: one column", pointsFor(900), 367);
  eq("points have a floor", pointsFor(200), 100);
  const m = { metrics: [...have61, "vmstat.nr_dirty", "meminfo.Dirty"].map((name) => ({ name })) };
  const hn = namesFor(m, "").names;
  eq("host names carry the page-size pair", hn.includes("vmstat.nr_dirty") && hn.includes("meminfo.Dirty"), true);
  eq("cgroup names do not", namesFor(m, "/a").names.includes("vmstat.nr_dirty"), false);
  const win = windowOf(new URLSearchParams("range=7d"), 1000000);
  eq("7d window", [win.since, win.until, win.fixed], [395200, 1000000, false]);
  const rq = requestsFor("db 1", "", win, ["a", "b", "c"], 321);
  eq("two batches, in halves", rq.batches.map((b) => b.metrics), ["a,b", "c"]);
  eq("batch URL, columns", apiUrl("hosts/db%201/series_batch", rq.batches[1]), "api/v1/hosts/db%201/series_batch?metrics=c&since=395200.000&until=1000000.000&points=321&layout=columns");
  eq("alerts over the window", rq.alerts, { host: "db 1", since: 395200, until: 1000000, state: "all", limit: 1000 });
  eq("fixed window from the hash", windowOf(new URLSearchParams("from=10&to=20")), { since: 10, until: 20, fixed: true, rangeKey: null });
}

// index.html preloads, for the view the page opens with, every module that
// view imports (and uPlot on a host view), so the browser fetches them in
// parallel instead of one import level at a time, and nothing else
{
  const { readFileSync, readdirSync } = await import("node:fs");
  const root = new URL("../../web/", import.meta.url);
  const html = readFileSync(new URL("js/boot.js", root), "utf8");
  const m = html.match(/var PRELOAD = (\{[\s\S]*?\});/);
  eq("js/boot.js has the per-view preload lists", !!m, true);
  const pre = m ? JSON.parse(m[1]) : {};
  // every module reachable from one entry through static and dynamic imports
  const reachable = (entry) => {
    const reach = new Set();
    const walk = (rel) => {
      if (reach.has(rel)) return;
      reach.add(rel);
      const src = readFileSync(new URL(rel, root), "utf8");
      for (const x of src.matchAll(/^import[^"'(]*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/gm)) {
        const spec = x[1] || x[2];
        walk(new URL(spec, new URL(rel, root)).href.slice(root.href.length));
      }
    };
    walk(entry);
    return reach;
  };
  // app.js imports the views only dynamically: what a page evaluates before
  // any view is app.js's static graph, plus the opened view's graph
  const staticOf = (entry) => {
    const src = readFileSync(new URL(entry, root), "utf8");
    const out = new Set([entry]);
    for (const x of src.matchAll(/^import[^"'(]*["']([^"']+)["']/gm)) for (const r of reachable(new URL(x[1], new URL(entry, root)).href.slice(root.href.length))) out.add(r);
    return out;
  };
  const app = readFileSync(new URL("js/app.js", root), "utf8");
  const views = [...app.matchAll(/^\s+(\w+): \(\) => import\("\.\/(\w+)\.js"\)/gm)].map((x) => [x[1], "js/" + x[2] + ".js"]);
  eq("app.js imports the four views dynamically", views.map((v) => v[0]), ["fleet", "host", "alerts", "compare"]);
  eq("a list per view", Object.keys(pre).sort(), views.map((v) => v[0]).sort());
  for (const [name, entry] of views) {
    const need = new Set([...staticOf("js/app.js"), ...reachable(entry)]);
    eq(name + ": every module it imports is preloaded", [...need].filter((r) => !(pre[name] || []).includes(r)).sort(), []);
    eq(name + ": nothing else is preloaded", (pre[name] || []).filter((r) => !need.has(r)).sort(), []);
  }
  eq("the host view preloads uPlot", (pre.host || []).includes("vendor/uPlot.min.esm.js"), true);
  eq("the fleet view does not", (pre.fleet || []).includes("vendor/uPlot.min.esm.js"), false);
  eq("every preload exists", Object.values(pre).flat().filter((r) => !r.startsWith("vendor/") && !readdirSync(new URL("js/", root)).includes(r.slice(3))), []);
  // the same URL fleet.js asks for, so that api.js hands the early answer over
  const { FLEET_PARAMS } = await import("../../web/js/fleet.js");
  const { apiUrl } = await import("../../web/js/api.js");
  eq("the page starts the fleet request early, the URL fleet.js asks for", html.includes('urls.push("' + apiUrl("fleet", FLEET_PARAMS) + '")'), true);
}

// ---- formatting for tight cells, small numbers, time zones
{
  const f = await import("../../web/js/format.js");
  eq("short age seconds", f.fmtAge(42), "42s");
  eq("short age minutes", f.fmtAge(27 * 60 + 50), "27m");
  eq("short age hours", f.fmtAge(3 * 3600 + 100), "3h");
  eq("short age days", f.fmtAge(2 * 86400 + 5), "2d");
  eq("small numbers without exponent", [f.fmtNum(0.004), f.fmtNum(0.0123), f.fmtNum(0.00004)], ["0.004", "0.012", "<0.0001"]);
  eq("no null as text", [f.text(null), f.text(undefined), f.text(NaN), f.text("x"), f.text(0)], ["\u2013", "\u2013", "\u2013", "x", "0"]);
  f.setTimeZone("utc");
  eq("UTC times", [f.fmtTime(1764518400), f.fmtClock(1764518405), f.zoneLabel()], ["2025-11-30 16:00:00", "16:00:05", "UTC"]);
  eq("UTC input round trip", f.fromInputTime(f.toInputTime(1764518400)), 1764518400);
  eq("bad input time", f.fromInputTime("yesterday"), null);
  f.setTimeZone("local");
  eq("local zone label", /^UTC[+\u2212]\d\d:\d\d$/.test(f.zoneLabel()), true);
  eq("local input round trip", f.fromInputTime(f.toInputTime(1764518460)), 1764518460);
}

// ---- alerts as the fleet, the alerts list and the host strip show them
{
  const af = await import("../../web/js/alertfmt.js");
  const now = 1764518400;
  const iso = (t) => new Date(t * 1000).toISOString();
  const A = [
    { id: 1, host: "b", kind: "thrash", severity: "warning", state: "open", started_at: iso(now - 600) },
    { id: 2, host: "a", kind: "oom_kill", severity: "critical", state: "resolved", started_at: iso(now - 300), ended_at: iso(now - 240) },
    { id: 3, host: "a", kind: "writeback_storm", severity: "critical", state: "open", started_at: iso(now - 3600) },
    { id: 4, host: "c", kind: "thrash", severity: "critical", state: "open", started_at: iso(now - 60) },
  ];
  eq("severity, then open before ended, then newest", [...A].sort(af.compareAlerts).map((a) => a.id), [4, 3, 2, 1]);
  eq("grouped by host, the worst first", af.groupByHost(A).map((g) => [g.host, g.worst, g.alerts.map((a) => a.id)]),
    [["c", "critical", [4]], ["a", "critical", [3, 2]], ["b", "warning", [1]]]);
  const F = [...A, { id: 5, host: "", scope: "fleet", subject: "6.1.0-21", kind: "kernel_regression", severity: "critical", state: "open", started_at: iso(now - 30) },
    { id: 6, host: "", scope: "fleet", subject: "6.6.0-3", kind: "kernel_regression", severity: "warning", state: "open", started_at: iso(now - 30) }];
  eq("the fleet's alerts are one group, not a host's", af.groupByHost(F).map((g) => [g.fleet ? "the fleet" : g.host, g.alerts.map((a) => a.id)]),
    [["the fleet", [5, 6]], ["c", [4]], ["a", [3, 2]], ["b", [1]]]);
  eq("chip of an open alert: kind and how long", af.chipText(A[3], now), "thrash \u00b7 1m");
  eq("chip from the fleet's seconds", af.chipText({ kind: "thrash", started_at_ts: now - 38 * 60 }, now), "thrash \u00b7 38m");
  eq("chip of an ended alert: how long ago", af.chipText({ kind: "oom_kill", started_at_ts: now - 120, ended_at_ts: now - 60 }, now), "oom_kill \u00b7 1m ago");
  const tip = af.chipTitle({ kind: "thrash", severity: "critical", cgroup: "/app.slice", started_at_ts: now - 60, summary: "refaults 40K/s" }, now);
  eq("chip tooltip: where, since, summary", tip.includes("cgroup /app.slice") && tip.includes("open for 1 min") && tip.endsWith("refaults 40K/s"), true);
  const silent = { kind: "host_silent", started_at: iso(now - 725), ended_at: null, summary: "no sample for 30 s (expected every 10 s)", evidence: { interval_s: 10, silent_s: 30 } };
  eq("a silent host's silence is live", af.liveSummary(silent, now), "no sample for 12 min 5 s (expected every 10 s)");
  eq("and in its evidence", af.evidenceRows(silent.evidence, silent, now).find((r) => r[2] === "silent_s")[1], "12 min 5 s");
  eq("other summaries as stored", af.liveSummary(A[0], now), "\u2013");
  // evidence: readable labels and units
  eq("ev turnover", [af.evLabel("refault_turnover_per_s"), af.evValue("refault_turnover_per_s", 17.28)], ["memory refaulted per second", "17.3\u00d7 its memory"]);
  eq("ev small rate", af.evValue("refault_turnover_per_s", 0.004), "0.004\u00d7 its memory");
  eq("ev pages per second", [af.evLabel("workingset_refault_file_per_s"), af.evValue("workingset_refault_file_per_s", 35996)], ["file refaults", "36K pages/s"]);
  eq("ev bytes", af.evValue("memory_bytes", 12 * 2 ** 30), "12 GiB");
  eq("ev bytes/s", af.evValue("refault_bytes_per_s", 141 * 2 ** 20), "141 MiB/s");
  eq("ev pct", af.evValue("psi_memory_some_pct", 36), "36 %");
  eq("ev ratio", af.evValue("reclaim_efficiency", 0.38), "38 %");
  eq("ev unknown key, unit from its suffix", [af.evLabel("nr_dirty_pct_of_threshold"), af.evValue("nr_dirty_pct_of_threshold", 97)], ["nr dirty, % of threshold", "97 %"]);
  eq("ev unknown rate", [af.evLabel("foo_bar_per_s"), af.evValue("foo_bar_per_s", 0.004)], ["foo bar", "0.004/s"]);
  eq("ev seconds", evValue("silent_s", 610), "10 min 10 s");
  eq("ev text", evValue("hint", "raise memory.high"), "raise memory.high");
  eq("ev null", evValue("x", null), "\u2013");
  eq("no raw key as a label", af.evidenceRows({ refault_turnover_per_s: 1, hint: "h" }).map((r) => r[0]), ["memory refaulted per second"]);
}

// ---- the fleet: columns that fit, alerts in a cell, the filter
{
  const fl = await import("../../web/js/fleet.js");
  for (const w of [1280, 1440, 1920]) {
    const width = w - 28;	// main's padding
    const lay = fl.layoutColumns(width);
    eq(`fleet columns fill ${w} px`, lay.widths.reduce((a, b) => a + b, 0) <= width && lay.widths.reduce((a, b) => a + b, 0) > width - 12, true);
    eq(`fleet sparklines drawn at ${w} px`, lay.spark.filter((x) => x > 0).every((x) => x >= 40), true);
  }
  eq("fleet least widths fit 1280 px", fl.COLUMNS.reduce((s, c) => s + c.min, 0) <= 1280 - 28, true);
  const hst = { host: "db-07", kernel: "6.1", labels: { role: "db" }, state: "critical",
    open_alerts: [{ id: 1, kind: "thrash", severity: "warning", cgroup: null, started_at_ts: 100 }, { id: 2, kind: "writeback_storm", severity: "critical", cgroup: "/system.slice/pg.service", started_at_ts: 50 }],
    resolved_alerts: [{ id: 3, kind: "oom_kill", severity: "critical", cgroup: "/app.slice", started_at_ts: 10, ended_at_ts: 20 }] };
  eq("a host's alerts: open by severity, then the ended ones", fl.hostAlerts(hst).map((a) => [a.id, a.state]), [[2, "open"], [1, "open"], [3, "resolved"]]);
  eq("filter on alert kind", fl.matches(hst, "writeback", "all"), true);
  eq("filter on an alert's cgroup", fl.matches(hst, "pg.service", "all"), true);
  eq("filter on an ended alert", fl.matches(hst, "oom_kill", "all"), true);
  eq("filter on a label", fl.matches(hst, "role=db", "all"), true);
  eq("filter no match", fl.matches(hst, "swap_imbalance", "all"), false);
  const dead = { host: "oom-1", open_alerts: [{ id: 9, kind: "host_silent", severity: "warning", started_at_ts: 1000 }],
    resolved_alerts: [{ id: 8, kind: "oom_kill", severity: "critical", started_at_ts: 700, ended_at_ts: 730 }, { id: 7, kind: "thrash", severity: "critical", started_at_ts: 10, ended_at_ts: 20 }] };
  eq("an OOM kill just before a host went silent comes first, as the cause", fl.hostAlerts(dead).map((a) => [a.id, !!a.before_silence]), [[8, true], [9, false], [7, false]]);
  eq("an alert long before the silence is not its cause", fl.hostAlerts({ ...dead, resolved_alerts: [dead.resolved_alerts[1]] }).map((a) => a.id), [9, 7]);
  eq("several words: all must match", [fl.matches(hst, "writeback  role=db", "all"), fl.matches(hst, "writeback role=web", "all")], [true, false]);
  eq("label keys, the most common first", fl.labelKeys([{ labels: { rack: "1", role: "a" } }, { labels: { role: "b" } }]), ["role", "rack"]);
  // long host names: the column gets their width first (from Labels and Kernel), the common suffix left out, the middle cut
  const wide = fl.layoutColumns(1252, 300), plain = fl.layoutColumns(1252);
  eq("a long host name widens the Host column, the table still fits", wide.widths[1] >= 270 && wide.widths[1] > plain.widths[1] + 100 &&
    wide.widths.reduce((a, b) => a + b, 0) <= 1252 && wide.widths[2] >= 56 && wide.widths[3] >= 72, true);
  eq("the Host column takes at most a quarter", fl.layoutColumns(1252, 2000).widths[1] <= 1252 / 4 + 60, true);
  const fq = (n) => `very-long-worker-pool-${n}.prod.eu-central-1.internal.example.com`;
  eq("the fleet's common domain suffix", fl.commonSuffix([fq("001"), fq("002"), "db-07"]), ".prod.eu-central-1.internal.example.com");
  eq("no common suffix of one dotted name", fl.commonSuffix([fq("001"), "db-07"]), "");
  eq("a name without the suffix", fl.hostShown(fq("001"), ".prod.eu-central-1.internal.example.com", 40), "very-long-worker-pool-001\u2026");
  eq("a name cut in its middle keeps its end", fl.hostShown("search-fra1-000139", "", 12), "sea\u20261-000139");
  eq("a short name whole", fl.hostShown("db-07", "", 12), "db-07");
  const flap = [{ kind: "thrash", severity: "warning", state: "open", started_at_ts: 900 }]
    .concat([1, 2, 3].map((i) => ({ kind: "swap_imbalance", severity: "warning", state: "resolved", cgroup: "/a", started_at_ts: 100 * i, ended_at_ts: 100 * i + 50 })));
  const mt = fl.moreTitle(flap, 1000).split("\n");
  eq("a flapping alert is one line in the \"+N\" tooltip, with its count", mt.length === 2 && /^ended: swap_imbalance .*\u00d73 in the hour/.test(mt[1]), true);
}
{
  const { shortPath } = await import("../../web/js/format.js");
  const pod = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod5a17c0de_0000_4000_8000_0000feed0000.slice/cri-containerd-" + "3f2a9c01b7de".padEnd(64, "0") + ".scope";
  eq("a pod's path shortened to its first level and its container", shortPath(pod), "/kubepods.slice/\u2026/cri-containerd-3f2a9c01b7de\u2026.scope");
  eq("a short path whole", shortPath("/system.slice/postgresql.service"), "/system.slice/postgresql.service");
}

// ---- the host view: the cgroup picker, the zoom buttons, folded charts
{
  const hv = await import("../../web/js/host.js");
  const ch = hv.cgroupChoices([{ path: "/a.slice", version: 1 }, { path: "/a.slice", version: 2 }, { path: "/b.slice", version: 2 }]);
  eq("one picker entry per path (hybrid v1 + v2)", ch.map((c) => c.label), ["/a.slice", "/b.slice"]);
  eq("the hybrid entry says so", ch[0].title.includes("v1") && ch[0].title.includes("v2"), true);
  const chv = hv.cgroupChoices([{ path: "/a.slice", version: 1 }, { path: "/a.slice", version: 2 }], "/a.slice", 1);
  eq("a link naming a version gets its entry", chv.map((c) => c.label), ["/a.slice", "/a.slice (v1 only)"]);
  const now = 100000;
  const { windowOf } = await import("../../web/js/hostplan.js");
  const w1h = windowOf(new URLSearchParams("range=1h"), now);
  eq("zoom out of 1h: 6h", hv.shiftWindow(w1h, "out", now), { range: "6h" });
  eq("zoom in of 1h: the last half hour, following now", hv.shiftWindow(w1h, "in", now), { from: now - 1800 });
  eq("earlier by half", hv.shiftWindow(w1h, "earlier", now), { from: now - 5400, to: now - 1800 });
  const fixed = windowOf(new URLSearchParams("from=10000&to=20000"), now);
  eq("zoom out of a fixed window", hv.shiftWindow(fixed, "out", now), { from: 5000, to: 25000 });
  eq("zoom in of a fixed window", hv.shiftWindow(fixed, "in", now), { from: 12500, to: 17500 });
  eq("later up to now follows now", hv.shiftWindow(windowOf(new URLSearchParams("from=90000&to=99000"), now), "later", now), { from: 91000 });
  const fromOnly = windowOf(new URLSearchParams("from=96000"), now);
  eq("from alone follows now", [fromOnly.since, fromOnly.until, fromOnly.fixed, fromOnly.from], [96000, now, false, 96000]);
  const { activity } = await import("../../web/js/figures.js");
  eq("no line: not reported", activity([]), "unreported");
  eq("only nulls: empty", activity([{ avg: [null, null], min: null, max: null }]), "empty");
  eq("only zeros: no activity", activity([{ avg: [0, null, 0], min: [0, null, 0], max: [0, null, 0] }]), "zero");
  eq("a spike in the band is activity", activity([{ avg: [0, 0], min: [0, 0], max: [0, 3] }]), "data");
  const r = resolve(HOST_FIGURES, new Set([...have61, "vmstat.pgscan_anon", "vmstat.pgscan_file", "vmstat.pgsteal_anon", "vmstat.pgsteal_file"]));
  eq("all reclaim beside kswapd and direct (5.8+)", fig(r, "reclaim").lines.filter((l) => l.names && l.names.length === 2).map((l) => [l.label, l.names]),
    [["scan all", ["vmstat.pgscan_anon", "vmstat.pgscan_file"]], ["steal all", ["vmstat.pgsteal_anon", "vmstat.pgsteal_file"]]]);
  eq("no all-reclaim line before 5.8", fig(r61, "reclaim").lines.some((l) => l.label === "scan all"), false);
}

// ---- polling: what is an outage, and the backoff
{
  const nv = await import("../../web/js/nav.js");
  eq("outage: network", nv.isOutage({ status: 0, name: "ApiError" }), true);
  eq("outage: database away", nv.isOutage({ status: 503, name: "ApiError" }), true);
  eq("not an outage: a bad request", nv.isOutage({ status: 404, name: "ApiError" }), false);
  eq("not an outage: an abort", nv.isOutage({ status: 0, name: "AbortError" }), false);
  eq("backoff 2, 4, 8 ... 60 s", [1, 2, 3, 4, 5, 6, 9].map(nv.backoffMs), [2000, 4000, 8000, 16000, 32000, 60000, 60000]);
}

// ---- contrast: every text and badge colour pair of both themes (WCAG AA, 4.5:1)
{
  const { readFileSync } = await import("node:fs");
  const css = readFileSync(new URL("../../web/css/app.css", import.meta.url), "utf8");
  const vars = (block) => Object.fromEntries([...block.matchAll(/(--[\w-]+):\s*(#[0-9a-fA-F]{6})/g)].map((m) => [m[1], m[2]]));
  const light = vars(css.slice(css.indexOf(":root {"), css.indexOf("@media (prefers-color-scheme: dark)")));
  const darkBlock = css.slice(css.indexOf("@media (prefers-color-scheme: dark)"));
  const dark = { ...light, ...vars(darkBlock.slice(0, darkBlock.indexOf("\n}\n"))) };
  const lum = (hex) => {
    const c = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  // every --X-fg with its --X-bg, and text colours on the panel and page
  const pairs = Object.keys(light).filter((k) => k.endsWith("-fg") && light[k.slice(0, -3) + "-bg"]).map((k) => [k, k.slice(0, -3) + "-bg"]);
  eq("the badge pairs are all there", ["ok", "warning", "critical", "open", "resolved", "stale", "silenced"].every((b) => pairs.some(([f]) => f === `--badge-${b}-fg`)), true);
  for (const t of ["--fg", "--muted", "--accent", "--ns-fg", "--color-a", "--color-b", "--critical"]) pairs.push([t, "--panel"]);
  for (const t of ["--fg", "--muted"]) pairs.push([t, "--bg"]);
  for (const [theme, v] of [["light", light], ["dark", dark]]) {
    const low = pairs.map(([f, b]) => [f, b, ratio(v[f], v[b])]).filter((x) => x[2] < 4.5).map((x) => `${x[0]} on ${x[1]} ${x[2].toFixed(2)}`);
    eq(theme + " theme: every pair at least 4.5:1", low, []);
  }
}

// the fleet's kernel-regression banner (regression.js): open
// kernel_regression alerts only, critical first, the evidence's compare
// link, or one built from the evidence when it has none
{
  const reg = (id, severity, state, ev, extra = {}) => ({ id, kind: "kernel_regression", severity, state, subject: ev.release,
    summary: ev.release + " vs " + ev.baseline + ": writeback worse, 6 vs 20 hosts, p = 1e-05", evidence: ev, ...extra });
  const items = bannerItems([
    reg(3, "warning", "open", { release: "6.1.0-21", baseline: "6.1.0-18", compare: { page: "#/compare?group_by=kernel&a=6.1.0-18&b=6.1.0-21&mark=immediate_reclaim" } }),
    reg(4, "critical", "open", { release: "6.6.0-3", baseline: "6.1.0-18", figures: [{ name: "psi_io_full" }, { name: "vmscan_write" }] }),
    reg(5, "warning", "resolved", { release: "6.1.0-20", baseline: "6.1.0-18" }),
    { id: 6, kind: "thrash", severity: "critical", state: "open", host: "db-07", summary: "x" },
  ]);
  eq("banner: open kernel regressions only, critical first", items.map((i) => [i.release, i.severity]), [["6.6.0-3", "critical"], ["6.1.0-21", "warning"]]);
  eq("banner: the summary as the text", items[1].text, "6.1.0-21 vs 6.1.0-18: writeback worse, 6 vs 20 hosts, p = 1e-05");
  eq("banner: the evidence's compare link", items[1].href, "#/compare?group_by=kernel&a=6.1.0-18&b=6.1.0-21&mark=immediate_reclaim");
  eq("banner: a link built from the evidence", items[0].href, "#/compare?group_by=kernel&a=6.1.0-18&b=6.6.0-3&mark=psi_io_full%2Cvmscan_write");
  eq("banner: a link that is not a compare hash is not used", compareHref({ subject: "b", evidence: { baseline: "a", compare: { page: "javascript:alert(1)" } } }),
    "#/compare?group_by=kernel&a=a&b=b");
  eq("banner: none without alerts", bannerItems(undefined), []);
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
