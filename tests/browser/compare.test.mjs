// compare.test.mjs - the compare page (web/js/compare.js) in a real headless
// Chromium against the real server holding tests/browser/compare_hosts.py's
// replayed hosts: 5 healthy hosts on kernel KA, 5 writeback hosts on kernel
// KB, one idle host on a third kernel. Run by tests/test_compare_page.sh.
// Checks: reachable from the fleet view and the nav; the groups listed with
// host counts; choosing A and B draws the table the API answered (one row per
// figure, its verdict, its p-value); the writeback group's figures marked
// worse (red) with a significance mark; not-significant changes grey; no NaN;
// distribution plots drawn; swap, window, group by label, label filter and an
// empty group ("—"). Every request outside 127.0.0.1 is blocked and counted.
// Prints "N passed, N failed"; exits 1 on a failure.
//
// env: VMSCOPE_URL, OUT (screenshots), CHROMIUM, CMP_A, CMP_B (kernels),
//      CMP_WORSE (figure names that must all be marked worse, B against A)
import { session } from "./harness.mjs";
import { mkdirSync } from "node:fs";
import { zeroBoth } from "../../web/js/comparefmt.js";

const BASE = process.env.VMSCOPE_URL;
const OUT = process.env.OUT || "tests/out";
const KA = process.env.CMP_A || "6.1.0-13-amd64";
const KB = process.env.CMP_B || "6.6.0-3-amd64";
const WORSE = (process.env.CMP_WORSE || "immediate_reclaim,psi_memory_some").split(",");
if (!BASE) {
  console.error("VMSCOPE_URL is not set");
  process.exit(2);
}
mkdirSync(OUT, { recursive: true });

const { page, check, until, run } = await session();
// every compare answer the page got: {url, body}
const answers = [];
page.on("response", async (r) => {
  const u = new URL(r.url());
  if (!u.pathname.endsWith("/api/v1/compare")) return;
  try { answers.push({ url: u, status: r.status(), body: await r.json() }); } catch (_) { /* aborted */ }
});
// the first compare answer from answers[mark] on that pred accepts, waiting up to ms
async function answerAfter(mark, pred, ms = 15000) {
  for (let t = 0; t < ms; t += 100) {
    const x = answers.slice(mark).find(pred);
    if (x) return x;
    await page.waitForTimeout(100);
  }
  return null;
}
const isTable = (x) => x.url.searchParams.get("a") !== null;
const isList = (x) => x.url.searchParams.get("a") === null;

const loaded = () => until(() => document.getElementById("view").dataset.loaded === "1");
const isRed = (c) => { const [r, g, b] = c.match(/\d+/g).map(Number); return r > 140 && g < 90 && b < 90; };
const isGreen = (c) => { const [r, g, b] = c.match(/\d+/g).map(Number); return g > 90 && r < 90 && b < 90; };
// grey: no hue, and lighter than the body text (but dark enough to read: 4.5:1)
const isGrey = (c) => { const [r, g, b] = c.match(/\d+/g).map(Number); return Math.max(r, g, b) - Math.min(r, g, b) < 30 && r > 70; };

// The table as the page shows it.
const readRows = () => page.$$eval("#cmp-table tbody tr[data-fig]", (trs) => trs.map((t) => ({
  fig: t.dataset.fig, verdict: t.dataset.verdict, sig: t.dataset.significant,
  text: t.textContent,
  cells: [...t.querySelectorAll("td")].map((td) => td.textContent),
  p: t.querySelector("td.p").textContent,
  mark: t.querySelector("td.verdict").textContent,
  markColor: getComputedStyle(t.querySelector("td.verdict span")).color,
  chg: [...t.querySelectorAll("td.chg")].map((td) => ({ cls: td.dataset.chg, color: getComputedStyle(td).color, text: td.textContent })),
  bars: { a: t.querySelectorAll("svg.dist rect.bar-a").length, b: t.querySelectorAll("svg.dist rect.bar-b").length },
})));

