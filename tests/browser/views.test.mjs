// views.test.mjs - every view at 1280, 1440 and 1920 px with an alert
// open, as an on-call engineer meets it, in a real headless Chromium:
//   - nothing cut without a tooltip (a cell or chip whose text overflows
//     has a title), no horizontal scrolling, no "null"/"NaN"/"undefined";
//   - the fleet's alert chips ("thrash · 38m", "+N", an ended alert marked);
//   - an alert opened from its chip, evidence labels without raw keys;
//   - its "charts at that moment" on a hybrid cgroup host (rec-07: v1
//     memory controller, v2 pressure) draws only charts with data, the
//     cgroup's and the host's, with all reclaim beside kswapd and direct;
//   - compare fits;
// then, at 1440 px: sort headers and zoom from the keyboard, a legend entry
// hiding its line (kept across a refresh), the alert band's label under the
// cursor, UTC, refresh interval and pause, a silent host's live duration,
// dark mode's contrast; then outages, with servers of its own on the same
// database: the server stopped (the fleet keeps its rows, greyed, "data as
// of"; views opened meanwhile recover when it is back) and the database
// away behind a TCP proxy (503s; compare and a host view opened meanwhile
// recover); and a web directory without vendor/ (the page and the server's
// log name the missing file and `make deps`).
// Screenshots: OUT/views-*.png. Prints "N passed, N failed".
//
// env: VMSCOPE_URL (a server holding gen_samples.py --recordings' hosts),
//      SERVER (binary), SERVER_DB (conninfo of its database), SERVER_TOKEN,
//      SCHEMA_DIR, WEB_DIR, OUT, CHROMIUM
import { check, finish, launch } from "./harness.mjs";
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

const BASE = process.env.VMSCOPE_URL;
const OUT = process.env.OUT || "tests/out";
const { SERVER, SERVER_DB, SERVER_TOKEN, SCHEMA_DIR, WEB_DIR } = process.env;
if (!BASE || !SERVER || !SERVER_DB || !SERVER_TOKEN || !SCHEMA_DIR || !WEB_DIR) {
  console.error("VMSCOPE_URL, SERVER, SERVER_DB, SERVER_TOKEN, SCHEMA_DIR and WEB_DIR must be set");
  process.exit(2);
}
mkdirSync(OUT, { recursive: true });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const browser = await launch();
const errors = [];

async function newPage(width, opts = {}) {
  const ctx = await browser.newContext({ viewport: { width, height: 900 }, ...opts });
  await ctx.route("**/*", (route) => {
    const u = new URL(route.request().url());
    return u.protocol === "data:" || u.hostname === "127.0.0.1" ? route.continue() : route.abort();
  });
  const page = await ctx.newPage();
  if (!opts.noErrors) {
    page.on("console", (m) => { if (m.type() === "error" && !/Failed to load resource/.test(m.text())) errors.push(width + ": " + m.text()); });
    page.on("pageerror", (e) => errors.push(width + ": " + String(e)));
  }
  return page;
}

async function until(page, fn, arg, ms = 15000) {
  try { await page.waitForFunction(fn, arg, { timeout: ms }); return true; } catch (_) { return false; }
}

// Cells and chips whose text overflows their box without a tooltip, and
// whether the page scrolls sideways; text that should never show.
const audit = (sel) => {
  const cut = [];
  for (const e of document.querySelectorAll(sel)) {
    if (e.offsetParent === null) continue;
    if (e.scrollWidth > e.clientWidth + 1) {
      const titled = e.title || e.closest("[title]") || e.querySelector("[title]");
      if (!titled) cut.push(e.className + ": " + e.textContent.slice(0, 40));
    }
  }
  const text = document.getElementById("view").innerText;
  return {
    cut,
    sideways: document.documentElement.scrollWidth > window.innerWidth + 1,
    bad: (text.match(/\b(null|undefined|NaN)\b/g) || []).join(","),
  };
};

// Does the canvas hold any drawn pixel?
const canvasDrawn = (c) => {
  const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
  for (let i = 3; i < d.length; i += 4) if (d[i] > 0) return true;
  return false;
};

