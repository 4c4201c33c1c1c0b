// browser.mjs - the dashboard's load times in a real headless Chromium
// (Debian's /usr/bin/chromium driven by playwright-core, as the browser
// tests), for `make bench` (bench/run.sh) against a server holding a
// fleet-sized history:
//   fleet:   navigation start -> the fleet table rendered with the visible
//            rows' sparklines drawn (fleet.js sets the "fleet-rendered"
//            performance mark right after that first render);
//   fleet_interactive: the same, painted and the main thread free for
//            input (as host7d_interactive, from fleet.js's
//            "fleet-interactive" mark);
//   host7d:  navigation start -> every chart of HOST's 7-day view drawn
//            (host.js sets #view[data-loaded] after the last chart);
//   host7d_interactive: navigation start -> the charts in the first
//            viewport (1600 x 1000) drawn and painted and the main thread
//            free for input (see interactiveAt below), same loads.
// Each load is a fresh browser context (no HTTP cache, no warm JS). Prints
// one JSON object: per view p50/p99/max in ms, the runs, and the API time
// of the slowest request of each load (Resource Timing), so the server's
// share is visible; and, from Chromium's own counters (CDP
// Performance.getMetrics), the page's main-thread CPU time and its script,
// layout and style time up to "ready", p50 over the runs: those are what the
// page itself costs, much less distorted by a loaded machine than wall time;
// browser_ms is the CPU of all of Chromium's processes from navigation to
// "ready" (renderer with its workers and compositor, browser process, GPU
// process: /proc), what the page takes from the cores the server shares. With SCREENS=DIR also writes fleet.png, host-7d.png and
// alerts.png of that data size there.
//
// With TIMELINE=1, also writes to stderr, for the last load of each view, a
// timeline from navigation start: the HTML, every module and API request
// (start, end, bytes), the page's performance marks (host.js marks each
// chart drawn) and the main thread's long tasks (> 50 ms): where the time
// goes.
//
// With TRACE=DIR, a Chromium trace of each view's last load goes to
// DIR/VIEW.json (chrome://tracing, or bench/tracesum.py for a summary).
//
// usage: node bench/browser.mjs URL HOST [RUNS]   (env CHROMIUM, SCREENS, TIMELINE, TRACE)
import { chromium } from "playwright-core";
import { mkdirSync, readFileSync, readdirSync } from "node:fs";

const [BASE, HOST, RUNS_ARG] = process.argv.slice(2);
const RUNS = Number(RUNS_ARG || 7);
if (!BASE || !HOST) {
  console.error("usage: node bench/browser.mjs URL HOST [RUNS]");
  process.exit(2);
}
const SCREENS = process.env.SCREENS || "";
const TIMELINE = process.env.TIMELINE === "1";
const TRACE = process.env.TRACE || "";	// a folder: a Chromium trace of each view's last load
if (TRACE) mkdirSync(TRACE, { recursive: true });
const VIEWPORT = { width: 1600, height: 1000 };

// Chromium's own UI off: each fresh context is a new browser window, and
// for each one Chromium (156) started a second renderer for its omnibox
// popup (chrome://omnibox-popup.top-chrome, a WebUI page, found with CDP
// Target.getTargets): ~0.25 s of main-thread and ~0.3 s of worker CPU per
// load (/proc, per thread), on the same 2 cores as the page under test, the
// server and PostgreSQL. A user's browser does that once per window, not
// per page, so it is noise here, not the dashboard's cost; the page's own
// renderer is unchanged. CHROMIUM_FLAGS adds flags (space-separated).
const NO_UI = "--disable-features=PreloadTopChromeWebUI,WebUIOmniboxPopup,WebUIOmniboxAimPopup,WebUIOmniboxFullPopup";
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", NO_UI,
    ...(process.env.CHROMIUM_FLAGS || "").split(" ").filter(Boolean)],
});

