// harness.mjs - what the browser tests share: checks counted and printed
// ("ok   NAME" / "FAIL NAME: detail"), Chromium launched as every test runs
// it (Debian's /usr/bin/chromium, or CHROMIUM, through playwright-core),
// and the end of a run: an exception becomes a failed check, the browser
// is closed, "N passed, N failed" is printed (tests/test_dashboard.sh adds
// it to its own counts) and the exit status says whether all passed.
import { chromium } from "playwright-core";

let passed = 0, failed = 0;

export function check(name, cond, detail = "") {
  if (cond) { passed++; console.log("ok   " + name); }
  else { failed++; console.log("FAIL " + name + (detail ? ": " + detail : "")); }
}

export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
}

// Runs fn, then closes browser, prints the counts and exits.
export async function finish(browser, fn) {
  try {
    await fn();
  } catch (e) {
    check("test ran to the end", false, e.stack || String(e));
  } finally {
    await browser.close();
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}
