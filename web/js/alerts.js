// alerts.js - the alerts view: alerts from GET /api/v1/alerts (CONTRACT.md
// §3) filtered by kind, host, cgroup and state (kept in the hash; open by
// default), triaged as Alertmanager does: grouped by host (the fleet's
// alerts, such as kernel_regression, under "the fleet"), worst severity
// and then the newest first (alertfmt.js), one compact row each with how
// long it has lasted (live), a link to the host view at that moment (a
// fleet alert's: the compare page of its releases, regression.js), and,
// folded away until asked for, its evidence with readable labels and units
// and what the signature means (explain.js). Refreshed at the header's
// interval. #/alerts?id=N opens that alert (a fleet chip links there).
// Silences (docs/notify.md): a "silence" action per alert (host, optionally
// its cgroup and kind, a duration), the active silences with an "end" action,
// and silenced alerts marked.
import { ApiError, api, setAdminToken } from "./api.js";
import { alertDuration, evidenceRows, groupByHost, liveSummary } from "./alertfmt.js";
import { h } from "./dom.js";
import { KNOWN_KINDS, explain } from "./explain.js";
import { fmtAge, fmtDuration, fmtTime, parseTime, shortPath, text } from "./format.js";
import { makeHash, poll, replaceHash, setStatus } from "./nav.js";
import { compareHref, figuresTable } from "./regression.js";

// The host-view hash showing an alert: from a little before it started to
// a little after it ended, with its cgroup selected; while it is open, from
// a little before it started on to now, following now (the view refreshes).
export function alertLink(a, now = Date.now() / 1000) {
  const t0 = parseTime(a.started_at);
  const t1 = parseTime(a.ended_at);
  const pad = Math.max(300, ((t1 ?? now) - t0) * 0.5);
  if (t1 === null) return makeHash("host", a.host, { from: Math.floor(t0 - pad), cgroup: a.cgroup || "" });
  return makeHash("host", a.host, {
    from: Math.floor(t0 - pad), to: Math.ceil(Math.min(now, t1 + pad)), cgroup: a.cgroup || "",
  });
}

