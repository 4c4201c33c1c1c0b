// nav.js - what every view shares: hash routes, the header (status line,
// time zone, refresh interval and pause), and polling that is honest about
// outages: when the server or its database does not answer, the view keeps
// what it showed, greys it, says "data as of HH:MM:SS" in a banner, and
// retries with backoff until the answers come back, by itself.
import { fmtAgo, fmtClock, setTimeZone, zoneLabel } from "./format.js";

// "#/host/db-07?from=1&to=2" -> {name:"host", arg:"db-07", params:URLSearchParams}
export function parseHash(hash) {
  const h = (hash || "").replace(/^#\/?/, "");
  const qi = h.indexOf("?");
  const path = qi < 0 ? h : h.slice(0, qi);
  const params = new URLSearchParams(qi < 0 ? "" : h.slice(qi + 1));
  const parts = path.split("/");
  const name = parts[0] || "fleet";
  const arg = parts.length > 1 ? decodeURIComponent(parts.slice(1).join("/")) : "";
  return { name, arg, params };
}

// Build a hash; params with empty values are left out.
export function makeHash(name, arg, params = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  }
  const s = q.toString();
  return "#/" + name + (arg ? "/" + encodeURIComponent(arg) : "") + (s ? "?" + s : "");
}

// Change the hash's query without re-mounting the view (no hashchange event).
export function replaceHash(hash) {
  history.replaceState(null, "", hash);
}

// Status line in the header: last successful refresh or the last error.
export function setStatus(text, isError = false) {
  const s = typeof document !== "undefined" && document.getElementById("status");
  if (!s) return;
  s.textContent = text;
  s.classList.toggle("err", isError);
}

// ---- preferences (localStorage; the header's controls change them) ----

const PREF_KEY = "vmscope.prefs";
const DEFAULTS = { tz: "local", refresh: 10000 };
// refresh intervals offered, ms (0: paused)
export const REFRESH_CHOICES = [[5000, "5 s"], [10000, "10 s"], [30000, "30 s"], [60000, "1 min"], [300000, "5 min"]];
let prefCache = null;

export function prefs() {
  if (!prefCache) {
    prefCache = { ...DEFAULTS };
    try {
      Object.assign(prefCache, JSON.parse(localStorage.getItem(PREF_KEY) || "{}"));
    } catch (_) { /* private mode, or not a browser */ }
  }
  return prefCache;
}

// Sets one preference, keeps it, and tells the page ("vmscope-prefs").
export function setPref(key, value) {
  prefs()[key] = value;
  try { localStorage.setItem(PREF_KEY, JSON.stringify(prefCache)); } catch (_) { /* private mode */ }
  if (key === "tz") setTimeZone(value);
  if (typeof window !== "undefined") window.dispatchEvent(new CustomEvent("vmscope-prefs", { detail: { key, value } }));
}

// ---- polling and staleness ----

// An error that says the server or its database is away (retry), not that
// the request is wrong (a 4xx: retrying would not help).
export function isOutage(e) {
  return !!e && e.name !== "AbortError" && (e.status === 0 || e.status >= 500);
}

// The wait before the n-th retry in a row (n >= 1): 2, 4, 8, ... 60 s.
export function backoffMs(n) {
  return Math.min(60000, 2000 * 2 ** Math.max(0, n - 1));
}

// The one view on screen's freshness: when its data last came in, and the
// outage since then (null while answers come).
const fresh = { asOf: null, error: null, retryAt: 0, retryNow: null };
let bannerTick = null;

function banner() {
  let b = document.getElementById("stale-banner");
  if (!b) {
    b = document.createElement("div");
    b.id = "stale-banner";
    b.className = "stale-banner";
    b.setAttribute("role", "status");
    b.hidden = true;
    const main = document.getElementById("view");
    main.parentNode.insertBefore(b, main);
  }
  return b;
}

