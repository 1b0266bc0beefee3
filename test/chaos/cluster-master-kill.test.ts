import { generateMulti } from "cluster-key-slot";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RedisCluster, startCluster } from "../helpers/redis.js";
import { type Service, startService } from "../helpers/service.js";
import { guardStatus, pause, type Record, steadyLoad } from "./load.js";
import { CHAOS_ARGS } from "./outage-suite.js";
import { LIMIT, policyConfigDir } from "./policies.js";
import { GRPC, type RlsClient, rlsClient } from "./rls-client.js";

/** Tenants of the `local` domain whose bucket lives on master `port`, and on other masters. */
function tenantsBy(
  slots: [number, number, [string, number]][],
  port: number,
): { dead: string; live: string } {
  const owner = (t: string) => {
    const slot = generateMulti([`tl:v1:{local|tenant=${t}}:g0`]);
    return slots.find(([from, to]) => slot >= from && slot <= to)?.[2][1];
  };
  const names = Array.from({ length: 50 }, (_, i) => `t${i}`);
  const dead = names.find((t) => owner(t) === port);
  const live = names.find((t) => owner(t) !== undefined && owner(t) !== port);
  if (dead === undefined || live === undefined) throw new Error("no tenant split found");
  return { dead, live };
}

describe("the service on a 3-master cluster when one master is SIGKILLed under steady load", () => {
  let cluster: RedisCluster;
  let svc: Service;
  let client: RlsClient;
  let records: Record[] = [];
  let killedAt = 0;
  let state = "";

  beforeAll(async () => {
    cluster = await startCluster({ masters: 3 });
    svc = await startService({ config: policyConfigDir(), store: cluster.url, args: CHAOS_ARGS });
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
    await pause(1500);
    state = (await guardStatus(svc)).state;
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
  it("keeps keys on the live masters exact: the live tenant gets exactly its limit", () => {
    const live = records.filter((r) => r.label === "live");
    console.log(
      `cluster master kill: breaker ${state}, live admitted ${live.filter((r) => r.code === "OK").length} of ${live.length}, dead admitted ${records.filter((r) => r.label === "dead" && r.code === "OK").length}, killedAt ${Math.round(killedAt)}`,
    );
    expect(live.length).toBeGreaterThan(LIMIT + 10);
    expect(live.filter((r) => r.code === "OK")).toHaveLength(LIMIT);
  });
});
