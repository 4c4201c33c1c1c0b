// charts.js - uPlot time-series panels for the host view. One chart = one
// figure with up to two y scales; every chart of a view shares a cursor sync
// key (hovering one shows the same instant on all) and a fixed x range, so
// they line up. Downsampled series are drawn as the bucket average with a
// min..max band. Alert intervals are shaded behind the series, and the
// cursor over one names its alert. A legend entry hides its line (click,
// or Enter on the focused entry); hidden lines stay hidden across
// refreshes. Times follow the header's time zone (format.js).
// The bands are painted by a hook from arrays kept beside the chart, not as
// two more uPlot series per line: a 7-day view would otherwise carry ~75
// series (each with its path, legend row and cursor point) instead of ~25,
// and building them was most of the view's time.
import uPlot from "../vendor/uPlot.min.esm.js";
import { cssColor } from "./dom.js";
import { axisFormatter, fmtClock, fmtDuration, fmtTime, formatter, timeParts, timeZone } from "./format.js";
import { mergeIntervals } from "./shade.js";

const AXIS_W = 60;

// Tick label for a time: "14:05", with the date when the window spans days.
function clock(ts, span) {
  const t = timeParts(ts);
  const p = (n) => String(n).padStart(2, "0");
  const hm = p(t.h) + ":" + p(t.mi);
  if (span <= 2 * 86400) return hm;
  const md = p(t.mo) + "-" + p(t.d);
  return span > 10 * 86400 ? md : md + " " + hm;
}

// The top of a y scale: the data's (bands included), and when a scale has
// only zeros (its lines flat while the other axis has data) a unit range
// whose ticks say nothing but 0: no invented scale.
function top(max, band) {
  const m = Math.max(max ?? 0, band);
  return m > 0 ? m * 1.05 : 1;
}
const onlyZero = (fmt, max) => (u, splits) => splits.map((v) => (max() > 0 || v === 0 ? fmt(v) : ""));

// Tick steps for byte axes: powers of two (and 1.5x), so that ticks read
// 16G 32G 48G instead of 18.6G 37.3G 55.9G.
const BYTE_INCRS = [];
for (let e = 1; e <= 50; e++) BYTE_INCRS.push(2 ** e, 1.5 * 2 ** e);	// 2 3 4 6 8 12 16 24 ...

// The last non-null value of a series (the legend shows it while the cursor
// is off the chart, instead of a row of dashes).
function lastOf(arr) {
  for (let i = arr.length - 1; i >= 0; i--) if (arr[i] !== null && arr[i] !== undefined) return arr[i];
  return null;
}

const SEV_FILL = { critical: "rgba(207,19,34,0.16)", warning: "rgba(212,136,6,0.16)" };
const SEV_BAR = { critical: "rgb(207,19,34)", warning: "rgb(212,136,6)" };

// The alerts under the cursor at time t: "thrash (critical) · /app.slice · 10:02–10:27".
function bandText(alerts, t) {
  const hit = (alerts || []).filter((a) => t >= a.t0 && t <= a.t1);
  if (!hit.length) return null;
  return hit.map((a) => `${a.kind || "alert"} (${a.severity})${a.cgroup ? " \u00b7 " + a.cgroup : ""} \u00b7 ` +
    `${fmtTime(a.t0).slice(11, 16)}\u2013${a.open ? "now" : fmtTime(a.t1).slice(11, 16)} (${fmtDuration(a.t1 - a.t0)})`).join("; ");
}

