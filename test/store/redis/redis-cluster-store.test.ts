import { Socket } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { bucketKey } from "../../../src/engine/keys.js";
import type { Policy } from "../../../src/engine/types.js";
import { groupTakes } from "../../../src/store/redis/groups.js";
import { RedisStore } from "../../../src/store/redis/redis-store.js";
import type { Take } from "../../../src/store/store.js";
import { keysWithoutTtl, type RedisCluster, startCluster } from "../../helpers/redis.js";
import { recordingMetrics } from "./recording-metrics.js";

const hour = 3_600_000;
let seq = 0;
/** A key whose hash tag is `tag`, unique per test. */
const key = (tag: string) => `tl:v1:{${tag}}:${process.pid}:${seq++}`;
const take = (k: string, policy: Policy, cost = 1): Take => ({ key: k, policy, cost });
const gcra = (burst: number): Policy => ({ algorithm: "gcra", limit: burst, periodMs: hour, burst });

describe("RedisStore on a 3-master Redis Cluster", () => {
  let cluster: RedisCluster;
  const stores: RedisStore[] = [];
  const open = async () => {
    const s = new RedisStore({ url: cluster.url });
    stores.push(s);
    await s.ready();
    return s;
  };

  beforeAll(async () => {
    cluster = await startCluster({ masters: 3 });
  });
  afterEach(async () => {
    for (const node of cluster.nodes) expect(await keysWithoutTtl(node.client())).toEqual([]);
  });
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await cluster?.stop();
  });

  it("reports kind redis-cluster", async () => {
    expect((await open()).kind).toBe("redis-cluster");
  });

  it("charges nothing in any slot when a bucket in another slot denies", async () => {
    const store = await open();
    const [a, b, c] = [key("tenant-a"), key("tenant-b"), key("tenant-c")];
    expect(
      new Set(
        groupTakes([take(a, gcra(1)), take(b, gcra(1)), take(c, gcra(1))], { bySlot: true }).map(
          (g) => g.slot,
        ),
      ).size,
    ).toBe(3);
    await store.take([take(c, gcra(2), 2)]);
    const out = await store.take([take(a, gcra(5), 2), take(b, gcra(5), 2), take(c, gcra(2))]);
    expect(out.map((o) => o.allowed)).toEqual([true, true, false]);
    expect(out.map((o) => o.remaining)).toEqual([5, 5, 0]);
    const peek = await store.take([take(a, gcra(5), 0), take(b, gcra(5), 0)]);
    expect(peek.map((o) => o.remaining)).toEqual([5, 5]);
  });

  it("never admits more than the smallest capacity across slots under concurrency, and leaks no charge", async () => {
    const many = await Promise.all([open(), open(), open()]);
    const [a, b] = [key("hot-a"), key("hot-b")];
    const calls = Array.from({ length: 300 }, (_, i) =>
      many[i % many.length]?.take([take(a, gcra(50)), take(b, gcra(30))]),
    );
    const admitted = (await Promise.all(calls)).filter((o) => o?.every((x) => x.allowed)).length;
    // Under contention compensation may under-admit (a refund lands after a competitor was denied)…
    expect(admitted).toBeLessThanOrEqual(30);
    const peek = await many[0]?.take([take(a, gcra(50), 0), take(b, gcra(30), 0)]);
    expect(peek?.map((o) => o.remaining)).toEqual([50 - admitted, 30 - admitted]);
    // …but every refund lands: sequential requests then get exactly what is left of the smaller bucket.
    let more = 0;
    while ((await many[0]?.take([take(a, gcra(50)), take(b, gcra(30))]))?.every((o) => o.allowed)) more++;
    expect(admitted + more).toBe(30);
  });

  it("admits exactly the capacity of a one-slot bucket to concurrent takes from several connections", async () => {
    const many = await Promise.all([open(), open(), open()]);
    const k = key("single");
    const outs = await Promise.all(
      Array.from({ length: 300 }, (_, i) => many[i % 3]?.take([take(k, gcra(40))])),
    );
    expect(outs.filter((o) => o?.[0]?.allowed).length).toBe(40);
  });

  it("reloads scripts on every master after SCRIPT FLUSH", async () => {
    const store = await open();
    const keys = [key("f1"), key("f2"), key("f3"), key("f4")];
    await store.take(keys.map((k) => take(k, gcra(5))));
    await Promise.all(cluster.nodes.map((n) => n.client().script("FLUSH")));
    const out = await store.take(keys.map((k) => take(k, gcra(5))));
    expect(out.map((o) => o.remaining)).toEqual([3, 3, 3, 3]);
  });

  it("counts one round trip per master reached by a request when auto-pipelining", async () => {
    const metrics = recordingMetrics();
    const store = new RedisStore({ url: cluster.url, metrics, autoPipelining: true });
    stores.push(store);
    await store.ready();
    const before = metrics.roundTrips;
    const takes = [key("r1"), key("r2"), key("r3"), key("r4"), key("r5")].map((k) => take(k, gcra(5)));
    const masters = new Set(groupTakes(takes, { bySlot: true }).map((g) => g.slot));
    await store.take(takes);
    expect(metrics.roundTrips - before).toBeLessThanOrEqual(Math.min(3, masters.size));
    expect(metrics.roundTrips - before).toBeGreaterThan(0);
  });

  it("writes one turn's merged calls to each master in one socket write", async () => {
    const store = await open();
    const keys = Array.from({ length: 12 }, (_, i) => key(`write-${i}`));
    const masters = new Set(keys.map((k) => store.nodeOf(k)));
    expect(masters.size).toBe(3);
    const turn = () => Promise.all(keys.map((k) => store.take([take(k, gcra(5))])));
    await turn(); // loads the scripts (NOSCRIPT goes again on its own)
    const writes = new Map<number, number>();
    const proto = Socket.prototype as unknown as Record<"_write" | "_writev", (...a: unknown[]) => unknown>;
    const original = { _write: proto._write, _writev: proto._writev };
    for (const name of ["_write", "_writev"] as const) {
      proto[name] = function (this: Socket, ...args: unknown[]) {
        writes.set(this.remotePort ?? 0, (writes.get(this.remotePort ?? 0) ?? 0) + 1);
        return original[name].apply(this, args);
      };
    }
    let answers: Awaited<ReturnType<typeof turn>>;
    try {
      answers = await turn();
    } finally {
      Object.assign(proto, original);
    }
    expect(answers.map((a) => a[0]?.remaining)).toEqual(keys.map(() => 3));
    const masterPorts = [...masters].map((m) => Number(m.split(":")[1]));
    expect(masterPorts.map((p) => writes.get(p))).toEqual([1, 1, 1]);
  });

  it("merges the calls of one turn per slot and pipelines them per master, without auto-pipelining", async () => {
    const metrics = recordingMetrics();
    const store = new RedisStore({ url: cluster.url, metrics, autoPipelining: false });
    stores.push(store);
    await store.ready();
    const hot = key("merge-hot");
    const cold = [key("merge-1"), key("merge-2"), key("merge-3"), key("merge-4")];
    const nodesOf = (keys: string[]) => new Set(keys.map((k) => store.nodeOf(k))).size;
    const before = metrics.roundTrips;
    // 12 calls on one bucket of 10, plus one call per other tag: merged per slot, in call order.
    const answers = await Promise.all([
      ...Array.from({ length: 12 }, () => store.take([take(hot, gcra(10))])),
      ...cold.map((k) => store.take([take(k, gcra(3), 2)])),
    ]);
    expect(answers.slice(0, 12).map((a) => [a[0]?.allowed, a[0]?.remaining])).toEqual([
      ...Array.from({ length: 10 }, (_, i) => [true, 9 - i]),
      [false, 0],
      [false, 0],
    ]);
    expect(answers.slice(12).map((a) => a[0]?.remaining)).toEqual([1, 1, 1, 1]);
    // One pipeline per master reached (16 separate commands without merging and pipelining).
    expect(metrics.roundTrips - before).toBe(nodesOf([hot, ...cold]));
  });

  it("spreads the shards of one hot tenant's bucket over all three masters", async () => {
    const store = await open();
    const entries = [{ key: "tenant", value: "hot" }];
    const shards = Array.from({ length: 6 }, (_, shard) =>
      bucketKey({ prefix: "", domain: "edge", entries, limitIndex: 0, algorithm: "gcra", shard }),
    );
    await Promise.all(
      Array.from({ length: 60 }, (_, i) => store.take([take(shards[i % 6] ?? "", gcra(20))])),
    );
    const perMaster = await Promise.all(
      cluster.nodes.map(async (n) => (await n.client().keys("tl:v1:{edge|tenant=hot#*")).length),
    );
    expect(perMaster.every((count) => count > 0)).toBe(true);
    expect(perMaster.reduce((a, b) => a + b, 0)).toBe(6);
  });

  it("resets buckets spread over several slots", async () => {
    const store = await open();
    const keys = [key("x1"), key("x2"), key("x3")];
    await store.take(keys.map((k) => take(k, gcra(3), 3)));
    await store.reset(keys);
    const out = await store.take(keys.map((k) => take(k, gcra(3), 0)));
    expect(out.map((o) => o.remaining)).toEqual([3, 3, 3]);
  });
});

