// api.js - the only place the dashboard talks to the server (docs/api.md).
// Relative URLs, so the page works behind a path prefix. A read token, when
// the server was started with --read-token, is taken once from ?token= on the
// page URL and kept in localStorage; a link carrying a different token than
// the one kept replaces it only when the user says so (a link from someone
// else must not switch the dashboard to their token without a word).

const TOKEN_KEY = "vmscope.readToken";

function readToken() {
  const q = new URLSearchParams(location.search);
  const t = q.get("token");
  if (t) {
    let keep = t;
    try {
      const stored = localStorage.getItem(TOKEN_KEY);
      if (stored && stored !== t && !window.confirm(
        "This link carries a read token other than the one this browser keeps for this dashboard. " +
        "Use the link's token from now on?")) keep = stored;
      localStorage.setItem(TOKEN_KEY, keep);
      // keep the token out of the address bar and the history once stored
      q.delete("token");
      const rest = q.toString();
      history.replaceState(history.state, "", location.pathname + (rest ? "?" + rest : "") + location.hash);
    } catch (_) { /* private mode: keep it in the URL */ }
    return keep;
  }
  try { return localStorage.getItem(TOKEN_KEY); } catch (_) { return null; }
}

// An error from the API, carrying the HTTP status and the server's message.
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// The response of a request js/boot.js started before the modules loaded
// (window.vmscopeEarly, URL -> fetch promise: the first view's first
// calls), once, when url is that same request; else null.
function takeEarly(url) {
  const e = window.vmscopeEarly;
  if (!e || !e[url]) return null;
  const res = e[url];
  delete e[url];
  return res;
}

// The URL of GET path with params (an object; undefined/null/"" values are
// left out), relative; the same params in the same order give the same URL
// (hostplan.js builds the early requests' URLs with it).
export function apiUrl(path, params = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  }
  return "api/v1/" + path + (q.toString() ? "?" + q : "");
}

// GET path with params (an object; undefined/null/"" values are left out).
// Resolves to the parsed JSON body; rejects with ApiError on a non-2xx answer
// (message from the body's "error" field) or on a network failure.
export async function getJSON(path, params = {}, signal) {
  const url = apiUrl(path, params);
  const headers = { Accept: "application/json" };
  const tok = readToken();
  if (tok) headers.Authorization = "Bearer " + tok;
  let res = null;
  const early = takeEarly(url);
  if (early) {
    try { res = await early; } catch (_) { res = null; }	// failed: ask again below
  }
  try {
    if (!res) res = await fetch(url, { headers, signal });
  } catch (e) {
    if (e.name === "AbortError") throw e;
    throw new ApiError(0, "server unreachable");
  }
  let body = null;
  try { body = await res.json(); } catch (_) { /* not JSON */ }
  if (!res.ok) {
    let msg = body && body.error ? body.error : res.status + " " + res.statusText;
    if (res.status === 401) msg += " (open the dashboard once as /?token=READTOKEN)";
    throw new ApiError(res.status, msg);
  }
  return body;
}

// The token for writes (silences): one the user typed once (kept for this
// tab only), else the read token. See docs/security.md: the server wants its
// admin token (--admin-token-file), else its --read-token.
const ADMIN_KEY = "vmscope.adminToken";
export function setAdminToken(t) {
  try { if (t) sessionStorage.setItem(ADMIN_KEY, t); else sessionStorage.removeItem(ADMIN_KEY); } catch (_) { /* private mode */ }
}
function writeToken() {
  try { return sessionStorage.getItem(ADMIN_KEY) || readToken(); } catch (_) { return readToken(); }
}

// A write: method (POST, DELETE) on api/v1/path with an optional JSON body.
// Resolves to the parsed answer; rejects with ApiError (status 401/403 when
// the token may not write).
export async function sendJSON(method, path, body) {
  const headers = { Accept: "application/json" };
  const tok = writeToken();
  if (tok) headers.Authorization = "Bearer " + tok;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let res;
  try {
    res = await fetch("api/v1/" + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (_) {
    throw new ApiError(0, "server unreachable");
  }
  let ans = null;
  try { ans = await res.json(); } catch (_) { /* not JSON */ }
  if (!res.ok) throw new ApiError(res.status, ans && ans.error ? ans.error : res.status + " " + res.statusText);
  return ans;
}

export const api = {
  host: (host, signal) => getJSON("hosts/" + encodeURIComponent(host), {}, signal),
  cgroups: (host, signal) => getJSON("hosts/" + encodeURIComponent(host) + "/cgroups", {}, signal),
  metrics: (host, cgroup, signal, version) =>
    getJSON("hosts/" + encodeURIComponent(host) + "/metrics", { cgroup, cgroup_version: version }, signal),
  series: (host, p, signal) =>
    getJSON("hosts/" + encodeURIComponent(host) + "/series", p, signal),
  // several metrics of one window in one request: p.metrics is a comma list
  seriesBatch: (host, p, signal) =>
    getJSON("hosts/" + encodeURIComponent(host) + "/series_batch", p, signal),
  alerts: (p, signal) => getJSON("alerts", p, signal),
  silences: (signal) => getJSON("silences", {}, signal),
  createSilence: (s) => sendJSON("POST", "silences", s),
  endSilence: (id) => sendJSON("DELETE", "silences/" + encodeURIComponent(id)),
};