// Build uPlot options and data for one chart.
//   spec:   {title, unit, unit2}
//   lines:  [{label, color, dash, axis: "y"|"y2", avg: [], min: [] | null, max: [] | null}]
//   x:      shared timestamps (Unix s)
//   ctx:    {range: () => [t0, t1], alerts: [{t0, t1, severity, kind, cgroup, open}], syncKey, onZoom(t0, t1),
//            width, height, hidden: Set of line labels the user hid}
// Returns {opts, data}; the hooks read the bands from ctx.bands.
function build(spec, lines, x, ctx) {
  const fmt = formatter(spec.unit);
  const fmt2 = formatter(spec.unit2 || spec.unit);
  // not hovering: the newest values, named by their time when they are
  // old (a host that went silent: not "latest" then)
  const newest = (u) => {
    const xs = u.data[0];
    for (let i = xs.length - 1; i >= 0; i--) for (let s = 1; s < u.data.length; s++) if (u.data[s][i] !== null && u.data[s][i] !== undefined) return [xs[i], i];
    return [null, -1];
  };
  const latest = (u) => {
    const [t, i] = newest(u);
    if (t === null) return "latest";
    const step = i > 0 ? u.data[0][i] - u.data[0][i - 1] : 0;
    return ctx.range()[1] - t > Math.max(120, 2 * step) ? "last sample " + fmtClock(t) : "latest";
  };
  const series = [{ value: (u, v, si, idx) => (idx === null || idx === undefined ? latest(u) : v === null ? "\u2013" : fmtTime(v)) }];
  const data = [x];
  const bands = [];	// {idx: series index, min, max, fill}
  const bandTop = { y: 0, y2: 0 };	// the largest band edge per scale
  const hidden = ctx.hidden || new Set();
  for (const ln of lines) {
    const f = ln.axis === "y2" ? fmt2 : fmt;
    const color = cssColor(ln.color);
    series.push({
      label: ln.label, stroke: color, width: 1.5, dash: ln.dash || undefined, show: !hidden.has(ln.label),
      scale: ln.axis || "y", spanGaps: false, points: { show: false },
      value: (u, v, si, idx) => f(idx === null || idx === undefined ? lastOf(u.data[si]) : v),
    });
    data.push(ln.avg);
    if (ln.min && ln.max) {
      // faint: the avg line reads first
      bands.push({ idx: series.length - 1, scale: ln.axis || "y", min: ln.min, max: ln.max, fill: color + "1a" });
      const sc = ln.axis === "y2" ? "y2" : "y";
      for (const v of ln.max) if (v !== null && v > bandTop[sc]) bandTop[sc] = v;
    }
  }
  ctx.bands = bands;
  const hasY2 = lines.some((l) => l.axis === "y2");
  const ax = axisFormatter(spec.unit), ax2 = axisFormatter(spec.unit2 || spec.unit);
  const axis = cssColor("var(--axis)"), grid = cssColor("var(--grid)"), tick = cssColor("var(--tick)");
  const seen = { y: 0, y2: 0 };	// the largest value drawn per scale
  const axes = [
    // multi-day windows label ticks "11-26 00:00": wider apart, so that
    // they do not run into each other on a narrow chart
    { stroke: axis, grid: { stroke: grid }, ticks: { stroke: tick },
      space: (u, ai, lo, hi) => (hi - lo > 1.5 * 86400 ? 90 : 50),
      values: (u, splits) => {
        const [t0, t1] = ctx.range();
        return splits.map((v) => clock(v, t1 - t0));
      } },
    { stroke: axis, size: AXIS_W, grid: { stroke: grid }, ticks: { stroke: tick },
      incrs: spec.unit === "bytes" ? BYTE_INCRS : undefined,
      values: onlyZero(ax, () => seen.y) },
  ];
  if (hasY2) {
    axes.push({ scale: "y2", side: 1, size: AXIS_W, stroke: axis, grid: { show: false },
      incrs: spec.unit2 === "bytes" ? BYTE_INCRS : undefined,
      values: spec.unit2 === "ratio" ? (u, splits) => splits.map((v) => ax2(v)) : onlyZero(ax2, () => seen.y2) });
  }
  const scales = {
    x: { time: true, range: () => ctx.range() },
    y: { range: (u, min, max) => { seen.y = Math.max(max ?? 0, bandTop.y); return [Math.min(0, min ?? 0), top(max, bandTop.y)]; } },
  };
  if (hasY2) {
    scales.y2 = spec.unit2 === "ratio"
      ? { range: [0, 1.05] }
      : { range: (u, min, max) => { seen.y2 = Math.max(max ?? 0, bandTop.y2); return [0, top(max, bandTop.y2)]; } };
  }
  const opts = {
    width: ctx.width, height: ctx.height,
    // UTC chosen in the header: ticks fall on UTC hours and days
    tzDate: timeZone() === "utc" ? (ts) => uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC") : undefined,
    // charts without a right axis keep its width free, so that all plot
    // areas of the view start and end at the same x
    padding: [8, hasY2 ? 4 : AXIS_W + 4, 0, 0],
    series, axes, scales,
    legend: { live: true },
    cursor: {
      sync: { key: ctx.syncKey, setSeries: false },
      drag: { x: true, y: false, setScale: false },
    },
    hooks: {
      init: [legendKeys],
      drawClear: [(u) => { shadeAlerts(u, ctx.alerts); drawBands(u, ctx.bands); }],
      setCursor: [(u) => bandLabel(u, ctx.alerts)],
      setSeries: [(u, i, o) => {
        if (i === null || !o || o.show === undefined || !u.series[i]) return;
        if (!ctx.hidden) ctx.hidden = new Set();
        if (o.show) ctx.hidden.delete(u.series[i].label); else ctx.hidden.add(u.series[i].label);
        legendState(u);
      }],
      setSelect: [(u) => {
        const w = u.select.width;
        if (w > 4) {
          const a = u.posToVal(u.select.left, "x");
          const b = u.posToVal(u.select.left + w, "x");
          u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
          ctx.onZoom(a, b);
        }
      }],
    },
  };
  return { opts, data };
}

