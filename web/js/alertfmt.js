// alertfmt.js - how alerts read wherever they are shown (the fleet's
// chips, the alerts list, the host view's strip): the order (severity, then
// age), the short chip "thrash · 38m" and its tooltip, a live duration for
// a silent host, and evidence keys as labels with units
// ("refault_turnover_per_s" -> "memory refaulted per second, 0.12\u00d7 its memory").
// Pure: tested under node (tests/browser/units.test.mjs).
import { fmtAge, fmtBytes, fmtDuration, fmtNum, fmtTime, parseTime, text } from "./format.js";

export const SEV_RANK = { critical: 2, warning: 1 };

// Seconds from the alert's first sample to its end, or to now while open.
export function alertDuration(a, now = Date.now() / 1000) {
  const t0 = startOf(a), t1 = endOf(a);
  return t0 === null ? null : Math.max(0, (t1 ?? now) - t0);
}

function startOf(a) {
  return typeof a.started_at_ts === "number" ? a.started_at_ts : parseTime(a.started_at);
}
function endOf(a) {
  return typeof a.ended_at_ts === "number" ? a.ended_at_ts : parseTime(a.ended_at);
}

// Worst severity first; among equals open before resolved, then the most
// recent start first (what just happened leads), then host, kind.
export function compareAlerts(x, y) {
  const r = (SEV_RANK[y.severity] || 0) - (SEV_RANK[x.severity] || 0);
  if (r) return r;
  const ox = x.state === "resolved" || endOf(x) !== null ? 1 : 0, oy = y.state === "resolved" || endOf(y) !== null ? 1 : 0;
  if (ox !== oy) return ox - oy;
  const t = (startOf(y) ?? 0) - (startOf(x) ?? 0);
  if (t) return t;
  return String(x.host || "").localeCompare(String(y.host || "")) || String(x.kind).localeCompare(String(y.kind));
}

// Alerts grouped by host: [{host, alerts (sorted), worst, fleet}], the hosts
// in the order of their first alert (so the worst, newest trouble leads);
// the fleet's alerts (scope "fleet", no host) are one group, fleet: true.
export function groupByHost(alerts) {
  const sorted = [...alerts].sort(compareAlerts);
  const by = new Map();
  for (const a of sorted) {
    const fleet = a.scope === "fleet", key = fleet ? null : a.host;
    if (!by.has(key)) by.set(key, { host: fleet ? "" : a.host, alerts: [], worst: a.severity, fleet });
    by.get(key).alerts.push(a);
  }
  return [...by.values()];
}

// The chip of an alert: "thrash · 38m" (open: how long it has run), or
// "oom_kill · 3m ago" (ended: how long ago).
export function chipText(a, now = Date.now() / 1000) {
  const end = endOf(a);
  if (end !== null) return a.kind + " \u00b7 " + fmtAge(now - end) + " ago";
  return a.kind + " \u00b7 " + fmtAge(alertDuration(a, now));
}

// The chip's tooltip: what, where, since when, and the summary.
export function chipTitle(a, now = Date.now() / 1000) {
  const end = endOf(a);
  const where = a.cgroup ? "cgroup " + a.cgroup : "host-wide";
  const when = end !== null
    ? "ended " + fmtTime(end) + " (" + fmtDuration(now - end) + " ago) after " + fmtDuration(alertDuration(a, now))
    : "open for " + fmtDuration(alertDuration(a, now)) + ", since " + fmtTime(startOf(a));
  return `${a.kind} (${text(a.severity)}) on ${where}: ${when}\n${liveSummary(a, now)}`;
}

// The summary, but for an open host_silent alert the silence as it stands
// now (the stored summary is the one written when it opened).
export function liveSummary(a, now = Date.now() / 1000) {
  if (a.kind === "host_silent" && endOf(a) === null && startOf(a) !== null) {
    const iv = a.evidence && typeof a.evidence.interval_s === "number" ? a.evidence.interval_s : null;
    return "no sample for " + fmtDuration(now - startOf(a)) + (iv ? " (expected every " + fmtDuration(iv) + ")" : "");
  }
  return text(a.summary);
}

