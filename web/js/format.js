// format.js - numbers and times as an operator reads them: SI prefixes for
// counts and rates (1.2K/s), binary prefixes for bytes (3.4 GiB), percentages,
// "5 s ago". Every function accepts null/undefined/NaN and returns "–".

const DASH = "\u2013";

function bad(v) {
  return v === null || v === undefined || Number.isNaN(v) || !Number.isFinite(v);
}

// 3 significant digits, trailing zeros dropped.
function sig(v) {
  const a = Math.abs(v);
  if (a >= 100) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1).replace(/\.0$/, "");
  return v.toFixed(2).replace(/\.?0+$/, "");
}

// 1234 -> "1.23K", 0.5 -> "0.5", 2e9 -> "2G".
export function fmtNum(v) {
  if (bad(v)) return DASH;
  const a = Math.abs(v);
  const units = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "K"]];
  for (const [f, u] of units) if (a >= f) return sig(v / f) + u;
  if (a > 0 && a < 0.01) return v.toExponential(0);
  return sig(v);
}

export function fmtRate(v, unit = "") {
  if (bad(v)) return DASH;
  return fmtNum(v) + (unit ? " " + unit : "") + "/s";
}

export function fmtBytes(v) {
  if (bad(v)) return DASH;
  const a = Math.abs(v);
  const units = [[2 ** 40, "TiB"], [2 ** 30, "GiB"], [2 ** 20, "MiB"], [2 ** 10, "KiB"]];
  for (const [f, u] of units) if (a >= f) return sig(v / f) + " " + u;
  return v.toFixed(0) + " B";
}

// v is already a percentage (PSI avg10: 12.5 means 12.5 %).
export function fmtPct(v) {
  if (bad(v)) return DASH;
  return sig(v) + " %";
}

// v is a ratio 0..1 (reclaim efficiency).
export function fmtRatio(v) {
  if (bad(v)) return DASH;
  return (v * 100).toFixed(0) + " %";
}

export function fmtDuration(s) {
  if (bad(s)) return DASH;
  s = Math.max(0, Math.round(s));
  if (s < 60) return s + " s";
  if (s < 3600) return Math.floor(s / 60) + " min" + (s % 60 ? " " + (s % 60) + " s" : "");
  if (s < 86400) return Math.floor(s / 3600) + " h" + (s % 3600 >= 60 ? " " + Math.floor((s % 3600) / 60) + " min" : "");
  return Math.floor(s / 86400) + " d" + (s % 86400 >= 3600 ? " " + Math.floor((s % 86400) / 3600) + " h" : "");
}

export function fmtAgo(ts, now = Date.now() / 1000) {
  if (bad(ts)) return DASH;
  const d = now - ts;
  if (d < 1) return "just now";
  return fmtDuration(d) + " ago";
}

// Unix seconds -> "2026-11-30 10:00:20" in the browser's local time.
export function fmtTime(ts) {
  if (bad(ts)) return DASH;
  const d = new Date(ts * 1000);
  const p = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

// RFC 3339 string (or null) -> Unix seconds (or null).
export function parseTime(s) {
  if (s === null || s === undefined) return null;
  const t = Date.parse(s);
  return Number.isNaN(t) ? null : t / 1000;
}

// A formatter by unit name, used by charts and tables alike.
export function formatter(unit) {
  switch (unit) {
    case "bytes": return fmtBytes;
    case "pct": return fmtPct;
    case "ratio": return fmtRatio;
    case "/s": return (v) => fmtRate(v);
    case "pages/s": return (v) => fmtRate(v, "pg");
    case "us/s": return (v) => fmtRate(v, "\u00b5s");
    default: return fmtNum;
  }
}

// Compact tick labels for chart axes: the unit is in the chart's title, so
// only the magnitude and a short suffix ("40K/s", "2 GiB", "45 %").
export function axisFormatter(unit) {
  switch (unit) {
    case "bytes": return (v) => (bad(v) ? "" : fmtBytes(v).replace(/ ([KMGT])iB$/, "$1").replace(/ B$/, ""));
    case "pct": return (v) => (bad(v) ? "" : sig(v) + " %");
    case "ratio": return (v) => (bad(v) ? "" : (v * 100).toFixed(0) + " %");
    case "/s": case "pages/s": case "us/s": return (v) => (bad(v) ? "" : fmtNum(v) + "/s");
    default: return fmtNum;
  }
}

// Control and Unicode bidirectional-formatting characters written out as
// \uXXXX: a name from an agent (a cgroup path keeps what the kernel gave)
// must not reorder or hide the text around it ("Trojan Source"). Tabs and
// newlines stay.
const UNSEEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
export function visible(s) {
  return String(s).replace(UNSEEN, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
}
