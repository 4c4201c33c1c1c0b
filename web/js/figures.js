// figures.js - what the host view charts, as data: each figure lists its
// lines, and each line the metric names it reads (docs/api.md series names),
// with alternatives for older kernels and cgroup v1. resolve() picks, for the
// metrics a host actually reported, which names to fetch; assemble() turns
// fetched series into the aligned arrays the charts draw.

// the theme's chart colours (css/app.css --c-*, light and dark)
const C = {
  blue: "var(--c-blue)", red: "var(--c-red)", orange: "var(--c-orange)", green: "var(--c-green)", purple: "var(--c-purple)",
  teal: "var(--c-teal)", grey: "var(--c-grey)", brown: "var(--c-brown)", pink: "var(--c-pink)", olive: "var(--c-olive)",
};

// A line: {label, src: [{m: [names summed], label?}] (first whose names all
// exist wins), or prefix: "vmstat.allocstall_" (one line per metric found),
// or derive: {num: src, den: src} (ratio of two sums), scale: bytes per unit
// ("kB" = 1024, "page" = page size), color, dash, axis, band: false (no
// min..max band even when downsampled)}.
export const HOST_FIGURES = [
  {
    id: "refaults", title: "Refaults and activations", unit: "pages/s",
    sub: "workingset_refault_* (evicted pages read back) and workingset_activate_* (came back within the working-set distance)",
    lines: [
      { label: "refault file", color: C.orange, src: [{ m: ["vmstat.workingset_refault_file"] }, { m: ["vmstat.workingset_refault"], label: "refault (all, <5.9)" }] },
      { label: "refault anon", color: C.purple, src: [{ m: ["vmstat.workingset_refault_anon"] }] },
      { label: "activate file", color: C.brown, dash: [4, 3], src: [{ m: ["vmstat.workingset_activate_file"] }, { m: ["vmstat.workingset_activate"], label: "activate (all, <5.9)" }] },
      { label: "activate anon", color: C.pink, dash: [4, 3], src: [{ m: ["vmstat.workingset_activate_anon"] }] },
    ],
  },
  {
    id: "reclaim", title: "Reclaim: scanned vs stolen", unit: "pages/s", unit2: "ratio",
    sub: "pgscan/pgsteal for kswapd and direct reclaim, and all reclaim (anon + file, 5.8+: a cgroup's limit reclaim too); efficiency = stolen / scanned (right axis)",
    lines: [
      // no min..max band: it would cover kswapd's and direct's (a subset
      // of all reclaim), and every band is a polygon per draw
      { label: "scan all", color: C.purple, band: false, src: [{ m: ["vmstat.pgscan_anon", "vmstat.pgscan_file"] }] },
      { label: "steal all", color: C.olive, band: false, src: [{ m: ["vmstat.pgsteal_anon", "vmstat.pgsteal_file"] }] },
      { label: "scan kswapd", color: C.blue, src: [{ m: ["vmstat.pgscan_kswapd"] }, { prefix: "vmstat.pgscan_kswapd_" }] },
      { label: "steal kswapd", color: C.teal, src: [{ m: ["vmstat.pgsteal_kswapd"] }, { prefix: "vmstat.pgsteal_kswapd_" }] },
      { label: "scan direct", color: C.red, src: [{ m: ["vmstat.pgscan_direct"] }, { prefix: "vmstat.pgscan_direct_" }] },
      { label: "steal direct", color: C.orange, src: [{ m: ["vmstat.pgsteal_direct"] }, { prefix: "vmstat.pgsteal_direct_" }] },
      { label: "kswapd eff.", color: C.green, axis: "y2", dash: [2, 2], derive: { num: "steal kswapd", den: "scan kswapd" } },
      { label: "direct eff.", color: C.grey, axis: "y2", dash: [2, 2], derive: { num: "steal direct", den: "scan direct" } },
    ],
  },
  {
    id: "vmscan_write", title: "Writes from reclaim", unit: "pages/s",
    sub: "nr_vmscan_write (pages reclaim wrote, swap included), nr_vmscan_immediate_reclaim (dirty pages tagged for reclaim after writeback), pgrotated",
    lines: [
      { label: "vmscan write", color: C.red, src: [{ m: ["vmstat.nr_vmscan_write"] }] },
      { label: "immediate reclaim", color: C.orange, src: [{ m: ["vmstat.nr_vmscan_immediate_reclaim"] }] },
      { label: "rotated", color: C.grey, dash: [4, 3], src: [{ m: ["vmstat.pgrotated"] }] },
    ],
  },
  {
    id: "dirty", title: "Dirty and writeback vs thresholds", unit: "bytes",
    sub: "meminfo Dirty, Writeback; vmstat nr_dirty_threshold, nr_dirty_background_threshold (pages \u00d7 page size)",
    lines: [
      { label: "dirty", color: C.orange, scale: "kB", src: [{ m: ["meminfo.Dirty"] }] },
      { label: "writeback", color: C.red, scale: "kB", src: [{ m: ["meminfo.Writeback"] }] },
      { label: "dirty threshold", color: C.grey, dash: [6, 3], scale: "page", src: [{ m: ["vmstat.nr_dirty_threshold"] }] },
      { label: "background threshold", color: C.blue, dash: [2, 3], scale: "page", src: [{ m: ["vmstat.nr_dirty_background_threshold"] }] },
    ],
  },
  {
    id: "swap", title: "Swap", unit: "pages/s", unit2: "bytes",
    sub: "pswpin / pswpout (pages/s); swap used = SwapTotal \u2212 SwapFree (right axis)",
    lines: [
      { label: "swap in", color: C.blue, src: [{ m: ["vmstat.pswpin"] }] },
      { label: "swap out", color: C.red, src: [{ m: ["vmstat.pswpout"] }] },
      { label: "swap used", color: C.purple, axis: "y2", scale: "kB", dash: [4, 3], diff: { a: "meminfo.SwapTotal", b: "meminfo.SwapFree" } },
    ],
  },
  {
    id: "psi", title: "Pressure (PSI avg10)", unit: "pct",
    sub: "share of time tasks stalled on memory / io: some = at least one task, full = all non-idle tasks",
    lines: [
      { label: "memory some", color: C.purple, src: [{ m: ["psi.memory.some.avg10"] }] },
      { label: "memory full", color: C.red, src: [{ m: ["psi.memory.full.avg10"] }] },
      { label: "io some", color: C.blue, dash: [4, 3], src: [{ m: ["psi.io.some.avg10"] }] },
      { label: "io full", color: C.teal, dash: [4, 3], src: [{ m: ["psi.io.full.avg10"] }] },
    ],
  },
  {
    id: "allocstall", title: "Allocation stalls (direct reclaim entered)", unit: "/s",
    sub: "allocstall_* per zone (allocstall before 4.10)",
    lines: [
      { label: "allocstall", color: C.red, expand: "vmstat.allocstall_", src: [{ m: ["vmstat.allocstall"] }] },
    ],
  },
];