// the outage banner (built on the first outage only): shown, and its text
const bannerShown = () => { const b = document.getElementById("stale-banner"); return !!b && !b.hidden; };
const bannerText = () => document.getElementById("stale-banner")?.textContent || "";

// ---- the alert the views open: rec-07's thrash, on its hybrid cgroup
const alerts = (await (await fetch(BASE + "/api/v1/alerts?host=rec-07&kind=thrash&state=all")).json()).alerts || [];
const thrash = alerts[0];
check("the recorded hybrid host has its thrash alert (cgroup /vmscope-rec-filethrash)", thrash && thrash.cgroup === "/vmscope-rec-filethrash",
  JSON.stringify(alerts).slice(0, 300));

async function views(width) {
  const page = await newPage(width);
  // fleet
  await page.goto(BASE + "/#/fleet");
  const fleetOk = await until(page, () => document.querySelectorAll("#fleet-table tbody tr[data-host]").length >= 5);
  const fa = await page.evaluate(audit, "#fleet-table td, #fleet-table .chip");
  check(`${width} fleet: every host, nothing cut without a tooltip, no sideways scroll, no null`, fleetOk && !fa.cut.length && !fa.sideways && !fa.bad,
    JSON.stringify(fa));
  const chips = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll("#fleet-table tr[data-host]")].map((tr) =>
    [tr.dataset.host, [...tr.querySelectorAll(".alerts-cell .chip")].map((c) => ({ text: c.textContent, title: c.title, cls: c.className, href: c.getAttribute("href") }))])));
  const r7 = chips["rec-07"] || [];
  check(`${width} fleet: a chip says kind and age, its tooltip the summary, and opens that alert`,
    r7.length >= 1 && /^thrash · \d+[smhd]$/.test(r7[0].text) && r7[0].title.includes("refaults") && r7[0].href.includes("id=" + (thrash && thrash.id)),
    JSON.stringify(r7));
  const d7 = chips["db-07"] || [];
  check(`${width} fleet: "+N" lists every other alert in its tooltip`,
    d7.length === 2 && /^\+\d+$/.test(d7[1].text) && d7[1].title.split("\n").length === Number(d7[1].text.slice(1)) + 1, JSON.stringify(d7));
  const o3 = chips["oom-03"] || [];
  check(`${width} fleet: an alert that ended within the hour is marked`,
    o3.some((c) => c.cls.includes("resolved") && c.text.startsWith("oom_kill")) || o3.some((c) => /ended: oom_kill/.test(c.title)), JSON.stringify(o3));
  await page.screenshot({ path: `${OUT}/views-fleet-${width}.png`, fullPage: true });

  // the alert, opened from its chip
  await page.click('#fleet-table tr[data-host="rec-07"] .alerts-cell .chip');
  const alOk = await until(page, (id) => document.querySelector(`#alert-list .alert.focus[data-alert-id="${id}"] .details:not([hidden]) table.ev`), String(thrash?.id));
  const aa = await page.evaluate(audit, "#alert-list .alert .head > *, #alert-list table.ev td");
  const ev = await page.$$eval("#alert-list .alert.focus table.ev tr", (trs) => trs.map((t) => [t.cells[0].textContent, t.cells[1].textContent]));
  check(`${width} alerts: the chip opens that alert with its evidence; nothing cut without a tooltip`, alOk && !aa.cut.length && !aa.sideways && !aa.bad, JSON.stringify(aa));
  check(`${width} alerts: evidence labels are words, values have units and no exponent`,
    ev.length >= 4 && ev.every(([k, v]) => !/_/.test(k) && !/\de[-+]?\d/.test(v)) && ev.some(([k, v]) => k === "memory refaulted per second" && /%\/s$/.test(v)),
    JSON.stringify(ev));
  await page.screenshot({ path: `${OUT}/views-alerts-${width}.png`, fullPage: true });

  // its charts at that moment: the cgroup's and the host's, none empty
  await page.click(`#alert-list .alert[data-alert-id="${thrash?.id}"] a.view-link`);
  const hostOk = await until(page, () => document.getElementById("view").dataset.loaded && document.querySelectorAll(".chart .uplot").length >= 6, undefined, 25000);
  const hv = await page.evaluate((src) => {
    const drawn = new Function("c", "return (" + src + ")(c)");
    const shown = [...document.querySelectorAll(".chart")].filter((c) => c.offsetParent !== null);
    return {
      hash: location.hash,
      shown: shown.map((c) => ({ fig: c.dataset.fig, data: c.dataset.hasData, drawn: !!c.querySelector("canvas") && [...c.querySelectorAll(".uplot canvas")].some(drawn) })),
      cgroupCharts: [...document.querySelectorAll('[data-section="cgroup"] .chart[data-has-data="1"]')].map((c) => c.dataset.fig),
      quiet: document.querySelector('[data-quiet="cgroup"]')?.textContent || "",
      picker: [...document.querySelectorAll("#cgroup-picker option")].map((o) => o.textContent),
      all: [...document.querySelectorAll('.chart[data-fig="reclaim"] .u-legend .u-series')].map((t) => t.textContent),
    };
  }, canvasDrawn.toString());
  const ha = await page.evaluate(audit, ".chart h3, .chart .sub, #alert-strip .chip");
  check(`${width} host from the alert: the cgroup selected, from before the alert on`, hostOk && /cgroup=%2Fvmscope-rec-filethrash/.test(hv.hash) && /from=\d+/.test(hv.hash), hv.hash);
  check(`${width} host: no empty chart on the alerting host (the others folded into a line)`,
    hv.shown.length >= 6 && hv.shown.every((c) => c.data === "1" && c.drawn), JSON.stringify(hv.shown));
  check(`${width} host: the hybrid cgroup's v1 memory figures and v2 pressure, one picker entry`,
    ["cg_refaults", "cg_memory", "cg_psi"].every((f) => hv.cgroupCharts.includes(f)) && hv.picker.filter((p) => p.includes("/vmscope-rec-filethrash")).length === 1 &&
    /Not reported by this cgroup/.test(hv.quiet), JSON.stringify([hv.cgroupCharts, hv.picker, hv.quiet]));
  check(`${width} host: all reclaim beside kswapd and direct (the limit reclaim kswapd never counts)`,
    hv.all.some((t) => /^scan all\s*:?\s*[1-9]/.test(t.replace(/\s+/g, " ").trim())) && hv.all.some((t) => /^scan kswapd\s*:?\s*0/.test(t.replace(/\s+/g, " ").trim())), JSON.stringify(hv.all));
  check(`${width} host: nothing cut, no sideways scroll, no null`, !ha.cut.length && !ha.sideways && !ha.bad, JSON.stringify(ha));
  await page.screenshot({ path: `${OUT}/views-host-${width}.png`, fullPage: true });

  // compare
  await page.goto(BASE + "/#/compare?group_by=kernel");
  const cmpOk = await until(page, () => document.getElementById("view").dataset.loaded === "1" && document.querySelector("#cmp-table tbody tr[data-fig]"), undefined, 20000);
  const ca = await page.evaluate(audit, "#cmp-table td");
  const fits = await page.evaluate(() => { const s = document.querySelector(".cmp-scroll"); return s && s.scrollWidth <= s.clientWidth + 1; });
  check(`${width} compare: the table fits, nothing cut, no null`, cmpOk && fits && !ca.cut.length && !ca.sideways && !ca.bad, JSON.stringify([fits, ca]));
  await page.screenshot({ path: `${OUT}/views-compare-${width}.png`, fullPage: true });
  await page.context().close();
}

