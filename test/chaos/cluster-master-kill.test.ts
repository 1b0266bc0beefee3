import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keySlot } from "../../src/store/redis/slot.js";
import { type RedisCluster, startCluster } from "../helpers/redis.js";
import { type Service, startService } from "../helpers/service.js";
import { guardStatus, pause, type Record, steadyLoad } from "./load.js";
import { CHAOS_ARGS, OUTAGE_MS, RECOVER_WITHIN_MS } from "./outage-suite.js";
import { LIMIT, policyConfigDir } from "./policies.js";
import { GRPC, type RlsClient, rlsClient } from "./rls-client.js";

/** Tenants of the `local` domain whose bucket lives on master `port`, and on other masters. */
function tenantsBy(
  slots: [number, number, [string, number]][],
  port: number,
): { dead: string; live: string } {
  const owner = (t: string) => {
    const slot = keySlot(`tl:v1:{local|tenant=${t}}:g0`);
    return slots.find(([from, to]) => slot >= from && slot <= to)?.[2][1];
  };
  const names = Array.from({ length: 50 }, (_, i) => `t${i}`);
  const dead = names.find((t) => owner(t) === port);
  const live = names.find((t) => owner(t) !== undefined && owner(t) !== port);
  if (dead === undefined || live === undefined) throw new Error("no tenant split found");
  return { dead, live };
}

/** Window after the kill over which the live tenant's admissions are counted. */
const EXACT_WINDOW_MS = 1500;

describe("the service on a 3-master cluster when one master is SIGKILLed under steady load and restarted", () => {
  let cluster: RedisCluster;
  let svc: Service;
  let client: RlsClient;
  let records: Record[] = [];
  let killedAt = 0;
  let state = "";
  let nodeStates: { readonly [node: string]: string } = {};
  let startedAt = Number.NaN;
  let restoredAt = Number.NaN;
  let recoveredAt = Number.NaN;

  beforeAll(async () => {
    // A node timeout well past the outage: the live masters must not declare the cluster down
    // (cluster-require-full-coverage) while the victim is away; that is Redis' choice, not tollgate's.
    cluster = await startCluster({ masters: 3, nodeTimeoutMs: 20_000 });
    // A 250 ms store deadline here (the later flag wins): what this file pins is routing (live keys
    // stay on Redis) and recovery, and with the suite's 25 ms a live call stalled on the loaded 2-core
    // machine now and then misses the deadline and gets a `local` fallback admission, which reads as
    // over-admission.
    svc = await startService({
      config: policyConfigDir(),
      store: cluster.url,
      args: [...CHAOS_ARGS, "--store-deadline", "250ms"],
    });
    client = rlsClient(svc.grpcPort);
    const victim = cluster.nodes[0];
    if (victim === undefined) throw new Error("no node");
    const slots = (await cluster.nodes[1]?.client().call("CLUSTER", "SLOTS")) as [
      number,
      number,
      [string, number],
    ][];
    const { dead, live } = tenantsBy(slots, victim.port);
    await client.call("local", [[["tenant", "warm"]]]);
    const load = steadyLoad({
      clients: [client],
      everyMs: 8,
      shot: (i) => {
        // Two calls for the dead master per live one: a failure ratio over the breaker's 50%.
        const isLive = i % 3 === 0;
        return {
          label: isLive ? "live" : "dead",
          domain: "local",
          descriptors: [[["tenant", isLive ? live : dead]]],
        };
      },
    });
    await pause(100);
    killedAt = load.now();
    await victim.kill("SIGKILL");
    await pause(OUTAGE_MS);
    const during = (await guardStatus(svc)) as { state: string; nodes?: { readonly [node: string]: string } };
    state = during.state;
    nodeStates = during.nodes ?? {};
    // Same port, same nodes.conf: the master comes back with its slots (its data is gone: no
    // persistence). A restarted master answers CLUSTERDOWN for its first 2 s (Redis'
    // CLUSTER_WRITABLE_DELAY, so the cluster may reconfigure it first): it is back, for the 2 s bound,
    // once it reports cluster_state:ok.
    await victim.restart();
    startedAt = load.now();
    // Polled in-process: a redis-cli child every few ms starves the 2-core test machine.
    const probe = victim.client();
    while (!String(await probe.call("CLUSTER", "INFO").catch(() => "")).includes("cluster_state:ok")) {
      await pause(20);
    }
    restoredAt = load.now();
    while (Number.isNaN(recoveredAt) && load.now() < restoredAt + 3000) {
      if ((await guardStatus(svc)).state === "closed") recoveredAt = load.now();
      else await pause(20);
    }
    await pause(300);
    records = await load.stop();
  });
  afterAll(async () => {
    client?.close();
    await svc?.stop();
    await cluster?.stop();
  });

  it("answers every request with a decision", () => {
    expect(records.filter((r) => r.grpcStatus !== GRPC.OK)).toEqual([]);
  });

  // The guard keeps one circuit breaker per master (src/store/guard/partitioned.ts): failures on the
  // dead master open only its breaker, so the live tenant stays on Redis and gets exactly its limit.
  // Counted over the first 1.5 s after the kill (before GCRA refills a token, every 60 s / LIMIT):
  // over the whole run a stall of the loaded 2-core test machine sometimes makes a live call miss
  // even a 250 ms deadline, and its `local` fallback admission would read as over-admission.
  it("keeps keys on the live masters exact: the live tenant gets exactly its limit", () => {
    const live = records.filter((r) => r.label === "live" && r.at < killedAt + EXACT_WINDOW_MS);
    console.log(
      `cluster master kill: breaker ${state}, live admitted ${live.filter((r) => r.code === "OK").length} of ${live.length}, dead admitted ${records.filter((r) => r.label === "dead" && r.code === "OK").length}, killedAt ${Math.round(killedAt)}`,
    );
    expect(live.length).toBeGreaterThan(LIMIT + 10);
    expect(live.filter((r) => r.code === "OK")).toHaveLength(LIMIT);
  });

  it("opens only the dead master's breaker", () => {
    // Open, or half-open while a probe waits for its answer.
    expect(state).not.toBe("closed");
    const open = Object.entries(nodeStates).filter(([, s]) => s !== "closed");
    expect(open.map(([node]) => node)).toEqual([`127.0.0.1:${cluster.nodes[0]?.port}`]);
  });

  // Broken by ccb58f5 (cluster auto-pipelining on) until ioredis' delayed CLUSTERDOWN retry was turned
  // off with it: the restarted master's first CLUSTERDOWN pipeline was retried, never settled, and
  // blocked that node's auto-pipeline for good (see src/store/redis/client.ts).
  it(`is back on the restarted master within ${RECOVER_WITHIN_MS} ms, default breaker settings`, () => {
    console.log(
      `cluster master kill measured: ${JSON.stringify({ writableAfterStartMs: Math.round(restoredAt - startedAt), recoverMs: Math.round(recoveredAt - restoredAt) })}`,
    );
    expect(recoveredAt - restoredAt).toBeLessThan(RECOVER_WITHIN_MS);
  });
});
