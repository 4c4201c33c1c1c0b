// compare.js - the compare view: two groups of hosts (kernel releases, or the
// values of one host label) side by side over a window, as an mmtests-style
// table from GET /api/v1/compare (docs/api.md): one row per reclaim figure,
// mean/p50/p95/p99 of A and B over host-intervals, the change in % coloured
// by direction, the Mann–Whitney p-value (host as the unit) and a small plot
// of both distributions. Pickers are kept in the hash:
//   #/compare?group_by=kernel|label:KEY&a=&b=&range=1h..7d&label=KEY:VALUE
// Not polled: a comparison over hours changes slowly; "refresh" asks again
// (and while the server or its database is away, the view retries by
// itself, nav.js). Figures that are 0 in both groups are listed under the
// table instead of taking a row; a row's "hosts" opens the hosts with the
// worst values of each group, linked to their host view over the window.
import { getJSON } from "./api.js";
import { h } from "./dom.js";
import { fmtTime, text } from "./format.js";
import { isOutage, makeHash, poll, replaceHash, setStatus } from "./nav.js";
import {
  DEFAULT_RANGE, NONE, RANGES, changeClass, defaultPair, fmtChange, fmtP, fmtStat, groupByChoices,
  groupOption, histBars, labelChoices, rangeSeconds, sigMark, verdictClass, zeroBoth,
} from "./comparefmt.js";

const STATS = ["mean", "p50", "p95", "p99"];
const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) if (c) el.appendChild(c);
  return el;
}