// The evidence table; a text "hint" from the detector is shown apart.
function evidenceTable(a) {
  const rows = evidenceRows(a.evidence, a);
  if (!rows.length) return h("div", { class: "muted" }, "no evidence recorded");
  return h("table", { class: "ev" }, h("tbody", {}, rows.map(([label, v, k]) =>
    h("tr", {}, h("td", { title: k }, label),
      k === "figures" && Array.isArray(a.evidence[k])	/* a kernel_regression's (regression.js) */
        ? h("td", { class: "text" }, figuresTable(a.evidence[k]))
        : h("td", { class: "num", title: String(a.evidence[k]), dataset: k === "silent_s" ? { live: "silent" } : {} }, v)))));
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

// How long an alert has lasted, or when it ended: "for 38m" (live), or
// "ended 3m ago, lasted 12m".
function ageText(a, now = Date.now() / 1000) {
  const t1 = parseTime(a.ended_at);
  if (t1 !== null) return "ended " + fmtAge(now - t1) + " ago \u00b7 lasted " + fmtAge(alertDuration(a, now));
  return "for " + fmtAge(alertDuration(a, now));
}

// One alert: a compact row, its evidence and explanation folded below.
function alertRow(a, onSilenced, open) {
  const ex = explain(a.kind);
  const t0 = parseTime(a.started_at), t1 = parseTime(a.ended_at);
  const resolved = a.state === "resolved" || t1 !== null;
  const fleet = a.scope === "fleet";	// about the fleet (kernel_regression): no host, a subject
  const silBtn = h("button", { type: "button", class: "sil-open", title: "hold this alert's notifications back" }, "silence\u2026");
  const summary = liveSummary(a);
  const bodyId = "alert-body-" + a.id;
  const more = h("button", { type: "button", class: "more-btn", "aria-expanded": open ? "true" : "false", "aria-controls": bodyId,
    title: "the evidence, the times, what the signature means and what usually fixes it" }, open ? "\u25be details" : "\u25b8 details");
  const details = h("div", { class: "details", id: bodyId, hidden: !open || undefined },
    h("div", { class: "times" },
      "started " + fmtTime(t0) + " \u00b7 opened " + fmtTime(parseTime(a.opened_at)) +
      " \u00b7 " + (t1 ? "ended " + fmtTime(t1) : "still open") + " \u00b7 ",
      h("span", { dataset: t1 === null ? { live: "duration" } : {} }, fmtDuration(alertDuration(a)))),
    a.cgroup ? h("div", { class: "times cgroup-path" }, "cgroup ", h("span", { class: "mono" }, a.cgroup)) : null,
    h("div", { class: "body" },
      evidenceTable(a),
      h("div", { class: "explain" },
        h("p", {}, h("b", {}, ex.title)),
        h("p", {}, ex.meaning),
        typeof a.evidence?.hint === "string" ? h("p", { class: "hint" }, h("b", {}, "Detector: "), a.evidence.hint) : null,
        h("ul", {}, ex.fixes.map((f) => h("li", {}, f))))));
  const el = h("div", { class: "alert " + a.severity + (resolved ? " resolved" : "") + (a.silenced ? " silenced" : ""),
    dataset: { alertId: a.id, kind: a.kind, state: resolved ? "resolved" : "open" } },
    h("div", { class: "head" },
      h("span", { class: "badge " + a.severity }, a.severity),
      h("span", { class: "badge " + (resolved ? "resolved" : "open") }, resolved ? "resolved" : "open"),
      a.silenced ? h("span", { class: "badge silenced", title: "a silence holds its notifications back" }, "silenced") : null,
      h("span", { class: "kind" }, a.kind),
      fleet
        ? h("span", { class: "where", title: "the fleet" + (a.subject ? ", " + a.subject : "") },
          "on the fleet", a.subject ? [" ", h("span", { class: "mono" }, a.subject)] : null)
        : h("span", { class: "where", title: a.cgroup ? "cgroup " + a.cgroup : "the whole host" }, a.cgroup ? h("span", { class: "mono" }, shortPath(a.cgroup)) : "host-wide"),
      h("span", { class: "summary", title: summary, dataset: a.kind === "host_silent" && t1 === null ? { live: "summary" } : {} }, summary),
      h("span", { class: "age", title: "started " + fmtTime(t0), dataset: { live: "age" } }, ageText(a)),
      more,
      fleet
        ? h("a", { class: "view-link", href: compareHref(a), title: "the two releases side by side, the worse figures marked" }, "compare the releases \u2192")
        : h("a", { class: "view-link", href: alertLink(a), title: "the host's charts at that moment" + (a.cgroup ? ", cgroup " + a.cgroup + " with the host's" : "") }, "charts at that moment \u2192"),
      silBtn),
    details);
  more.addEventListener("click", () => {
    const show = details.hidden;
    details.hidden = !show;
    more.setAttribute("aria-expanded", show ? "true" : "false");
    more.textContent = show ? "\u25be details" : "\u25b8 details";
    el.dispatchEvent(new CustomEvent("alert-toggle", { bubbles: true, detail: { id: String(a.id), open: show } }));
  });
  el._alert = a;
  silBtn.addEventListener("click", () => {
    const f = el.querySelector(".silence-form");
    if (f) { f.remove(); return; }
    el.querySelector(".head").after(silenceForm(a, onSilenced));
  });
  return el;
}

// The alerts of one host (or of the fleet) under one heading.
function hostGroup(g, rowOf) {
  const n = g.alerts.length, open = g.alerts.filter((a) => a.state !== "resolved" && !a.ended_at).length;
  return h("section", { class: "panel host-group" + (g.fleet ? " fleet-group" : ""), dataset: g.fleet ? { scope: "fleet" } : { host: g.host } },
    h("div", { class: "group-head" },
      h("span", { class: "badge " + g.worst }, g.worst),
      g.fleet ? h("span", { class: "gh-host", title: "alerts about the fleet, not one host" }, "the fleet")
        : h("a", { class: "gh-host", href: makeHash("host", g.host, {}) }, g.host),
      h("span", { class: "muted" }, n + (n === 1 ? " alert" : " alerts") + (open !== n ? " \u00b7 " + open + " open" : ""))),
    g.alerts.map(rowOf));
}

export function mount(el, route) {
  const st = {
    kind: route.params.get("kind") || "",
    host: route.params.get("host") || "",
    cgroup: route.params.get("cgroup") || "",
    state: route.params.get("state") || "open",
    focus: route.params.get("id") || "",
    // as many as a mass event brings (the API's newest first, up to 10,000);
    // a list cut there says so
    limit: Math.min(10000, Math.max(1, Number(route.params.get("limit")) || 5000)),
  };
  const kindSel = h("select", { id: "alert-kind" }, h("option", { value: "" }, "any kind"),
    [...new Set([...KNOWN_KINDS, ...(st.kind ? [st.kind] : [])])].map((k) => h("option", { value: k, selected: k === st.kind }, k)));
  const hostIn = h("input", { id: "alert-host", type: "search", placeholder: "host", value: st.host, size: 16 });
  const cgIn = h("input", { id: "alert-cgroup", type: "search", placeholder: "cgroup path", value: st.cgroup, size: 24 });
  const stateSel = h("select", { id: "alert-state" }, ["open", "resolved", "all"].map((s) =>
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
    st.focus = "";
    replaceHash(makeHash("alerts", "", { kind: st.kind, host: st.host, cgroup: st.cgroup, state: st.state === "open" ? "" : st.state, limit: st.limit === 5000 ? "" : st.limit }));
    refresh();
  };
  kindSel.addEventListener("change", changed);
  stateSel.addEventListener("change", changed);
  let typing = null;
  for (const i of [hostIn, cgIn]) i.addEventListener("input", () => { clearTimeout(typing); typing = setTimeout(changed, 300); });

  // which alerts have their details open (kept across refreshes)
  const opened = new Set(st.focus ? [String(st.focus)] : []);
  list.addEventListener("alert-toggle", (ev) => {
    if (ev.detail.open) opened.add(ev.detail.id); else opened.delete(ev.detail.id);
  });

  // durations and a silent host's silence, live between refreshes
  const tick = setInterval(() => {
    const now = Date.now() / 1000;
    for (const e of list.querySelectorAll("[data-live]")) {
      const a = e.closest(".alert")?._alert;
      if (!a) continue;
      if (e.dataset.live === "age") e.textContent = ageText(a, now);
      else if (e.dataset.live === "duration") e.textContent = fmtDuration(alertDuration(a, now));
      else if (e.dataset.live === "summary") { e.textContent = liveSummary(a, now); e.title = e.textContent; }
      else if (e.dataset.live === "silent") e.textContent = fmtDuration(alertDuration(a, now));
    }
  }, 1000);

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

  let seq = 0, scrolled = false;
  const load = async (signal) => {
    const my = ++seq;
    let ans;
    try {
      ans = await api.alerts({ kind: st.kind, host: st.host, cgroup: st.cgroup, state: st.state, limit: st.limit }, signal);
    } catch (e) {
      if (e.name === "AbortError" || e.status === 0 || e.status >= 500) throw e;	// poll: stale, retried; the list stays
      setStatus("alerts: " + e.message, true);
      list.replaceChildren(h("div", { class: "error" }, "could not load alerts: " + e.message));
      throw e;
    }
    if (my !== seq) return; // a newer filter answered first
    const items = ans.alerts || [];
    // a row with its silence form open is kept while the user fills it in
    const editing = new Map([...list.querySelectorAll(".alert")].filter((c) => c.querySelector(".silence-form"))
      .map((c) => [c.dataset.alertId, c]));
    const rowOf = (a) => editing.get(String(a.id)) || alertRow(a, () => refresh(), opened.has(String(a.id)));
    list.replaceChildren(...(items.length ? groupByHost(items).map((g) => hostGroup(g, rowOf))
      : [h("div", { class: "empty" }, st.state === "open" ? "no open alert matches" : "no alert matches")]));
    if (st.focus && !scrolled) {
      const f = list.querySelector(`.alert[data-alert-id="${CSS.escape(String(st.focus))}"]`);
      if (f) { f.classList.add("focus"); f.scrollIntoView({ block: "center" }); scrolled = true; }
    } else if (st.focus) {
      list.querySelector(`.alert[data-alert-id="${CSS.escape(String(st.focus))}"]`)?.classList.add("focus");
    }
    loadSilences(signal);
    const open = items.filter((a) => a.state === "open").length;
    const hosts = new Set(items.filter((a) => a.scope !== "fleet").map((a) => a.host)).size;
    const cut = items.length >= st.limit;
    count.textContent = (cut ? `the newest ${items.length} alerts only (more match: narrow by kind, host or cgroup)` : `${items.length} alerts`) +
      ` \u00b7 ${open} open \u00b7 ${hosts} ${hosts === 1 ? "host" : "hosts"}`;
    count.classList.toggle("cut", cut);
    el.dataset.loaded = String(Date.now());
  };
  const stop = poll(load);
  const ctl = new AbortController();
  refresh = () => load(ctl.signal).catch((e) => { if (e.name !== "AbortError") setStatus("alerts: " + e.message, true); });
  return { destroy() { stop(); ctl.abort(); clearTimeout(typing); clearInterval(tick); } };
}
