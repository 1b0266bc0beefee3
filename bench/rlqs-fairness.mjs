// One RLQS fairness run (issue 26): simulated Envoys (bench/rlqs-envoy.mjs) with skewed demand
// against one shared limit, the demand flipped once; everything measured from the Envoys' own logs
// (the assignments they received, the usage they reported), so windows are aligned to report times
// and a loaded machine's late timers stretch the measure instead of breaking it. Shared by
// test/integration/rlqs-fairness.test.ts and `bench/rlqs.mjs --fairness`.
import { bucketKey, drive, SimEnvoy } from "./rlqs-envoy.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0
    ? Number.NaN
    : (s[Math.floor((s.length - 1) / 2)] + s[Math.ceil((s.length - 1) / 2)]) / 2;
};

/** The tollgate config of a fairness run (domain `edge`, BucketId `{tenant}`). */
export function fairnessConfig({ limit, intervalMs, burst = 20, ttl = "2s", minSharePercent = 10 }) {
  return `domain: edge
rlqs:
  keys: [{ key: tenant }]
  assignment_ttl: ${ttl}
  reporting_interval: ${intervalMs}ms
  min_share_percent: ${minSharePercent}
  reassign_percent: 10
descriptors:
  - key: tenant
    rate_limit: { unit: second, requests_per_unit: ${limit}, burst: ${burst} }
`;
}

/**
 * When every Envoy's assigned rate came within `tolerance` of its target for good (until `end`):
 * the time, or Infinity. `log` is each Envoy's assignments ({ at, rate }) in order.
 */
export function settledAt(logs, targets, from, end, tolerance) {
  let settled = from;
  for (const [i, log] of logs.entries()) {
    const ok = (rate) => Math.abs(rate - targets[i]) <= tolerance * targets[i];
    const before = log.filter((a) => a.at <= from);
    const after = log.filter((a) => a.at > from && a.at <= end);
    let at = before.length > 0 && ok(before[before.length - 1].rate) ? from : Number.POSITIVE_INFINITY;
    for (const a of after) {
      if (!ok(a.rate)) at = Number.POSITIVE_INFINITY;
      else if (at === Number.POSITIVE_INFINITY) at = a.at;
    }
    settled = Math.max(settled, at);
  }
  return settled;
}

/** The first time after `from` at which every Envoy's assigned rate is within `tolerance` (or Infinity). */
export function firstWithinAt(logs, targets, from, end, tolerance) {
  const rateAt = (log, t) => log.filter((a) => a.at <= t).pop()?.rate ?? Number.NaN;
  const times = [from, ...logs.flatMap((l) => l.map((a) => a.at)).filter((t) => t > from && t <= end)];
  for (const t of times.sort((a, b) => a - b))
    if (logs.every((l, i) => Math.abs(rateAt(l, t) - targets[i]) <= tolerance * targets[i])) return t;
  return Number.POSITIVE_INFINITY;
}

/** The fraction of [from, end] during which every Envoy's assigned rate is within `tolerance`. */
export function withinFraction(logs, targets, from, end, tolerance) {
  if (!(end > from)) return Number.NaN;
  const rateAt = (log, t) => log.filter((a) => a.at <= t).pop()?.rate ?? Number.NaN;
  const times = [from, ...logs.flatMap((l) => l.map((a) => a.at)).filter((t) => t > from && t < end)];
  times.sort((a, b) => a - b);
  let inside = 0;
  for (const [k, t] of times.entries()) {
    const next = times[k + 1] ?? end;
    if (logs.every((l, i) => Math.abs(rateAt(l, t) - targets[i]) <= tolerance * targets[i]))
      inside += next - t;
  }
  return inside / (end - from);
}

/** Allowed requests per second of one Envoy over its reports in (from, to] (report-aligned). */
export function admittedRate(usage, from, to) {
  const inside = usage.filter((u) => u.at > from && u.at <= to);
  const first = usage.filter((u) => u.at <= from).pop();
  if (inside.length === 0 || first === undefined) return Number.NaN;
  const allowed = inside.reduce((s, u) => s + u.allowed, 0);
  return (allowed * 1000) / (inside[inside.length - 1].at - first.at);
}

/**
 * Run `addresses.length` Envoys (Envoy i on addresses[i]) at `demand[i]` requests per second for
 * `beforeMs`, then at `flipped[i]` for `afterMs`. `targetsBefore`/`targetsAfter` are the fair
 * shares (engine/rlqs/allocator.ts targetShares). `redisCalls` (optional) reads the Redis command
 * count (INFO commandstats, summed over nodes). Returns the measures (see the fields).
 */
