// boot.js - the dashboard's first steps, loaded by index.html before its
// stylesheets (a script after them waits for them) and as a file, not
// inline, so that the page's Content-Security-Policy can say script-src
// 'self' (docs/security.md). Not a module: it runs at once, in order.
// The view's first requests start now, while the modules and the CSS load
// (this script comes before the stylesheets: a script after them waits for
// them): the fleet answer on the fleet view (the default); a host's facts,
// cgroups and metric names on a host view, and, through js/hostplan.js, its
// alerts and, once the names are in, its series (window.vmscopeEarlyPlan).
// api.js hands each answer to the first call for the same URL
// (window.vmscopeEarly). Not with ?token= in the URL (api.js stores that
// one first).
(function () {
  var hs = (location.hash || "").replace(/^#\/?/, ""), urls = [];
  var qi = hs.indexOf("?"), path = qi < 0 ? hs : hs.slice(0, qi);
  // The opened view's modules, fetched and compiled in parallel now (not
  // one import level at a time), and only those: a host view does not
  // fetch or compile the fleet, alerts and compare code, a fleet view not
  // uPlot and the charts (js/app.js imports a view when it is first
  // opened; another view's modules load then). tests/browser/units.test.mjs
  // checks that each list holds every module its view imports.
  var PRELOAD = {
    "fleet": ["js/app.js", "js/nav.js", "js/fleet.js", "js/api.js", "js/dom.js", "js/format.js", "js/spark.js",
      "js/alertfmt.js", "js/regression.js"],
    "host": ["js/app.js", "js/nav.js", "js/host.js", "js/api.js", "js/dom.js", "js/format.js", "js/hostplan.js",
      "js/figures.js", "js/charts.js", "js/shade.js", "js/alertfmt.js", "vendor/uPlot.min.esm.js"],
    "alerts": ["js/app.js", "js/nav.js", "js/alerts.js", "js/api.js", "js/dom.js", "js/format.js", "js/explain.js",
      "js/alertfmt.js", "js/regression.js"],
    "compare": ["js/app.js", "js/nav.js", "js/compare.js", "js/api.js", "js/dom.js", "js/format.js", "js/comparefmt.js"]
  };
  (PRELOAD[path.split("/")[0]] || PRELOAD.fleet).forEach(function (m) {
    var l = document.createElement("link");
    l.rel = "modulepreload";
    l.href = m;
    document.head.appendChild(l);
  });
  if (/[?&]token=/.test(location.search) || !window.fetch || !window.URLSearchParams) return;
  var params = new URLSearchParams(qi < 0 ? "" : hs.slice(qi + 1));
  var parts = path.split("/"), metricsUrl = null;
  if (!parts[0] || parts[0] === "fleet") {
    urls.push("api/v1/fleet?window=3600&layout=columns");
  } else if (parts[0] === "host" && parts.length > 1) {
    var base = "api/v1/hosts/" + encodeURIComponent(decodeURIComponent(parts.slice(1).join("/")));
    var cg = params.get("cgroup");
    metricsUrl = base + "/metrics" + (cg ? "?" + new URLSearchParams({ cgroup: cg }) : "");
    urls.push(base, base + "/cgroups", metricsUrl);
  }
  var headers = { Accept: "application/json" };
  try { var t = localStorage.getItem("vmscope.readToken"); if (t) headers.Authorization = "Bearer " + t; } catch (e) { /* private mode */ }
  var early = window.vmscopeEarly = {}, metricsJson = null;
  urls.forEach(function (u) {
    var res = fetch(u, { headers: headers });
    res.catch(function () { /* api.js asks again */ });
    early[u] = res;
    // read a copy here, before api.js takes the response and reads it
    if (u === metricsUrl) metricsJson = res.then(function (r) { if (!r.ok) throw new Error(r.status); return r.clone().json(); });
  });
  if (metricsJson) {
    metricsJson.catch(function () { /* host.js reports it */ });
    window.vmscopeEarlyPlan = { key: location.hash, plan: import("./hostplan.js").then(function (m) {
      return m.startEarly(location.hash, window.innerWidth, metricsJson, headers, early);
    }) };
    window.vmscopeEarlyPlan.plan.catch(function () { /* host.js asks itself */ });
  }
})();
