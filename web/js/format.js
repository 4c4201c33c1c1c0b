// format.js - numbers and times as an operator reads them: SI prefixes for
// counts and rates (1.2K/s), binary prefixes for bytes (3.4 GiB), percentages,
// "5 s ago", "27m". Every function accepts null/undefined/NaN and returns "–".
// Times are written in the browser's time zone or in UTC (setTimeZone; the
// header's switch, nav.js).

const DASH = "\u2013";
export { DASH };

let utc = false;

// "utc" or "local": how fmtTime, fmtClock and the charts' axes write times.
export function setTimeZone(tz) {
  utc = tz === "utc";
}
export function timeZone() {
  return utc ? "utc" : "local";
}

// The zone times are shown in: "UTC", or the browser's offset ("UTC+01:00").
export function zoneLabel(at = Date.now() / 1000) {
  if (utc) return "UTC";
  const off = -new Date(at * 1000).getTimezoneOffset();
  const a = Math.abs(off);
  return "UTC" + (off < 0 ? "\u2212" : "+") + String(Math.floor(a / 60)).padStart(2, "0") + ":" + String(a % 60).padStart(2, "0");
}

// The calendar fields of Unix seconds ts in the chosen zone.
export function timeParts(ts) {
  const d = new Date(ts * 1000);
  return utc
    ? { y: d.getUTCFullYear(), mo: d.getUTCMonth() + 1, d: d.getUTCDate(), h: d.getUTCHours(), mi: d.getUTCMinutes(), s: d.getUTCSeconds() }
    : { y: d.getFullYear(), mo: d.getMonth() + 1, d: d.getDate(), h: d.getHours(), mi: d.getMinutes(), s: d.getSeconds() };
}

const p2 = (n) => String(n).padStart(2, "0");

function bad(v) {
  return v === null || v === undefined || Number.isNaN(v) || !Number.isFinite(v);
}

// 3 significant digits, trailing zeros dropped.
function sig(v) {
  const a = Math.abs(v);
  if (a > 0 && a < 0.1) return String(Number(v.toPrecision(2)));
  if (a >= 100) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1).replace(/\.0$/, "");
  return v.toFixed(2).replace(/\.?0+$/, "");
}

// 1234 -> "1.23K", 0.5 -> "0.5", 2e9 -> "2G", 0.004 -> "0.004" (never
// exponent notation: "4e-3" reads as a typo); below 0.0001 "<0.0001".
export function fmtNum(v) {
  if (bad(v)) return DASH;
  const a = Math.abs(v);
  const units = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "K"]];
  for (const [f, u] of units) if (a >= f) return sig(v / f) + u;
  if (a > 0 && a < 0.0001) return (v < 0 ? ">\u22120" : "<0.0001");
  if (a > 0 && a < 0.01) return String(Number(v.toPrecision(2)));
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

// A short age for tight cells: "4s", "27m", "3h", "2d" (the largest whole
// unit; fmtDuration in a tooltip gives the rest).
export function fmtAge(s) {
  if (bad(s)) return DASH;
  s = Math.max(0, Math.floor(s));
  if (s < 60) return s + "s";
  if (s < 3600) return Math.floor(s / 60) + "m";
  if (s < 86400) return Math.floor(s / 3600) + "h";
  return Math.floor(s / 86400) + "d";
}

// Unix seconds -> "2026-11-30 10:00:20" in the chosen zone (setTimeZone).
export function fmtTime(ts) {
  if (bad(ts)) return DASH;
  const t = timeParts(ts);
  return `${t.y}-${p2(t.mo)}-${p2(t.d)} ${p2(t.h)}:${p2(t.mi)}:${p2(t.s)}`;
}

// Unix seconds -> "10:00:20" in the chosen zone.
export function fmtClock(ts) {
  if (bad(ts)) return DASH;
  const t = timeParts(ts);
  return `${p2(t.h)}:${p2(t.mi)}:${p2(t.s)}`;
}

// Unix seconds -> the value of an <input type="datetime-local"> in the
// chosen zone ("2026-11-30T10:00"), and back (null when unreadable).
export function toInputTime(ts) {
  if (bad(ts)) return "";
  const t = timeParts(ts);
  return `${t.y}-${p2(t.mo)}-${p2(t.d)}T${p2(t.h)}:${p2(t.mi)}`;
}
export function fromInputTime(s) {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(s || "");
  if (!m) return null;
  const f = m.slice(1).map((x) => Number(x || 0));
  const ms = utc ? Date.UTC(f[0], f[1] - 1, f[2], f[3], f[4], f[5]) : new Date(f[0], f[1] - 1, f[2], f[3], f[4], f[5]).getTime();
  return Number.isFinite(ms) ? ms / 1000 : null;
}

// Any value as display text: null and undefined are "–" (never "null").
// A long cgroup path shortened in its middle, keeping what tells it from
// its siblings: the first level and the last one (a container's scope is
// cut to its first 12 hex digits), e.g. "/kubepods.slice/…/
// cri-containerd-3f2a9c01b7de….scope". Short paths are left whole; the
// full path goes in a tooltip.
export function shortPath(path, max = 48) {
  if (typeof path !== "string" || path.length <= max) return path;
  const segs = path.split("/").filter(Boolean);
  let last = segs[segs.length - 1] || "";
  last = last.replace(/([0-9a-f]{12})[0-9a-f]{20,}/, "$1\u2026");
  if (last.length > max - 4) last = last.slice(0, max - 12) + "\u2026" + last.slice(-7);
  const out = (segs.length > 1 ? "/" + segs[0] + "/\u2026/" : "/") + last;
  return out.length <= max + 16 ? out : "/\u2026/" + last;
}

export function text(v) {
  return v === null || v === undefined || (typeof v === "number" && !Number.isFinite(v)) ? DASH : String(v);
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