describe("RedisStore while a slot moves to another master", () => {
  let cluster: RedisCluster;
  let store: RedisStore | undefined;
  const others: RedisStore[] = [];
  beforeAll(async () => {
    cluster = await startCluster({ masters: 3 });
  });
  afterAll(async () => {
    await store?.close();
    await Promise.all(others.map((s) => s.close()));
    await cluster?.stop();
  });

  it("follows MOVED to the new owner, keeps the bucket's state and loads its scripts there", async () => {
    store = new RedisStore({ url: cluster.url });
    await store.ready();
    const k = key("moving");
    const slot = groupTakes([take(k, gcra(10))], { bySlot: true })[0]?.slot ?? -1;
    expect((await store.take([take(k, gcra(10), 4)]))[0]?.remaining).toBe(6);

    const clients = cluster.nodes.map((n) => n.client());
    const ids = await Promise.all(clients.map((c) => c.call("CLUSTER", "MYID") as Promise<string>));
    const owner = (
      await Promise.all(clients.map((c) => c.call("CLUSTER", "COUNTKEYSINSLOT", slot)))
    ).findIndex((n) => Number(n) > 0);
    const target = (owner + 1) % clients.length;
    const [from, to] = [clients[owner], clients[target]];
    const [fromNode, toNode] = [cluster.nodes[owner], cluster.nodes[target]];
    if (!from || !to || !fromNode || !toNode) throw new Error("cluster nodes missing");
    await to.call("CLUSTER", "SETSLOT", slot, "IMPORTING", ids[owner] ?? "");
    await from.call("CLUSTER", "SETSLOT", slot, "MIGRATING", ids[target] ?? "");
    await from.call("MIGRATE", "127.0.0.1", toNode.port, "", 0, 5000, "KEYS", k);
    for (const c of clients) await c.call("CLUSTER", "SETSLOT", slot, "NODE", ids[target] ?? "");

    // The store still routes the slot to the old owner: it answers MOVED, ioredis refreshes and
    // resends to the new owner, whose connection has never seen the script.
    const out = await store.take([take(k, gcra(10), 2)]);
    expect(out[0]).toMatchObject({ allowed: true, remaining: 4 });
    expect(Number(await to.call("CLUSTER", "COUNTKEYSINSLOT", slot))).toBe(1);
  });

  it("follows MOVED for a merged call on a moved slot, charging each of its calls once", async () => {
    const s = new RedisStore({ url: cluster.url });
    others.push(s);
    await s.ready();
    const k = key("moving-merged");
    const slot = groupTakes([take(k, gcra(10))], { bySlot: true })[0]?.slot ?? -1;
    await s.take([take(k, gcra(10), 1)]);
    const clients = cluster.nodes.map((n) => n.client());
    const ids = await Promise.all(clients.map((c) => c.call("CLUSTER", "MYID") as Promise<string>));
    const owner = (
      await Promise.all(clients.map((c) => c.call("CLUSTER", "COUNTKEYSINSLOT", slot)))
    ).findIndex((n) => Number(n) > 0);
    // Another tag on the same master, so one write carries both slots' merged calls.
    let other = "";
    for (let i = 0; i < 500 && !other; i++) {
      const candidate = key(`stay-${i}`);
      const cslot = groupTakes([take(candidate, gcra(10))], { bySlot: true })[0]?.slot ?? -1;
      const n = await clients[owner]?.call("CLUSTER", "COUNTKEYSINSLOT", cslot);
      const owned = (
        (await clients[owner]?.call("CLUSTER", "SLOTS")) as [number, number, ...unknown[]][]
      ).some(([lo, hi]) => cslot >= lo && cslot <= hi);
      if (owned && n !== undefined && cslot !== slot) other = candidate;
    }
    expect(other).not.toBe("");
    const target = (owner + 1) % clients.length;
    const [from, to] = [clients[owner], clients[target]];
    const toNode = cluster.nodes[target];
    if (!from || !to || !toNode) throw new Error("cluster nodes missing");
    await to.call("CLUSTER", "SETSLOT", slot, "IMPORTING", ids[owner] ?? "");
    await from.call("CLUSTER", "SETSLOT", slot, "MIGRATING", ids[target] ?? "");
    await from.call("MIGRATE", "127.0.0.1", toNode.port, "", 0, 5000, "KEYS", k);
    for (const c of clients) await c.call("CLUSTER", "SETSLOT", slot, "NODE", ids[target] ?? "");

    // One turn: four calls on the moved slot and two on a slot that stayed, one write to the old
    // owner; the moved batch comes back MOVED (it ran nowhere) and goes to the new owner, while the
    // other is served.
    const answers = await Promise.all([
      ...Array.from({ length: 4 }, () => s.take([take(k, gcra(10), 1)])),
      s.take([take(other, gcra(10), 1)]),
      s.take([take(other, gcra(10), 1)]),
    ]);
    expect(
      answers
        .slice(0, 4)
        .map((a) => a[0]?.remaining)
        .sort(),
    ).toEqual([5, 6, 7, 8]);
    expect(answers.slice(4).map((a) => a[0]?.remaining)).toEqual([9, 8]);
    // Each call of the resent batch charged once: 1 + 4 of 10 spent.
    expect((await s.take([take(k, gcra(10), 0)]))[0]?.remaining).toBe(5);
  });
});
