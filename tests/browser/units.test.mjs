// units.test.mjs - the dashboard's pure modules under node, no browser:
// number formatting, which metric names a figure picks on old and new
// kernels, how fetched series become chart arrays (sums, ratios, kB and
// page conversions, min/max bands), page-size inference, evidence units and
// alert links. Run by tests/web_units.sh. Prints "N passed, N failed".
import { fmtBytes, fmtDuration, fmtNum, fmtPct, fmtRate, fmtRatio, axisFormatter, visible } from "../../web/js/format.js";
import { CGROUP_FIGURES, HOST_FIGURES, assemble, index, inferPageSize, neededNames, resolve } from "../../web/js/figures.js";
import { alertLink, evValue } from "../../web/js/alerts.js";
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

// alerts: evidence units, links, explanations
eq("ev bytes", evValue("memory_bytes", 12 * 2 ** 30), "12 GiB");
eq("ev bytes/s", evValue("refault_bytes_per_s", 141 * 2 ** 20), "141 MiB/s");
eq("ev pct", evValue("psi_memory_some_pct", 36), "36 %");
eq("ev pct of threshold", evValue("nr_dirty_pct_of_threshold", 97), "97 %");
eq("ev ratio", evValue("reclaim_efficiency", 0.38), "38 %");
eq("ev rate", evValue("allocstall_per_s", 71.2), "71.2/s");
eq("ev seconds", evValue("silent_s", 610), "10 min 10 s");
eq("ev text", evValue("hint", "raise memory.high"), "raise memory.high");
const link = alertLink({ host: "db-07", cgroup: "/system.slice/pg.service", started_at: "2026-11-30T10:00:00Z", ended_at: "2026-11-30T10:20:00Z" }, 1796040000);
const pl = parseHash(link);
eq("alert link route", [pl.name, pl.arg, pl.params.get("cgroup")], ["host", "db-07", "/system.slice/pg.service"]);
eq("alert link window covers the alert", Number(pl.params.get("from")) < 1796032800 && Number(pl.params.get("to")) > 1796034000, true);
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
  eq("batch URL", apiUrl("hosts/db%201/series_batch", rq.batches[1]), "api/v1/hosts/db%201/series_batch?metrics=c&since=395200.000&until=1000000.000&points=321");
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
  eq("the page starts the fleet request early", html.includes('urls.push("api/v1/fleet?window=3600&points=60&layout=columns")'), true);
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
