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
//      VMSCOPE_ADMIN_TOKEN (the server's admin token: silences),
//      SERVER (binary), SERVER_DB (conninfo of its database), SERVER_TOKEN,
//      SCHEMA_DIR, WEB_DIR, OUT, CHROMIUM
import { session } from "./harness.mjs";
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

const BASE = process.env.VMSCOPE_URL;
const OUT = process.env.OUT || "tests/out";
const { SERVER, SERVER_DB, SERVER_TOKEN, SCHEMA_DIR, WEB_DIR } = process.env;
const ADMIN = process.env.VMSCOPE_ADMIN_TOKEN || "";
if (!BASE || !SERVER || !SERVER_DB || !SERVER_TOKEN || !SCHEMA_DIR || !WEB_DIR) {
  console.error("VMSCOPE_URL, SERVER, SERVER_DB, SERVER_TOKEN, SCHEMA_DIR and WEB_DIR must be set");
  process.exit(2);
}
mkdirSync(OUT, { recursive: true });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const { check, run, newPage: harnessPage } = await session();

// A page of the given width in a context of its own; noErrors: its console
// is not watched (a page meant to fail). Failed loads are what the outages
// provoke, not errors.
function newPage(width, opts = {}) {
  const { noErrors, ...ctxOpts } = opts;
  return harnessPage(width, { ...ctxOpts, errors: !noErrors, ignore: /Failed to load resource/ });
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
  const cols = await page.evaluate(() => [...document.querySelectorAll("#fleet-table thead th")].map((t) => {
    const r = t.getBoundingClientRect();
    return { col: t.textContent.trim(), w: Math.round(r.width), inside: r.right <= window.innerWidth + 1 && r.width > 40 };
  }));
  check(`${width} fleet: all 10 columns on screen, the swap column too`, cols.length === 10 && cols.every((c) => c.inside) &&
    /swap/i.test(cols[9].col), JSON.stringify(cols));
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
  // hosts named alike but for a number in the middle stay told apart
  const longNames = await page.evaluate(() => [...document.querySelectorAll("#fleet-table tr[data-host^='very-long-hostname']")].map((tr) => {
    const td = tr.querySelector("td.host");
    return { host: tr.dataset.host, shown: td.textContent, fits: td.scrollWidth <= td.clientWidth + 1, title: td.title };
  }));
  check(`${width} fleet: long names alike show the part that differs, whole (not cut), full name as tooltip`,
    longNames.length === 2 && longNames.every((r) => r.fits && r.title === r.host && r.shown.includes(r.host.match(/pool-(\d+)/)[1])) &&
    longNames[0].shown !== longNames[1].shown, JSON.stringify(longNames));
  // the alert chip's age and the "+N" chip never cut
  const chipFit = await page.evaluate(() => [...document.querySelectorAll("#fleet-table td.alerts-cell")].flatMap((td) => {
    const r = td.getBoundingClientRect();
    return [...td.querySelectorAll(".chip .t, .chip.more")].map((e) => ({ t: e.textContent, in: e.getBoundingClientRect().right <= r.right - 2 + 0.5 &&
      e.getBoundingClientRect().width >= e.scrollWidth - 1 }));
  }));
  check(`${width} fleet: every chip's age and every "+N" in full`, chipFit.length >= 5 && chipFit.every((c) => c.in), JSON.stringify(chipFit));
  // a silent host's values are its last ones
  const silentTitle = await page.$eval('#fleet-table tr[data-host="web-03"] td.spark-cell', (td) => td.title).catch(() => "");
  check(`${width} fleet: a silent host's sparkline values say they are its last sample`, /at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(its last sample\)/.test(silentTitle) &&
    !/ now,/.test(silentTitle), silentTitle);

  // the alert, opened from its chip
  await page.click('#fleet-table tr[data-host="rec-07"] .alerts-cell .chip');
  const alOk = await until(page, (id) => document.querySelector(`#alert-list .alert.focus[data-alert-id="${id}"] .details:not([hidden]) table.ev`), String(thrash?.id));
  const aa = await page.evaluate(audit, "#alert-list .alert .head > *, #alert-list table.ev td");
  const ev = await page.$$eval("#alert-list .alert.focus table.ev tr", (trs) => trs.map((t) => [t.cells[0].textContent, t.cells[1].textContent]));
  check(`${width} alerts: the chip opens that alert with its evidence; nothing cut without a tooltip`, alOk && !aa.cut.length && !aa.sideways && !aa.bad, JSON.stringify(aa));
  check(`${width} alerts: evidence labels are words, values have units and no exponent`,
    ev.length >= 4 && ev.every(([k, v]) => !/_/.test(k) && !/\de[-+]?\d/.test(v)) && ev.some(([k, v]) => k === "memory refaulted per second" && /^\d+(\.\d+)?\u00d7 its memory$/.test(v)),
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

  // a pod's 180-character cgroup: the alert row keeps its actions on screen,
  // the host view its width, the picker finds the pod first
  const k8s = "very-long-hostname-for-the-k8s-worker-pool-001.prod.eu-central-1.internal.example.com";
  await page.goto(BASE + "/#/alerts?host=" + encodeURIComponent(k8s));
  await until(page, () => document.querySelectorAll("#alert-list .alert").length >= 2);
  const podRows = await page.evaluate(() => [...document.querySelectorAll("#alert-list .alert")].map((a) => {
    const where = a.querySelector(".where");
    const reach = [...a.querySelectorAll(".view-link, .more-btn, .sil-open")].map((e) => {
      const r = e.getBoundingClientRect();
      const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      return r.right <= window.innerWidth && !!hit && (hit === e || e.contains(hit));
    });
    return { where: where.textContent, title: where.title, reach };
  }));
  const pod = podRows.find((r) => /kubepods/.test(r.title));
  const pa = await page.evaluate(audit, "#alert-list .alert .head > *");
  check(`${width} alerts: a pod's long cgroup is shortened (whole in the tooltip), the row's actions on screen and clickable`,
    !!pod && pod.where.length <= 64 && /cri-containerd-[0-9a-f]{12}/.test(pod.where) && pod.title.length > 150 &&
    podRows.every((r) => r.reach.length === 3 && r.reach.every(Boolean)) && !pa.sideways && !pa.cut.length, JSON.stringify([podRows, pa]));
  await page.screenshot({ path: `${OUT}/views-alerts-pod-${width}.png` });
  await page.click('#alert-list .alert[data-kind="thrash"] a.view-link');
  await until(page, () => document.getElementById("view").dataset.loaded && document.querySelectorAll(".chart .uplot").length >= 3 &&
    document.querySelectorAll("#cgroup-picker option").length > 20, undefined, 25000);
  const ph = await page.evaluate(() => {
    const sel = document.getElementById("cgroup-picker");
    return { sideways: document.documentElement.scrollWidth > window.innerWidth + 1, selW: Math.round(sel.getBoundingClientRect().width), vw: window.innerWidth,
      first: sel.options[1]?.textContent, firstTitle: sel.options[1]?.title, longest: Math.max(...[...sel.options].map((o) => o.textContent.length)),
      chosen: sel.selectedIndex };
  });
  check(`${width} host of the pod alert: no sideways scroll, a bounded picker, the alerted pod first and marked, short entries`,
    !ph.sideways && ph.selW <= ph.vw * 0.45 && /^\u26a0 /.test(ph.first || "") && /cri-containerd/.test(ph.firstTitle || "") && ph.longest <= 70 && ph.chosen === 1,
    JSON.stringify(ph));
  await page.screenshot({ path: `${OUT}/views-host-pod-${width}.png` });

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

  // a silent host's silence counts on (host_silent goes by arrival: it
  // opens a minute after web-03's last post, once the server's start grace is over)
  for (let i = 0; i < 90; i++) {
    const a = await (await fetch(BASE + "/api/v1/alerts?host=web-03&kind=host_silent&state=open")).json();
    if ((a.alerts || []).length) break;
    await sleep(2000);
  }
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
  await over.scrollIntoViewIfNeeded();
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

// ---- triage at 1440 px: the fleet's filter, label column and chip order,
// the alerts list grouped by host
const SEV = { critical: 2, warning: 1, info: 0 };
async function triage() {
  const page = await newPage(1440);
  const fleet = await (await fetch(BASE + "/api/v1/fleet?window=3600")).json();
  await page.goto(BASE + "/#/fleet");
  await until(page, () => document.querySelectorAll("#fleet-table tbody tr[data-host]").length >= 5);
  const shownHosts = () => page.$$eval("#fleet-table tbody tr[data-host]", (t) => t.map((x) => x.dataset.host).sort().join());
  const filterBy = async (q) => {
    await page.fill("#fleet-filter", q);
    await until(page, (v) => location.hash.includes("q=" + encodeURIComponent(v)), q, 3000);
    await sleep(300);
    return shownHosts();
  };
  const withAlert = (pred) => fleet.hosts.filter((x) => [...(x.open_alerts || []), ...(x.resolved_alerts || [])].some(pred)).map((x) => x.host).sort().join();
  const byKind = await filterBy("oom_kill");
  check("the fleet filter matches an alert's kind (an ended one too)", byKind === withAlert((a) => a.kind === "oom_kill") && byKind.includes("oom-03"), byKind);
  const byCg = await filterBy("vmscope-rec-filethrash");
  check("the fleet filter matches an alert's cgroup", byCg === "rec-07", byCg);
  await filterBy("");
  // an OOM kill, then the host went silent: the kill is the chip, as the cause
  let oomChip = null;
  for (let i = 0; i < 30 && !oomChip; i++) {
    const f = await (await fetch(BASE + "/api/v1/fleet?window=3600")).json();
    const o = f.hosts.find((x) => x.host === "oom-03");
    if (o && (o.open_alerts || []).some((a) => a.kind === "host_silent")) {
      await page.goto(BASE + "/#/fleet?q=oom-03");
      // found and read in one step: the fleet's refresh rebuilds the table
      // between two separate steps
      oomChip = await page.waitForFunction(() => {
        const c = document.querySelector('#fleet-table tr[data-host="oom-03"] .alerts-cell .chip');
        return c && { text: c.textContent, title: c.title, cls: c.className };
      }, null, { timeout: 15000 }).then((h) => h.jsonValue(), () => null);
    } else await sleep(2000);
  }
  check("a host silent after an OOM kill: the chip reads \"oom_kill → silent · age\", not struck through", !!oomChip &&
    /^oom_kill \u2192 silent · \d+[smhd]$/.test(oomChip.text) && /then the host went silent/.test(oomChip.title) && !/resolved/.test(oomChip.cls), JSON.stringify(oomChip));
  // a silenced alert: marked on the fleet's chip and the host view's strip
  const silRes = await fetch(BASE + "/api/v1/silences", { method: "POST", headers: { Authorization: "Bearer " + ADMIN, "Content-Type": "application/json" },
    body: JSON.stringify({ host: "rec-07", kind: "thrash", duration_s: 600, comment: "views test" }) });
  const silence = await silRes.json();
  await page.goto(BASE + "/#/fleet?q=rec-07");
  await until(page, () => document.querySelector('#fleet-table tr[data-host="rec-07"] .alerts-cell .chip'));
  const silChips = await page.$$eval('#fleet-table tr[data-host="rec-07"] .alerts-cell .chip', (cs) => cs.map((c) => ({ cls: c.className, title: c.title, id: c.dataset.alertId })));
  const thrashChip = silChips.find((c) => c.id === String(thrash?.id)) || silChips.find((c) => /more/.test(c.cls));
  check("a silenced alert's fleet chip is marked silenced", silRes.status === 201 && !!thrashChip &&
    (thrashChip.id ? /silenced/.test(thrashChip.cls) && /silenced/.test(thrashChip.title) : /silenced: thrash/.test(thrashChip.title)), JSON.stringify(silChips));
  await page.goto(BASE + "/#/host/rec-07?range=1h");
  await until(page, () => document.querySelector('#alert-strip a.chip[data-alert-id]'), undefined, 20000);
  const strip = await page.$$eval("#alert-strip a.chip", (cs) => cs.map((c) => ({ cls: c.className, title: c.title, id: c.dataset.alertId })));
  check("and on the host view's alert strip", strip.some((c) => c.id === String(thrash?.id) && /silenced/.test(c.cls) && /silenced/.test(c.title)), JSON.stringify(strip));
  await fetch(BASE + "/api/v1/silences/" + silence.id, { method: "DELETE", headers: { Authorization: "Bearer " + ADMIN } });
  await page.goto(BASE + "/#/fleet");
  await until(page, () => document.querySelectorAll("#fleet-table tbody tr[data-host]").length >= 5);
  // the label column: the one label the user chose, kept in the hash
  await page.selectOption("#fleet-label", "role");
  const lab = await page.evaluate(() => ({
    head: [...document.querySelectorAll("#fleet-table thead th")].map((t) => t.textContent).find((t) => /^Label/.test(t)),
    cells: Object.fromEntries([...document.querySelectorAll("#fleet-table tr[data-host]")].map((tr) => [tr.dataset.host, tr.querySelector("td.labels").textContent])),
    hash: location.hash,
  }));
  const wantRole = Object.fromEntries(fleet.hosts.map((x) => [x.host, x.labels?.role]));
  check("the label column shows the label chosen, its values only, and the hash keeps it", /role/.test(lab.head || "") && /label=role/.test(lab.hash) &&
    Object.entries(lab.cells).every(([hst, v]) => (wantRole[hst] ? v === wantRole[hst] : !/=/.test(v))) && Object.values(wantRole).some(Boolean), JSON.stringify(lab));
  await page.reload();
  await until(page, () => document.querySelectorAll("#fleet-table tbody tr[data-host]").length >= 5);
  check("the label column chosen survives a reload", (await page.$eval("#fleet-label", (e) => e.value)) === "role");
  await page.selectOption("#fleet-label", "");
  // the chips: worst severity first, then the oldest; the ended last
  const first = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll("#fleet-table tr[data-host]")].map((tr) =>
    [tr.dataset.host, tr.querySelector(".alerts-cell .chip")?.dataset.alertId || null])));
  // (worst first; among equals the newest trouble leads, then by kind)
  // (but a worse alert that ended up to 10 min before the host went silent leads: its cause)
  const order = (x) => {
    const open = [...(x.open_alerts || [])].sort((p, q) => (SEV[q.severity] || 0) - (SEV[p.severity] || 0) || (q.started_at_ts - p.started_at_ts) ||
      p.kind.localeCompare(q.kind));
    const ended = [...(x.resolved_alerts || [])].sort((p, q) => (q.ended_at_ts || 0) - (p.ended_at_ts || 0));
    const sil = open.find((a) => a.kind === "host_silent");
    const cause = sil && ended.find((a) => (SEV[a.severity] || 0) > (SEV[sil.severity] || 0) && a.ended_at_ts <= sil.started_at_ts + 60 &&
      a.ended_at_ts >= sil.started_at_ts - 600);
    return cause ? [cause, ...open, ...ended.filter((a) => a !== cause)] : open.concat(ended);
  };
  const bad = fleet.hosts.filter((x) => { const o = order(x); return String(o[0]?.id ?? null) !== String(first[x.host]); });
  const firstSev = (x) => order(x)[0];
  check("the first chip is the worst open alert, the newest among equals",
    !bad.length && fleet.hosts.filter((x) => (x.open_alerts || []).length > 0).length >= 2 &&
    fleet.hosts.every((x) => !(x.open_alerts || []).length || (x.open_alerts || []).every((a) => (SEV[a.severity] || 0) <= (SEV[firstSev(x).severity] || 0))),
    JSON.stringify(bad.map((x) => [x.host, first[x.host], order(x).map((a) => [a.id, a.severity, a.started_at_ts])])));

  // the alerts list: open alerts by default, grouped by host, worst first,
  // explanations folded, a screen holds many
  const openAns = await (await fetch(BASE + "/api/v1/alerts?state=open&limit=500")).json();
  await page.goto(BASE + "/#/alerts");
  await until(page, () => document.querySelectorAll("#alert-list .alert").length >= 1);
  const al = await page.evaluate(() => ({
    state: document.getElementById("alert-state").value,
    groups: [...document.querySelectorAll("#alert-list .host-group")].map((g) => ({ host: g.dataset.host,
      alerts: [...g.querySelectorAll(".alert")].map((a) => ({ id: a.dataset.alertId, state: a.dataset.state, h: a.getBoundingClientRect().height,
        folded: a.querySelector(".details").hidden })) })),
  }));
  const byId = Object.fromEntries(openAns.alerts.map((a) => [String(a.id), a]));
  const flat = al.groups.flatMap((g) => g.alerts.map((a) => ({ ...a, host: g.host, api: byId[a.id] })));
  const cmp = (p, q) => (SEV[q.severity] || 0) - (SEV[p.severity] || 0) || Date.parse(q.started_at) - Date.parse(p.started_at) ||
    p.host.localeCompare(q.host) || p.kind.localeCompare(q.kind);
  const groupsSorted = al.groups.every((g, i) => i === 0 || cmp(byId[al.groups[i - 1].alerts[0].id], byId[g.alerts[0].id]) <= 0);
  const withinSorted = al.groups.every((g) => g.alerts.every((a, i) => i === 0 || cmp(byId[g.alerts[i - 1].id], byId[a.id]) <= 0));
  check("alerts: open ones only by default, every open alert listed", al.state === "open" && flat.length === openAns.alerts.length &&
    flat.every((a) => a.state === "open" && a.api), JSON.stringify([al.state, flat.length, openAns.alerts.length]));
  check("alerts: one group per host, each alert in its host's group", new Set(al.groups.map((g) => g.host)).size === al.groups.length &&
    flat.every((a) => a.api.host === a.host) && al.groups.some((g) => g.alerts.length >= 2), JSON.stringify(al.groups.map((g) => [g.host, g.alerts.length])));
  check("alerts: groups and the alerts in each by severity, then the newest first", groupsSorted && withinSorted,
    JSON.stringify(al.groups.map((g) => g.alerts.map((a) => [a.id, byId[a.id]?.severity, byId[a.id]?.started_at]))));
  check("alerts: compact (explanations folded, rows under 40 px: 20 a screen)", flat.every((a) => a.folded && a.h < 40), JSON.stringify(flat.map((a) => a.h)));
  const id0 = flat[0].id;
  await page.click(`#alert-list .alert[data-alert-id="${id0}"] button.more-btn`);
  const opened = await page.$eval(`#alert-list .alert[data-alert-id="${id0}"]`, (a) => ({ shown: !a.querySelector(".details").hidden,
    expanded: a.querySelector(".more-btn").getAttribute("aria-expanded"), text: a.querySelector(".details").textContent.length }));
  await page.click(`#alert-list .alert[data-alert-id="${id0}"] button.more-btn`);
  const closed = await page.$eval(`#alert-list .alert[data-alert-id="${id0}"] .details`, (d) => d.hidden);
  check("alerts: an explanation opens and folds again from its button", opened.shown && opened.expanded === "true" && opened.text > 100 && closed, JSON.stringify([opened, closed]));
  await page.screenshot({ path: `${OUT}/views-alerts-grouped-1440.png`, fullPage: true });
  // a list cut at its limit says so (limit=3 here; 5,000 by default)
  await page.goto(BASE + "/#/alerts?state=all&limit=3");
  await until(page, () => document.querySelectorAll("#alert-list .alert").length >= 1 && /alerts/.test(document.getElementById("alert-count").textContent));
  const cutList = await page.evaluate(() => ({ n: document.querySelectorAll("#alert-list .alert").length, count: document.getElementById("alert-count").textContent }));
  check("alerts: a list cut at its limit says it is cut and how to narrow it", cutList.n === 3 && /newest 3 alerts only .*narrow/.test(cutList.count), JSON.stringify(cutList));

  // a cgroup whose first figure is folded (the OOM-killed cgroup had no
  // refaults): the charts still fill their cards, also after a refresh
  const oom = ((await (await fetch(BASE + "/api/v1/alerts?host=oom-03&kind=oom_kill&state=all")).json()).alerts || [])[0];
  const { alertLink } = await import("../../web/js/alerts.js");
  await page.goto(BASE + "/" + alertLink(oom));
  await until(page, () => document.getElementById("view").dataset.loaded && document.querySelectorAll(".chart .uplot").length >= 3, undefined, 20000);
  const widths = () => page.evaluate(() => ({
    firstFolded: document.querySelector('[data-section="cgroup"] .chart')?.offsetParent === null,
    charts: [...document.querySelectorAll(".chart")].filter((c) => c.offsetParent !== null && c.querySelector(".uplot"))
      .map((c) => [c.dataset.fig, c.clientWidth, Math.round(c.querySelector(".uplot").getBoundingClientRect().width)]),
  }));
  const w1 = await widths();
  await page.click("#refresh-now");
  await sleep(1500);
  await until(page, () => document.getElementById("view").dataset.loaded);
  const w2 = await widths();
  const fills = (w) => w.charts.length >= 3 && w.charts.every(([, card, plot]) => plot >= card - 40);
  check("a cgroup whose first chart is folded: every chart fills its card, after a refresh too",
    oom && w1.firstFolded && fills(w1) && fills(w2), JSON.stringify([oom?.cgroup, w1, w2]));
  await page.screenshot({ path: `${OUT}/views-host-oom-1440.png`, fullPage: true });

  // a silent host's view: marked silent, its legend names the last sample's time
  await page.goto(BASE + "/#/host/web-03?range=1h");
  await until(page, () => document.getElementById("view").dataset.loaded && document.querySelector(".chart .uplot"), undefined, 20000);
  const sil = await page.evaluate(() => ({ seen: document.getElementById("host-seen")?.textContent,
    legend: document.querySelector('.chart[data-fig="refaults"] .u-legend .u-series td')?.textContent }));
  check("a silent host's view: \"silent since\" in its header, \"last sample HH:MM:SS\" in its legends, not \"latest\"",
    /silent since \d\d:\d\d:\d\d/.test(sil.seen || "") && /^last sample \d\d:\d\d:\d\d$/.test(sil.legend || ""), JSON.stringify(sil));

  // light theme: every badge at 4.5:1 in the page as drawn
  await page.goto(BASE + "/#/fleet");
  await until(page, () => document.querySelectorAll("#fleet-table tbody tr[data-host]").length >= 5);
  const lowBadges = await page.evaluate(() => {
    const rgb = (s) => (s.match(/\d+(\.\d+)?/g) || []).slice(0, 3).map(Number);
    const lum = (c) => { const v = c.map((x) => x / 255).map((x) => (x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4)); return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
    const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
    const badges = [...document.querySelectorAll(".badge, .chip")];
    return { n: badges.length, low: badges.map((b) => { const s = getComputedStyle(b); return [b.className, b.textContent, ratio(rgb(s.color), rgb(s.backgroundColor))]; }).filter((b) => b[2] < 4.5) };
  });
  check("light theme: every badge and chip at 4.5:1 or more", lowBadges.n >= 5 && !lowBadges.low.length, JSON.stringify(lowBadges));
  await page.context().close();
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
  const fleetReqs = [];
  page.on("request", (r) => { if (r.url().includes("/api/v1/fleet")) fleetReqs.push(Date.now()); });
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
  // retried with backoff: each wait longer than the one before (2, 4, 8 s)
  const down = fleetReqs.length;
  await sleep(15000);
  const gaps = fleetReqs.slice(Math.max(0, down - 1)).map((t, i, a) => (i ? t - a[i - 1] : 0)).slice(1);
  check("server stopped: the fleet retries by itself, with growing waits", gaps.length >= 2 && gaps.length <= 4 &&
    gaps.every((g, i) => i === 0 || g > gaps[i - 1] * 1.5), JSON.stringify(gaps));
  // a view opened while the server is away
  await page.evaluate(() => { location.hash = "#/alerts"; });
  const nothing = await until(page, () => /nothing loaded yet/.test(document.getElementById("stale-banner")?.textContent || ""), undefined, 10000);
  check("a view opened during the outage says nothing is loaded yet", nothing, await page.evaluate(bannerText));
  s = await startServer(port, SERVER_DB, WEB_DIR);
  const back = await until(page, () => document.getElementById("stale-banner")?.hidden !== false && document.querySelectorAll("#alert-list .alert").length >= 1 &&
    !document.getElementById("view").classList.contains("stale"), undefined, 60000);
  check("the server back: the alerts view loads by itself and the banner goes", back,
    await page.evaluate(() => location.hash + " | " + (document.getElementById("stale-banner")?.textContent || "no banner") + " | " + document.getElementById("view").textContent.slice(0, 200)));
  // the alerts view loaded, then the server gone: the list and counts stay, greyed
  const before = await page.evaluate(() => ({ n: document.querySelectorAll("#alert-list .alert").length, count: document.getElementById("alert-count")?.textContent }));
  await stopServer(s);
  const alStale = await until(page, () => { const b = document.getElementById("stale-banner"); return !!b && !b.hidden && /data as of/.test(b.textContent); },
    undefined, 20000);
  const alKept = await page.evaluate(() => ({ n: document.querySelectorAll("#alert-list .alert").length, count: document.getElementById("alert-count")?.textContent,
    grey: getComputedStyle(document.querySelector(".alert-list")).filter }));
  check("server stopped: the alerts view keeps its list and counts, greyed, \"data as of\"", alStale && before.n >= 1 && alKept.n === before.n &&
    alKept.count === before.count && /grayscale/.test(alKept.grey), JSON.stringify([before, alKept]));
  // a host view: "last seen" counts on and is greyed in an outage
  s = await startServer(port, SERVER_DB, WEB_DIR);
  await page.evaluate(() => { location.hash = "#/host/db-07?range=1h"; });
  await until(page, () => document.getElementById("view").dataset.loaded && /last seen/.test(document.getElementById("host-seen")?.textContent || "") &&
    document.getElementById("stale-banner")?.hidden !== false, undefined, 60000);
  const seen0 = await page.$eval("#host-seen", (e) => e.textContent);
  await stopServer(s);
  await until(page, () => { const b = document.getElementById("stale-banner"); return !!b && !b.hidden; }, undefined, 20000);
  await sleep(2100);
  const hs = await page.evaluate(() => ({ seen: document.getElementById("host-seen").textContent,
    grey: getComputedStyle(document.querySelector(".facts")).filter, charts: getComputedStyle(document.querySelector(".charts")).filter }));
  const secs = (t) => { const m = t.match(/(?:(\d+) min)?\s*(?:(\d+) s)? ago/); return m ? Number(m[1] || 0) * 60 + Number(m[2] || 0) : -1; };
  check("server stopped: the host view's \"last seen\" counts on, greyed with its charts", secs(hs.seen) > secs(seen0) && secs(seen0) >= 0 &&
    /grayscale/.test(hs.grey) && /grayscale/.test(hs.charts), JSON.stringify([seen0, hs]));
  await page.screenshot({ path: `${OUT}/views-host-stale-1440.png` });
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

// PARTS (for a run by hand): a comma list of views, interactions, triage, outages, vendor
const PARTS = (process.env.PARTS || "views,interactions,triage,outages,vendor").split(",");
await run(async () => {
  if (PARTS.includes("views")) for (const w of [1280, 1440, 1920]) await views(w);
  if (PARTS.includes("interactions")) await interactions();
  if (PARTS.includes("triage")) await triage();
  if (PARTS.includes("outages")) await outages();
  if (PARTS.includes("vendor")) await missingVendor();
});
