// regression.js - the fleet view's banner of kernel regressions: every open
// kernel_regression alert (the server's watch, docs/detectors.md "Kernel
// regressions") as one line above the fleet table, its summary ("6.1.0-21
// vs 6.1.0-18: writeback worse, 7 vs 31 hosts, p = ...") linking to the
// compare page of the pair with the worse figures marked. Polled at the
// header's refresh interval, no more often than every 30 s, beside the
// table and quietly (nav.js poll's quiet: the status line and the outage
// banner are the table's); nothing is shown while none is open.
import { getJSON } from "./api.js";
import { h } from "./dom.js";
import { fmtNum } from "./format.js";
import { makeHash, poll } from "./nav.js";

const POLL_MS = 30000;

// The compare page of an alert: its evidence's link when it is one (a
// "#/compare?..." hash), else the pair built from the evidence.
export function compareHref(a) {
  const ev = a.evidence || {};
  const page = ev.compare && typeof ev.compare.page === "string" ? ev.compare.page : "";
  if (page.startsWith("#/compare?")) return page;
  return makeHash("compare", "", { group_by: "kernel", a: ev.baseline || "", b: ev.release || a.subject || "",
    mark: (ev.figures || []).map((f) => f.name).join(",") });
}

// The banner lines of an alerts answer: open kernel_regression alerts,
// critical first, then newest.
export function bannerItems(alerts) {
  const rank = { critical: 0, warning: 1 };
  return (alerts || [])
    .filter((a) => a.kind === "kernel_regression" && a.state === "open")
    .sort((x, y) => (rank[x.severity] ?? 2) - (rank[y.severity] ?? 2) || (y.id || 0) - (x.id || 0))
    .map((a) => ({
      id: a.id, severity: a.severity === "critical" ? "critical" : "warning", release: a.subject || "",
      text: a.summary || (a.subject || "a release") + " is worse than the baseline", href: compareHref(a),
      silenced: !!a.silenced,
    }));
}

// A kernel_regression's evidence.figures as a small table for the alerts
// view: per figure each side's hosts, mean, p50, p95, and the adjusted p.
export function figuresTable(figs) {
  const side = (s) => s ? `${s.hosts} hosts: mean ${fmtNum(s.mean)}, p50 ${fmtNum(s.p50)}, p95 ${fmtNum(s.p95)}` : "\u2013";
  return h("table", { class: "ev regress-figs" }, h("tbody", {}, (figs || []).map((f) =>
    h("tr", { dataset: { fig: f.name } },
      h("td", { class: "mono" }, f.name),
      h("td", { class: "text" }, "release " + side(f.release) + " \u00b7 baseline " + side(f.baseline) + " " + (f.unit || "")),
      h("td", { class: "num" }, "p " + fmtNum(f.p_adjusted) + " (adjusted)")))));
}

// Fills el (kept empty while no regression is open) until destroy().
export function mountRegressionBanner(el) {
  const stop = poll(async (signal) => {
    // a failure throws to poll, which leaves it to the fleet table to say
    // (quiet: the status line and the outage banner are the table's)
    const ans = await getJSON("alerts", { kind: "kernel_regression", state: "open", limit: 50 }, signal);
    const items = bannerItems(ans.alerts);
    el.replaceChildren(...items.map((it) =>
      h("div", { class: "regress-banner " + it.severity, role: "alert", dataset: { release: it.release, alertId: it.id } },
        h("span", { class: "regress-tag" }, "kernel regression"),
        h("a", { href: it.href, title: "compare the two releases, the worse figures marked" }, it.text),
        it.silenced ? h("span", { class: "muted" }, " (silenced)") : null)));
  }, { min: POLL_MS, quiet: true });
  return { destroy: stop };
}