// The row's distribution plot: A's and B's histograms (shared bins, each as
// a share of its own host-intervals) side by side in each bin, A filled
// blue and B outlined orange (told apart without colour too).
function distPlot(fig, unit) {
  const hb = histBars(fig.hist);
  if (!hb) return h("span", { class: "muted" }, NONE);
  const W = 120, H = 28, n = hb.a.length, bw = W / n;
  const bars = [];
  const half = Math.max(1, (bw - 1) / 2);
  for (const [fr, cls, off] of [[hb.a, "a", 0], [hb.b, "b", half]]) {
    fr.forEach((f, i) => {
      if (f <= 0) return;
      const bh = Math.max(1, (f / hb.max) * (H - 2));
      bars.push(svg("rect", { class: "bar-" + cls, x: (i * bw + 0.5 + off).toFixed(1), y: (H - 1 - bh).toFixed(1),
        width: Math.max(1, half - (cls === "b" ? 0.5 : 0)).toFixed(1), height: bh.toFixed(1) }));
    });
  }
  const e = hb.edges;
  const range = e.length ? `${fmtStat(e[0])} .. ${fmtStat(e[e.length - 1])}${unit ? " " + unit : ""}` : "";
  const t = svg("title");
  t.textContent = `distribution over host-intervals: A filled blue (left in each bin), B outlined orange (right); share of each group's intervals per bin${range ? "; x: " + range : ""}`;
  return svg("svg", { class: "dist", width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": t.textContent }, t,
    svg("line", { class: "axis", x1: 0, y1: H - 0.5, x2: W, y2: H - 0.5 }), ...bars);
}

// The hosts that drive a figure (hosts_top: each group's worst window
// means), each linked to its host view over the compared window.
function hostsRow(fig, res, n) {
  const win = { from: Math.floor(res.since_ts ?? res.since / 1000), to: Math.ceil(res.until_ts ?? res.until / 1000) };
  const list = (side, name) => {
    const hs = (fig.hosts_top && fig.hosts_top[side]) || [];
    return h("div", { class: "drivers " + side },
      h("b", {}, (side === "a" ? "A " : "B ") + text(name) + ": "),
      hs.length ? hs.map((x, i) => [i ? ", " : "", h("a", { href: makeHash("host", x.host, win) }, x.host), " " + fmtStat(x.value) + (fig.unit ? " " + fig.unit : "")])
        : h("span", { class: "muted" }, "no host with a value"));
  };
  return h("tr", { class: "drivers-row", dataset: { driversOf: fig.name } },
    h("td", { colspan: n },
      h("span", { class: "muted" }, (fig.better === "higher" ? "lowest" : "highest") + " window means first · "),
      list("a", res.a), list("b", res.b)));
}

// One figure's row; marked: named by the hash's mark (the watch found it worse).
function figRow(fig, marked) {
  const a = fig.a || {}, b = fig.b || {}, ch = fig.change_pct || {};
  const p = fig.test ? fig.test.p : null;
  const verdict = verdictClass(fig);
  const sig = !!fig.significant;
  const unit = fig.unit || "";
  const tipA = `A: ${a.hosts ?? 0} hosts, ${a.n ?? 0} host-intervals`;
  const tipB = `B: ${b.hosts ?? 0} hosts, ${b.n ?? 0} host-intervals`;
  const mark = sigMark(p, sig);
  return h("tr", { dataset: { fig: fig.name, verdict, significant: sig ? "1" : "0", better: fig.better || "", marked: marked ? "1" : "0" },
    class: "v-" + verdict + (sig ? " sig" : "") + (marked ? " marked" : "") },
  h("td", { class: "fig", title: fig.name + " (" + (fig.better === "higher" ? "higher is better" : "lower is better") + ")" },
    h("button", { type: "button", class: "drivers-btn", "aria-expanded": "false", "aria-label": "hosts that drive " + (fig.label || fig.name),
      title: "the hosts with the worst values in each group" }, "\u25b8"), " ",
    fig.label || fig.name, unit ? h("span", { class: "unit" }, " " + unit) : null,
    marked ? h("span", { class: "mark-watch", title: "the kernel-regression watch found this figure worse" }, "watch") : null,
    h("span", { class: "dir", title: fig.better === "higher" ? "higher is better" : "lower is better" }, fig.better === "higher" ? " \u2191" : " \u2193")),
  STATS.map((s) => h("td", { class: "num a", title: tipA, dataset: { stat: s } }, fmtStat(a[s]))),
  STATS.map((s) => h("td", { class: "num b", title: tipB, dataset: { stat: s } }, fmtStat(b[s]))),
  STATS.map((s) => {
    const cls = changeClass(ch[s], fig.better, sig, a[s], b[s]);
    const text = fmtChange(ch[s], a[s], b[s]);
    return h("td", { class: "num chg chg-" + cls, dataset: { stat: s, chg: cls },
      title: text === "from 0" ? "A's " + s + " is 0: no percentage" : null }, text);
  }),
  h("td", { class: "num p", title: fig.test ? `U = ${fmtStat(fig.test.u)}, z = ${fmtStat(fig.test.z)}` : "no test: a group has no data" }, fmtP(p)),
  h("td", { class: "verdict" }, sig && verdict !== "same"
    ? h("span", { class: "verdict " + verdict }, verdict + " " + mark)
    : h("span", { class: "muted" }, sig ? "same " + mark : "n.s.")),
  h("td", { class: "dist-cell" }, distPlot(fig, unit)));
}

export function mount(el, route) {
  const P = route.params;
  const st = {
    groupBy: P.get("group_by") || "kernel",
    a: P.get("a") || "",
    b: P.get("b") || "",
    range: RANGES.some(([n]) => n === P.get("range")) ? P.get("range") : DEFAULT_RANGE,
    label: P.get("label") || "",
    mark: new Set((P.get("mark") || "").split(",").filter(Boolean)),
    hosts: [],
    groups: null,
  };
  let ctl = null; // the requests in flight, aborted when a picker changes or the view goes
  let seq = 0;

  const selGroupBy = h("select", { id: "cmp-group-by" });
  const selA = h("select", { id: "cmp-a" });
  const selB = h("select", { id: "cmp-b" });
  const selLabel = h("select", { id: "cmp-label" });
  const swap = h("button", { id: "cmp-swap", type: "button", title: "swap A and B" }, "\u21c4");
  const refresh = h("button", { id: "cmp-refresh", type: "button" }, "refresh");
  const rangeSeg = h("span", { class: "seg", id: "cmp-range" }, RANGES.map(([n]) =>
    h("button", { type: "button", dataset: { range: n }, class: n === st.range ? "on" : "" }, n)));
  const summary = h("div", { id: "cmp-summary", class: "cmp-summary" });
  const body = h("div", { id: "cmp-body" });

  function syncHash() {
    replaceHash(makeHash("compare", "", { group_by: st.groupBy, a: st.a, b: st.b,
      range: st.range === DEFAULT_RANGE ? "" : st.range, label: st.label, mark: [...st.mark].join(",") }));
  }

  function window_() {
    const until = Date.now();
    return { since: until - rangeSeconds(st.range) * 1000, until };
  }

  function fill(sel, options, value) {
    sel.replaceChildren(...options.map(([v, text]) => h("option", { value: v, selected: v === value }, text)));
    sel.value = value;
  }

  function renderPickers() {
    const gb = groupByChoices(st.hosts);
    if (!gb.includes(st.groupBy)) gb.push(st.groupBy);
    fill(selGroupBy, gb.map((g) => [g, g === "kernel" ? "kernel" : "label " + g.slice(6)]), st.groupBy);
    const groups = st.groups || [];
    const opts = groups.map((g) => [String(g.value), groupOption(g)]);
    // a group named in the hash but absent from the window: still choosable
    for (const v of [st.a, st.b]) if (v && !opts.some(([x]) => x === v)) opts.push([v, v + " (0 hosts)"]);
    fill(selA, [["", "choose A (baseline)"], ...opts], st.a);
    fill(selB, [["", "choose B"], ...opts], st.b);
    const lc = labelChoices(st.hosts);
    const lopts = lc.map((l) => [l.value, `${l.value} (${l.hosts})`]);
    if (st.label && !lopts.some(([x]) => x === st.label)) lopts.push([st.label, st.label]);
    fill(selLabel, [["", "all hosts"], ...lopts], st.label);
    for (const btn of rangeSeg.querySelectorAll("button")) btn.classList.toggle("on", btn.dataset.range === st.range);
  }

  function message(cls, text) {
    body.classList.remove("busy");
    body.replaceChildren(h("div", { class: cls }, text));
  }

  function newRequest() {
    if (ctl) ctl.abort();
    ctl = new AbortController();
    return { signal: ctl.signal, my: ++seq };
  }

  function baseParams(w) {
    return { group_by: st.groupBy, since: w.since, until: w.until, label: st.label };
  }

  // The groups present in the window (and, once, the hosts' labels for the
  // group-by and filter pickers); then the table when A and B are chosen.
  async function load() {
    const { signal, my } = newRequest();
    const w = window_();
    el.dataset.loaded = "";
    if (body.querySelector("#cmp-table")) body.classList.add("busy");
    else message("muted", "loading groups\u2026");
    try {
      const [hosts, list] = await Promise.all([
        st.hosts.length ? Promise.resolve(null) : getJSON("hosts", {}, signal).catch((e) => {
          if (e.name === "AbortError") throw e;
          return null; // pickers then offer kernel only; the comparison still works
        }),
        getJSON("compare", baseParams(w), signal),
      ]);
      if (my !== seq) return;
      if (hosts && Array.isArray(hosts.hosts)) st.hosts = hosts.hosts;
      st.groups = Array.isArray(list.groups) ? list.groups : [];
      if (!st.a && !st.b) {
        const d = defaultPair(st.groups);
        if (d) { st.a = d.a; st.b = d.b; syncHash(); }
      }
      renderPickers();
      el.dataset.groups = String(st.groups.length);
      await table(w, signal, my);
    } catch (e) {
      if (e.name === "AbortError" || my !== seq) return;
      renderPickers();
      if (isOutage(e)) {
        // nav.js says so and asks again with backoff; the last table stays
        body.classList.remove("busy");
        if (!body.querySelector("#cmp-table")) message("muted", "waiting for the server\u2026");
        throw e;
      }
      setStatus("compare: " + e.message, true);
      message("error", "could not list the groups: " + e.message);
      el.dataset.loaded = "error";
      throw e;
    }
  }

  // Runs a load once, again with backoff while the server or its
  // database is away (nav.js poll): a view opened during an outage
  // recovers by itself.
  let stopRun = null;
  function runOnce(fn) {
    if (stopRun) stopRun();
    stopRun = poll(() => fn(), { every: null });
  }

  async function table(w, signal, my) {
    if (!st.a || !st.b) {
      message("empty", st.groups.length < 2
        ? `fewer than two groups by ${st.groupBy} have samples in the last ${st.range}` + (st.label ? ` with ${st.label}` : "")
        : "choose the groups A (baseline) and B to compare");
      summary.replaceChildren();
      el.dataset.loaded = "1";
      return;
    }
    if (st.a === st.b) {
      message("empty", "A and B are the same group: choose two different ones");
      summary.replaceChildren();
      el.dataset.loaded = "1";
      return;
    }
    // keep the last table, dimmed, until the new one arrives (no flicker on swap or window)
    if (body.querySelector("#cmp-table")) body.classList.add("busy");
    else message("muted", "comparing\u2026");
    const res = await getJSON("compare", { ...baseParams(w), a: st.a, b: st.b }, signal);
    if (my !== seq) return;
    render(res);
    el.dataset.loaded = "1";
  }

  function render(res) {
    const na = res.hosts?.a ?? 0, nb = res.hosts?.b ?? 0;
    const figs = Array.isArray(res.figures) ? res.figures : [];
    const alpha = res.alpha ?? 0.05;
    const worse = figs.filter((f) => verdictClass(f) === "worse").length;
    const better = figs.filter((f) => verdictClass(f) === "better").length;
    summary.replaceChildren(
      h("span", { class: "grp a" }, "A ", h("b", {}, res.a), ` (${na} host${na === 1 ? "" : "s"})`), " vs ",
      h("span", { class: "grp b" }, "B ", h("b", {}, res.b), ` (${nb} host${nb === 1 ? "" : "s"})`),
      h("span", { class: "muted" }, ` \u00b7 by ${res.group_by}` + (st.label ? ` \u00b7 only ${st.label}` : "") +
        ` \u00b7 ${fmtTime(res.since / 1000)} .. ${fmtTime(res.until / 1000)}` +
        (res.interval_s ? ` \u00b7 ${res.interval_s / 60}-min host-intervals` : "")),
      h("span", { class: "tally" }, " \u00b7 ", h("span", { class: "verdict worse" }, `${worse} worse`), " ",
        h("span", { class: "verdict better" }, `${better} better`), ` of ${figs.length} figures (p < ${alpha})`));
    const notes = [];
    if (na === 0) notes.push(h("div", { class: "notice" }, `A (${res.a}) has no host with samples in this window: its columns are empty.`));
    if (nb === 0) notes.push(h("div", { class: "notice" }, `B (${res.b}) has no host with samples in this window: its columns are empty.`));
    if (st.mark.size) notes.push(h("div", { class: "notice", id: "cmp-marked" }, "Marked \u201cwatch\u201d: the figures the kernel-regression watch found worse on B (its test: the hosts of its window, corrected for all its tests)."));
    const head1 = h("tr", {},
      h("th", { rowspan: 2 }, "Figure"),
      h("th", { colspan: 4, class: "grp a" }, "A: " + res.a),
      h("th", { colspan: 4, class: "grp b" }, "B: " + res.b),
      h("th", { colspan: 4 }, "Change B vs A"),
      h("th", { rowspan: 2, title: "two-sided Mann\u2013Whitney U, one value per host" }, "p"),
      h("th", { rowspan: 2 }, "Verdict"),
      h("th", { rowspan: 2, class: "dist-head" }, "Distribution ",
        h("span", { class: "key a" }, "A"), " ", h("span", { class: "key b" }, "B")));
    const head2 = h("tr", {}, [0, 1, 2].map(() => STATS.map((s) => h("th", { class: "num" }, s))));
    const shown = figs.filter((f) => !zeroBoth(f) || st.mark.has(f.name)), zero = figs.filter((f) => zeroBoth(f) && !st.mark.has(f.name));
    const tbody = h("tbody", {}, shown.length ? shown.map((f) => figRow(f, st.mark.has(f.name)))
      : h("tr", {}, h("td", { colspan: 16, class: "empty" }, figs.length ? "every figure is 0 in both groups" : "the server returned no figures")));
    tbody.addEventListener("click", (ev) => {
      const btn = ev.target.closest("button.drivers-btn");
      if (!btn) return;
      const tr = btn.closest("tr");
      const next = tr.nextElementSibling;
      if (next && next.classList.contains("drivers-row")) {
        next.remove();
        btn.setAttribute("aria-expanded", "false");
        btn.textContent = "\u25b8";
        return;
      }
      const fig = shown.find((f) => f.name === tr.dataset.fig);
      if (fig) tr.after(hostsRow(fig, res, 16));
      btn.setAttribute("aria-expanded", "true");
      btn.textContent = "\u25be";
    });
    const zeroNote = zero.length ? h("p", { class: "caption", id: "cmp-zero" },
      "0 in both groups, not in the table: " + zero.map((f) => f.label || f.name).join(", ") + ".") : null;
    body.classList.remove("busy");
    body.replaceChildren(...notes,
      h("div", { class: "cmp-scroll" }, h("table", { class: "grid cmp data", id: "cmp-table" }, h("thead", {}, head1, head2), tbody)),
      ...(zeroNote ? [zeroNote] : []));
  }

  function changed(relist) {
    syncHash();
    if (relist) runOnce(load);
    else {
      renderPickers();
      runOnce(async () => {
        const { signal, my } = newRequest();
        el.dataset.loaded = "";
        try {
          await table(window_(), signal, my);
        } catch (e) {
          if (e.name === "AbortError" || my !== seq) return;
          if (isOutage(e)) { body.classList.remove("busy"); throw e; }
          setStatus("compare: " + e.message, true);
          message("error", "could not compare: " + e.message);
          el.dataset.loaded = "error";
          throw e;
        }
      });
    }
  }

  selGroupBy.addEventListener("change", () => { st.groupBy = selGroupBy.value; st.a = ""; st.b = ""; st.mark.clear(); changed(true); });
  selA.addEventListener("change", () => { st.a = selA.value; st.mark.clear(); changed(false); });
  selB.addEventListener("change", () => { st.b = selB.value; st.mark.clear(); changed(false); });
  selLabel.addEventListener("change", () => { st.label = selLabel.value; changed(true); });
  swap.addEventListener("click", () => { [st.a, st.b] = [st.b, st.a]; st.mark.clear(); changed(false); });
  refresh.addEventListener("click", () => changed(true));
  rangeSeg.addEventListener("click", (ev) => {
    const r = ev.target.closest("button[data-range]");
    if (!r) return;
    st.range = r.dataset.range;
    changed(true);
  });

  el.append(
    h("h1", {}, "Compare groups of hosts"),
    h("div", { class: "toolbar" },
      h("label", { for: "cmp-group-by" }, "Group by"), selGroupBy,
      h("label", { for: "cmp-a" }, "A"), selA, swap,
      h("label", { for: "cmp-b" }, "B"), selB,
      h("label", {}, "Window"), rangeSeg,
      h("label", { for: "cmp-label" }, "Only"), selLabel, refresh),
    h("p", { class: "caption", id: "cmp-caption" },
      "Figures over host-intervals (a host's 5-minute bucket); change = (B \u2212 A) / A; p: Mann\u2013Whitney U test, host as the unit " +
      "(each host's mean); * p < 0.05, ** < 0.01, *** < 0.001; green: B better, red: B worse, grey: not significant; " +
      "\u25b8 beside a figure: the hosts that drive it."),
    summary, body);
  renderPickers();
  runOnce(load);

  return { destroy: () => { if (stopRun) stopRun(); if (ctl) ctl.abort(); seq++; } };
}
