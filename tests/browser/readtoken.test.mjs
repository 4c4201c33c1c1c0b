// readtoken.test.mjs - the dashboard against a server started with
// --read-token: without the token the page says how to give it; opened once
// as /?token=T it lists the fleet, and later pages (no token in the URL) still
// work from the token kept in localStorage. Run by tests/test_dashboard.sh.
// env: VMSCOPE_URL, VMSCOPE_READ_TOKEN, CHROMIUM. Prints "N passed, N failed".
import { chromium } from "playwright-core";

const BASE = process.env.VMSCOPE_URL, TOKEN = process.env.VMSCOPE_READ_TOKEN;
if (!BASE || !TOKEN) {
  console.error("VMSCOPE_URL and VMSCOPE_READ_TOKEN must be set");
  process.exit(2);
}
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
  const page = await browser.newPage();
  const wait = async (fn, ms = 10000) => {
    try { await page.waitForFunction(fn, undefined, { timeout: ms }); return true; } catch (_) { return false; }
  };
  await page.goto(BASE + "/#/fleet");
  check("without the token the page explains the 401",
    await wait(() => /read token/.test(document.getElementById("status").textContent) &&
      document.getElementById("status").classList.contains("err")),
    await page.$eval("#status", (e) => e.textContent));
  await page.goto(BASE + "/?token=" + encodeURIComponent(TOKEN) + "#/fleet");
  check("with ?token= the fleet loads", await wait(() => document.querySelectorAll("#fleet-table tr[data-host]").length >= 3));
  check("the token is taken out of the address bar", !(await page.evaluate(() => location.href)).includes("token="),
    await page.evaluate(() => location.href));
  await page.goto(BASE + "/#/alerts");
  check("the token is remembered for later pages", await wait(() => document.querySelectorAll("#alert-list .alert").length >= 1));
} catch (e) {
  check("test ran to the end", false, e.stack || String(e));
} finally {
  await browser.close();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
