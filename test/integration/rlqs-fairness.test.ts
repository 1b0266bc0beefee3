/**
 * RLQS measured (issue 26): 3 simulated Envoys (official protos, local token buckets, Envoy's
 * reporting) with skewed demand 70/20/10 % of twice the limit; the demand flips to 10/20/70 % after
 * about 4 s, half way through a reporting interval, then 3.5 s more. On memory (one instance), a
 * single Redis (one instance, then two sharing it) and a 3-master cluster (two instances; the
 * shrinking and the growing Envoy on different ones). Measured from the Envoys' own logs
 * (bench/rlqs-fairness.mjs): report-aligned windows, intervals as the Envoys' timers actually ran.
 *
 * Checks: every assigned rate within 15 % of its new fair share within two reporting intervals of
 * the flip, and during at least 90 % of the time after that; admitted shares over the windows after
 * each Envoy's third report after the flip within 15 % of the targets, and before it nobody
 * starved; admitted traffic within 5 % of the limit (after a 1 s warm-up: the first assignment's
 * round trip runs on Envoy's no-assignment behaviour); Redis commands bounded by reports.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs module shared with bench/rlqs.mjs (no type declarations)
import { fairnessConfig, runFairness } from "../../bench/rlqs-fairness.mjs";
import { targetShares } from "../../src/engine/rlqs/allocator.js";
import { type RedisCluster, type RedisServer, startCluster, startRedis } from "../helpers/redis.js";
import { type Service, startService } from "../helpers/service.js";

const LIMIT = 200;
const INTERVAL_MS = 200;
const DEMAND = [0.7, 0.2, 0.1].map((s) => s * 2 * LIMIT);
const FLIPPED = [0.1, 0.2, 0.7].map((s) => s * 2 * LIMIT);

interface Measures {
  admittedOverLimit: number;
  targetsBefore: number[];
  sharesBefore: number[];
  targetsAfter: number[];
  sharesAfter: number[];
  firstWithinIntervals: number;
  flipPhaseActual: number;
  withinAfter: number;
  reports: number;
  redisCalls: number | undefined;
}

let redis: RedisServer;
let cluster: RedisCluster;
let config: string;
const services: Service[] = [];
beforeAll(async () => {
  [redis, cluster] = await Promise.all([startRedis(), startCluster({ masters: 3 })]);
  const dir = mkdtempSync(join(tmpdir(), "tollgate-rlqs-fair-"));
  config = join(dir, "edge.yaml");
  writeFileSync(config, fairnessConfig({ limit: LIMIT, intervalMs: INTERVAL_MS }));
}, 60_000);
afterAll(async () => {
  await Promise.all(services.map((s) => s.stop()));
  await Promise.all([redis?.stop(), cluster?.stop()]);
});

async function commandCalls(clients: readonly Redis[]): Promise<number> {
  let n = 0;
  for (const c of clients) {
    const info = await c.info("commandstats");
    for (const m of info.matchAll(/^cmdstat_([\w|]+):calls=(\d+)/gm))
      if (m[1] !== "info" && !m[1]?.startsWith("cluster")) n += Number(m[2]);
  }
  return n;
}

const SETUPS: [string, () => { store: string; instances: number; clients: Redis[] }][] = [
  ["memory, one instance", () => ({ store: "memory", instances: 1, clients: [] })],
  ["redis, one instance", () => ({ store: redis.url, instances: 1, clients: [redis.client()] })],
  ["redis, two instances sharing it", () => ({ store: redis.url, instances: 2, clients: [redis.client()] })],
  [
    "redis-cluster (3 masters), two instances",
    () => ({ store: cluster.url, instances: 2, clients: cluster.nodes.map((n) => n.client()) }),
  ],
];

describe.each(SETUPS)("RLQS fairness: %s", (name, setup) => {
  // One more attempt on failure: this samples one flip per setup on real timers. The seeded
  // virtual-time version (test/engine/rlqs/fairness-sim.test.ts) checks the mechanism over 200 flips
  // with timers up to 10 ms late and meets the bounds in each (3 of 1000 seeds miss one); under
  // heavier load (timers up to 20 ms late) it misses in ~9 % of flips, mostly admitted traffic 5-10 %
  // over from the bursts of restarted buckets (docs/rlqs.md, "Rounding"). A change that breaks
  // tracking fails both attempts.
  it(
    "splits one limit by demand and tracks a demand flip within two reporting intervals",
    { retry: 1 },
    async () => {
      const { store, instances, clients } = setup();
      const started = await Promise.all(
        Array.from({ length: instances }, () => startService({ config, store })),
      );
      services.push(...started);
      // Two instances: the shrinking Envoy and the growing one are on different instances.
      const at = (i: number) => (started[i % started.length] as Service).grpcAddress;
      const m: Measures = await runFairness({
        addresses: [at(0), at(0), at(1)],
        limit: LIMIT,
        intervalMs: INTERVAL_MS,
        demand: DEMAND,
        flipped: FLIPPED,
        targetsBefore: targetShares(LIMIT, 0.1, DEMAND),
        targetsAfter: targetShares(LIMIT, 0.1, FLIPPED),
        beforeMs: 4000,
        afterMs: 3500,
        ...(clients.length > 0 ? { redisCalls: () => commandCalls(clients) } : {}),
      });
      await Promise.all(started.map((s) => s.stop()));
      console.log(name, JSON.stringify(m));

      // Tracking: all within 15 % no later than two reporting intervals after the flip, and then
      // (nearly) all the time: a late excursion is demand noise moving a share, not convergence.
      // The flip is timed half way through an interval; on a loaded machine the timer can fire late,
      // just after a report (measured: flipPhaseActual). That is the slow case of docs/rlqs.md
      // ("Fairness model"): two intervals plus up to two re-read ticks (interval/8 each).
      const slowCase = m.flipPhaseActual < 0.25;
      expect(m.firstWithinIntervals).toBeLessThanOrEqual(slowCase ? 2 + 2 / 8 : 2);
      expect(m.withinAfter).toBeGreaterThan(0.9);
      for (const [i, share] of m.sharesAfter.entries()) {
        const target = m.targetsAfter[i] as number;
        expect(Math.abs(share - target) / target).toBeLessThan(0.15);
      }
      for (const [i, share] of m.sharesBefore.entries())
        expect(share).toBeGreaterThan((m.targetsBefore[i] as number) / 2);
      expect(Math.abs(m.admittedOverLimit - 1)).toBeLessThan(0.05);
      // Redis work follows reports: one script call per report while shares are settled, a publish
      // per changed assignment and bounded re-reads while they move (plus heartbeats, which run
      // their few commands per instance per second whatever the traffic).
      if (m.redisCalls !== undefined) expect(m.redisCalls).toBeLessThan(m.reports * 12 + 100);
    },
  );
});