// CPU seconds (user + system) of every process below this one, by pid:
// the browser, its renderers, GPU and utility processes (Linux /proc).
function treeCpu() {
  const kids = new Map(), cpu = new Map();
  for (const d of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(d)) continue;
    let st;
    try { st = readFileSync("/proc/" + d + "/stat", "utf8"); } catch (_) { continue; }	// gone meanwhile
    const f = st.slice(st.lastIndexOf(")") + 2).split(" ");	// fields from state (3rd) on
    const ppid = Number(f[1]);
    if (!kids.has(ppid)) kids.set(ppid, []);
    kids.get(ppid).push(Number(d));
    cpu.set(Number(d), (Number(f[11]) + Number(f[12])) / CLK_TCK);
  }
  const out = new Map(), todo = [...(kids.get(process.pid) || [])];
  while (todo.length) {
    const p = todo.pop();
    out.set(p, cpu.get(p) || 0);
    todo.push(...(kids.get(p) || []));
  }
  return out;
}
const CLK_TCK = 100;	// USER_HZ, 100 on every Linux ABI node runs on
// ms of CPU the browser's processes used between two treeCpu() snapshots
// (a process born in between counts from zero; one that exited in between
// is lost: none does during a load, contexts are closed after it)
function cpuBetween(a, b) {
  let s = 0;
  for (const [p, v] of b) s += v - (a.get(p) || 0);
  return s * 1000;
}

// One load of url in a fresh context: ms from navigation start until
// ready() (a page function returning a time in ms, or falsy) holds.
async function load(url, ready, screenshot, trace, extra) {
  const ctx = await browser.newContext({ viewport: VIEWPORT });
  const page = await ctx.newPage();
  // the main thread's long tasks (> 50 ms): the timeline, and when the
  // page could answer input
  await page.addInitScript(() => {
    window.__longtasks = [];
    try {
      new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__longtasks.push([e.startTime, e.duration]); })
        .observe({ type: "longtask", buffered: true });
    } catch (_) { /* not supported */ }
  });
  const cdp = await ctx.newCDPSession(page);
  await cdp.send("Performance.enable", { timeDomain: "threadTicks" });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  if (trace) await browser.startTracing(page, { path: trace, screenshots: false });
  const cpu0 = treeCpu();
  await page.goto(url);
  const h = await page.waitForFunction(ready, undefined, { timeout: 60000, polling: "raf" });
  const browserCpu = cpuBetween(cpu0, treeCpu());
  const ms = await h.jsonValue();
  const interactive = extra ? await page.evaluate(interactiveAt, extra) : null;
  if (trace) await browser.stopTracing();
  const { metrics } = await cdp.send("Performance.getMetrics");
  const m = Object.fromEntries(metrics.map((x) => [x.name, x.value]));
  const cpu = {
    thread_ms: (m.ThreadTime || 0) * 1000, script_ms: (m.ScriptDuration || 0) * 1000,
    layout_style_ms: ((m.LayoutDuration || 0) + (m.RecalcStyleDuration || 0)) * 1000,
    browser_ms: browserCpu,
  };
  const api = await page.evaluate(() => performance.getEntriesByType("resource")
    .filter((e) => e.name.includes("/api/v1/"))
    .map((e) => ({ url: e.name.replace(location.origin, ""), ms: e.duration, bytes: e.transferSize })));
  const timeline = TIMELINE ? await page.evaluate(() => {
    const r = (x) => Math.round(x);
    const nav = performance.getEntriesByType("navigation")[0];
    const ev = [["html", r(nav.requestStart), r(nav.responseEnd), nav.transferSize],
      ["domInteractive", r(nav.domInteractive)], ["DOMContentLoaded", r(nav.domContentLoadedEventEnd)]];
    for (const e of performance.getEntriesByType("resource")) {
      ev.push([e.name.replace(location.origin + "/", "").slice(0, 90), r(e.startTime), r(e.responseEnd), e.transferSize, e.decodedBodySize]);
    }
    for (const e of performance.getEntriesByType("mark")) ev.push(["mark " + e.name, r(e.startTime)]);
    for (const [t, d] of window.__longtasks || []) ev.push(["longtask " + r(d) + " ms", r(t), r(t + d)]);
    return ev.sort((a, b) => a[1] - b[1]);
  }) : null;
  if (screenshot) {
    await page.waitForTimeout(300);
    await page.screenshot({ path: screenshot, fullPage: false });
  }
  await ctx.close();
  if (errors.length) throw new Error(url + ": page errors: " + errors.join("; "));
  return { ms, interactive, api, cpu, timeline };
}

