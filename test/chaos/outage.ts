/**
 * One chaos scenario end to end: a tollgate process on the given store, the `hot` tenants exhausted,
 * steady load, a fault injected, an outage held, the store restored, and the recovery watched on
 * `/rlconfig`. Returns every answer with the moments that cut the record, for the assertions in
 * outage-suite.ts. Everything started here is stopped by `close()`.
 */
import { type Service, startService } from "../helpers/service.js";
import { guardStatus, pause, type Record, steadyLoad } from "./load.js";
import { exhaustHot, policyConfigDir, policyShot } from "./policies.js";
import { type RlsClient, rlsClient } from "./rls-client.js";

/** What a scenario needs: the store URL, extra flags, how to break it and how to mend it. */
export interface OutagePlan {
  readonly store: string;
  readonly args: readonly string[];
  /** Milliseconds of load before the fault. @default 400 */
  readonly warmMs?: number;
  /** Milliseconds the fault lasts (measured from its start). @default 1200 */
  readonly outageMs?: number;
  /** Sends one call every this many ms. @default 8 */
  readonly everyMs?: number;
  readonly fault: () => Promise<void>;
  /**
   * The store is broken before the service starts (`fault` is then a no-op at time 0): no warm-up,
   * no healthy phase. @default false
   */
  readonly brokenFromStart?: boolean;
  /** Bring the store back; omit for a fault that is not mended in the scenario. */
  readonly restore?: () => Promise<void>;
}

/** Decision-latency histogram counts (server side) over a window. */
export interface LatencyWindow {
  /** Decisions in the window. */
  readonly count: number;
  /** Of those, how many took at most `le` seconds. */
  readonly within: number;
  readonly le: number;
  /**
   * The service's longest event-loop stall in the window, in seconds
   * (`tollgate_nodejs_eventloop_lag_max_seconds`, which prom-client resets on every scrape, so the
   * scrape closing the window reports the window's own maximum).
   */
  readonly loopStallS: number;
}

/** What happened, in ms since the load started. */
export interface OutageRun {
  readonly records: Record[];
  readonly faultAt: number;
  /**
   * When the store could be back: the moment `restore` began (NaN without `restore`). A restore
   * that starts a new server resolves only once that server answers a PING, and the service may
   * reconnect and decide from it before then: everything sent from here on is out of the outage.
   */
  readonly restoredAt: number;
  /** When /rlconfig first said `closed` after the restore (NaN if never within 3 s). */
  readonly recoveredAt: number;
  /**
   * The service's longest event-loop stall (seconds) from `recoveredAt` to the end of the load, the
   * window of the post-recovery checks (NaN without `restore`, or if the breaker never closed).
   */
  readonly recoveryLoopStallS: number;
  /** Breaker state seen on /rlconfig during the outage. */
  readonly stateDuringOutage: string;
  /** Server-side decision latency over {@link OPEN_WINDOW_MS} from the breaker's opening (+100 ms). */
  readonly openLatency: LatencyWindow;
  readonly svc: Service;
  close(): Promise<void>;
}

/**
 * Length of the open-breaker latency window (it covers the first probes). Longer outages do not
 * lengthen it: on the loaded 2-core test machine a longer window mostly adds event-loop starvation
 * outliers to a bound that is about the guard.
 */
const OPEN_WINDOW_MS = 1000;

/** Sum of `tollgate_decision_duration_seconds` bucket `le` and count over every series. */
async function decisionHistogram(
  svc: Service,
  le: number,
): Promise<{ count: number; within: number; loopStallS: number }> {
  const text = await (await svc.http("/metrics")).text();
  let count = 0;
  let within = 0;
  let loopStallS = Number.NaN;
  for (const line of text.split("\n")) {
    const value = Number(line.split(" ").pop());
    if (line.startsWith("tollgate_nodejs_eventloop_lag_max_seconds ")) loopStallS = value;
    else if (line.startsWith("tollgate_decision_duration_seconds_count")) count += value;
    else if (line.startsWith("tollgate_decision_duration_seconds_bucket") && line.includes(`le="${le}"`)) {
      within += value;
    }
  }
  return { count, within, loopStallS };
}

