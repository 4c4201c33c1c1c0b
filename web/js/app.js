// app.js - hash router. Each view is a module with mount(el, route) returning
// {destroy()}; a new hash destroys the old view (timers, charts, requests)
// before mounting the next, so nothing keeps polling in the background.
//   #/fleet?q=&state=&label=
//   #/host/NAME?range=1h | ?from=TS&to=TS | ?from=TS (to now), &cgroup=PATH
//   #/alerts?kind=&host=&cgroup=&state=&id=
//   #/compare?group_by=kernel|label:KEY&a=&b=&range=&label=KEY:VALUE
// Every view is imported when first opened, so that a page evaluates only
// the view it shows: the fleet does not evaluate uPlot and the charts, a
// host view not the fleet table (index.html preloads the opened view's
// modules, so its import costs no round trip).
import { applyPrefs, initHeader, parseHash, poll, resetFreshness } from "./nav.js";

const VIEWS = {
  fleet: () => import("./fleet.js"),
  host: () => import("./host.js"),
  alerts: () => import("./alerts.js"),
  compare: () => import("./compare.js"),
};
let current = null;
let seq = 0;

// A view's modules did not load. Either the server is away (the view
// opened during an outage: the banner says so, and the page loads again
// once the server answers, since a module that failed to load is not
// fetched again by a later import), or a file is missing: web/vendor/ left
// empty (`make` alone does not fetch uPlot) is named, with how to get it.
let stopWait = null;
async function importFailed(el, name, err) {
  let missing = null;
  try {
    const r = await fetch(name === "host" ? "vendor/uPlot.min.esm.js" : "index.html", { method: "HEAD", cache: "no-store" });
    if (r.status >= 500) throw new Error(r.status);
    if (!r.ok && name === "host") missing = "vendor/uPlot.min.esm.js";
  } catch (_) {
    const wait = document.createElement("div");
    wait.className = "empty";
    wait.textContent = "waiting for the server to load the " + name + " view\u2026";
    el.replaceChildren(wait);
    resetFreshness();
    if (stopWait) stopWait();
    stopWait = poll(async () => {
      const r = await fetch("index.html", { method: "HEAD", cache: "no-store" }).catch(() => null);
      if (!r || !r.ok) throw Object.assign(new Error("server unreachable"), { status: r ? r.status : 0 });
      location.reload();
    }, { every: null });
    return;
  }
  const p = (t) => { const x = document.createElement("p"); x.textContent = t; return x; };
  const box = document.createElement("div");
  box.className = "panel missing";
  box.id = "load-error";
  if (missing) {
    box.append(p("The chart library is missing: the server has no " + missing + " in its web directory."),
      p("Run `make deps` in the vmscope checkout (it copies uPlot from npm into web/vendor/), then reload this page."));
  } else {
    box.append(p("Could not load the " + name + " view: " + (err && err.message ? err.message : err)),
      p("Is the server reachable? Reload the page to try again."));
  }
  el.replaceChildren(box);
}

async function route() {
  const my = ++seq;
  if (stopWait) { stopWait(); stopWait = null; }
  const r = parseHash(location.hash);
  if (current) {
    try { current.destroy(); } catch (e) { console.warn("destroy failed", e); }
    current = null;
  }
  for (const a of document.querySelectorAll("header nav a")) {
    a.classList.toggle("active", a.dataset.nav === (r.name === "host" ? "fleet" : r.name));
  }
  const name = VIEWS[r.name] ? r.name : "fleet";
  const el = document.getElementById("view");
  let view;
  try {
    view = await VIEWS[name]();
  } catch (e) {
    if (my === seq) await importFailed(el, name, e);
    return;
  }
  if (my !== seq) return;	// the hash changed again meanwhile
  el.replaceChildren();
  for (const k of Object.keys(el.dataset)) delete el.dataset[k];
  resetFreshness();
  current = view.mount(el, r);
}

applyPrefs();
// the header's controls when the page is idle after its first view
const whenIdle = window.requestIdleCallback || ((f) => setTimeout(f, 300));
window.addEventListener("load", () => whenIdle(initHeader, { timeout: 3000 }));
window.addEventListener("hashchange", () => { route().catch((e) => console.error("route", e)); });
// a new time zone: the view again, every time written anew
window.addEventListener("vmscope-prefs", (ev) => {
  if (ev.detail.key === "tz") route().catch((e) => console.error("route", e));
});
route().catch((e) => console.error("route", e));
