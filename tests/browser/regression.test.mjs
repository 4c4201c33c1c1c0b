// regression.test.mjs - the kernel-regression banner (web/js/regression.js)
// and what it links to, in a real headless Chromium against the real server
// of tests/e2e/test_regression.sh while the watch's kernel_regression alert
// about release REG_B (against REG_A) is open. Checks: the fleet view shows
// the alert's summary as a banner above the table; its link opens the
// compare page of the pair with exactly the alert's worse figures marked,
// each of them worse there too; the alerts view shows the alert "on the
// fleet", grouped under the fleet rather than a host, with a link to the
// same comparison and its figures in its details; no console error; no request
// outside 127.0.0.1. Prints "N passed, N failed"; exits 1 on a failure.
//
// env: VMSCOPE_URL, OUT (screenshots), CHROMIUM, REG_A, REG_B, REG_MARK
//      (the figure names of the alert's evidence, comma separated)
import { session } from "./harness.mjs";
import { mkdirSync } from "node:fs";

const BASE = process.env.VMSCOPE_URL;
const OUT = process.env.OUT || "tests/out";
const A = process.env.REG_A, B = process.env.REG_B;
const MARK = (process.env.REG_MARK || "").split(",").filter(Boolean).sort();
if (!BASE || !A || !B || !MARK.length) {
  console.error("VMSCOPE_URL, REG_A, REG_B and REG_MARK must be set");
  process.exit(2);
}
mkdirSync(OUT, { recursive: true });

const { page, check, until, run } = await session();

async function test() {
  // ---- the banner above the fleet table
  await page.goto(BASE + "/#/fleet");
  check("the fleet view shows a kernel-regression banner",
    await until(() => document.querySelector("#fleet-regressions .regress-banner a") && document.querySelector("#fleet-table tbody tr[data-host]")));
  const banner = await page.$eval("#fleet-regressions .regress-banner", (el) => ({
    text: el.querySelector("a").textContent, href: el.querySelector("a").getAttribute("href"),
    release: el.dataset.release, cls: el.className,
    y: el.getBoundingClientRect().bottom, tableY: document.getElementById("fleet-table").getBoundingClientRect().top,
  })).catch(() => null);
  check("one banner", (await page.$$("#fleet-regressions .regress-banner")).length === 1);
  check("it reads 'B vs A: ... worse, N vs M hosts, p = ...'", banner && banner.text.startsWith(`${B} vs ${A}: `) &&
    /worse, 6 vs 20 hosts, p = [0-9.e-]+$/.test(banner.text), banner?.text);
  check("it names the writeback figures' theme", banner?.text.includes("writeback"), banner?.text);
  check("it sits above the table", banner && banner.y <= banner.tableY, JSON.stringify(banner));
  check("it is about release B", banner?.release === B && /\b(warning|critical)\b/.test(banner.cls), JSON.stringify(banner));
  await page.screenshot({ path: OUT + "/dashboard-regression.png" });

  // ---- its link: the compare page of the pair, the figures marked
  await page.click("#fleet-regressions .regress-banner a");
  check("the link opens the compare page", await until(() => location.hash.startsWith("#/compare?")));
  check("the compare table loads",
    await until(() => document.getElementById("view").dataset.loaded === "1" && document.querySelector("#cmp-table tbody tr[data-fig]")));
  const picked = await page.evaluate(() => ({ a: document.getElementById("cmp-a").value, b: document.getElementById("cmp-b").value }));
  check("A and B are the baseline and the release", picked.a === A && picked.b === B, JSON.stringify(picked));
  const rows = await page.$$eval("#cmp-table tbody tr[data-fig]", (trs) => trs.map((t) => ({
    fig: t.dataset.fig, marked: t.dataset.marked === "1", verdict: t.dataset.verdict, badge: !!t.querySelector(".mark-watch"),
  })));
  const marked = rows.filter((r) => r.marked).map((r) => r.fig).sort();
  check("exactly the alert's figures are marked", JSON.stringify(marked) === JSON.stringify(MARK), JSON.stringify(marked));
  check("each marked row carries the watch badge, no other does", rows.every((r) => r.badge === r.marked));
  check("each marked figure is worse on the compare page too", rows.filter((r) => r.marked).every((r) => r.verdict === "worse"),
    JSON.stringify(rows.filter((r) => r.marked)));
  check("a note says what the marks are", !!(await page.$("#cmp-marked")));
  await page.screenshot({ path: OUT + "/dashboard-regression-compare.png", fullPage: true });

  // ---- the alerts view: the fleet alert
  await page.goto(BASE + "/#/alerts?kind=kernel_regression");
  check("the alerts view lists the fleet alert",
    await until(() => document.querySelector('.alert[data-kind="kernel_regression"]')));
  const card = await page.$eval('.alert[data-kind="kernel_regression"]', (el) => ({
    text: el.querySelector(".head").textContent, link: el.querySelector("a.view-link")?.getAttribute("href"),
    figs: el.querySelectorAll("table.regress-figs tr").length,
  })).catch(() => null);
  check("on the fleet, about B", card && card.text.includes("on the fleet") && card.text.includes(B), card?.text);
  check("its link is the comparison", card?.link === banner?.href, JSON.stringify([card?.link, banner?.href]));
  check("its figures as a table", card?.figs === MARK.length, String(card?.figs));
  const group = await page.$eval('.alert[data-kind="kernel_regression"]', (el) => {
    const g = el.closest("section.host-group");
    return g && { scope: g.dataset.scope || "", host: g.dataset.host ?? null, head: g.querySelector(".group-head").textContent };
  }).catch(() => null);
  check("grouped under the fleet, not a host", group && group.scope === "fleet" && group.host === null &&
    group.head.includes("the fleet"), JSON.stringify(group));
  await page.click('.alert[data-kind="kernel_regression"] button.more-btn');
  check("its details show the figures table",
    await until(() => { const t = document.querySelector('.alert[data-kind="kernel_regression"] table.regress-figs'); return t && t.offsetParent !== null; }));
  await page.screenshot({ path: OUT + "/dashboard-regression-alerts.png", fullPage: true });
}

await run(test);