export async function runFairness(o) {
  const bucket = { tenant: "acme" };
  const key = bucketKey(bucket);
  const tolerance = o.tolerance ?? 0.15;
  const warmupMs = o.warmupMs ?? 1000;
  let current = o.demand;
  const envoys = o.addresses.map(
    (address) => new SimEnvoy({ address, domain: "edge", reportingIntervalMs: o.intervalMs }),
  );
  const callsAtStart = o.redisCalls ? await o.redisCalls() : 0;
  const started = performance.now();
  const drivers = envoys.map((e, i) => drive(e, bucket, () => current[i] ?? 0));
  await sleep(o.beforeMs);
  // The flip lands `flipPhase` of an interval after a report of the first Envoy (they report in
  // step): 0.5 by default, half way through an interval.
  const last = envoys[0].reportTimes.at(-1) ?? performance.now();
  const phaseMs = (o.flipPhase ?? 0.5) * o.intervalMs;
  const wait = (last + phaseMs - performance.now()) % o.intervalMs;
  await sleep(wait < 0 ? wait + o.intervalMs : wait);
  current = o.flipped;
  const flipAt = performance.now();
  await sleep(o.afterMs);
  for (const d of drivers) d.stop();
  const end = performance.now();
  const calls = o.redisCalls ? (await o.redisCalls()) - callsAtStart : undefined;
  for (const e of envoys) e.close();

  const logs = envoys.map((e) => e.assignments.filter((a) => a.key === key));
  const usage = envoys.map((e) => e.usageLog(bucket));
  const gaps = envoys.flatMap((e) => e.reportTimes.slice(1).map((t, i) => t - e.reportTimes[i]));
  const observedIntervalMs = median(gaps.filter((g) => g > o.intervalMs / 2));
  const settled = settledAt(logs, o.targetsAfter, flipAt, end, tolerance);
  const within = firstWithinAt(logs, o.targetsAfter, flipAt, end, tolerance);
  // Report-aligned windows: steady before the flip (after the warm-up, to the last report before
  // it), and after it from each Envoy's third report (two whole intervals after the shift).
  const warm = started + warmupMs;
  const lastBefore = usage.map((u) => u.filter((x) => x.at <= flipAt).pop()?.at ?? flipAt);
  const third = usage.map((u) => u.filter((x) => x.at > flipAt)[2]?.at ?? end);
  const sharesBefore = usage.map((u, i) => admittedRate(u, warm, lastBefore[i]));
  const sharesAfter = usage.map((u, i) => admittedRate(u, third[i], end));
  const admitted = usage.map((u) => admittedRate(u, warm, end));
  const reports = envoys.reduce((s, e) => s + e.reportsSent, 0);
  const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
  return {
    seconds: round((end - started) / 1000, 2),
    flipPhase: o.flipPhase ?? 0.5,
    /** Where the flip actually landed after the first Envoy's last report (a loaded machine runs timers late). */
    flipPhaseActual: round(
      (flipAt - (envoys[0].reportTimes.filter((t) => t <= flipAt).at(-1) ?? flipAt)) / observedIntervalMs,
      2,
    ),
    limit: o.limit,
    admittedPerSec: round(admitted.reduce((s, x) => s + x, 0)),
    admittedOverLimit: round(admitted.reduce((s, x) => s + x, 0) / o.limit, 3),
    targetsBefore: o.targetsBefore.map((x) => round(x)),
    sharesBefore: sharesBefore.map((x) => round(x)),
    targetsAfter: o.targetsAfter.map((x) => round(x)),
    sharesAfter: sharesAfter.map((x) => round(x)),
    ratesAtEnd: logs.map((l) => round(l[l.length - 1]?.rate ?? Number.NaN)),
    observedIntervalMs: round(observedIntervalMs),
    firstWithinIntervals: round((within - flipAt) / observedIntervalMs, 2),
    /** Of the time from then to the end, the fraction with every rate within the tolerance. */
    withinAfter: round(withinFraction(logs, o.targetsAfter, within, end, tolerance), 3),
    settledMs: round(settled - flipAt),
    settledIntervals: round((settled - flipAt) / observedIntervalMs, 2),
    assignmentsAfterFlip: logs.map((l) => l.filter((a) => a.at > flipAt).length),
    /** Per Envoy: [ms after the flip, rate] of the assignments and [ms, allowed, denied] of the reports, first 1.5 s. */
    trace: logs.map((l, i) => ({
      assigned: l
        .filter((a) => a.at > flipAt && a.at < flipAt + 1500)
        .map((a) => [round(a.at - flipAt, 0), round(a.rate)]),
      reported: usage[i]
        .filter((u) => u.at > flipAt && u.at < flipAt + 1500)
        .map((u) => [round(u.at - flipAt, 0), u.allowed, u.denied]),
    })),
    reports,
    reportsPerSec: round(reports / ((end - started) / 1000)),
    redisCalls: calls,
    redisCallsPerReport: calls === undefined ? undefined : round(calls / reports, 2),
    streamEnds: envoys.flatMap((e) => e.streamEnds),
  };
}