// ---- interactions, at 1440 px
async function interactions() {
  const page = await newPage(1440);
  const apiReqs = [];
  page.on("request", (r) => { if (r.url().includes("/api/v1/")) apiReqs.push({ t: Date.now(), u: new URL(r.url()) }); });
  await page.goto(BASE + "/#/fleet");
  await until(page, () => document.querySelectorAll("#fleet-table tbody tr[data-host]").length >= 5);
  // a sort header from the keyboard
  await page.focus('th[data-sort="host"] button');
  await page.keyboard.press("Enter");
  const sorted = await page.evaluate(() => ({ order: [...document.querySelectorAll("#fleet-table tr[data-host]")].map((t) => t.dataset.host),
    aria: document.querySelector('th[data-sort="host"]').getAttribute("aria-sort"), focus: document.activeElement.closest("th")?.dataset.sort }));
  check("a sort header works from the keyboard and tells screen readers", sorted.aria === "ascending" && sorted.focus === "host" &&
    sorted.order.join() === [...sorted.order].sort().join(), JSON.stringify(sorted));
  // refresh interval and pause
  await page.selectOption("#refresh-every", "5000");
  const t0 = Date.now();
  const fast = await until(page, (t) => performance.getEntriesByType("resource").some((e) => e.name.includes("/api/v1/fleet") && performance.timeOrigin + e.startTime > t), t0, 9000);
  check("the refresh interval is the one chosen (5 s)", fast);
  await page.click("#refresh-pause");
  const paused = Date.now();
  await sleep(7000);
  const during = apiReqs.filter((r) => r.t > paused + 200 && r.u.pathname.endsWith("/fleet")).length;
  check("paused, the view does not refresh", during === 0 && (await page.$eval("#refresh-pause", (b) => b.getAttribute("aria-pressed"))) === "true", String(during));
  await page.click("#refresh-pause");
  await page.selectOption("#refresh-every", "10000");

  // a silent host's silence counts on
  await page.goto(BASE + "/#/alerts?host=web-03&kind=host_silent");
  await until(page, () => document.querySelector('#alert-list .alert[data-kind="host_silent"] .summary'));
  const s1 = await page.$eval('#alert-list .alert[data-kind="host_silent"] .summary', (e) => e.textContent);
  await sleep(2200);
  const s2 = await page.$eval('#alert-list .alert[data-kind="host_silent"] .summary', (e) => e.textContent);
  check("host_silent's duration is live", /^no sample for \d+ min/.test(s1) && s1 !== s2, s1 + " | " + s2);

  // a view opened from an open alert's link keeps refreshing (it follows now)
  const { alertLink } = await import("../../web/js/alerts.js");
  await page.goto(BASE + "/" + alertLink(thrash));
  await until(page, () => document.getElementById("view").dataset.loaded, undefined, 20000);
  const loadedAt = Date.now();
  const again = await until(page, (t) => performance.getEntriesByType("resource").some((e) => e.name.includes("/series_batch") && performance.timeOrigin + e.startTime > t), loadedAt, 14000);
  check("a view opened from an open alert's link keeps refreshing", again && !(await page.evaluate(() => /[?&]to=/.test(location.hash))));

  // the host view: zoom from the keyboard, legend, band label, UTC
  await page.goto(BASE + "/#/host/db-07?range=1h");
  await until(page, () => document.getElementById("view").dataset.loaded && document.querySelectorAll(".chart .uplot").length >= 5, undefined, 20000);
  const leg = '.chart[data-fig="refaults"] .u-legend tr.u-series:nth-child(2)';
  await page.click(leg + " th");
  const hidden1 = await page.evaluate((s) => ({ off: document.querySelector(s).classList.contains("u-off"), pressed: document.querySelector(s).getAttribute("aria-pressed") }), leg);
  await page.click("#refresh-now");
  await sleep(1500);
  await until(page, () => document.getElementById("view").dataset.loaded);
  const hidden2 = await page.$eval(leg, (t) => t.classList.contains("u-off"));
  await page.focus(leg);
  await page.keyboard.press("Enter");
  const shownAgain = await page.$eval(leg, (t) => !t.classList.contains("u-off"));
  check("a legend entry hides its line, stays hidden over a refresh, and Enter shows it again",
    hidden1.off && hidden1.pressed === "true" && hidden2 && shownAgain, JSON.stringify([hidden1, hidden2, shownAgain]));
  // the alert band's label under the cursor (db-07 thrashes over the last 25 minutes)
  const over = await page.$('.chart[data-fig="psi"] .u-over');
  const box = await over.boundingBox();
  await page.mouse.move(box.x + box.width * 0.9, box.y + box.height / 2);
  const label = await until(page, () => { const l = document.querySelector('.chart[data-fig="psi"] .band-label'); return l && !l.hidden && /thrash|stall|storm/.test(l.textContent); }, undefined, 3000);
  check("the cursor over an alert band names the alert", label,
    await page.evaluate(() => document.querySelector(".band-label")?.textContent || "none"));
  await page.mouse.move(0, 0);
  await page.focus("#zoom-out");
  await page.keyboard.press("Enter");
  check("zoom out from the keyboard (1h -> 6h)", await until(page, () => /range=6h/.test(location.hash)), await page.evaluate(() => location.hash));
  await until(page, () => document.getElementById("view").dataset.loaded, undefined, 20000);
  const zoomNames = await page.$$eval("#zoom-buttons button", (b) => b.map((x) => x.getAttribute("aria-label")));
  check("the zoom buttons are named for screen readers", zoomNames.length === 4 && zoomNames.every((n) => n && n.length > 8), JSON.stringify(zoomNames));
  // a custom range
  await page.click("#custom-range summary");
  await page.waitForSelector("#range-from");
  await page.fill("#range-from", "2020-01-01T10:00");
  await page.fill("#range-to", "2020-01-01T09:00");
  await page.click("#range-apply");
  const refused = await page.$eval("#range-msg", (e) => e.textContent);
  await page.fill("#range-to", "2020-01-01T11:00");
  await page.click("#range-apply");
  check("a custom range: refused backwards, applied otherwise", /before/.test(refused) && await until(page, () => /from=\d+&to=\d+/.test(location.hash)), refused);
  // UTC
  await page.goto(BASE + "/#/host/db-07?range=1h");
  await until(page, () => document.getElementById("view").dataset.loaded, undefined, 20000);
  await page.click("#tz-toggle");
  const utc = await until(page, () => document.getElementById("tz-toggle").textContent === "UTC" && /UTC/.test(document.getElementById("zoom-info").textContent) &&
    document.getElementById("view").dataset.loaded);
  const hours = await page.evaluate(() => {
    const t = [...document.querySelectorAll(".chart .u-axis")][0]?.textContent || "";
    return { t };
  });
  check("times switch to UTC (the header says so, the window too)", utc, JSON.stringify(hours));
  await page.click("#tz-toggle");
  await page.screenshot({ path: `${OUT}/views-host-interactions-1440.png` });
  await page.context().close();

  // dark mode: the theme follows the system, badges stay readable
  const dark = await newPage(1440, { colorScheme: "dark" });
  await dark.goto(BASE + "/#/fleet");
  await until(dark, () => document.querySelectorAll("#fleet-table tbody tr[data-host]").length >= 5);
  const dk = await dark.evaluate(() => {
    const rgb = (s) => (s.match(/\d+(\.\d+)?/g) || []).slice(0, 3).map(Number);
    const lum = (c) => { const v = c.map((x) => x / 255).map((x) => (x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4)); return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
    const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
    const bg = rgb(getComputedStyle(document.body).backgroundColor);
    const badges = [...document.querySelectorAll(".badge")].map((b) => { const s = getComputedStyle(b); return [b.className, ratio(rgb(s.color), rgb(s.backgroundColor))]; });
    return { bgLum: lum(bg), low: badges.filter((b) => b[1] < 4.5) };
  });
  check("dark mode follows the system, every badge at 4.5:1 or more", dk.bgLum < 0.05 && !dk.low.length, JSON.stringify(dk));
  await dark.screenshot({ path: `${OUT}/views-fleet-dark-1440.png` });
  await dark.context().close();
}

// ---- servers of this test's own, for the outages
const freePort = () => new Promise((res, rej) => {
  const s = net.createServer();
  s.listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => res(p)); });
  s.on("error", rej);
});

