// alerts.js - the alerts view: open and recent alerts from GET /api/v1/alerts
// (CONTRACT.md §3) filtered by kind, host, cgroup and state (kept in the hash),
// each with its evidence, its times, a link to the host view at that moment
// and what the signature means (explain.js). Polled every 10 s.
import { api } from "./api.js";
import { h } from "./dom.js";
import { KNOWN_KINDS, explain } from "./explain.js";
import { fmtBytes, fmtDuration, fmtNum, fmtTime, parseTime } from "./format.js";
import { makeHash, poll, replaceHash, setStatus } from "./nav.js";

const POLL_MS = 10000;

// The host-view hash showing an alert: from a little before it started to a
// little after it ended (or now, while open), with its cgroup selected.
export function alertLink(a, now = Date.now() / 1000) {
  const t0 = parseTime(a.started_at);
  const t1 = parseTime(a.ended_at) ?? now;
  const pad = Math.max(300, (t1 - t0) * 0.5);
  return makeHash("host", a.host, {
    from: Math.floor(t0 - pad), to: Math.ceil(Math.min(now, t1 + pad)), cgroup: a.cgroup || "",
  });
}

// Evidence values: numbers with units guessed from the key's suffix
// (the detectors name them *_per_s, *_pct, *_bytes, *_ms, *_ratio).
export function evValue(k, v) {
  if (typeof v === "number") {
    if (/_ms$/.test(k) && v > 1e11) return fmtTime(v / 1000);
    if (/bytes_per_s$/.test(k)) return fmtBytes(v) + "/s";
    if (/bytes$/.test(k)) return fmtBytes(v);
    if (/_kb$/i.test(k)) return fmtBytes(v * 1024);
    if (/_pct$|percent|avg10|avg60|avg300/.test(k)) return fmtNum(v) + " %";
    if (/_per_s$|_rate$|per_sec/.test(k)) return fmtNum(v) + "/s";
    if (/efficiency|ratio|share/.test(k) && v >= 0 && v <= 1) return (v * 100).toFixed(0) + " %";
    if (/_s$/.test(k)) return fmtDuration(v);
    return fmtNum(v);
  }
  if (v === null) return "\u2013";
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}

// The evidence table; a text "hint" from the detector is shown apart.
function evidenceTable(ev) {
  const rows = Object.entries(ev || {}).filter(([k, v]) => !(k === "hint" && typeof v === "string"));
  if (!rows.length) return h("div", { class: "muted" }, "no evidence recorded");
  return h("table", { class: "ev" }, h("tbody", {}, rows.map(([k, v]) =>
    h("tr", {}, h("td", { class: "mono" }, k),
      h("td", { class: typeof v === "number" ? "num" : "text", title: String(v) }, evValue(k, v))))));
}

function card(a) {
  const ex = explain(a.kind);
  const t0 = parseTime(a.started_at), t1 = parseTime(a.ended_at);
  const dur = (t1 ?? Date.now() / 1000) - t0;
  return h("div", { class: "panel alert " + a.severity, dataset: { alertId: a.id, kind: a.kind } },
    h("div", { class: "head" },
      h("span", { class: "badge " + a.severity }, a.severity),
      h("span", { class: "badge " + a.state }, a.state),
      h("span", { class: "kind" }, a.kind),
      h("span", {}, "on ", h("a", { href: makeHash("host", a.host, {}) }, a.host),
        a.cgroup ? [" cgroup ", h("span", { class: "mono" }, a.cgroup)] : " (host-wide)"),
      h("a", { class: "view-link", href: alertLink(a) }, "view on host at that moment \u2192")),
    h("div", { class: "summary" }, a.summary),
    h("div", { class: "times" },
      "started " + fmtTime(t0) + " \u00b7 opened " + fmtTime(parseTime(a.opened_at)) +
      " \u00b7 " + (t1 ? "ended " + fmtTime(t1) : "still open") + " \u00b7 " + fmtDuration(dur)),
    h("div", { class: "body" },
      evidenceTable(a.evidence),
      h("div", { class: "explain" },
        h("p", {}, h("b", {}, ex.title)),
        h("p", {}, ex.meaning),
        typeof a.evidence?.hint === "string" ? h("p", { class: "hint" }, h("b", {}, "Detector: "), a.evidence.hint) : null,
        h("ul", {}, ex.fixes.map((f) => h("li", {}, f))))));
}

export function mount(el, route) {
  const st = {
    kind: route.params.get("kind") || "",
    host: route.params.get("host") || "",
    cgroup: route.params.get("cgroup") || "",
    state: route.params.get("state") || "all",
  };
  const kindSel = h("select", { id: "alert-kind" }, h("option", { value: "" }, "any kind"),
    [...new Set([...KNOWN_KINDS, ...(st.kind ? [st.kind] : [])])].map((k) => h("option", { value: k, selected: k === st.kind }, k)));
  const hostIn = h("input", { id: "alert-host", type: "search", placeholder: "host", value: st.host, size: 16 });
  const cgIn = h("input", { id: "alert-cgroup", type: "search", placeholder: "cgroup path", value: st.cgroup, size: 24 });
  const stateSel = h("select", { id: "alert-state" }, ["all", "open", "resolved"].map((s) =>
    h("option", { value: s, selected: s === st.state }, s)));
  const count = h("span", { class: "muted", id: "alert-count" });
  const list = h("div", { class: "alert-list", id: "alert-list" }, h("div", { class: "empty" }, "loading\u2026"));

  el.append(h("h1", {}, "Alerts"),
    h("div", { class: "toolbar" },
      h("label", { for: "alert-kind" }, "Kind"), kindSel,
      h("label", { for: "alert-host" }, "Host"), hostIn,
      h("label", { for: "alert-cgroup" }, "Cgroup"), cgIn,
      h("label", { for: "alert-state" }, "State"), stateSel, count),
    list);

  let refresh = () => {};
  const changed = () => {
    st.kind = kindSel.value; st.host = hostIn.value.trim(); st.cgroup = cgIn.value.trim(); st.state = stateSel.value;
    replaceHash(makeHash("alerts", "", { ...st, state: st.state === "all" ? "" : st.state }));
    refresh();
  };
  kindSel.addEventListener("change", changed);
  stateSel.addEventListener("change", changed);
  let typing = null;
  for (const i of [hostIn, cgIn]) i.addEventListener("input", () => { clearTimeout(typing); typing = setTimeout(changed, 300); });

  let seq = 0;
  const load = async (signal) => {
    const my = ++seq;
    try {
      const ans = await api.alerts({ kind: st.kind, host: st.host, cgroup: st.cgroup, state: st.state, limit: 500 }, signal);
      if (my !== seq) return; // a newer filter answered first
      const items = ans.alerts || [];
      list.replaceChildren(...(items.length ? items.map(card) : [h("div", { class: "empty" }, "no alert matches")]));
      const open = items.filter((a) => a.state === "open").length;
      count.textContent = `${items.length} alerts \u00b7 ${open} open`;
      setStatus("updated " + fmtTime(Date.now() / 1000).slice(11));
    } catch (e) {
      if (e.name === "AbortError") return;
      setStatus("alerts: " + e.message, true);
      list.replaceChildren(h("div", { class: "error" }, "could not load alerts: " + e.message));
    }
  };
  const stop = poll(load, POLL_MS);
  const ctl = new AbortController();
  refresh = () => load(ctl.signal);
  return { destroy() { stop(); ctl.abort(); clearTimeout(typing); } };
}