const fleetReady = () => {
  const m = performance.getEntriesByName("fleet-rendered")[0];
  return m ? m.startTime : 0;
};
const hostReady = () => (document.getElementById("view").dataset.loaded ? performance.now() : 0);
// Interactive: the charts in the first viewport drawn and painted (host.js
// marks "host-interactive" at the start of the first task after that frame;
// fleet.js marks "fleet-interactive" after the table's first frame) and the
// main thread free for input: the end of a long task running at that
// moment, if any. The charts below the fold (the fleet's overscan rows) are
// drawn afterwards.
const interactiveAt = (name) => {
  const m = performance.getEntriesByName(name)[0];
  if (!m) return null;
  let t = m.startTime;
  for (const [s, d] of window.__longtasks || []) if (s < t && s + d > t) t = s + d;
  return t;
};

function stats(runs) {
  const xs = runs.map((r) => r.ms).sort((a, b) => a - b);
  const q = (p) => xs[Math.min(xs.length - 1, Math.floor(xs.length * p))];
  return {
    n: xs.length, p50_ms: Math.round(q(0.5)), p99_ms: Math.round(q(0.99)), max_ms: Math.round(xs[xs.length - 1]),
    runs_ms: runs.map((r) => Math.round(r.ms)),
    slowest_api_ms: runs.map((r) => Math.round(Math.max(0, ...r.api.map((a) => a.ms)))),
    api_requests: runs[0].api.length,
    // the page's own CPU, p50 over the runs (ms)
    cpu_p50: Object.fromEntries(Object.keys(runs[0].cpu).map((k) => {
      const v = runs.map((r) => r.cpu[k]).sort((a, b) => a - b);
      return [k, Math.round(v[Math.floor(v.length / 2)])];
    })),
  };
}

const out = {};
// screenshots first, while the topped-up hosts are still fresh
if (SCREENS) {
  mkdirSync(SCREENS, { recursive: true });
  await load(BASE + "/#/fleet", fleetReady, SCREENS + "/fleet.png");
  await load(BASE + "/#/host/" + encodeURIComponent(HOST) + "?range=7d", hostReady, SCREENS + "/host-7d.png");
  await load(BASE + "/#/alerts", () => (document.querySelector(".alert, .empty") ? 1 : 0), SCREENS + "/alerts.png");
  out.screens = SCREENS;
}
const views = [
  ["fleet", BASE + "/#/fleet", fleetReady, "fleet-interactive"],
  ["host7d", BASE + "/#/host/" + encodeURIComponent(HOST) + "?range=7d", hostReady, "host-interactive"],
];
for (const [name, url, ready, extra] of views) {
  await load(url, ready);	// warm-up: server caches, PostgreSQL buffers
  const runs = [];
  for (let i = 0; i < RUNS; i++) runs.push(await load(url, ready, null, TRACE && i === RUNS - 1 ? TRACE + "/" + name + ".json" : null, extra));
  out[name] = stats(runs);
  if (extra) out[name + "_interactive"] = stats(runs.map((r) => ({ ...r, ms: r.interactive ?? r.ms })));
  if (TIMELINE) {
    const last = runs[runs.length - 1];
    console.error("--- " + name + " (ready at " + Math.round(last.ms) + " ms; ms from navigation start: start end bytes decoded)");
    for (const e of last.timeline) console.error("  " + e.slice(1).map((v) => String(v ?? "")).join("\t") + "\t" + e[0]);
  }
}
await browser.close();
console.log(JSON.stringify(out));
