// clock.test.mjs - the dashboard's fleet shows a host whose every sample is
// refused for its timestamp (no stored sample, only a clock_skew alert), in
// a real headless Chromium. Run by tests/e2e/test_clock_skew.sh against its
// server. Prints "N passed, N failed"; exits 1 on a failure.
//
// env: VMSCOPE_URL (http://127.0.0.1:PORT), HOST (the refused host),
//      CHROMIUM (default /usr/bin/chromium)
import { chromium } from "playwright-core";

const BASE = process.env.VMSCOPE_URL, HOST = process.env.HOST;
let passed = 0, failed = 0;
function check(name, cond, detail = "") {
  if (cond) { passed++; console.log("ok   " + name); }
  else { failed++; console.log("FAIL " + name + (detail ? ": " + detail : "")); }
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1500, height: 1000 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(BASE + "/#/fleet");
  const sel = `#fleet-table tbody tr[data-host="${HOST}"]`;
  let row = null;
  try {
    await page.waitForSelector(sel, { timeout: 15000 });
    row = await page.$eval(sel, (t) => ({
      state: t.dataset.state,
      chips: [...t.querySelectorAll(".alerts-cell .chip")].map((c) => c.textContent),
      badge: t.querySelector(".badge")?.textContent,
    }));
  } catch (e) {
    row = null;
  }
  check("the fleet lists the host whose samples are all refused", row !== null);
  check("its row is critical", row?.state === "critical" && row?.badge === "critical", JSON.stringify(row));
  check("its row shows the clock_skew alert", (row?.chips || []).some((c) => c.startsWith("clock_skew")), JSON.stringify(row));
  check("no page error", errors.length === 0, errors.join("; "));
} finally {
  await browser.close();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