// The legend's entries as buttons: focusable, Enter or Space toggles the
// line (uPlot toggles on click), and their pressed state for screen readers.
function legendKeys(u) {
  u.root.querySelectorAll(".u-legend tr.u-series").forEach((tr, i) => {
    if (i === 0 && !tr.querySelector(".u-marker")) return;	// the time row
    tr.tabIndex = 0;
    tr.setAttribute("role", "button");
    tr.addEventListener("keydown", (e) => {
      if (e.key !== "Enter" && e.key !== " ") return;
      e.preventDefault();
      const th = tr.querySelector("th");
      if (th) th.click();
    });
  });
  legendState(u);
}

function legendState(u) {
  u.root.querySelectorAll(".u-legend tr.u-series").forEach((tr, i) => {
    const s = u.series[i];
    if (!s || i === 0) return;
    tr.setAttribute("aria-pressed", s.show ? "false" : "true");
  });
}

// Names the alert under the cursor in a small label at the top of the plot.
function bandLabel(u, alerts) {
  let lab = u.root.querySelector(".band-label");
  const left = u.cursor.left;
  const txt = alerts && alerts.length && left !== null && left >= 0 ? bandText(alerts, u.posToVal(left, "x")) : null;
  if (!txt) {
    if (lab) lab.hidden = true;
    return;
  }
  if (!lab) {
    lab = document.createElement("div");
    lab.className = "band-label";
    u.over.appendChild(lab);
  }
  const hit = alerts.find((a) => { const t = u.posToVal(left, "x"); return t >= a.t0 && t <= a.t1; });
  lab.className = "band-label " + (hit ? hit.severity : "");
  lab.textContent = txt;
  lab.hidden = false;
  const w = lab.offsetWidth, room = u.over.clientWidth;
  lab.style.left = Math.max(0, Math.min(room - w, left + 8)) + "px";
}