function renderBanner() {
  if (typeof document === "undefined") return;
  const view = document.getElementById("view");
  const stale = !!fresh.error;
  if (view) view.classList.toggle("stale", stale && fresh.asOf !== null);
  clearInterval(bannerTick);
  bannerTick = null;
  // built on the first outage only: a page that never sees one pays nothing
  const old = document.getElementById("stale-banner");
  if (!stale) {
    if (old) old.hidden = true;
    return;
  }
  const b = old || banner();
  b.hidden = false;
  const draw = () => {
    const wait = Math.max(0, Math.ceil((fresh.retryAt - Date.now()) / 1000));
    const asOf = fresh.asOf === null ? "nothing loaded yet"
      : "showing data as of " + fmtClock(fresh.asOf / 1000) + " (" + fmtAgo(fresh.asOf / 1000) + ")";
    const btn = document.createElement("button");
    btn.type = "button";
    btn.className = "retry-now";
    btn.textContent = "retry now";
    btn.addEventListener("click", () => { if (fresh.retryNow) fresh.retryNow(); });
    const msg = document.createElement("span");
    msg.className = "stale-msg";
    msg.textContent = fresh.error + " \u2014 " + asOf + ". " +
      (fresh.retryAt ? (wait ? "Retrying in " + wait + " s." : "Retrying\u2026") : "Refresh is paused.");
    b.replaceChildren(msg, " ", btn);
  };
  draw();
  bannerTick = setInterval(draw, 1000);
}

// A new view: nothing known about its freshness yet.
export function resetFreshness() {
  fresh.asOf = null;
  fresh.error = null;
  fresh.retryAt = 0;
  fresh.retryNow = null;
  renderBanner();
}

function outageText(e) {
  if (e.status === 0) return "Server unreachable";
  if (e.status === 503 && /database/i.test(e.message)) return "Database unreachable";
  return "Server error (" + e.message + ")";
}

const active = new Set();	// the running pollers' "run now"

// Runs fn(signal) now and then again after each run finished (a slow
// server never gets overlapping requests), every header refresh interval
// but at least opts.min ms (a 7-day view: a minute); paused, not again.
// With opts.every === null, once (a view that is not polled). A run that
// throws an outage (isOutage: the server or its database away) marks the
// view stale and is retried after backoffMs, paused or not; the next
// success clears it. fn shows other errors itself and throws them on
// (no "updated" in the status line then). With opts.quiet, a poller beside
// the view's own (the fleet's regression banner): its runs never touch the
// status line or the outage banner, a failed one waits for the next period.
// Returns stop(); fn gets an AbortSignal that stop() aborts.
export function poll(fn, opts = {}) {
  const ctl = new AbortController();
  const once = opts.every === null;
  let timer = null, failures = 0, running = false;
  const period = () => {
    const p = prefs().refresh;
    if (!p) return 0;
    return Math.max(p, opts.min || 0);
  };
  const schedule = (ms) => {
    clearTimeout(timer);
    timer = ms > 0 ? setTimeout(run, ms) : null;
  };
  const run = async () => {
    if (ctl.signal.aborted || running) return;
    running = true;
    clearTimeout(timer);
    if (opts.quiet) {
      try { await fn(ctl.signal); } catch (e) { if (e.name !== "AbortError" && !e.status && !isOutage(e)) console.warn(e); }
      running = false;
      if (!ctl.signal.aborted && !once) schedule(period());
      return;
    }
    let ok = true;
    try {
      await fn(ctl.signal);
    } catch (e) {
      if (e.name === "AbortError") { running = false; return; }
      // another error: the view has shown it; no "updated", no retry
      // before the next regular run
      ok = false;
      if (isOutage(e)) {
        failures++;
        const wait = backoffMs(failures);
        fresh.error = outageText(e);
        fresh.retryAt = Date.now() + wait;
        fresh.retryNow = run;
        renderBanner();
        setStatus(fresh.error.toLowerCase(), true);
        running = false;
        if (!ctl.signal.aborted) schedule(wait);
        return;
      }
      if (!e.status) console.warn(e);	// a bug, not an answer
      failures = 0;
      if (fresh.error) { fresh.error = null; renderBanner(); }
    }
    running = false;
    if (ctl.signal.aborted) return;
    if (ok) {
      failures = 0;
      fresh.asOf = Date.now();
      if (fresh.error) { fresh.error = null; renderBanner(); }
      setStatus("updated " + fmtClock(Date.now() / 1000) + (period() || once ? "" : " \u00b7 refresh paused"));
    }
    if (!once) schedule(period());
  };
  const entry = () => run();
  active.add(entry);
  const onPrefs = (ev) => { if (ev.detail.key === "refresh" && !once && !failures) schedule(period()); };
  window.addEventListener("vmscope-prefs", onPrefs);
  run();
  return () => {
    ctl.abort();
    clearTimeout(timer);
    active.delete(entry);
    window.removeEventListener("vmscope-prefs", onPrefs);
  };
}