// Starts the server binary; resolves {proc, url, log} once /healthz answers
// (any status: the database may be away on purpose).
async function startServer(port, db, web) {
  const logFile = path.join(os.tmpdir(), `vmscope-views-${process.pid}-${port}-${Date.now()}.log`);
  const log = [];
  const proc = spawn(SERVER, ["--listen", "127.0.0.1:" + port, "--db", db, "--token", SERVER_TOKEN, "--schema", SCHEMA_DIR, "--web", web],
    { stdio: ["ignore", "pipe", "pipe"] });
  proc.stdout.on("data", (d) => log.push(String(d)));
  proc.stderr.on("data", (d) => log.push(String(d)));
  const exited = new Promise((r) => proc.on("exit", (code, sig) => r({ code, sig })));
  const url = "http://127.0.0.1:" + port;
  for (let i = 0; i < 300; i++) {
    try { await fetch(url + "/healthz"); return { proc, url, log, exited, logFile }; } catch (_) { await sleep(100); }
  }
  proc.kill("SIGKILL");
  throw new Error("server did not start: " + log.join(""));
}

async function stopServer(s) {
  s.proc.kill("SIGTERM");
  const r = await s.exited;
  check("a test server exits cleanly on SIGTERM (sanitizers)", r.code === 0, JSON.stringify(r) + " " + s.log.join("").slice(-600));
}