// Fill each band between its max and min edges, one polygon per run of
// non-null buckets, under the series (a hidden series hides its band).
// Positions straight from the scales (all linear here), the x pixels once
// for every band: this runs for every band of every chart on each draw,
// ~9,000 points on a 7-day view, and uPlot's valToPos per point was most
// of its cost.
function drawBands(u, bands) {
  if (!bands || !bands.length) return;
  const { ctx } = u;
  const xs = u.data[0];
  const i0 = u.series[0].idxs?.[0] ?? 0, i1 = u.series[0].idxs?.[1] ?? xs.length - 1;
  if (i1 < i0) return;
  const { left, top, width, height } = u.bbox;
  const sx = u.scales.x;
  const kx = width / (sx.max - sx.min || 1);
  const px = new Float64Array(i1 - i0 + 1);
  for (let k = i0; k <= i1; k++) px[k - i0] = left + (xs[k] - sx.min) * kx;
  ctx.save();
  ctx.beginPath();
  ctx.rect(left, top, width, height);
  ctx.clip();
  for (const b of bands) {
    if (u.series[b.idx] && u.series[b.idx].show === false) continue;
    const sc = u.scales[b.scale];
    const lo = sc.min, ky = height / (sc.max - sc.min || 1), bottom = top + height;
    const hi = b.max, mn = b.min;
    ctx.fillStyle = b.fill;
    let i = i0;
    while (i <= i1) {
      while (i <= i1 && (hi[i] === null || mn[i] === null || hi[i] === undefined)) i++;
      if (i > i1) break;
      let j = i;
      while (j + 1 <= i1 && hi[j + 1] !== null && mn[j + 1] !== null && hi[j + 1] !== undefined) j++;
      ctx.beginPath();
      ctx.moveTo(px[i - i0], bottom - (hi[i] - lo) * ky);
      for (let k = i + 1; k <= j; k++) ctx.lineTo(px[k - i0], bottom - (hi[k] - lo) * ky);
      for (let k = j; k >= i; k--) ctx.lineTo(px[k - i0], bottom - (mn[k] - lo) * ky);
      ctx.closePath();
      ctx.fill();
      i = j + 1;
    }
  }
  ctx.restore();
}

// Fill each alert interval over the plot area, under the series.
// Sets data-shaded on the chart's root to the number of intervals drawn.
function shadeAlerts(u, alerts) {
  u.root.dataset.shaded = "0";
  if (!alerts || alerts.length === 0) return;
  const { ctx, bbox } = u;
  let drawn = 0;
  ctx.save();
  for (const a of mergeIntervals(alerts)) {
    let x0 = u.valToPos(a.t0, "x", true);
    let x1 = u.valToPos(a.t1, "x", true);
    x0 = Math.max(bbox.left, x0);
    x1 = Math.min(bbox.left + bbox.width, x1);
    if (x1 <= x0) x1 = x0 + 2;
    if (x0 > bbox.left + bbox.width || x1 < bbox.left) continue;
    ctx.fillStyle = SEV_FILL[a.severity] || SEV_FILL.warning;
    ctx.fillRect(x0, bbox.top, x1 - x0, bbox.height);
    // a solid bar along the top: the interval stays visible over busy
    // min/max bands (a 7-day view) and narrow ones are not lost
    ctx.fillStyle = SEV_BAR[a.severity] || SEV_BAR.warning;
    ctx.fillRect(x0, bbox.top, Math.max(3, x1 - x0), 5 * (devicePixelRatio || 1));
    drawn++;
  }
  ctx.restore();
  u.root.dataset.shaded = String(drawn);
}

// A chart in el. Returns {update(lines, x), resize(width), destroy()}.
export function createChart(el, spec, lines, x, ctx) {
  let built = build(spec, lines, x, ctx);
  let u = new uPlot(built.opts, built.data, el);
  let shape = lines.map((l) => l.label + (l.min ? "+" : "")).join("|");
  return {
    // New data of the same shape is set in place (keeps zoom state and
    // cursor); a different shape rebuilds the chart.
    update(newLines, newX) {
      const newShape = newLines.map((l) => l.label + (l.min ? "+" : "")).join("|");
      built = build(spec, newLines, newX, ctx);
      if (newShape === shape) {
        u.setData(built.data);
      } else {
        u.destroy();
        u = new uPlot(built.opts, built.data, el);
        shape = newShape;
      }
    },
    resize(width) { u.setSize({ width, height: ctx.height }); },
    redraw() { u.redraw(false, false); },
    destroy() { u.destroy(); },
    get plot() { return u; },
  };
}

