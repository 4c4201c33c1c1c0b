// comparefmt.js - the pure logic of the compare view (web/js/compare.js), kept
// apart from the DOM so tests/browser/units.test.mjs can check it under node:
// how a change is coloured (direction x "better" x significance), how the
// table's numbers, changes and p-values are written, significance marks, the
// histogram bars of a row's distribution plot, the group and label pickers'
// choices and the time windows. Missing values are "—" (em dash), never NaN.
import { fmtNum } from "./format.js";

export const NONE = "\u2014";

// Time windows of the window picker: name -> seconds.
export const RANGES = [["1h", 3600], ["6h", 21600], ["24h", 86400], ["3d", 259200], ["7d", 604800]];
export const DEFAULT_RANGE = "24h";

export function rangeSeconds(name) {
  const r = RANGES.find(([n]) => n === name);
  return r ? r[1] : rangeSeconds(DEFAULT_RANGE);
}

function bad(v) {
  return v === null || v === undefined || typeof v !== "number" || !Number.isFinite(v);
}

// How a change cell is coloured: "better" (green) / "worse" (red) when the
// figure's difference is significant and the change is not zero, "ns" (grey)
// when it is not significant, "same" for a significant zero change, "none"
// when there is no change to show (a group without data). The server gives
// no % when A is 0; the direction is then that of B - A (a and b: the two
// values of the statistic). Each cell by its own sign: a mean that got
// better next to a p99 that got worse shows both.
export function changeClass(pct, better, significant, a = null, b = null) {
  let d = pct;
  if (bad(d)) d = a === 0 && !bad(b) && b !== 0 ? b : null;
  if (bad(d)) return "none";
  if (!significant) return "ns";
  if (d === 0) return "same";
  const up = d > 0;
  return up === (better === "higher") ? "better" : "worse";
}

// The row's verdict as the server gave it, checked against the shape:
// anything but "better"/"worse" is "same".
export function verdictClass(fig) {
  const v = fig && fig.verdict;
  return v === "better" || v === "worse" ? v : "same";
}

// A statistic in the table: 3 significant digits with K/M/G, "—" when null.
export function fmtStat(v) {
  if (bad(v)) return NONE;
  return fmtNum(v).replace("\u2013", NONE);
}

// A change in %: "+12.3 %", "−4 %", "0 %"; from +1000 % on a factor,
// "×12" (B is 12 times A: "+1.1K %" reads badly); "from 0" when the
// server has no % because A is 0 and B is not (a, b: the statistic's values);
// "—" when there is nothing to compare.
export function fmtChange(pct, a = null, b = null) {
  if (bad(pct)) return a === 0 && !bad(b) && b !== 0 ? "from 0" : NONE;
  const x = Math.abs(pct);
  let s;
  if (pct >= 1000) return "\u00d7" + fmtNum(1 + pct / 100).replace("\u2013", NONE);
  if (x >= 100) s = x.toFixed(0);
  else if (x >= 10) s = x.toFixed(1).replace(/\.0$/, "");
  else s = x.toFixed(2).replace(/\.?0+$/, "");
  if (s === "0" || s === "") return "0 %";
  return (pct > 0 ? "+" : "\u2212") + s + " %";
}

// A p-value: "<0.001", "0.032", "1"; "—" when null (no test: a group empty).
export function fmtP(p) {
  if (bad(p)) return NONE;
  if (p < 0.001) return "<0.001";
  if (p >= 0.9995) return "1";
  return p.toFixed(3);
}

// Significance mark: "***" p < 0.001, "**" p < 0.01, "*" significant at the
// server's alpha, "" otherwise (the server's "significant" decides).
export function sigMark(p, significant) {
  if (!significant || bad(p)) return "";
  if (p < 0.001) return "***";
  if (p < 0.01) return "**";
  return "*";
}

// The bars of a row's distribution plot: each group's counts as fractions of
// its own total (groups of different sizes stay comparable) and the largest
// fraction, the plot's top. null when there is nothing to draw.
export function histBars(hist) {
  if (!hist || !Array.isArray(hist.a) || !Array.isArray(hist.b) || hist.a.length === 0 ||
      hist.a.length !== hist.b.length) return null;
  const frac = (c) => {
    const tot = c.reduce((s, x) => s + (bad(x) ? 0 : x), 0);
    return c.map((x) => (tot > 0 && !bad(x) ? x / tot : 0));
  };
  const a = frac(hist.a), b = frac(hist.b);
  const max = Math.max(0, ...a, ...b);
  if (max === 0) return null;
  return { a, b, max, edges: Array.isArray(hist.edges) ? hist.edges : [] };
}

// Group-by choices: kernel, then label:KEY for every label key the hosts have.
export function groupByChoices(hosts) {
  const keys = new Set();
  for (const x of hosts || []) for (const k of Object.keys(x.labels || {})) keys.add(k);
  return ["kernel", ...[...keys].sort().map((k) => "label:" + k)];
}

// Label filter choices: every "KEY:VALUE" the hosts carry, with host counts.
export function labelChoices(hosts) {
  const n = new Map();
  for (const x of hosts || []) {
    for (const [k, v] of Object.entries(x.labels || {})) {
      const kv = k + ":" + v;
      n.set(kv, (n.get(kv) || 0) + 1);
    }
  }
  return [...n.entries()].sort((p, q) => (p[0] < q[0] ? -1 : p[0] > q[0] ? 1 : 0)).map(([value, hosts]) => ({ value, hosts }));
}

// Natural order of group values: "6.1.0-9" before "6.1.0-13", "5.15" before "6.1".
export function naturalCmp(x, y) {
  return String(x).localeCompare(String(y), "en", { numeric: true });
}

// The two groups shown when the hash names none: the two with the most hosts,
// the lower one (natural order: the older kernel, usually) as A, the baseline.
export function defaultPair(groups) {
  const g = (groups || []).filter((x) => x && x.value !== undefined && x.value !== null);
  if (g.length < 2) return null;
  const top = [...g].sort((p, q) => q.hosts - p.hosts || naturalCmp(p.value, q.value)).slice(0, 2).map((x) => String(x.value));
  top.sort(naturalCmp);
  return { a: top[0], b: top[1] };
}

// "6.1.0-13-amd64 (12 hosts)"
export function groupOption(g) {
  return g.value + " (" + g.hosts + (g.hosts === 1 ? " host)" : " hosts)");
}

// Whether a figure is 0 (or has no value) in both groups for every
// statistic: nothing to compare, so the table leaves its row out.
export function zeroBoth(fig) {
  const st = ["mean", "p50", "p95", "p99"];
  let zero = false;
  for (const g of [fig && fig.a, fig && fig.b]) {
    for (const k of st) {
      const v = g ? g[k] : null;
      if (bad(v)) continue;
      if (v !== 0) return false;
      zero = true;
    }
  }
  return zero;
}
