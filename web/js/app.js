// app.js - hash router. Each view is a module with mount(el, route) returning
// {destroy()}; a new hash destroys the old view (timers, charts, requests)
// before mounting the next, so nothing keeps polling in the background.
//   #/fleet?q=&state=
//   #/host/NAME?range=1h | ?from=TS&to=TS, &cgroup=PATH
//   #/alerts?kind=&host=&cgroup=&state=
//   #/compare?group_by=kernel|label:KEY&a=&b=&range=&label=KEY:VALUE
import * as fleet from "./fleet.js";
import * as host from "./host.js";
import * as alerts from "./alerts.js";
import * as compare from "./compare.js";
import { parseHash } from "./nav.js";

const VIEWS = { fleet, host, alerts, compare };
let current = null;

function route() {
  const r = parseHash(location.hash);
  const view = VIEWS[r.name] || fleet;
  if (current) {
    try { current.destroy(); } catch (e) { console.warn("destroy failed", e); }
    current = null;
  }
  for (const a of document.querySelectorAll("header nav a")) {
    a.classList.toggle("active", a.dataset.nav === (r.name === "host" ? "fleet" : r.name));
  }
  const el = document.getElementById("view");
  el.replaceChildren();
  for (const k of Object.keys(el.dataset)) delete el.dataset[k];
  current = view.mount(el, r);
}

window.addEventListener("hashchange", route);
route();
