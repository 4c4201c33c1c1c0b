// app.js - hash router. Each view is a module with mount(el, route) returning
// {destroy()}; a new hash destroys the old view (timers, charts, requests)
// before mounting the next, so nothing keeps polling in the background.
//   #/fleet?q=&state=
//   #/host/NAME?range=1h | ?from=TS&to=TS, &cgroup=PATH
//   #/alerts?kind=&host=&cgroup=&state=
//   #/compare?group_by=kernel|label:KEY&a=&b=&range=&label=KEY:VALUE
// Every view is imported when first opened, so that a page evaluates only
// the view it shows: the fleet does not evaluate uPlot and the charts, a
// host view not the fleet table (index.html preloads the opened view's
// modules, so its import costs no round trip).
import { parseHash } from "./nav.js";

const VIEWS = {
  fleet: () => import("./fleet.js"),
  host: () => import("./host.js"),
  alerts: () => import("./alerts.js"),
  compare: () => import("./compare.js"),
};
let current = null;
let seq = 0;

async function route() {
  const my = ++seq;
  const r = parseHash(location.hash);
  if (current) {
    try { current.destroy(); } catch (e) { console.warn("destroy failed", e); }
    current = null;
  }
  for (const a of document.querySelectorAll("header nav a")) {
    a.classList.toggle("active", a.dataset.nav === (r.name === "host" ? "fleet" : r.name));
  }
  const view = await (VIEWS[r.name] || VIEWS.fleet)();
  if (my !== seq) return;	// the hash changed again meanwhile
  const el = document.getElementById("view");
  el.replaceChildren();
  for (const k of Object.keys(el.dataset)) delete el.dataset[k];
  current = view.mount(el, r);
}

window.addEventListener("hashchange", () => { route().catch((e) => console.error("route", e)); });
route().catch((e) => console.error("route", e));
