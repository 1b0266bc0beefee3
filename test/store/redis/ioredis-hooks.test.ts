/**
 * The ioredis hooks the hot path relies on (src/store/redis/resp.ts `EncodedCommand`): ioredis must
 * write a command's bytes by calling `toWritable()` (the merged EVALSHA is written by tollgate, its
 * argument list is empty) and, in a cluster, route it by `getSlot()`. An ioredis upgrade that stops
 * calling either breaks these tests, on the clients the store builds (createRedisClient: auto-
 * pipelining on, production options), on a real single node and a real 3-master cluster.
 */
import type { Cluster, Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisClient } from "../../../src/store/redis/client.js";
import { EncodedCommand, encodeEvalsha } from "../../../src/store/redis/resp.js";
import { isNoScript } from "../../../src/store/redis/scripts.js";
import { parseRedisUrl } from "../../../src/store/redis/url.js";
import { waitUntilReady } from "../../../src/store/redis/wait-ready.js";
import { type RedisCluster, type RedisServer, startCluster, startRedis } from "../../helpers/redis.js";

/** An EncodedCommand that counts the hook calls. */
class Probe extends EncodedCommand {
  writes = 0;
  slotAsks = 0;
  override toWritable(): Buffer {
    this.writes++;
    return super.toWritable();
  }
  override getSlot(): number {
    this.slotAsks++;
    return super.getSlot();
  }
}

/** RESP of a command with bulk-string arguments. */
const resp = (...args: string[]) =>
  Buffer.from(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join("")}`);

describe("ioredis hooks on a single node", () => {
  let server: RedisServer;
  let client: Redis;
  beforeAll(async () => {
    server = await startRedis();
    const made = createRedisClient(parseRedisUrl(server.url));
    if ("nodes" in made) throw new Error("expected a single-node client");
    client = made;
    await waitUntilReady(client, 5000);
  });
  afterAll(async () => {
    client?.disconnect();
    await server?.stop();
  });

  it("writes the command's own bytes (toWritable) and delivers the reply to its promise", async () => {
    const sha = String(await client.script("LOAD", "return {KEYS[1], ARGV[1], #ARGV}"));
    const probe = new Probe(encodeEvalsha(sha, [1, "k{1}", "v", 7]));
    void client.sendCommand(probe);
    // Bulk strings arrive as Buffers (the store reads numbers and error texts only).
    const reply: unknown = await probe.promise;
    expect(Array.isArray(reply) ? reply.map((x) => (Buffer.isBuffer(x) ? x.toString() : x)) : reply).toEqual([
      "k{1}",
      "v",
      2,
    ]);
    expect(probe.writes).toBe(1);
  });

  it("rejects with NOSCRIPT for a script the server does not hold (the store's recovery keys on it)", async () => {
    const probe = new Probe(encodeEvalsha("0".repeat(40), [0]));
    void client.sendCommand(probe);
    const err = await probe.promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isNoScript(err)).toBe(true);
  });
});

describe("ioredis hooks on a 3-master cluster", () => {
  let cluster: RedisCluster;
  let client: Cluster;
  beforeAll(async () => {
    cluster = await startCluster({ masters: 3 });
    const made = createRedisClient(parseRedisUrl(cluster.url));
    if (!("nodes" in made)) throw new Error("expected a cluster client");
    client = made;
    await client.connect();
  });
  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
  });

  it("routes a command to the master of the slot getSlot() names", async () => {
    // CLUSTER SLOTS: [start, end, [host, port, id], ...] per range. CLUSTER MYID takes no key, so
    // no node redirects it: the node that answers is the one ioredis chose, by getSlot() alone.
    const ranges = (await client.cluster("SLOTS")) as unknown as [number, number, [string, number, string]][];
    expect(ranges.length).toBeGreaterThanOrEqual(3);
    const owners = new Set<string>();
    for (const [start, end, [, , id]] of ranges) {
      for (const slot of [start, end, (start + end) >> 1]) {
        const probe = new Probe(resp("CLUSTER", "MYID"), slot);
        void client.sendCommand(probe);
        expect(String(await probe.promise), `slot ${slot}`).toBe(id);
        expect(probe.slotAsks).toBeGreaterThan(0);
        expect(probe.writes).toBe(1);
      }
      owners.add(id);
    }
    expect(owners.size).toBe(3);
  });
});