export const CGROUP_FIGURES = [
  {
    id: "cg_refaults", title: "Refaults and activations", unit: "pages/s",
    sub: "memory.stat workingset_refault_*, workingset_activate_*, and major faults (a v1 cgroup without workingset counters: what a thrash verdict attributes by)",
    lines: [
      { label: "refault file", color: C.orange, src: [{ m: ["stat.workingset_refault_file"] }, { m: ["stat.workingset_refault"], label: "refault (all)" }] },
      { label: "refault anon", color: C.purple, src: [{ m: ["stat.workingset_refault_anon"] }] },
      { label: "activate file", color: C.brown, dash: [4, 3], src: [{ m: ["stat.workingset_activate_file"] }, { m: ["stat.workingset_activate"], label: "activate (all)" }] },
      { label: "activate anon", color: C.pink, dash: [4, 3], src: [{ m: ["stat.workingset_activate_anon"] }] },
      { label: "major faults", color: C.red, dash: [2, 2], src: [{ m: ["stat.pgmajfault"] }, { m: ["stat.total_pgmajfault"] }] },
    ],
  },
  {
    id: "cg_reclaim", title: "Reclaim: scanned vs stolen", unit: "pages/s", unit2: "ratio",
    sub: "memory.stat pgscan, pgsteal (all reclaim of this cgroup, limit-driven included); efficiency on the right",
    lines: [
      { label: "scan", color: C.blue, src: [{ m: ["stat.pgscan"] }] },
      { label: "steal", color: C.teal, src: [{ m: ["stat.pgsteal"] }] },
      { label: "efficiency", color: C.green, axis: "y2", dash: [2, 2], derive: { num: "steal", den: "scan" } },
    ],
  },
  {
    id: "cg_dirty", title: "Dirty and writeback", unit: "bytes",
    sub: "memory.stat file_dirty, file_writeback (v1: dirty, writeback, or the hierarchy's total_dirty, total_writeback)",
    lines: [
      { label: "dirty", color: C.orange, src: [{ m: ["stat.file_dirty"] }, { m: ["stat.dirty"] }, { m: ["stat.total_dirty"] }] },
      { label: "writeback", color: C.red, src: [{ m: ["stat.file_writeback"] }, { m: ["stat.writeback"] }, { m: ["stat.total_writeback"] }] },
    ],
  },
  {
    id: "cg_memory", title: "Memory vs limit", unit: "bytes",
    sub: "memory_current against memory_max (no line: no limit), swap_current, anon and file",
    lines: [
      { label: "current", color: C.blue, src: [{ m: ["memory_current"] }] },
      { label: "max", color: C.red, dash: [6, 3], src: [{ m: ["memory_max"] }] },
      { label: "swap", color: C.purple, src: [{ m: ["swap_current"] }] },
      { label: "anon", color: C.brown, dash: [2, 3], src: [{ m: ["stat.anon"] }, { m: ["stat.rss"] }] },
      { label: "file", color: C.teal, dash: [2, 3], src: [{ m: ["stat.file"] }, { m: ["stat.cache"] }] },
    ],
  },
  {
    id: "cg_psi", title: "Pressure (memory.pressure avg10)", unit: "pct",
    sub: "psi.some / psi.full avg10 of this cgroup (v2)",
    lines: [
      { label: "some", color: C.purple, src: [{ m: ["psi.some.avg10"] }] },
      { label: "full", color: C.red, src: [{ m: ["psi.full.avg10"] }] },
    ],
  },
  {
    id: "cg_events", title: "memory.events", unit: "/s",
    sub: "high (throttled at memory.high), max (hit memory.max), oom_kill",
    lines: [
      { label: "high", color: C.orange, src: [{ m: ["events.high"] }] },
      { label: "max", color: C.red, src: [{ m: ["events.max"] }] },
      { label: "oom_kill", color: C.pink, src: [{ m: ["events.oom_kill"] }] },
    ],
  },
];

