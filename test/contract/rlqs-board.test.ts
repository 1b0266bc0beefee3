/** The RLQS usage board contract over memory, a single redis-server and a 3-master cluster. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryUsageBoard } from "../../src/store/rlqs/memory-board.js";
import { RedisUsageBoard } from "../../src/store/rlqs/redis-board.js";
import { FakeClock } from "../helpers/fake-clock.js";
import {
  keysWithoutTtl,
  type RedisCluster,
  type RedisServer,
  startCluster,
  startRedis,
} from "../helpers/redis.js";
import { describeBoardContract } from "./rlqs-board-contract.js";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describeBoardContract("memory", async () => {
  const clock = new FakeClock();
  const board = new MemoryUsageBoard({ clock });
  return { board, advance: async (ms) => clock.advance(ms), close: () => board.close() };
});

let server: RedisServer;
let cluster: RedisCluster;
beforeAll(async () => {
  [server, cluster] = await Promise.all([startRedis(), startCluster({ masters: 3 })]);
}, 60_000);
afterAll(async () => {
  await Promise.all([server?.stop(), cluster?.stop()]);
});

describeBoardContract("redis (single redis-server)", async () => {
  const board = new RedisUsageBoard({ url: server.url });
  await board.ready();
  return { board, advance: sleep, close: () => board.close() };
});

describeBoardContract("redis-cluster (3 masters)", async () => {
  const board = new RedisUsageBoard({ url: cluster.url });
  await board.ready();
  return { board, advance: sleep, close: () => board.close() };
});

describe("after the rlqs board contract suites", () => {
  it("left no usage hash without a TTL", async () => {
    expect(await server.client().dbsize()).toBeGreaterThan(0);
    expect(await keysWithoutTtl(server.client())).toEqual([]);
    for (const node of cluster.nodes) expect(await keysWithoutTtl(node.client())).toEqual([]);
  });

  it("reports again after SCRIPT FLUSH on every node (the script runner's NOSCRIPT recovery)", async () => {
    const key = (n: number) => `test:tl:v1:{rlqs|edge|tenant=flushed-${n}}`;
    const single = new RedisUsageBoard({ url: server.url });
    const clustered = new RedisUsageBoard({ url: cluster.url });
    try {
      await Promise.all([single.ready(), clustered.ready()]);
      await server.client().script("FLUSH");
      await Promise.all(cluster.nodes.map((n) => n.client().script("FLUSH")));
      const entry = { participant: "i1/s1", demand: 3, held: 1 };
      expect(await single.report(key(1), entry, 5000)).toEqual([{ id: "i1/s1", demand: 3, held: 1 }]);
      for (let n = 2; n < 8; n++)
        expect(await clustered.report(key(n), entry, 5000)).toEqual([{ id: "i1/s1", demand: 3, held: 1 }]);
    } finally {
      await Promise.all([single.close(), clustered.close()]);
    }
  });

  it("spreads buckets over the cluster's masters by their hash tag", async () => {
    const sizes = await Promise.all(cluster.nodes.map((n) => n.client().dbsize()));
    expect(sizes.filter((s) => s > 0).length).toBeGreaterThan(1);
  });
});
