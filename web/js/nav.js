// nav.js - hash routes and the header status line, shared by all views.

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

// Status line in the header: last successful refresh or the last error.
export function setStatus(text, isError = false) {
  const s = document.getElementById("status");
  if (!s) return;
  s.textContent = text;
  s.classList.toggle("err", isError);
}


// Run fn now and then every ms milliseconds after each run finished (a slow
// server never gets overlapping polls). Returns stop(); fn gets an AbortSignal
// that stop() aborts.
export function poll(fn, ms) {
  const ctl = new AbortController();
  let timer = null;
  const run = async () => {
    if (ctl.signal.aborted) return;
    try {
      await fn(ctl.signal);
    } catch (e) {
      if (e.name !== "AbortError") console.warn(e);
    }
    if (!ctl.signal.aborted) timer = setTimeout(run, ms);
  };
  run();
  return () => {
    ctl.abort();
    clearTimeout(timer);
  };
}

// Change the hash's query without re-mounting the view (no hashchange event).
export function replaceHash(hash) {
  history.replaceState(null, "", hash);
}
