import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Policy } from "../../../src/engine/types.js";
import { groupTakes } from "../../../src/store/redis/groups.js";
import { RedisStore } from "../../../src/store/redis/redis-store.js";
import { StoreError, type Take } from "../../../src/store/store.js";
import { type RedisCluster, startCluster, waitClusterOk } from "../../helpers/redis.js";

const gcra: Policy = { algorithm: "gcra", limit: 10, periodMs: 3_600_000, burst: 10 };
const take = (key: string, cost: number): Take => ({ key, policy: gcra, cost });
const slotOf = (key: string) => groupTakes([take(key, 1)], { bySlot: true })[0]?.slot ?? -1;

// Auto-pipelining (the default) and plain commands. The call deadline is set far past the bounds
// asserted here, so it cannot hide a hang: with ioredis 5.6 and its failover retry on, an
// auto-pipelined call to the dead master never settled and the node never served again (see
// client.ts, retryDelayOnFailover).
describe.each([
  { mode: "auto-pipelined (default)", options: {} },
  { mode: "plain commands", options: { autoPipelining: false } },
])("RedisStore when a cluster master dies and comes back, $mode", ({ options }) => {
  let cluster: RedisCluster;
  let store: RedisStore | undefined;
  beforeAll(async () => {
    cluster = await startCluster({ masters: 3 });
  });
  afterAll(async () => {
    await store?.close();
    await cluster?.stop();
  });

  it("fails calls to the dead master fast and transiently, serves the others, and recovers", async () => {
    store = new RedisStore({ url: cluster.url, commandTimeoutMs: 100, callTimeoutMs: 30_000, ...options });
    await store.ready();
    const keys = ["a", "b", "c", "d", "e", "f"].map((t) => `tl:v1:{${t}}:g0`);
    await store.take(keys.map((k) => take(k, 1)));
    const counts = await Promise.all(
      cluster.nodes.map((n) =>
        Promise.all(keys.map((k) => n.client().call("CLUSTER", "COUNTKEYSINSLOT", slotOf(k)))),
      ),
    );
    const victim = cluster.nodes[0];
    if (!victim) throw new Error("no node");
    const onVictim = keys.filter((_, i) => Number(counts[0]?.[i]) > 0);
    const elsewhere = keys.filter((k) => !onVictim.includes(k));
    expect(onVictim.length).toBeGreaterThan(0);
    expect(elsewhere.length).toBeGreaterThan(0);
    await victim.kill("SIGKILL");

    const started = performance.now();
    const err = await store.take([take(onVictim[0] ?? "", 1)]).catch((e: unknown) => e);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).transient).toBe(true);
    // A call spanning the dead master and a live one fails as a whole, and the live part is refunded.
    const mixed = await store
      .take([take(onVictim[0] ?? "", 1), take(elsewhere[0] ?? "", 1)])
      .catch((e: unknown) => e);
    expect(mixed).toBeInstanceOf(StoreError);
    const other = await store.take([take(elsewhere[0] ?? "", 1)]);
    expect(other[0]).toMatchObject({ allowed: true, remaining: 8 });
    // Calls of one tick share a pipeline per node: the dead node's fail, the live ones' are served
    // (cost 0: a check that charges nothing, so the bucket above keeps its count).
    const burstStarted = performance.now();
    const burst = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        store?.take([take((i % 2 ? onVictim[0] : elsewhere[elsewhere.length - 1]) ?? "", 0)]).then(
          (o) => o[0]?.allowed,
          (e: unknown) => e,
        ),
      ),
    );
    expect(performance.now() - burstStarted).toBeLessThan(2_000);
    expect(burst.filter((_, i) => i % 2 === 0)).toEqual(Array(10).fill(true));
    expect(burst.filter((_, i) => i % 2 === 1).every((e) => e instanceof StoreError && e.transient)).toBe(
      true,
    );

    await victim.restart(); // same port and cluster config file: it rejoins owning its slots, empty
    await waitClusterOk(cluster.ports);
    let back: Awaited<ReturnType<RedisStore["take"]>> | undefined;
    for (let i = 0; i < 100 && !back; i++) {
      back = await store
        .take([take(onVictim[0] ?? "", 1)])
        .catch(() => new Promise<undefined>((r) => setTimeout(() => r(undefined), 50)));
    }
    expect(back?.[0]).toMatchObject({ allowed: true, remaining: 9 });
  });
});
