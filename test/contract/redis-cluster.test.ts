import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisStore } from "../../src/store/redis/redis-store.js";
import { keysWithoutTtl, type RedisCluster, startCluster } from "../helpers/redis.js";
import { describeOverdraftContract } from "./overdraft-contract.js";
import { describeStoreContract } from "./store-contract.js";

// Redis scripts read the server's TIME, so `advance` really waits (the suite keeps waits short).
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

let cluster: RedisCluster;
beforeAll(async () => {
  cluster = await startCluster({ masters: 3 });
});
afterAll(async () => {
  await cluster?.stop();
});

const harness = async () => {
  const store = new RedisStore({ url: cluster.url });
  await store.ready();
  return { store, advance: sleep, close: () => store.close() };
};

describeStoreContract("redis-cluster (3 masters)", harness, { realTime: true });
describeOverdraftContract("redis-cluster (3 masters)", harness, { realTime: true });

describe("after the redis-cluster contract suite", () => {
  it("left no key without a TTL on any master", async () => {
    const sizes = await Promise.all(cluster.nodes.map((n) => n.client().dbsize()));
    expect(sizes.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    for (const node of cluster.nodes) expect(await keysWithoutTtl(node.client())).toEqual([]);
  });
});