// A TCP proxy to PostgreSQL that can be cut and restored: the database
// "away" for one server only (the test cluster is shared).
function pgProxy(target) {
  const socks = new Set();
  let srv = null;
  const open = (port) => new Promise((res) => {
    srv = net.createServer((c) => {
      const up = net.connect(target.port, target.host);
      socks.add(c); socks.add(up);
      c.pipe(up); up.pipe(c);
      const end = () => { c.destroy(); up.destroy(); socks.delete(c); socks.delete(up); };
      c.on("error", end); up.on("error", end); c.on("close", end); up.on("close", end);
    });
    srv.listen(port, "127.0.0.1", () => res(srv.address().port));
  });
  const cut = () => new Promise((res) => { for (const s of socks) s.destroy(); socks.clear(); srv.close(() => res()); });
  return { open, cut };
}

async function outages() {
  // -- the server stopped
  const port = await freePort();
  let s = await startServer(port, SERVER_DB, WEB_DIR);
  const page = await newPage(1440, { noErrors: true });
  await page.goto(s.url + "/#/fleet");
  await until(page, () => document.querySelectorAll("#fleet-table tbody tr[data-host]").length >= 5);
  await stopServer(s);
  const stale = await until(page, () => {
    const b = document.getElementById("stale-banner");
    return !!b && !b.hidden && /Server unreachable .*data as of \d\d:\d\d:\d\d/.test(b.textContent);
  }, undefined, 20000);
  const kept = await page.evaluate(() => ({
    rows: document.querySelectorAll("#fleet-table tbody tr[data-host]").length,
    grey: getComputedStyle(document.querySelector("#fleet-table")).filter,
    banner: document.getElementById("stale-banner")?.textContent,
  }));
  check("server stopped: the fleet keeps its rows, greyed, and says \"data as of\"", stale && kept.rows >= 5 && /grayscale/.test(kept.grey), JSON.stringify(kept));
  await page.screenshot({ path: `${OUT}/views-fleet-stale-1440.png` });
  // a view opened while the server is away
  await page.evaluate(() => { location.hash = "#/alerts"; });
  const nothing = await until(page, () => /nothing loaded yet/.test(document.getElementById("stale-banner")?.textContent || ""), undefined, 10000);
  check("a view opened during the outage says nothing is loaded yet", nothing, await page.evaluate(bannerText));
  s = await startServer(port, SERVER_DB, WEB_DIR);
  const back = await until(page, () => document.getElementById("stale-banner")?.hidden !== false && document.querySelectorAll("#alert-list .alert").length >= 1 &&
    !document.getElementById("view").classList.contains("stale"), undefined, 60000);
  check("the server back: the alerts view loads by itself and the banner goes", back,
    await page.evaluate(() => location.hash + " | " + (document.getElementById("stale-banner")?.textContent || "no banner") + " | " + document.getElementById("view").textContent.slice(0, 200)));
  await stopServer(s);
  await page.context().close();

  // -- the database away (503 from a running server)
  const cfg = Object.fromEntries(SERVER_DB.trim().split(/\s+/).map((kv) => kv.split("=")));
  const proxy = pgProxy({ host: cfg.host || "127.0.0.1", port: Number(cfg.port || 5432) });
  const pport = await proxy.open(0);
  const port2 = await freePort();
  const s2 = await startServer(port2, SERVER_DB + " port=" + pport + " connect_timeout=2", WEB_DIR);
  const p2 = await newPage(1440, { noErrors: true });
  await p2.goto(s2.url + "/#/fleet");
  await until(p2, () => document.querySelectorAll("#fleet-table tbody tr[data-host]").length >= 5);
  await proxy.cut();
  await p2.evaluate(() => { location.hash = "#/compare?group_by=kernel"; });
  const dbAway = await until(p2, () => /Database unreachable/.test(document.getElementById("stale-banner")?.textContent || "") &&
    !document.getElementById("stale-banner").hidden, undefined, 30000);
  check("database away: compare says so", dbAway, await p2.evaluate(bannerText));
  await p2.screenshot({ path: `${OUT}/views-compare-db-away-1440.png` });
  await proxy.open(pport);
  const cmpBack = await until(p2, () => document.getElementById("stale-banner")?.hidden !== false && document.querySelector("#cmp-table tbody tr[data-fig]"), undefined, 60000);
  check("database back: compare opened meanwhile shows its table by itself", cmpBack);
  await proxy.cut();
  await p2.evaluate(() => { location.hash = "#/host/db-07?range=24h"; });
  await until(p2, () => /Database unreachable/.test(document.getElementById("stale-banner")?.textContent || "") && !document.getElementById("stale-banner").hidden, undefined, 30000);
  await proxy.open(pport);
  const hostBack = await until(p2, () => document.getElementById("stale-banner")?.hidden !== false && document.getElementById("view").dataset.loaded &&
    document.querySelectorAll(".chart .uplot").length >= 5, undefined, 60000);
  check("database back: a host view opened meanwhile draws its charts by itself", hostBack);
  await p2.context().close();
  await stopServer(s2);
  await proxy.cut();
}

