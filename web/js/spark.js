// spark.js - sparklines on a canvas for the fleet table: one or two series of
// [ts, value] over a fixed time window, gaps (null) left blank, no axes.
// Drawn at devicePixelRatio so they stay sharp. Colours may be CSS
// variables ("var(--c-blue)", app.css): the theme's (light or dark) value.

import { cssColor } from "./dom.js";

// Draw series (array of {points, color}) into a new canvas of w x h CSS pixels
// over [t0, t1]. yMax fixes the top of the scale (e.g. 1 for efficiency);
// otherwise the largest value (at least a small floor, so noise stays flat).
export function sparkline(series, t0, t1, { w = 110, h = 24, yMax = null, floor = 1e-9, title = "" } = {}) {
  const dpr = window.devicePixelRatio || 1;
  const c = document.createElement("canvas");
  c.className = "spark";
  c.width = Math.round(w * dpr);
  c.height = Math.round(h * dpr);
  c.style.width = w + "px";
  c.style.height = h + "px";
  if (title) c.title = title;
  const ctx = c.getContext("2d");
  ctx.scale(dpr, dpr);
  let max = yMax;
  if (max === null) {
    max = floor;
    for (const s of series) for (const p of s.points || []) if (p[1] !== null && p[1] > max) max = p[1];
  }
  const span = Math.max(1, t1 - t0);
  const x = (t) => ((t - t0) / span) * (w - 2) + 1;
  const y = (v) => h - 2 - (Math.min(v, max) / max) * (h - 4);
  ctx.strokeStyle = cssColor("var(--spark-base)");
  ctx.beginPath();
  ctx.moveTo(0, h - 1.5);
  ctx.lineTo(w, h - 1.5);
  ctx.stroke();
  for (const s of series) {
    const pts = s.points || [];
    const color = cssColor(s.color);
    ctx.strokeStyle = color;
    ctx.fillStyle = color + "22";
    ctx.lineWidth = 1.25;
    let run = [];
    const flush = () => {
      if (run.length === 0) return;
      ctx.beginPath();
      if (run.length === 1) {
        ctx.arc(x(run[0][0]), y(run[0][1]), 1, 0, 2 * Math.PI);
        ctx.fillStyle = color;
        ctx.fill();
      } else {
        ctx.moveTo(x(run[0][0]), y(run[0][1]));
        for (const p of run) ctx.lineTo(x(p[0]), y(p[1]));
        ctx.stroke();
        ctx.lineTo(x(run[run.length - 1][0]), h - 2);
        ctx.lineTo(x(run[0][0]), h - 2);
        ctx.closePath();
        ctx.fillStyle = color + "22";
        ctx.fill();
      }
      run = [];
    };
    for (const p of pts) {
      if (p[1] === null || p[1] === undefined) flush();
      else run.push(p);
    }
    flush();
  }
  return c;
}

// The last non-null value of [ts, v] points, or null.
export function lastValue(points) {
  for (let i = (points || []).length - 1; i >= 0; i--) if (points[i][1] !== null) return points[i][1];
  return null;
}

// The largest non-null value, or null.
export function maxValue(points) {
  let m = null;
  for (const p of points || []) if (p[1] !== null && (m === null || p[1] > m)) m = p[1];
  return m;
}
