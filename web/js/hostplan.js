// hostplan.js - what the host view's first load asks the server for (the
// window, the number of points, the series_batch and alerts requests), as a
// pure function of the URL hash, the window's width and the /metrics answer.
// Why a module of its own: js/boot.js imports it to send
// those requests while the other modules load and evaluate (the server's
// answers then overlap that time instead of following it), and host.js
// asks for exactly the same URLs, which api.js hands over (vmscopeEarly).
import { apiUrl } from "./api.js";
import { CGROUP_FIGURES, HOST_FIGURES, neededNames, resolve } from "./figures.js";

export const RANGES = { "15m": 900, "1h": 3600, "6h": 21600, "24h": 86400, "7d": 604800, "30d": 2592000 };

// The window the hash asks for: {since, until, fixed, rangeKey, from}.
// from and to: a fixed window; from alone: from then on to now, following
// now (an open alert's link); range: the last 15m..30d.
export function windowOf(params, now = Date.now() / 1000) {
  const from = Number(params.get("from")), to = Number(params.get("to"));
  if (params.get("from") && params.get("to") && Number.isFinite(from) && Number.isFinite(to) && to > from) {
    return { since: from, until: to, fixed: true, rangeKey: null };
  }
  if (params.get("from") && !params.get("to") && Number.isFinite(from) && from < now) {
    return { since: from, until: now, fixed: false, rangeKey: null, from };
  }
  const key = RANGES[params.get("range")] ? params.get("range") : "1h";
  return { since: now - RANGES[key], until: now, fixed: false, rangeKey: key };
}

// Points per series for a window width (CSS px): one per two pixels of a
// chart's plot area. The chart grid (css/app.css .charts: columns of at
// least 560 px, 10 px gaps, 14 px page padding) and a chart's frame (18 px)
// and axes (2 x 60 px) give the plot width without laying the page out, so
// boot.js knows it before the CSS has loaded. Two pixels a point:
// the min..max band still shows every spike, and a 7-day answer is half of
// what one point a pixel costs (bytes, server and page time).
export function pointsFor(viewportWidth) {
  const inner = Math.max(300, viewportWidth - 28);
  const cols = Math.max(1, Math.floor((inner + 10) / 570));
  const plot = (inner - 10 * (cols - 1)) / cols - 18 - 120;
  return Math.max(100, Math.min(1000, Math.round(plot / 2)));
}

// The metric names the view fetches for a /metrics answer: every name the
// figures need, and on a host the two that tell the page size.
export function namesFor(metricsAnswer, cgroup) {
  const have = new Set((metricsAnswer.metrics || []).map((x) => x.name));
  const figs = resolve(cgroup ? CGROUP_FIGURES : HOST_FIGURES, have);
  const names = neededNames(figs);
  if (!cgroup) for (const n of ["vmstat.nr_dirty", "meminfo.Dirty"]) if (have.has(n) && !names.includes(n)) names.push(n);
  return { have, figs, names };
}

// The requests of one load: {batches: [series_batch params], alerts: alerts
// params}. Two batches asked in parallel: most of a batch's server time is
// writing the JSON answer, and two requests let two server threads (and two
// PostgreSQL backends) share it.
export function requestsFor(host, cgroup, win, names, points, version = 0) {
  const q = { cgroup: cgroup || undefined, cgroup_version: cgroup && version ? version : undefined,
    since: win.since.toFixed(3), until: win.until.toFixed(3), points };
  const half = Math.ceil(names.length / 2);
  // columns: four arrays a series instead of an array a point
  const batches = [names.slice(0, half), names.slice(half)].filter((p) => p.length)
    .map((p) => ({ metrics: p.join(","), ...q, layout: "columns" }));
  const alerts = { host, since: Math.floor(win.since), until: Math.ceil(win.until), state: "all", limit: 1000 };
  return { batches, alerts };
}

export const batchPath = (host) => "hosts/" + encodeURIComponent(host) + "/series_batch";

// Called by js/boot.js on a host view: sends the alerts
// request now and the series_batch ones once the /metrics answer is in
// (metricsJson: the parsed answer of the request boot.js already
// sent); each fetch promise goes into early (URL -> promise) for api.js.
// Resolves to the plan host.js's first load follows ({win, points, names}:
// names as a comma list), or null when the hash is not a host view or the
// names could not be known.
export async function startEarly(hash, width, metricsJson, headers, early) {
  const h = hash.replace(/^#\/?/, "");
  const qi = h.indexOf("?");
  const parts = (qi < 0 ? h : h.slice(0, qi)).split("/");
  if (parts[0] !== "host" || parts.length < 2) return null;
  const host = decodeURIComponent(parts.slice(1).join("/"));
  const params = new URLSearchParams(qi < 0 ? "" : h.slice(qi + 1));
  const cgroup = params.get("cgroup") || "";
  const version = cgroup ? Number(params.get("cgroup_version")) || 0 : 0;
  const win = windowOf(params);
  const points = pointsFor(width);
  const send = (path, p) => {
    const url = apiUrl(path, p);
    const res = fetch(url, { headers });
    res.catch(() => { /* api.js asks again */ });
    early[url] = res;
  };
  send("alerts", requestsFor(host, cgroup, win, [], points).alerts);
  let m;
  try { m = await metricsJson; } catch (_) { return null; }
  const { names } = namesFor(m, cgroup);
  for (const b of requestsFor(host, cgroup, win, names, points, version).batches) send(batchPath(host), b);
  return { win, points, names: names.join(",") };
}
