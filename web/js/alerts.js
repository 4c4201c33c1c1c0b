// alerts.js - the alerts view: open and recent alerts from GET /api/v1/alerts
// (CONTRACT.md §3) filtered by kind, host, cgroup and state (kept in the hash),
// each with its evidence, its times, a link to the host view at that moment
// and what the signature means (explain.js). Polled every 10 s.
// Silences (docs/notify.md): a "silence" action per alert (host, optionally
// its cgroup and kind, a duration), the active silences with an "end" action,
// and silenced alerts marked.
import { ApiError, api, setAdminToken } from "./api.js";
import { h } from "./dom.js";
import { KNOWN_KINDS, explain } from "./explain.js";
import { fmtBytes, fmtDuration, fmtNum, fmtTime, parseTime } from "./format.js";
import { makeHash, poll, replaceHash, setStatus } from "./nav.js";
import { compareHref, figuresTable } from "./regression.js";

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
    if (/_pct$|_pct_|percent|avg10|avg60|avg300/.test(k)) return fmtNum(v) + " %";
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
      k === "figures" && Array.isArray(v)	/* a kernel_regression's (regression.js) */
        ? h("td", { class: "text" }, figuresTable(v))
        : h("td", { class: typeof v === "number" ? "num" : "text", title: String(v) }, evValue(k, v))))));
}

export const SILENCE_DURATIONS = [["1 hour", 3600], ["4 hours", 14400], ["1 day", 86400], ["1 week", 604800]];

// Runs a write; on 401/403 asks once for the admin token and retries.
async function withWriteToken(fn) {
  try {
    return await fn();
  } catch (e) {
    if (!(e instanceof ApiError) || (e.status !== 401 && e.status !== 403)) throw e;
    const t = window.prompt("Changing silences needs the server's admin token (--admin-token-file):");
    if (!t) throw e;
    setAdminToken(t.trim());
    return await fn();
  }
}

// The inline form that silences alerts like a: its host, and (ticked by
// default) only its cgroup and only its kind, for a chosen duration. A
// fleet alert (host "", scope "fleet") has no host: its kind, and (ticked
// by default) only its subject (the release of a kernel_regression).
function silenceForm(a, done) {
  const fleet = a.scope === "fleet";
  const cg = a.cgroup ? h("input", { type: "checkbox", class: "sil-cgroup", checked: true }) : null;
  const kd = h("input", { type: "checkbox", class: "sil-kind", checked: true, disabled: fleet });
  const sub = fleet && a.subject ? h("input", { type: "checkbox", class: "sil-subject", checked: true }) : null;
  const dur = h("select", { class: "sil-duration" }, SILENCE_DURATIONS.map(([label, s]) => h("option", { value: s }, label)));
  const note = h("input", { type: "text", class: "sil-comment", placeholder: "comment (why)", size: 24 });
  const msg = h("span", { class: "sil-msg muted" });
  const go = h("button", { type: "button", class: "sil-submit" }, "silence");
  const form = h("div", { class: "silence-form" },
    "Silence notifications of ", h("b", {}, fleet ? "the fleet" : a.host),
    cg ? h("label", {}, cg, " only cgroup ", h("span", { class: "mono" }, a.cgroup)) : null,
    sub ? h("label", {}, sub, " only ", h("span", { class: "mono" }, a.subject)) : null,
    h("label", {}, kd, " only ", a.kind), " for ", dur, note, go, msg);
  go.addEventListener("click", async () => {
    go.disabled = true;
    msg.textContent = "";
    const body = { duration_s: Number(dur.value), comment: note.value.trim() };
    if (!fleet) body.host = a.host;
    if (cg && cg.checked) body.cgroup = a.cgroup;
    if (fleet || kd.checked) body.kind = a.kind;
    if (sub && sub.checked) body.subject = a.subject;
    try {
      await withWriteToken(() => api.createSilence(body));
      form.remove();	// the card is rebuilt (marked silenced) only without an open form
      done();
    } catch (e) {
      msg.textContent = "could not silence: " + e.message;
      go.disabled = false;
    }
  });
  return form;
}

