// harness.mjs - what the browser tests run by the shell tests share:
// headless Chromium (CHROMIUM, default /usr/bin/chromium) with every
// request outside 127.0.0.1 blocked and counted, the page's console errors
// collected (consoleIgnore: a regex of errors a test expects), every
// Content-Security-Policy violation counted (the pages run under the
// server's policy: an inline script or a foreign source fails), check()
// counting and printing each check (TIMES=1 adds the seconds since the
// start), until() waiting for a condition in the page, and run(), which
// ends every test the same way: the checks that nothing left 127.0.0.1,
// nothing violated the policy and nothing logged an error, then "N passed,
// N failed" (what tests/e2e/_lib.sh e2e_run_browser adds up) and the exit
// code. newPage() opens a page in a context of its own (another width, a
// test of several sizes), held to the same rules.
import { chromium } from "playwright-core";

export async function session({ viewport = { width: 1600, height: 1000 }, consoleIgnore = null } = {}) {
  const t0 = Date.now();
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  const blocked = [];
  const errors = [];
  const cspViolations = [];
  // a context whose requests outside 127.0.0.1 are blocked and counted,
  // and whose pages report their policy violations
  async function newContext(opts) {
    const ctx = await browser.newContext(opts);
    await ctx.route("**/*", (route) => {
      const u = new URL(route.request().url());
      if (u.protocol === "data:" || u.hostname === "127.0.0.1") return route.continue();
      blocked.push(u.href);
      return route.abort();
    });
    await ctx.exposeFunction("vmscopeTestCsp", (v) => cspViolations.push(v));
    await ctx.addInitScript(() => {
      document.addEventListener("securitypolicyviolation",
        (e) => window.vmscopeTestCsp(e.violatedDirective + " " + e.blockedURI));
    });
    return ctx;
  }
  // the page's errors collected, prefixed by tag; ignore: a RegExp of
  // messages the test provokes (a server stopped on purpose)
  function watch(p, tag = "", ignore = null) {
    p.on("console", (m) => { if (m.type() === "error" && !(ignore && ignore.test(m.text()))) errors.push(tag + m.text()); });
    p.on("pageerror", (e) => errors.push(tag + String(e)));
  }
  const context = await newContext({ viewport });
  const page = await context.newPage();
  watch(page, "", consoleIgnore);

  // A page in a fresh context of viewport width x height; errors: false
  // leaves its console unwatched (a page meant to fail loading).
  async function newPage(width, { height = 900, errors: watchErrors = true, ignore = null, ...ctxOpts } = {}) {
    const ctx = await newContext({ viewport: { width, height }, ...ctxOpts });
    const p = await ctx.newPage();
    if (watchErrors) watch(p, width + ": ", ignore);
    return p;
  }

  let passed = 0, failed = 0;
  const secs = () => " [" + ((Date.now() - t0) / 1000).toFixed(1) + " s]";
  function check(name, cond, detail = "") {
    if (cond) { passed++; console.log("ok   " + name + (process.env.TIMES ? secs() : "")); }
    else { failed++; console.log("FAIL " + name + (detail ? ": " + detail : "") + secs()); }
  }
  // true once fn(arg) is truthy in the page, false after ms
  async function until(fn, arg, ms = 15000) {
    try { await page.waitForFunction(fn, arg, { timeout: ms }); return true; } catch (_) { return false; }
  }
  async function run(body) {
    try {
      await body();
    } catch (e) {
      check("the test ran to its end", false, e.stack || String(e));
    }
    check("no request left 127.0.0.1", blocked.length === 0, blocked.join(" "));
    check("no Content-Security-Policy violation", cspViolations.length === 0, cspViolations.join(" | "));
    check("no console error", errors.length === 0, errors.join(" | ").slice(0, 500));
    await browser.close();
    console.log(`${passed} passed, ${failed} failed`);
    process.exit(failed ? 1 : 0);
  }
  return { browser, context, page, errors, blocked, cspViolations, check, until, run, newPage };
}
