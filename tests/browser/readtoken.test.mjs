// readtoken.test.mjs - the dashboard against a server started with
// --read-token-file: without the token the page says how to give it; opened
// once as /?token=T it lists the fleet, and later pages (no token in the URL)
// still work from the token kept in localStorage. A link carrying another
// token does not replace the kept one silently: the page asks, keeps its own
// when the user says no and takes the link's when the user says yes. No
// console error (no Content-Security-Policy violation) on the way. Run by
// tests/test_dashboard.sh.
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
  const errors = [], dialogs = [];
  let answer = false;
  page.on("console", (m) => { if (m.type() === "error" && !/401/.test(m.text())) errors.push(m.text()); });
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("dialog", (d) => { dialogs.push(d.message()); if (answer) d.accept(); else d.dismiss(); });
  const stored = () => page.evaluate(() => localStorage.getItem("vmscope.readToken"));
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
  check("opening with the kept token asks nothing", dialogs.length === 0, JSON.stringify(dialogs));

  // a link with another token: asked, and "no" keeps the kept token
  await page.goto(BASE + "/?token=someone-elses-token#/fleet");
  check("a link with another token asks before replacing the kept one",
    await wait(() => document.querySelectorAll("#fleet-table tr[data-host]").length >= 3) && dialogs.length === 1 &&
    /other than the one this browser keeps/.test(dialogs[0]), JSON.stringify(dialogs));
  check("declined: the kept token stays", (await stored()) === TOKEN);
  check("declined: the link's token is out of the address bar", !(await page.evaluate(() => location.href)).includes("token="));
  // "yes" takes the link's token (here a wrong one: the page then says so)
  answer = true;
  await page.goto(BASE + "/?token=someone-elses-token#/fleet");
  const took = await wait(() => localStorage.getItem("vmscope.readToken") === "someone-elses-token");
  check("accepted: the link's token replaces the kept one", took && dialogs.length === 2,
    JSON.stringify({ dialogs, stored: await stored() }));
  check("... and the page shows the server's 401",
    await wait(() => /read token/.test(document.getElementById("status").textContent)));
  check("no console errors (no Content-Security-Policy violation)", errors.length === 0, errors.join(" | "));
} catch (e) {
  check("test ran to the end", false, e.stack || String(e));
} finally {
  await browser.close();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