/**
 * Warm the service's hot path (JIT, connections, script cache) with a short burst on fresh tenants,
 * then wait until the breaker is closed again: a cold first burst on a starved machine may trip it.
 */
async function warmUp(svc: Service, client: RlsClient): Promise<void> {
  for (let round = 0; round < 5; round++) {
    const calls = [];
    for (let i = 0; i < 40; i++) calls.push(client.call("deny", [[["tenant", `warm-${round}-${i}`]]]));
    await Promise.all(calls);
  }
  // A breaker only half-opens and closes on a take: keep probing with single calls.
  for (let i = 0; i < 100; i++) {
    await client.call("deny", [[["tenant", `warm-probe-${i}`]]]);
    if ((await guardStatus(svc)).state === "closed") return;
    await pause(20);
  }
  throw new Error("breaker did not close after the warm-up");
}

/** Run `plan`; `le` is the latency bound (seconds) whose bucket is read for the open-breaker window. */
export async function runOutage(plan: OutagePlan, le: number): Promise<OutageRun> {
  const svc = await startService({ config: policyConfigDir(), store: plan.store, args: plan.args });
  let client: RlsClient | undefined;
  try {
    client = rlsClient(svc.grpcPort);
    if (plan.brokenFromStart !== true) {
      await warmUp(svc, client);
      await exhaustHot(client);
    }
    const load = steadyLoad({ clients: [client], everyMs: plan.everyMs ?? 8, shot: policyShot });
    await pause(plan.brokenFromStart === true ? 0 : (plan.warmMs ?? 400));
    const faultAt = load.now();
    await plan.fault();
    await pause(Math.max(0, faultAt + 100 - load.now()));
    // The open-breaker window starts once /rlconfig says open and the calls that were already
    // waiting on the store (at most one deadline each) have been answered.
    while ((await guardStatus(svc)).state !== "open" && load.now() < faultAt + 2000) await pause(10);
    await pause(100);
    const h0 = await decisionHistogram(svc, le);
    const outageEnd = faultAt + (plan.outageMs ?? 1200);
    await pause(Math.max(0, Math.min(OPEN_WINDOW_MS, outageEnd - load.now())));
    const h1 = await decisionHistogram(svc, le);
    await pause(Math.max(0, outageEnd - load.now()));
    const stateDuringOutage = (await guardStatus(svc)).state;
    let restoredAt = Number.NaN;
    let recoveredAt = Number.NaN;
    let recoveryLoopStallS = Number.NaN;
    if (plan.restore !== undefined) {
      restoredAt = load.now();
      await plan.restore();
      while (Number.isNaN(recoveredAt) && load.now() < restoredAt + 3000) {
        if ((await guardStatus(svc)).state === "closed") recoveredAt = load.now();
        else await pause(20);
      }
      // A scrape resets the stall maximum: the one after the load is the recovery window's own.
      if (!Number.isNaN(recoveredAt)) await decisionHistogram(svc, le);
      await pause(300);
    }
    const records = await load.stop();
    if (!Number.isNaN(recoveredAt)) recoveryLoopStallS = (await decisionHistogram(svc, le)).loopStallS;
    const openLatency = {
      count: h1.count - h0.count,
      within: h1.within - h0.within,
      le,
      loopStallS: h1.loopStallS,
    };
    const c = client;
    return {
      records,
      faultAt,
      restoredAt,
      recoveredAt,
      recoveryLoopStallS,
      stateDuringOutage,
      openLatency,
      svc,
      async close() {
        c.close();
        await svc.stop();
      },
    };
  } catch (err) {
    client?.close();
    await svc.stop();
    throw err;
  }
}