async function test() {
  // ---- reachable from the fleet view
  await page.goto(BASE + "/#/fleet");
  check("fleet view has a compare kernels link", await until(() => document.getElementById("fleet-compare")));
  await page.click("#fleet-compare");
  check("the link opens the compare view by kernel", await until(() => location.hash.startsWith("#/compare") && location.hash.includes("group_by=kernel")));
  check("the nav marks Compare", await until(() => document.querySelector('header nav a[data-nav="compare"]')?.classList.contains("active")));

  // ---- the groups listed with their host counts
  const list = await answerAfter(0, isList);
  check("the compare view loads", await loaded());
  const groups = list?.body?.groups || [];
  const opts = await page.$$eval("#cmp-a option", (os) => os.map((o) => ({ v: o.value, t: o.textContent })));
  check("the listing call found the two kernels", [KA, KB].every((k) => groups.some((g) => g.value === k)), JSON.stringify(groups));
  check("A's picker lists every group with its host count",
    groups.length >= 2 && groups.every((g) => opts.some((o) => o.v === g.value && o.t.includes(`(${g.hosts} host`))),
    JSON.stringify(opts));
  check("5 hosts in each kernel group", groups.filter((g) => g.value === KA || g.value === KB).every((g) => g.hosts === 5), JSON.stringify(groups));

  // ---- choose A and B: the table (A first set to the idle host's kernel, then to KA)
  let mark = answers.length;
  await page.selectOption("#cmp-a", "5.10.0-28-amd64");
  const idle = await answerAfter(mark, (x) => isTable(x) && x.url.searchParams.get("a") === "5.10.0-28-amd64");
  check("choosing A asks for that comparison and titles the table with it", idle && await until(() =>
    document.querySelector("#cmp-table th.grp.a")?.textContent === "A: 5.10.0-28-amd64"));
  await page.selectOption("#cmp-a", KA);
  await page.selectOption("#cmp-b", KB);
  check("the hash keeps A and B", await until(([a, b]) => {
    const q = new URLSearchParams(location.hash.split("?")[1]);
    return q.get("a") === a && q.get("b") === b;
  }, [KA, KB]));
  const ans = await answerAfter(0, (x) => isTable(x) && x.url.searchParams.get("a") === KA && x.url.searchParams.get("b") === KB);
  const tableOk = await loaded() && await until(([a, b]) => document.querySelector("#cmp-table th.grp.b")?.textContent === "B: " + b &&
    document.querySelector("#cmp-table th.grp.a")?.textContent === "A: " + a, [KA, KB]);
  check("choosing A and B shows the table", tableOk);
  // a row per figure of the answer, in its order, but those 0 in both
  // groups: named under the table instead
  const all = ans?.body?.figures || [];
  const figs = all.filter((f) => !zeroBoth(f)), zero = all.filter(zeroBoth);
  const rows = await readRows();
  check("one row per figure of the API's answer that is not 0 in both groups, in its order", rows.length >= 8 && rows.map((r) => r.fig).join() === figs.map((f) => f.name).join(),
    `${rows.length} rows, ${all.length} figures, ${zero.length} zero in both`);
  const zeroNote = await page.$eval("#cmp-zero", (e) => e.textContent).catch(() => "");
  check("the figures 0 in both groups are named under the table", zero.length > 0 && zero.every((f) => zeroNote.includes(f.label)), zeroNote);
  const byName = Object.fromEntries(rows.map((r) => [r.fig, r]));
  check("every row shows the server's verdict and significance", figs.every((f) => byName[f.name]?.verdict === (f.verdict === "worse" || f.verdict === "better" ? f.verdict : "same") &&
    byName[f.name]?.sig === (f.significant ? "1" : "0")));
  check("no NaN, undefined or Infinity in the table", rows.every((r) => !/NaN|undefined|Infinity/.test(r.text)), rows.map((r) => r.text).join(" | ").slice(0, 300));
  const worseRows = rows.filter((r) => r.verdict === "worse" && r.sig === "1");
  check("the writeback group is marked worse on " + WORSE.join(", "), WORSE.every((n) => byName[n]?.verdict === "worse" && byName[n]?.sig === "1"),
    JSON.stringify(figs.filter((f) => WORSE.includes(f.name)).map((f) => [f.name, f.verdict, f.test?.p, f.a?.mean, f.b?.mean])));
  check("and better on nothing", rows.every((r) => r.verdict !== "better"), rows.filter((r) => r.verdict === "better").map((r) => r.fig).join());
  check("a worse figure is marked worse in red with a significance mark", worseRows.length > 0 &&
    worseRows.every((r) => /^worse \*{1,3}$/.test(r.mark) && isRed(r.markColor)), JSON.stringify(worseRows.map((r) => [r.fig, r.mark, r.markColor])));
  check("its change cells are red", worseRows.length > 0 && worseRows.every((r) => r.chg.some((c) => c.cls === "worse" && isRed(c.color))),
    JSON.stringify(worseRows.map((r) => r.chg)));
  const every = rows.flatMap((r) => r.chg.map((c) => ({ ...c, fig: r.fig, sig: r.sig })));
  check("changes of not-significant figures are grey", every.filter((c) => c.sig === "0" && c.cls !== "none").every((c) => c.cls === "ns" && isGrey(c.color)),
    JSON.stringify(every.filter((c) => c.sig === "0").slice(0, 4)));
  check("better changes green, worse red", every.filter((c) => c.cls === "better").every((c) => isGreen(c.color)) &&
    every.filter((c) => c.cls === "worse").every((c) => isRed(c.color)));
  const pOk = figs.every((f) => {
    const p = f.test?.p, shown = byName[f.name]?.p;
    if (p === null || p === undefined) return shown === "\u2014";
    return p < 0.001 ? shown === "<0.001" : Math.abs(Number(shown) - p) <= 0.0006 || (p >= 0.9995 && shown === "1");
  });
  check("p-values as the server computed them", pOk, JSON.stringify(figs.map((f) => [f.name, f.test?.p, byName[f.name]?.p])));
  const withHist = figs.filter((f) => f.hist && f.hist.a?.some((x) => x > 0) && f.hist.b?.some((x) => x > 0));
  check("distribution plots: A and B bars in rows with a histogram", withHist.length > 0 &&
    withHist.every((f) => byName[f.name].bars.a > 0 && byName[f.name].bars.b > 0), JSON.stringify(withHist.map((f) => [f.name, byName[f.name]?.bars])));
  // A and B told apart in the plots without colour alone: A filled, B outlined
  const barStyle = await page.evaluate(() => {
    const st = (sel) => { const e = document.querySelector(sel); if (!e) return null; const s = getComputedStyle(e); return { fill: s.fill, op: s.fillOpacity, stroke: s.stroke, sw: s.strokeWidth }; };
    return { a: st("svg.dist rect.bar-a"), b: st("svg.dist rect.bar-b") };
  });
  check("distribution plots: A and B differ in colour and in fill (A solid, B outlined)",
    barStyle.a && barStyle.b && barStyle.a.fill !== barStyle.b.fill && Number(barStyle.a.op) >= 2 * Number(barStyle.b.op) &&
    barStyle.b.stroke !== "none" && parseFloat(barStyle.b.sw) > 0, JSON.stringify(barStyle));
  // grey "not significant" text readable: 4.5:1 against what is behind it
  const nsContrast = await page.evaluate(() => {
    const rgb = (s) => (s.match(/[\d.]+/g) || []).map(Number);
    const lum = (c) => { const v = c.slice(0, 3).map((x) => x / 255).map((x) => (x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4)); return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
    const bgOf = (e) => { for (; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor); if (c.length === 3 || (c.length === 4 && c[3] > 0.5)) return c; } return [255, 255, 255]; };
    return [...document.querySelectorAll("#cmp-table td.chg-ns, #cmp-table td.verdict .muted, #cmp-table td.fig .unit")].filter((e) => e.textContent.trim()).map((e) => {
      const [x, y] = [lum(rgb(getComputedStyle(e).color)), lum(bgOf(e))].sort((p, q) => q - p);
      return Math.round(((x + 0.05) / (y + 0.05)) * 100) / 100;
    });
  });
  check("grey \"not significant\" text at 4.5:1 or more", nsContrast.length > 0 && nsContrast.every((r) => r >= 4.5), JSON.stringify(nsContrast.slice(0, 12)));
  // a row opens the hosts that drive it, each linked to its host view over the window
  const drv = figs.find((f) => WORSE.includes(f.name) && f.hosts_top);
  await page.click(`#cmp-table tr[data-fig="${drv?.name}"] button.drivers-btn`);
  const drvOk = await until((n) => document.querySelector(`#cmp-table tr.drivers-row[data-drivers-of="${n}"]`), drv?.name);
  const drvLinks = await page.$$eval(`#cmp-table tr.drivers-row[data-drivers-of="${drv?.name}"] .drivers`, (ds) =>
    Object.fromEntries(ds.map((d) => [d.classList.contains("a") ? "a" : "b", [...d.querySelectorAll("a")].map((x) => x.getAttribute("href"))])));
  const wantHosts = (side) => (drv?.hosts_top?.[side] || []).map((x) => x.host);
  const linkHost = (href) => decodeURIComponent(href.replace(/^#\/host\/([^?]*).*$/, "$1"));
  check("a row opens the hosts that drive it in A and B, linked to their host views over the window", drvOk &&
    ["a", "b"].every((sd) => wantHosts(sd).length > 0 && (drvLinks[sd] || []).map(linkHost).join() === wantHosts(sd).join() &&
      drvLinks[sd].every((href) => /[?&]from=\d+&to=\d+/.test(href))) &&
    await page.$eval(`#cmp-table tr[data-fig="${drv?.name}"] button.drivers-btn`, (b) => b.getAttribute("aria-expanded")) === "true",
    JSON.stringify([drv?.name, drv?.hosts_top, drvLinks]));
  check("the caption names the test and its unit", await page.$eval("#cmp-caption", (e) => /Mann.Whitney U/.test(e.textContent) && /host as the unit/.test(e.textContent)));
  check("the summary gives the host counts", await page.$eval("#cmp-summary", (e, [a, b]) => e.textContent.includes(a + " (5 hosts)") && e.textContent.includes(b + " (5 hosts)"), [KA, KB]));
  await page.screenshot({ path: OUT + "/dashboard-compare.png", fullPage: true });

  // ---- swap: B's worse becomes A's better
  const swapName = worseRows[0]?.fig;
  await page.click("#cmp-swap");
  const swapped = await until(([a, b, n]) => document.querySelector("#cmp-table th.grp.a")?.textContent === "A: " + b &&
    document.querySelector(`#cmp-table tr[data-fig="${n}"]`)?.dataset.verdict === "better", [KA, KB, swapName]);
  check("swap exchanges A and B and a worse figure turns better (green)", swapped &&
    await page.$eval(`#cmp-table tr[data-fig="${swapName}"] td.verdict span`, (e) => getComputedStyle(e).color).then(isGreen));
  await page.click("#cmp-swap");
  await until(([a]) => document.querySelector("#cmp-table th.grp.a")?.textContent === "A: " + a, [KA]);
  await loaded();

  // ---- window picker
  mark = answers.length;
  await page.click('#cmp-range button[data-range="6h"]');
  const sixSpan = (x) => Number(x.url.searchParams.get("until")) - Number(x.url.searchParams.get("since"));
  const six = await answerAfter(mark, (x) => isTable(x) && sixSpan(x) < 86400000);
  const span = six ? sixSpan(six) : 0;
  check("the hash keeps the window", await until(() => location.hash.includes("range=6h")));
  check("window 6h asks for 6 hours", six && Math.abs(span - 21600000) < 5000, "span " + span);

  // ---- label filter: only role=db hosts (the idle 5.10 host is role=web)
  mark = answers.length;
  await page.selectOption("#cmp-label", "role:db");
  const lf = await answerAfter(mark, isList);
  await until(() => location.hash.includes("label=role%3Adb"));
  await loaded();
  check("label filter sent and the web host's kernel dropped from the groups",
    lf && lf.url.searchParams.get("label") === "role:db" && !lf.body.groups.some((g) => g.value === "5.10.0-28-amd64") &&
    (await page.$$eval("#cmp-a option", (os) => os.map((o) => o.value))).every((v) => v !== "5.10.0-28-amd64"),
    JSON.stringify(lf?.body));
  await page.selectOption("#cmp-label", "");
  await loaded();

  // ---- group by a label
  const gbOpts = await page.$$eval("#cmp-group-by option", (os) => os.map((o) => o.value));
  check("group by offers kernel and the hosts' label keys", ["kernel", "label:role", "label:rollout"].every((v) => gbOpts.includes(v)), gbOpts.join(","));
  mark = answers.length;
  await page.selectOption("#cmp-group-by", "label:rollout");
  const rl = await answerAfter(mark, isList);
  await until(() => document.querySelectorAll("#cmp-a option").length >= 3 && document.getElementById("view").dataset.loaded === "1");
  const ropts = await page.$$eval("#cmp-a option", (os) => os.map((o) => o.textContent));
  check("group by label:rollout lists base (6 hosts) and canary (5 hosts)",
    rl && rl.url.searchParams.get("group_by") === "label:rollout" && ropts.includes("base (6 hosts)") && ropts.includes("canary (5 hosts)"), ropts.join(","));
  await until(() => document.querySelectorAll("#cmp-table tbody tr[data-fig]").length > 0);
  check("two label groups picked by default and compared", await page.$eval("#cmp-summary", (e) => e.textContent.includes("base (6 hosts)") && e.textContent.includes("canary (5 hosts)")));

  // ---- an empty group: dashes, a notice, no NaN
  await page.goto(BASE + "/#/compare?group_by=kernel&a=" + encodeURIComponent(KA) + "&b=9.9.9-none");
  await loaded();
  await until(() => document.querySelectorAll("#cmp-table tbody tr[data-fig]").length > 0);
  const empty = await readRows();
  check("an empty group B: its statistics and the changes are dashes", empty.length > 0 &&
    empty.every((r) => r.cells.slice(5, 13).every((c) => c === "\u2014")), JSON.stringify(empty[0]?.cells));
  check("an empty group: no NaN, a notice", empty.every((r) => !/NaN|undefined|Infinity/.test(r.text)) &&
    await page.$eval("#cmp-body", (e) => /has no host with samples/.test(e.textContent)));
  check("the empty group is still in the picker with 0 hosts", (await page.$$eval("#cmp-b option", (os) => os.map((o) => o.textContent))).includes("9.9.9-none (0 hosts)"));

  // ---- the Compare nav link
  await page.goto(BASE + "/#/alerts");
  await page.click('header nav a[data-nav="compare"]');
  check("the nav link opens the compare view", await until(() => location.hash.startsWith("#/compare") && document.getElementById("cmp-table")));
}

await run(test);