// Evidence keys the detectors write (detect/*.c det_ev, alert_store.c):
// label, and how the value is written.
const EV = {
  refault_bytes_per_s: ["refaults", "bytes/s"],
  workingset_refault_file_per_s: ["file refaults", "pages/s"],
  workingset_refault_anon_per_s: ["anon refaults", "pages/s"],
  workingset_activate_ratio: ["refaults activated (hot)", "ratio"],
  refault_turnover_per_s: ["memory refaulted per second", "ratio/s"],
  pgmajfault_per_s: ["major faults", "/s"],
  psi_memory_some_pct: ["memory pressure, some", "%"],
  psi_memory_full_pct: ["memory pressure, full", "%"],
  psi_io_some_pct: ["I/O pressure, some", "%"],
  psi_io_full_pct: ["I/O pressure, full", "%"],
  memory_bytes: ["memory", "bytes"],
  memory_current_bytes: ["memory in use", "bytes"],
  memory_max_bytes: ["memory limit", "bytes"],
  mem_available_bytes: ["memory available", "bytes"],
  inactive_anon_bytes: ["inactive anon", "bytes"],
  inactive_file_bytes: ["inactive file", "bytes"],
  dirty_writeback_bytes: ["dirty + writeback", "bytes"],
  swap_current_bytes: ["swap in use", "bytes"],
  swap_free_bytes: ["swap free", "bytes"],
  swap_total_bytes: ["swap size", "bytes"],
  swapout_per_s: ["swapped out", "pages/s"],
  swappiness: ["swappiness", ""],
  allocstall_per_s: ["allocation stalls", "/s"],
  compact_stall_per_s: ["compaction stalls", "/s"],
  compact_fail_per_s: ["failed compactions", "/s"],
  direct_reclaim_efficiency: ["direct reclaim efficiency", "ratio"],
  reclaim_efficiency: ["reclaim efficiency", "ratio"],
  reclaim_file_write_per_s: ["file pages written by reclaim", "pages/s"],
  nr_vmscan_immediate_reclaim_per_s: ["pages tagged for immediate reclaim", "pages/s"],
  pgrotated_per_s: ["pages rotated after writeback", "pages/s"],
  pgscan_anon_per_s: ["anon pages scanned", "pages/s"],
  pgscan_file_per_s: ["file pages scanned", "pages/s"],
  pgscan_direct_per_s: ["pages scanned by direct reclaim", "pages/s"],
  pgscan_anon_share: ["anon share of scanning", "ratio"],
  pglazyfree_per_s: ["pages freed lazily (MADV_FREE)", "pages/s"],
  pglazyfreed_per_s: ["lazily freed pages reclaimed", "pages/s"],
  oom_kills: ["OOM kills", ""],
  interval_s: ["sampling interval", "s"],
  silent_s: ["silent for", "s"],
  last_sample_ms: ["last sample", "ms-time"],
};

// A readable label for an evidence key: the table's, else the key's words
// without its unit suffix ("nr_dirty_pct_of_threshold" -> "nr dirty, % of threshold").
export function evLabel(k) {
  if (EV[k]) return EV[k][0];
  return k.replace(/_(per_s|bytes|pct|ms|s|ratio)$/, "").replace(/_pct_of_/, ", % of ").replace(/_/g, " ");
}

// An evidence value with its unit: from the table, else guessed from the
// key's suffix (the detectors name them *_per_s, *_pct, *_bytes, ...).
export function evValue(k, v) {
  if (typeof v !== "number") {
    if (v === null || v === undefined) return "\u2013";
    if (k === "shape" && typeof v === "string") return v.replace(/_/g, " ");	// an enum, read as words
    return typeof v === "object" ? JSON.stringify(v) : String(v);
  }
  const unit = EV[k] ? EV[k][1] : null;
  switch (unit) {
    case "bytes/s": return fmtBytes(v) + "/s";
    case "bytes": return fmtBytes(v);
    case "pages/s": return fmtNum(v) + " pages/s";
    case "/s": return fmtNum(v) + "/s";
    case "%": return fmtNum(v) + " %";
    case "ratio": return fmtNum(v * 100) + " %";
    case "ratio/s": return fmtNum(v) + "\u00d7 its memory";	// as the summaries say it: "17.55x its memory per second"
    case "s": return fmtDuration(v);
    case "ms-time": return fmtTime(v / 1000);
    case "": return fmtNum(v);
    default: break;
  }
  if (/_ms$/.test(k) && v > 1e11) return fmtTime(v / 1000);
  if (/bytes_per_s$/.test(k)) return fmtBytes(v) + "/s";
  if (/bytes$/.test(k)) return fmtBytes(v);
  if (/_kb$/i.test(k)) return fmtBytes(v * 1024);
  if (/_pct$|_pct_|percent|avg10|avg60|avg300/.test(k)) return fmtNum(v) + " %";
  if (/_per_s$|_rate$|per_sec/.test(k)) return fmtNum(v) + "/s";
  if (/efficiency|ratio|share/.test(k) && v >= 0 && v <= 1) return fmtNum(v * 100) + " %";
  if (/_s$/.test(k)) return fmtDuration(v);
  return fmtNum(v);
}

// The evidence as rows [label, value, key]; a text "hint" is shown apart.
export function evidenceRows(ev, a = null, now = Date.now() / 1000) {
  return Object.entries(ev || {}).filter(([k, v]) => !(k === "hint" && typeof v === "string")).map(([k, v]) => {
    // a silent host's silence grows while it lasts
    if (k === "silent_s" && a && a.kind === "host_silent" && endOf(a) === null && startOf(a) !== null) v = now - startOf(a);
    return [evLabel(k), evValue(k, v), k];
  });
}