// For the names a host/cgroup reported (a Set), the concrete lines of each
// figure: [{fig, lines: [{label, color, dash, axis, scale, names[] | derive | diff}]}].
// Lines whose metrics are all missing are dropped (an older kernel simply
// shows fewer lines); a figure with no line is kept, empty, so the layout
// says "no data" instead of silently shifting.
export function resolve(figures, have) {
  const out = [];
  for (const fig of figures) {
    const lines = [];
    for (const ln of fig.lines) {
      const base = { label: ln.label, color: ln.color, dash: ln.dash, axis: ln.axis, scale: ln.scale, band: ln.band };
      if (ln.derive) {
        const num = lines.find((l) => l.origLabel === ln.derive.num);
        const den = lines.find((l) => l.origLabel === ln.derive.den);
        if (num && den) lines.push({ ...base, derive: { num, den } });
        continue;
      }
      if (ln.diff) {
        if (have.has(ln.diff.a) && have.has(ln.diff.b)) lines.push({ ...base, diff: ln.diff });
        continue;
      }
      if (ln.expand) {
        const found = [...have].filter((n) => n.startsWith(ln.expand)).sort();
        const palette = [C.red, C.orange, C.purple, C.blue, C.teal];
        found.forEach((n, i) => lines.push({ ...base, label: n.slice(n.indexOf(".") + 1), color: palette[i % palette.length], names: [n] }));
        if (found.length) continue;
      }
      for (const s of ln.src || []) {
        let names = s.m || [];
        if (s.prefix) names = [...have].filter((n) => n.startsWith(s.prefix) && !n.slice(s.prefix.length).includes("_")).sort();
        if (names.length && names.every((n) => have.has(n))) {
          lines.push({ ...base, label: s.label || ln.label, origLabel: ln.label, names });
          break;
        }
      }
    }
    out.push({ fig, lines });
  }
  return out;
}

