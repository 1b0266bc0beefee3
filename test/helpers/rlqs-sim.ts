/**
 * The RLQS fairness run of test/integration/rlqs-fairness.test.ts in virtual time: the real
 * sessions, rebalancers and allocator (src/engine/rlqs) on one in-process board, driven by
 * simulated Envoys on a {@link FakeClock}, with seeded noise where a real run has it: board round
 * trips, late timers (a loaded machine), the phase of each Envoy's reporting timer. One run takes
 * tens of milliseconds, so a test can look at hundreds of flips and count misses instead of
 * sampling one per minute; the measures are the same functions as the real run's
 * (bench/rlqs-fairness.mjs).
 */
// @ts-expect-error: a plain .mjs module shared with bench/rlqs.mjs (no type declarations)
import { TokenBucket } from "../../bench/rlqs-envoy.mjs";
// @ts-expect-error: a plain .mjs module shared with bench/rlqs.mjs (no type declarations)
import { admittedRate, firstWithinAt, withinFraction } from "../../bench/rlqs-fairness.mjs";
import type { Participant } from "../../src/engine/rlqs/allocator.js";
import type { RlqsAction, RlqsConfigView } from "../../src/engine/rlqs/messages.js";
import { Rebalancer } from "../../src/engine/rlqs/rebalancer.js";
import { RlqsSession } from "../../src/engine/rlqs/session.js";
import type { TickReads } from "../../src/engine/rlqs/share.js";
import type { UsageBoard, UsageEntry } from "../../src/store/rlqs/board.js";
import { MemoryUsageBoard } from "../../src/store/rlqs/memory-board.js";
import { Prng } from "../fuzz/prng.js";
import { FakeClock } from "./fake-clock.js";

export interface SimOptions {
  readonly seed: number;
  readonly view: RlqsConfigView;
  /** Instance of each Envoy (0-based); instances = max + 1, all on one board. */
  readonly instanceOf: readonly number[];
  readonly limit: number;
  readonly intervalMs: number;
  /** Requests per second of each Envoy before and after the flip. */
  readonly demand: readonly number[];
  readonly flipped: readonly number[];
  readonly targetsAfter: readonly number[];
  readonly beforeMs: number;
  readonly afterMs: number;
  /** Where the flip lands after a report of Envoy 0, as a fraction of an interval. @default 0.5 */
  readonly flipPhase?: number;
  /** Board round trip, ms (uniform in [rtt/2, rtt]). @default 1 */
  readonly rttMs?: number;
  /** Timers (Envoys' reports and request ticks, the rebalancer's) fire late by up to this, ms. @default 0 */
  readonly lateMs?: number;
  readonly tolerance?: number;
}

export interface SimResult {
  readonly firstWithinIntervals: number;
  /** Where the flip landed after Envoy 0's last report, in intervals (the real run's flipPhaseActual). */
  readonly flipPhaseActual: number;
  readonly withinAfter: number;
  readonly admittedOverLimit: number;
  /** Admitted req/s per Envoy, report-aligned: after the warm-up to the flip, and after its third report after it. */
  readonly sharesBefore: number[];
  readonly sharesAfter: number[];
  readonly reports: number;
  readonly boardCalls: number;
  readonly assignmentsAfterFlip: number[];
  /** Per Envoy: [ms after the flip, rate] of assignments in the first 1.5 s after it. */
  readonly trace: [number, number][][];
  /** Board writes after the flip (first 1 s): [ms after the flip, participant, demand, held]. */
  readonly writes: [number, string, number, number][];
}

/** bench/rlqs-envoy.mjs's TokenBucket: Envoy's bucket of one assignment (starts full). */
interface Bucket {
  readonly rate: number;
  readonly spec: string;
  take(now: number): boolean;
}

/** One simulated Envoy: the local token bucket of bench/rlqs-envoy.mjs, no transport. */
class Envoy {
  bucket: Bucket | undefined;
  allowed = 0;
  denied = 0;
  started = false;
  readonly assignments: { at: number; rate: number }[] = [];
  readonly usage: { at: number; allowed: number; denied: number }[] = [];

  request(now: number): boolean {
    const ok = this.bucket === undefined || this.bucket.take(now);
    if (ok) this.allowed++;
    else this.denied++;
    return ok;
  }

