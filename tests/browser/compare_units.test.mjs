// compare_units.test.mjs - the compare page's pure logic (web/js/comparefmt.js)
// under node, no browser: the colour of a change (direction x "better" x
// significance, the A = 0 case), the table's numbers, changes and p-values
// ("—" for nulls, never NaN), significance marks, histogram bars, the picker
// choices and the default pair of groups. Run by tests/web_units_compare.sh.
// Prints "N passed, N failed".
import {
  NONE, changeClass, defaultPair, fmtChange, fmtP, fmtStat, groupByChoices, groupOption, histBars,
  labelChoices, naturalCmp, rangeSeconds, sigMark, verdictClass, zeroBoth,
} from "../../web/js/comparefmt.js";
import { makeHash, parseHash } from "../../web/js/nav.js";

let passed = 0, failed = 0;
function eq(name, got, want) {
  const g = JSON.stringify(got), w = JSON.stringify(want);
  if (g === w) passed++;
  else { failed++; console.log(`FAIL ${name}: got ${g}, want ${w}`); }
}

// colour by direction: higher efficiency is better, more refaults are worse
eq("efficiency down is worse", changeClass(-33.7, "higher", true), "worse");
eq("efficiency up is better", changeClass(12, "higher", true), "better");
eq("refaults up are worse", changeClass(250, "lower", true), "worse");
eq("refaults down are better", changeClass(-40, "lower", true), "better");
eq("not significant is grey", changeClass(-90, "higher", false), "ns");
eq("not significant is grey either way", changeClass(500, "lower", false), "ns");
eq("significant zero change", changeClass(0, "lower", true), "same");
eq("null change", changeClass(null, "lower", true), "none");
eq("NaN change", changeClass(NaN, "lower", true), "none");
eq("undefined change", changeClass(undefined, "higher", false), "none");
eq("A = 0, B > 0, lower is better: worse", changeClass(null, "lower", true, 0, 2100), "worse");
eq("A = 0, B > 0, higher is better: better", changeClass(null, "higher", true, 0, 5), "better");
eq("A = 0, B > 0, not significant: grey", changeClass(null, "lower", false, 0, 5), "ns");
eq("A = 0, B = 0: nothing", changeClass(null, "lower", true, 0, 0), "none");
eq("A null (empty group): nothing", changeClass(null, "lower", true, null, 4), "none");
eq("verdict worse", verdictClass({ verdict: "worse" }), "worse");
eq("verdict better", verdictClass({ verdict: "better" }), "better");
eq("verdict same", verdictClass({ verdict: "same" }), "same");
eq("verdict unknown", verdictClass({ verdict: "odd" }), "same");
eq("verdict missing", verdictClass(null), "same");

// numbers in the table
eq("stat null", fmtStat(null), NONE);
eq("stat undefined", fmtStat(undefined), NONE);
eq("stat NaN", fmtStat(NaN), NONE);
eq("stat Infinity", fmtStat(Infinity), NONE);
eq("stat string", fmtStat("12"), NONE);
eq("stat 0", fmtStat(0), "0");
eq("stat %", fmtStat(92.44), "92.4");
eq("stat K", fmtStat(2143), "2.14K");
eq("stat M", fmtStat(40000000), "40M");
eq("stat small", fmtStat(0.5), "0.5");
eq("stat negative", fmtStat(-12.5), "-12.5");
eq("em dash", NONE, "\u2014");

// changes
eq("change +", fmtChange(12.34), "+12.3 %");
eq("change -", fmtChange(-33.71), "\u221233.7 %");
eq("change small", fmtChange(-5), "\u22125 %");
eq("change fraction", fmtChange(2.5), "+2.5 %");
eq("change tiny", fmtChange(0.004), "0 %");
eq("change zero", fmtChange(0), "0 %");
eq("change hundreds", fmtChange(250.4), "+250 %");
// from +1000 % on a factor: "+12.3K %" and "+999K %" read badly
eq("change thousands as a factor", fmtChange(12345), "\u00d7124");
eq("change at 1000 %", fmtChange(1000), "\u00d711");
eq("change just under", fmtChange(999), "+999 %");
eq("change huge", fmtChange(99999900), "\u00d71M");
eq("change big decrease", fmtChange(-99.9), "\u221299.9 %");
// rows 0 on both sides are left out of the table
eq("zero both", zeroBoth({ a: { mean: 0, p50: 0, p95: 0, p99: 0 }, b: { mean: 0, p50: 0, p95: 0, p99: 0 } }), true);
eq("zero and null", zeroBoth({ a: { mean: 0, p50: 0, p95: 0, p99: 0 }, b: { mean: null, p50: null, p95: null, p99: null } }), true);
eq("zero one side only", zeroBoth({ a: { mean: 0, p50: 0, p95: 0, p99: 0 }, b: { mean: 0, p50: 0, p95: 0, p99: 2 } }), false);
eq("all null is not zero", zeroBoth({ a: { mean: null }, b: { mean: null } }), false);
eq("change null", fmtChange(null), NONE);
eq("change NaN", fmtChange(NaN), NONE);
eq("change from 0", fmtChange(null, 0, 2100), "from 0");
eq("change 0 to 0", fmtChange(null, 0, 0), NONE);
eq("change empty group", fmtChange(null, null, 3), NONE);