// The active silences, each with an "end" action.
function silenceList(silences, changed) {
  if (!silences.length) return h("span", { class: "muted" }, "none \u00b7 silence an alert with its \u201csilence\u2026\u201d button");
  return h("table", { class: "silences" }, h("tbody", {}, silences.map((s) => {
    const end = h("button", { type: "button", class: "sil-end" }, "end");
    end.addEventListener("click", async () => {
      end.disabled = true;
      try {
        await withWriteToken(() => api.endSilence(s.id));
        changed();
      } catch (e) {
        end.disabled = false;
        setStatus("could not end the silence: " + e.message, true);
      }
    });
    return h("tr", { dataset: { silenceId: s.id } },
      h("td", {}, h("b", {}, s.host || "every host and the fleet")),
      h("td", { class: "mono" }, s.cgroup || "all cgroups"),
      h("td", {}, (s.kind || "all kinds") + (s.subject ? " of " + s.subject : "")),
      h("td", {}, "until " + fmtTime(parseTime(s.until))),
      h("td", { class: "muted" }, [s.comment, s.created_by ? "(" + s.created_by + ")" : ""].filter(Boolean).join(" ")),
      h("td", {}, end));
  })));
}

function card(a, onSilenced) {
  const ex = explain(a.kind);
  const t0 = parseTime(a.started_at), t1 = parseTime(a.ended_at);
  const dur = (t1 ?? Date.now() / 1000) - t0;
  const silBtn = h("button", { type: "button", class: "sil-open", title: "hold this alert's notifications back" }, "silence\u2026");
  const el = h("div", { class: "panel alert " + a.severity + (a.silenced ? " silenced" : ""), dataset: { alertId: a.id, kind: a.kind } },
    h("div", { class: "head" },
      h("span", { class: "badge " + a.severity }, a.severity),
      h("span", { class: "badge " + a.state }, a.state),
      a.silenced ? h("span", { class: "badge silenced", title: "a silence holds its notifications back" }, "silenced") : null,
      h("span", { class: "kind" }, a.kind),
      a.scope === "fleet"
        ? h("span", {}, "on the fleet", a.subject ? [" (", h("span", { class: "mono" }, a.subject), ")"] : null)
        : h("span", {}, "on ", h("a", { href: makeHash("host", a.host, {}) }, a.host),
          a.cgroup ? [" cgroup ", h("span", { class: "mono" }, a.cgroup)] : " (host-wide)"),
      a.scope === "fleet"
        ? h("a", { class: "view-link", href: compareHref(a) }, "compare the releases \u2192")
        : h("a", { class: "view-link", href: alertLink(a) }, "view on host at that moment \u2192"),
      silBtn),
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
  silBtn.addEventListener("click", () => {
    const open = el.querySelector(".silence-form");
    if (open) { open.remove(); return; }
    el.querySelector(".head").after(silenceForm(a, onSilenced));
  });
  return el;
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
  const silPanel = h("div", { class: "panel silence-panel", id: "silences" },
    h("h2", {}, "Active silences"), h("div", { class: "muted" }, "loading\u2026"));

  el.append(h("h1", {}, "Alerts"),
    h("div", { class: "toolbar" },
      h("label", { for: "alert-kind" }, "Kind"), kindSel,
      h("label", { for: "alert-host" }, "Host"), hostIn,
      h("label", { for: "alert-cgroup" }, "Cgroup"), cgIn,
      h("label", { for: "alert-state" }, "State"), stateSel, count),
    silPanel,
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

  let silSeq = 0;
  const loadSilences = async (signal) => {
    const my = ++silSeq;
    try {
      const ans = await api.silences(signal);
      if (my !== silSeq) return;
      silPanel.replaceChildren(h("h2", {}, "Active silences"), silenceList(ans.silences || [], () => refresh()));
    } catch (e) {
      if (e.name === "AbortError") return;
      silPanel.replaceChildren(h("h2", {}, "Active silences"), h("div", { class: "error" }, "could not load silences: " + e.message));
    }
  };

  let seq = 0;
  const load = async (signal) => {
    const my = ++seq;
    try {
      const ans = await api.alerts({ kind: st.kind, host: st.host, cgroup: st.cgroup, state: st.state, limit: 500 }, signal);
      if (my !== seq) return; // a newer filter answered first
      const items = ans.alerts || [];
      // a card with its silence form open is kept while the user fills it in
      const editing = new Map([...list.querySelectorAll(".alert")].filter((c) => c.querySelector(".silence-form"))
        .map((c) => [c.dataset.alertId, c]));
      list.replaceChildren(...(items.length ? items.map((a) => editing.get(String(a.id)) || card(a, () => refresh()))
        : [h("div", { class: "empty" }, "no alert matches")]));
      loadSilences(signal);
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