// ---- a web directory without vendor/ (after `make` alone)
async function missingVendor() {
  const dir = mkdtempSync(path.join(os.tmpdir(), "vmscope-web-"));
  cpSync(WEB_DIR, dir, { recursive: true, filter: (src) => !src.includes(path.sep + "vendor") });
  const s = await startServer(await freePort(), SERVER_DB, dir);
  await sleep(300);
  const page = await newPage(1440, { noErrors: true });
  await page.goto(s.url + "/#/host/db-07");
  const said = await until(page, () => /vendor\/uPlot\.min\.esm\.js/.test(document.getElementById("load-error")?.textContent || "") &&
    /make deps/.test(document.getElementById("load-error").textContent), undefined, 15000);
  check("uPlot missing: the page names the file and `make deps`", said, await page.evaluate(() => document.getElementById("view").textContent.slice(0, 200)));
  await page.screenshot({ path: `${OUT}/views-missing-vendor-1440.png` });
  await page.context().close();
  await stopServer(s);
  const log = s.log.join("");
  check("uPlot missing: the server says so at start", /vendor\/uPlot\.min\.esm\.js is missing/.test(log) && /make deps/.test(log), log.slice(-400));
  rmSync(dir, { recursive: true, force: true });
}

// PARTS (for a run by hand): a comma list of views, interactions, outages, vendor
const PARTS = (process.env.PARTS || "views,interactions,outages,vendor").split(",");
await finish(browser, async () => {
  if (PARTS.includes("views")) for (const w of [1280, 1440, 1920]) await views(w);
  if (PARTS.includes("interactions")) await interactions();
  if (PARTS.includes("outages")) await outages();
  if (PARTS.includes("vendor")) await missingVendor();
  check("no console errors", errors.length === 0, errors.join(" | "));
});