  apply(actions: RlqsAction[], now: number): void {
    for (const a of actions) {
      if (a.kind !== "assign" || !("tokenBucket" in a.strategy)) continue;
      const tb = a.strategy.tokenBucket;
      // The assignment as Envoy receives it (the official protos' field names).
      const next: Bucket = new TokenBucket(
        {
          max_tokens: tb.maxTokens,
          tokens_per_fill: { value: tb.tokensPerFill },
          fill_interval: { seconds: tb.fillIntervalSec, nanos: 0 },
        },
        now,
      );
      this.assignments.push({ at: now, rate: next.rate });
      if (this.bucket?.spec !== next.spec) this.bucket = next;
    }
  }

  take(now: number) {
    this.usage.push({ at: now, allowed: this.allowed, denied: this.denied });
    const u = { allowed: this.allowed, denied: this.denied };
    this.allowed = 0;
    this.denied = 0;
    return u;
  }
}

/** One fairness run in virtual time (see the module comment). */
export async function simulateFairness(o: SimOptions): Promise<SimResult> {
  const prng = new Prng(o.seed);
  const random = () => prng.next();
  const clock = new FakeClock(0);
  const memory = new MemoryUsageBoard({ clock });
  const rtt = o.rttMs ?? 1;
  const late = () => random() * (o.lateMs ?? 0);
  const after = (ms: number) => new Promise<void>((r) => clock.set(r, ms));
  let boardCalls = 0;
  const writes: [number, string, number, number][] = [];
  // The board's atomic step happens half way through the round trip (as a Lua script does).
  const trip = async <T>(f: () => T): Promise<T> => {
    boardCalls++;
    const half = (rtt / 2) * (0.5 + random() / 2);
    await after(half);
    const out = f();
    await after(half);
    return out;
  };
  const board: UsageBoard = {
    kind: "redis",
    report: (key: string, entry: UsageEntry, staleMs: number): Promise<Participant[]> =>
      trip(() => {
        writes.push([
          clock.now(),
          entry.participant,
          Math.round(entry.demand),
          Math.round(entry.held * 10) / 10,
        ]);
        return memory.reportNow(key, entry, staleMs);
      }),
    read: (key: string, staleMs: number) => trip(() => memory.reportNow(key, undefined, staleMs)),
    leave: async (key: string, participant: string) => {
      await trip(() => memory.leave(key, participant));
    },
    close: async () => {},
  };
  const instances = Math.max(...o.instanceOf) + 1;
  // Late timers: a loaded event loop fires each timer up to lateMs after it was due.
  const timers = {
    set: (fn: () => void, ms: number) => clock.set(fn, ms + late()),
    clear: (h: ReturnType<FakeClock["set"]>) => clock.clear(h),
  };
  const rebalancers = Array.from({ length: instances }, () => new Rebalancer({ timers, clock }));
  let reports = 0;
  const envoys = o.instanceOf.map((inst, i) => {
    const envoy = new Envoy();
    const session = new RlqsSession({
      config: () => o.view,
      board,
      localBoard: new MemoryUsageBoard({ clock }),
      instances: () => instances,
      clock,
      participant: `${inst}/${i}`,
      defaultPolicy: "local",
      keyPrefix: "",
    });
    // The service's per-stream chain (protocol/rlqs/service.ts): reports and re-reads in order,
    // actions delivered after a network hop.
    let chain = Promise.resolve();
    const deliver = (actions: RlqsAction[]) => {
      if (actions.length > 0) clock.set(() => envoy.apply(actions, clock.now()), rtt / 2);
    };
    const member = {
      get unsettled() {
        return session.unsettled;
      },
      get reportingIntervalMs() {
        return session.reportingIntervalMs;
      },
      rebalance(reads: TickReads): Promise<void> {
        chain = chain.then(async () => deliver(await session.rebalance(reads)));
        return chain;
      },
    };
    const rebalancer = rebalancers[inst] as Rebalancer;
    rebalancer.add(member);
    const send = (allowed: number, denied: number, elapsedMs: number) => {
      reports++;
      const report = {
        domain: "edge",
        usages: [{ bucket: new Map([["tenant", "acme"]]), elapsedMs, allowed, denied }],
      };
      clock.set(() => {
        chain = chain.then(async () => {
          deliver(await session.report(report));
          rebalancer.wake(member);
        });
      }, rtt / 2);
    };
    return { envoy, send };
  });

  let current = o.demand;
  const carry = o.instanceOf.map(() => 0);
  const tickMs = 10;
  let lastTick = 0;
  // Request ticks (bench/rlqs-envoy.mjs drive: every 10 ms, late on a loaded machine).
  const driveTick = () => {
    const now = clock.now();
    for (const [i, e] of envoys.entries()) {
      carry[i] = (carry[i] as number) + ((current[i] ?? 0) * (now - lastTick)) / 1000;
      while ((carry[i] as number) >= 1) {
        carry[i] = (carry[i] as number) - 1;
        e.envoy.request(now);
        if (!e.envoy.started) {
          e.envoy.started = true;
          const u = e.envoy.take(now);
          e.send(u.allowed, u.denied, 0); // a new bucket is reported at once
          // Envoy's reporting timer: its own phase, then every interval (late ones drift, as setInterval).
          const report = () => {
            const t = clock.now();
            const v = e.envoy.take(t);
            e.send(v.allowed, v.denied, 1000 * Math.trunc(o.intervalMs / 1000));
            reportTimes[i]?.push(t);
            timers.set(report, o.intervalMs);
          };
          timers.set(report, o.intervalMs);
        }
      }
    }
    lastTick = now;
    timers.set(driveTick, tickMs);
  };
  const reportTimes: number[][] = o.instanceOf.map(() => []);
  // Envoys start a few ms apart (their report timers have different phases).
  clock.set(driveTick, random() * tickMs);

  const run = async (ms: number) => {
    const end = clock.now() + ms;
    while (clock.now() < end) {
      await clock.tick(Math.min(1, end - clock.now()));
      await new Promise<void>((r) => setImmediate(r));
    }
  };
  await run(o.beforeMs);
  const last = reportTimes[0]?.at(-1) ?? clock.now();
  const phaseMs = (o.flipPhase ?? 0.5) * o.intervalMs;
  const wait = (last + phaseMs - clock.now()) % o.intervalMs;
  await run((wait < 0 ? wait + o.intervalMs : wait) + late());
  current = o.flipped;
  const flipAt = clock.now();
  await run(o.afterMs);
  const end = clock.now();
  for (const r of rebalancers) r.close();

  const tolerance = o.tolerance ?? 0.15;
  const logs = envoys.map((e) => e.envoy.assignments);
  const within = firstWithinAt(logs, o.targetsAfter, flipAt, end, tolerance);
  const warm = 1000;
  const admitted = envoys.map((e) => admittedRate(e.envoy.usage, warm, end));
  const usageTimes = envoys.map((e) => e.envoy.usage.map((u) => u.at));
  const sharesBefore = envoys.map((e, i) =>
    admittedRate(e.envoy.usage, warm, usageTimes[i]?.filter((t) => t <= flipAt).at(-1) ?? flipAt),
  );
  const sharesAfter = envoys.map((e, i) =>
    admittedRate(e.envoy.usage, usageTimes[i]?.filter((t) => t > flipAt)[2] ?? end, end),
  );
  const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
  // Intervals as the Envoys' timers actually ran (late timers stretch them), as the real run.
  const gaps = reportTimes
    .flatMap((ts) => ts.slice(1).map((t, k) => t - (ts[k] as number)))
    .sort((a, b) => a - b);
  const intervalMs = gaps[Math.floor(gaps.length / 2)] ?? o.intervalMs;
  return {
    firstWithinIntervals: round((within - flipAt) / intervalMs),
    flipPhaseActual: round(
      (flipAt - ((reportTimes[0] ?? []).filter((t) => t <= flipAt).at(-1) ?? flipAt)) / intervalMs,
    ),
    withinAfter: round(withinFraction(logs, o.targetsAfter, within, end, tolerance), 3),
    admittedOverLimit: round(admitted.reduce((s, x) => s + x, 0) / o.limit, 3),
    sharesBefore: sharesBefore.map((x) => round(x, 1)),
    sharesAfter: sharesAfter.map((x) => round(x, 1)),
    reports,
    boardCalls,
    assignmentsAfterFlip: logs.map((l) => l.filter((a) => a.at > flipAt).length),
    trace: logs.map((l) =>
      l
        .filter((a) => a.at > flipAt && a.at < flipAt + 1500)
        .map((a) => [round(a.at - flipAt, 0), round(a.rate, 1)]),
    ),
    writes: writes
      .filter((w) => w[0] > flipAt - 250 && w[0] < flipAt + 1000)
      .map(([t, ...rest]) => [round(t - flipAt, 0), ...rest]),
  };
}