// Every metric name the resolved figures need.
export function neededNames(resolved) {
  const s = new Set();
  for (const { lines } of resolved) {
    for (const l of lines) {
      for (const n of l.names || []) s.add(n);
      if (l.diff) { s.add(l.diff.a); s.add(l.diff.b); }
    }
  }
  return [...s];
}

// fetched: Map name -> series answer: columns ({ts, avg, min, max} or {ts,
// v}, series_batch?layout=columns, what the view asks for) or points
// ({points: [[ts, avg, min, max] | [ts, v]]}), with downsampled. Returns the
// shared x (sorted union of timestamps) and, per name, {avg, min, max}
// arrays aligned with x (null where the series has no point). Positional
// arrays, not a map per series: the answers of one batch share their
// timestamps (then a columns answer's arrays are used as they are), and a
// 7-day view aligns ~30 x 320 points on every load.
function colsOf(ans) {
  if (Array.isArray(ans.ts)) {
    const avg = ans.avg || ans.v || [];
    return { ts: ans.ts, avg, min: ans.min || avg, max: ans.max || avg };
  }
  const pts = ans.points || [];
  const ts = new Array(pts.length), avg = new Array(pts.length), min = new Array(pts.length), max = new Array(pts.length);
  for (let k = 0; k < pts.length; k++) {
    const p = pts[k];
    ts[k] = p[0];
    avg[k] = p[1];
    min[k] = p.length >= 4 ? p[2] : p[1];
    max[k] = p.length >= 4 ? p[3] : p[1];
  }
  return { ts, avg, min, max };
}

const sameTs = (a, b) => {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
};

export function index(fetched) {
  const cols = new Map();
  let x = null, union = false;
  for (const [name, ans] of fetched) {
    const c = colsOf(ans);
    cols.set(name, [c, !!ans.downsampled]);
    if (x === null) x = c.ts;
    else if (!sameTs(x, c.ts)) union = true;
  }
  if (union) {
    const xs = new Set();
    for (const [c] of cols.values()) for (const t of c.ts) xs.add(t);
    x = [...xs].sort((a, b) => a - b);
  }
  x = x || [];
  const pos = union ? new Map(x.map((t, i) => [t, i])) : null;
  const byName = new Map();
  for (const [name, [c, downsampled]] of cols) {
    if (!union || sameTs(x, c.ts)) {
      byName.set(name, { avg: c.avg, min: c.min, max: c.max, downsampled });
      continue;
    }
    const avg = new Array(x.length).fill(null), min = new Array(x.length).fill(null), max = new Array(x.length).fill(null);
    for (let k = 0; k < c.ts.length; k++) {
      const i = pos.get(c.ts[k]);
      avg[i] = c.avg[k];
      min[i] = c.min[k];
      max[i] = c.max[k];
    }
    byName.set(name, { avg, min, max, downsampled });
  }
  return breakGaps(x, byName);
}

// A hole in the data (a host or the server away) stays a hole: where two
// neighbouring times are more than 2.5 steps apart (the median step), a
// time with no value in any series is put between them, so that no line
// joins the two sides as if something had been measured in between.
export function breakGaps(x, byName) {
  if (x.length < 3) return { x, byName };
  const steps = [];
  for (let i = 1; i < x.length; i++) steps.push(x[i] - x[i - 1]);
  const med = [...steps].sort((a, b) => a - b)[steps.length >> 1];
  if (!(med > 0)) return { x, byName };
  const holes = [];
  for (let i = 1; i < x.length; i++) if (x[i] - x[i - 1] > 2.5 * med) holes.push(i);
  if (!holes.length) return { x, byName };
  const widen = (arr) => {
    if (!arr) return arr;
    const out = [];
    let h = 0;
    for (let i = 0; i < arr.length; i++) {
      if (h < holes.length && holes[h] === i) { out.push(null); h++; }
      out.push(arr[i]);
    }
    return out;
  };
  const nx = [];
  let h = 0;
  for (let i = 0; i < x.length; i++) {
    if (h < holes.length && holes[h] === i) { nx.push(x[i - 1] + med); h++; }
    nx.push(x[i]);
  }
  const nb = new Map();
  for (const [name, c] of byName) nb.set(name, { ...c, avg: widen(c.avg), min: widen(c.min), max: widen(c.max) });
  return { x: nx, byName: nb };
}

