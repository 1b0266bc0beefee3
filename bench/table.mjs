/**
 * The one results table: a Markdown table (readable in a terminal and pasteable into RESULTS.md),
 * with the targets next to the measured ratios.
 */

/** Minimum throughput as a fraction of the raw node:http2 ceiling, per mode (issue 6). */
export const RATIO_TARGETS = Object.freeze({ memory: 0.8, redis: 0.7, cluster: 0.6, lease: 0.75 });
/** envoyproxy/ratelimit's reported decisions/s per core; the target is 4× this. */
export const REFERENCE_PER_CORE = 2500;

const fixed = (n, digits) => (Number.isFinite(n) ? n.toFixed(digits) : "–");

function ratioCell(row) {
  if (row.mode === "raw") return fixed(row.ratio, 2);
  const target = RATIO_TARGETS[row.mode];
  return target === undefined ? fixed(row.ratio, 2) : `${fixed(row.ratio, 2)} (≥${target.toFixed(2)})`;
}

const COLUMNS = [
  ["mode", (r) => r.mode],
  ["scenario", (r) => r.scenario],
  ["req/s", (r) => fixed(r.throughput, 0)],
  ["× ceiling", ratioCell],
  ["ceiling req/s", (r) => fixed(r.ceiling, 0)],
  ["p50 ms", (r) => fixed(r.p50Ms, 2)],
  ["p99 ms", (r) => fixed(r.p99Ms, 2)],
  ["p99 ms @50%", (r) => fixed(r.p99HalfMs, 2)],
  ["req/s @50%", (r) => fixed(r.halfRate, 0)],
  ["Redis RT/req", (r) => (r.roundTripsPerRequest === undefined ? "–" : fixed(r.roundTripsPerRequest, 3))],
  ["CPU µs/req", (r) => fixed(r.cpuMicrosPerRequest, 1)],
  ["decisions/s/core", (r) => fixed(1e6 / r.cpuMicrosPerRequest, 0)],
  [
    "Redis CPU µs/req",
    (r) => (r.redisCpuMicrosPerRequest === undefined ? "–" : fixed(r.redisCpuMicrosPerRequest, 1)),
  ],
  ["JS cores", (r) => fixed(r.jsCores, 2)],
  ["idle cores", (r) => fixed(r.idleCores, 2)],
  ["h2load+other µs/req", (r) => fixed(r.otherCpuMicrosPerRequest, 1)],
  ["errors", (r) => String(r.failed)],
  [
    "store errors",
    (r) => (r.storeErrors === undefined ? "–" : `${r.storeErrors}${r.degraded ? " DEGRADED" : ""}`),
  ],
];

/** Render rows as a Markdown table. */
export function renderTable(rows) {
  const cells = rows.map((r) => COLUMNS.map(([, f]) => f(r)));
  const widths = COLUMNS.map(([h], i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (values) => `| ${values.map((v, i) => v.padEnd(widths[i])).join(" | ")} |`;
  return [line(COLUMNS.map(([h]) => h)), line(widths.map((w) => "-".repeat(w))), ...cells.map(line)].join(
    "\n",
  );
}

/** The lines under the table: how to read it. */
export function renderNotes(opts) {
  return [
    `h2load: ${opts.connections} connections × ${opts.streams} streams, one h2load process per connection pinned to one CPU;`,
    `${opts.duration}s per measured run (peak, then --rps at 50% of that mode's peak for p99 @50%, from`,
    `${opts.halfConnections} h2load process(es) × ${opts.halfStreams} streams; req/s @50% is the rate it reached).`,
    `× ceiling = req/s ÷ ceiling req/s. A row's peak run is cut into ${opts.slices} slices with a raw node:http2 slice`,
    "of the same length before each and after the last (same connections and streams): its ceiling is",
    "the raw rate over those slices, measured in the same seconds as the row (this shared machine's",
    "speed moves 2-3x within one table). The raw rows (first and last, not interleaved) are read against",
    "the highest ceiling of the run. CPU µs/req = tollgate (or baseline) process",
    "utime+stime delta ÷ requests; decisions/s/core = 1e6 ÷ that (one decision = one ShouldRateLimit call",
    `with 3 descriptors; target ≥ ${4 * REFERENCE_PER_CORE}, 4 × envoyproxy/ratelimit's ~${REFERENCE_PER_CORE}/core, other hardware).`,
    "Redis RT/req = Δ tollgate_store_round_trips_total ÷ requests; Redis CPU = all redis-server pids.",
    "JS cores = CPU of the main (JavaScript) thread of each target process ÷ wall time (1.00 = one",
    "process's JS thread saturated); idle cores = CPUs − the machine's busy time (/proc/stat) ÷ wall time;",
    "h2load+other = the machine's busy time − target − Redis, per request. All three over the row's own",
    "slices (not the raw ones).",
    "errors = h2load failed/errored streams; store errors = Δ tollgate_store_errors_total (DEGRADED: the",
    "guard fell back to its failure policy, so that row did not measure Redis). Redis modes run with",
    "--store-deadline 1s: at peak, queueing alone exceeds the 10 ms default (see bench/RESULTS.md).",
    ...(opts.workers > 1
      ? [`Redis modes ran tollgate --workers ${opts.workers}: CPU µs/req is the primary and all its workers.`]
      : []),
    ...(opts.rawWorkers > 1
      ? [
          `The raw baseline ran as ${opts.rawWorkers} node:cluster workers on one socket (rows and ceiling slices).`,
        ]
      : []),
  ].join("\n");
}