// p-values and marks
eq("p tiny", fmtP(0.00002), "<0.001");
eq("p", fmtP(0.0321), "0.032");
eq("p 1", fmtP(1), "1");
eq("p 0.9996", fmtP(0.9996), "1");
eq("p null", fmtP(null), NONE);
eq("mark ***", sigMark(0.0004, true), "***");
eq("mark **", sigMark(0.004, true), "**");
eq("mark *", sigMark(0.04, true), "*");
eq("mark none when not significant", sigMark(0.04, false), "");
eq("mark none without p", sigMark(null, true), "");

// histogram bars: each group as shares of its own total
const hb = histBars({ edges: [0, 1, 2, 3], a: [2, 2, 0], b: [0, 1, 3] });
eq("hist a shares", hb.a, [0.5, 0.5, 0]);
eq("hist b shares", hb.b, [0, 0.25, 0.75]);
eq("hist max", hb.max, 0.75);
eq("hist edges", hb.edges, [0, 1, 2, 3]);
eq("hist one empty group", histBars({ edges: [0, 1], a: [0], b: [4] }).a, [0]);
eq("hist null", histBars(null), null);
eq("hist all zero", histBars({ edges: [0, 1], a: [0], b: [0] }), null);
eq("hist mismatched", histBars({ a: [1, 2], b: [1] }), null);
eq("hist nulls inside", histBars({ a: [null, 2], b: [1, 1] }).a, [0, 1]);

// pickers
const hosts = [
  { host: "a", kernel: "6.1", labels: { role: "db", rack: "r1" } },
  { host: "b", kernel: "6.1", labels: { role: "db" } },
  { host: "c", kernel: "6.6", labels: { role: "web", az: "x" } },
  { host: "d", kernel: "6.6" },
];
eq("group by choices", groupByChoices(hosts), ["kernel", "label:az", "label:rack", "label:role"]);
eq("group by without hosts", groupByChoices(null), ["kernel"]);
eq("label choices", labelChoices(hosts), [{ value: "az:x", hosts: 1 }, { value: "rack:r1", hosts: 1 }, { value: "role:db", hosts: 2 }, { value: "role:web", hosts: 1 }]);
eq("group option", groupOption({ value: "6.1.0-13-amd64", hosts: 12 }), "6.1.0-13-amd64 (12 hosts)");
eq("group option one", groupOption({ value: "x", hosts: 1 }), "x (1 host)");
eq("natural order", ["6.10.1", "6.9.2", "5.15.0", "6.1.0-13", "6.1.0-9"].sort(naturalCmp), ["5.15.0", "6.1.0-9", "6.1.0-13", "6.9.2", "6.10.1"]);
eq("default pair: two largest, older first", defaultPair([{ value: "6.6.0", hosts: 40 }, { value: "5.10", hosts: 3 }, { value: "6.1.0", hosts: 12 }]), { a: "6.1.0", b: "6.6.0" });
eq("default pair: natural order", defaultPair([{ value: "6.10", hosts: 5 }, { value: "6.9", hosts: 5 }]), { a: "6.9", b: "6.10" });
eq("default pair: one group", defaultPair([{ value: "6.1", hosts: 5 }]), null);
eq("default pair: none", defaultPair(undefined), null);
eq("range 6h", rangeSeconds("6h"), 21600);
eq("range 7d", rangeSeconds("7d"), 604800);
eq("range unknown is 24h", rangeSeconds("2y"), 86400);

// the route round trip
const r = parseHash(makeHash("compare", "", { group_by: "label:role", a: "db", b: "web & co", label: "az:x", range: "" }));
eq("route", [r.name, r.params.get("group_by"), r.params.get("a"), r.params.get("b"), r.params.get("label"), r.params.has("range")],
  ["compare", "label:role", "db", "web & co", "az:x", false]);

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