// The arrays a chart draws for one resolved figure. pageSize in bytes.
export function assemble(resolvedFig, idx, pageSize) {
  const { x, byName } = idx;
  const out = [];
  const mult = (l) => (l.scale === "kB" ? 1024 : l.scale === "page" ? pageSize : 1);
  const sums = new Map();
  for (const l of resolvedFig.lines) {
    const k = mult(l);
    if (l.names) {
      const sers = l.names.map((n) => byName.get(n)).filter(Boolean);
      const banded = l.band !== false && sers.length > 0 && sers.some((s) => s.downsampled);
      const avg = [], min = banded ? [] : null, max = banded ? [] : null;
      for (let i = 0; i < x.length; i++) {
        let a = null, lo = null, hi = null;
        for (const s of sers) {
          const v = s.avg[i];
          if (v === null) continue;
          a = (a ?? 0) + v;
          lo = (lo ?? 0) + (s.min[i] ?? v);
          hi = (hi ?? 0) + (s.max[i] ?? v);
        }
        avg.push(a === null ? null : a * k);
        if (banded) { min.push(lo === null ? null : lo * k); max.push(hi === null ? null : hi * k); }
      }
      const line = { label: l.label, color: l.color, dash: l.dash, axis: l.axis, avg, min, max };
      sums.set(l, avg);
      out.push(line);
    } else if (l.diff) {
      const a = byName.get(l.diff.a), b = byName.get(l.diff.b);
      const avg = x.map((_, i) => {
        const va = a ? a.avg[i] : null, vb = b ? b.avg[i] : null;
        if (va === null || vb === null) return null;
        return (va - vb) * k;
      });
      out.push({ label: l.label, color: l.color, dash: l.dash, axis: l.axis, avg, min: null, max: null });
    } else if (l.derive) {
      const num = sums.get(l.derive.num), den = sums.get(l.derive.den);
      const avg = x.map((_, i) => {
        const n = num?.[i], d = den?.[i];
        if (n === null || n === undefined || !d) return null;
        return Math.min(1, n / d);
      });
      out.push({ label: l.label, color: l.color, dash: l.dash, axis: l.axis, avg, min: null, max: null });
    }
  }
  return out;
}

// Page size from the host's own figures: meminfo Dirty (kB) / vmstat nr_dirty
// (pages) is exactly the page size in KiB when both are read in one sample.
// Falls back to 4096.
export function inferPageSize(idx) {
  const kb = idx.byName.get("meminfo.Dirty"), pg = idx.byName.get("vmstat.nr_dirty");
  if (!kb || !pg) return 4096;
  const ratios = [];
  for (let i = 0; i < pg.avg.length; i++) {
    const v = pg.avg[i], k = kb.avg[i];
    if (v > 0 && k > 0) ratios.push((k * 1024) / v);
  }
  if (!ratios.length) return 4096;
  ratios.sort((a, b) => a - b);
  const r = ratios[Math.floor(ratios.length / 2)];
  for (const ps of [4096, 8192, 16384, 65536]) if (Math.abs(r - ps) / ps < 0.25) return ps;
  return 4096;
}

// What a chart has to show over its window: "unreported" (no line: the
// kernel or cgroup has none of its names), "empty" (lines, but no value in
// the window), "zero" (every value, min..max bands included, is 0: nothing
// happened) or "data". The view folds all but "data" into one line each.
export function activity(lines) {
  if (!lines.length) return "unreported";
  let seen = false;
  for (const l of lines) {
    for (const arr of [l.avg, l.max, l.min]) {
      if (!arr) continue;
      for (const v of arr) {
        if (v === null || v === undefined) continue;
        if (v !== 0) return "data";
        seen = true;
      }
    }
  }
  return seen ? "zero" : "empty";
}