// Runs every poller of the view now (the header's "refresh now").
export function refreshNow() {
  for (const r of active) r();
}

// ---- the header's controls ----

// Applies the stored time zone (before any view writes a time).
export function applyPrefs() {
  setTimeZone(prefs().tz);
}

// Builds the time-zone switch, the refresh interval with pause, and
// "refresh now" into the page header, once (app.js: after the first view
// has drawn, so that its first load does not wait for them).
export function initHeader() {
  applyPrefs();
  const head = document.querySelector("header.top");
  if (!head || document.getElementById("tz-toggle")) return;
  const tz = document.createElement("button");
  tz.type = "button";
  tz.id = "tz-toggle";
  const showTz = () => {
    const u = prefs().tz === "utc";
    tz.textContent = u ? "UTC" : "local " + zoneLabel();
    tz.title = "times are shown in " + (u ? "UTC" : "this browser's time zone (" + zoneLabel() + ")") + "; click for " + (u ? "local time" : "UTC");
    tz.setAttribute("aria-label", "time zone: " + (u ? "UTC" : "local, " + zoneLabel()) + ". Switch to " + (u ? "local time" : "UTC"));
  };
  showTz();
  tz.addEventListener("click", () => { setPref("tz", prefs().tz === "utc" ? "local" : "utc"); showTz(); });

  const sel = document.createElement("select");
  sel.id = "refresh-every";
  sel.setAttribute("aria-label", "refresh interval");
  sel.title = "how often the view asks the server again";
  for (const [ms, label] of REFRESH_CHOICES) {
    const o = document.createElement("option");
    o.value = String(ms);
    o.textContent = "every " + label;
    sel.append(o);
  }
  const pause = document.createElement("button");
  pause.type = "button";
  pause.id = "refresh-pause";
  const now = document.createElement("button");
  now.type = "button";
  now.id = "refresh-now";
  now.textContent = "\u21bb";
  now.title = "refresh now";
  now.setAttribute("aria-label", "refresh now");
  now.addEventListener("click", refreshNow);
  let last = prefs().refresh || 10000;
  const showRefresh = () => {
    const p = prefs().refresh;
    if (p) last = p;
    sel.value = String(last);
    sel.disabled = !p;
    pause.textContent = p ? "pause" : "resume";
    pause.setAttribute("aria-pressed", p ? "false" : "true");
    pause.title = p ? "stop refreshing" : "refresh again every " + sel.selectedOptions[0]?.textContent.slice(6);
  };
  showRefresh();
  sel.addEventListener("change", () => { setPref("refresh", Number(sel.value)); showRefresh(); });
  pause.addEventListener("click", () => { setPref("refresh", prefs().refresh ? 0 : last); showRefresh(); });

  const box = document.createElement("span");
  box.className = "head-controls";
  box.append(tz, sel, pause, now);
  const status = document.getElementById("status");
  head.insertBefore(box, status ? status.nextSibling : null);
}
