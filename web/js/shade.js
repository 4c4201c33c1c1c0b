// shade.js - alert intervals as the charts shade them (pure, tested under node).

// Overlapping intervals of one severity merged, so that three alerts over
// the same minutes shade it once, not three times darker. Warnings first,
// criticals drawn over them.
export function mergeIntervals(alerts) {
  const out = [];
  for (const sev of ["warning", "critical"]) {
    const iv = alerts.filter((a) => (a.severity === "critical") === (sev === "critical"))
      .map((a) => [a.t0, a.t1]).sort((a, b) => a[0] - b[0]);
    let cur = null;
    for (const [a, b] of iv) {
      if (cur && a <= cur[1]) cur[1] = Math.max(cur[1], b);
      else { if (cur) out.push({ t0: cur[0], t1: cur[1], severity: sev }); cur = [a, b]; }
    }
    if (cur) out.push({ t0: cur[0], t1: cur[1], severity: sev });
  }
  return out;
}
