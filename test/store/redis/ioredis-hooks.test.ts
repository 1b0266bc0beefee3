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
import {
  ClusterRunner,
  evalOf,
  isNoScript,
  SingleNodeRunner,
  scriptOf,
} from "../../../src/store/redis/script-runner.js";
import { keySlot } from "../../../src/store/redis/slot.js";
import { parseRedisUrl } from "../../../src/store/redis/url.js";
import { waitUntilReady } from "../../../src/store/redis/wait-ready.js";
import { startCluster, startRedis } from "../../helpers/redis.js";

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

/** What {@link storeClient} gives the tests of a describe (set in its beforeAll). */
interface Fixture<C> {
  client: C;
  /** The single node's port. */
  port: number;
}

/**
 * The store's client (createRedisClient: auto-pipelining on, production options) on a real single
 * node or 3-master cluster, started before the tests of the enclosing describe and stopped after.
 */
function storeClient(kind: "single"): Fixture<Redis>;
function storeClient(kind: "cluster"): Fixture<Cluster>;
function storeClient(kind: "single" | "cluster"): Fixture<Redis | Cluster> {
  const fixture = { port: 0 } as Fixture<Redis | Cluster>;
  let stop = async () => {};
  beforeAll(async () => {
    const server = kind === "single" ? await startRedis() : await startCluster({ masters: 3 });
    const client = createRedisClient(parseRedisUrl(server.url));
    stop = async () => {
      client.disconnect();
      await server.stop();
    };
    if ("nodes" in client !== (kind === "cluster")) throw new Error(`expected a ${kind} client`);
    if ("nodes" in client) await client.connect();
    else await waitUntilReady(client, 5000);
    fixture.client = client;
    if ("port" in server) fixture.port = server.port;
  });
  afterAll(() => stop());
  return fixture;
}

/** RESP of a command with bulk-string arguments. */
const resp = (...args: string[]) =>
  Buffer.from(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join("")}`);

describe("ioredis hooks on a single node", () => {
  const node = storeClient("single");

  it("writes the command's own bytes (toWritable) and delivers the reply to its promise", async () => {
    const { client } = node;
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
    const { client } = node;
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
  const node = storeClient("cluster");

  it("routes a command to the master of the slot getSlot() names", async () => {
    const { client } = node;
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

/** The TCP port of the server that ran the script (INFO server's tcp_port), as a number. */
const PORT_EXPR = "tonumber(string.match(redis.call('INFO', 'server'), 'tcp_port:(%d+)'))";
const PORT_LUA = `return ${PORT_EXPR}`;

describe("the script runner on a single node", () => {
  const node = storeClient("single");

  it("runs a script it never loaded, and again after SCRIPT FLUSH (NOSCRIPT → EVAL, once)", async () => {
    const { client, port } = node;
    const runner = new SingleNodeRunner(client);
    const script = scriptOf("echo", `return {KEYS[1], ARGV[1], #ARGV, ${PORT_EXPR}}`);
    const exists = async () => ((await client.script("EXISTS", script.sha)) as number[])[0];
    expect(await exists()).toBe(0);
    const asText = (r: unknown) =>
      Array.isArray(r) ? r.map((x) => (Buffer.isBuffer(x) ? x.toString() : x)) : r;
    expect(asText(await runner.run(script, ["k{1}"], ["v", 7]))).toEqual(["k{1}", "v", 2, port]);
    expect(await exists()).toBe(1);
    await client.script("FLUSH");
    expect(await exists()).toBe(0);
    expect(asText(await runner.runEncoded(script, encodeEvalsha(script.sha, [1, "k{2}", "w"]), -1))).toEqual([
      "k{2}",
      "w",
      1,
      port,
    ]);
    expect(await exists()).toBe(1);
  });

  it("passes a script's own error through (only NOSCRIPT is recovered)", async () => {
    const { client } = node;
    const runner = new SingleNodeRunner(client);
    await expect(
      runner.run(scriptOf("boom", "return redis.error_reply('ERR boom')"), ["k"], []),
    ).rejects.toThrow("ERR boom");
  });

  it("writes the EVAL of an EVALSHA as ioredis would write it", () => {
    const script = scriptOf("s", "return 1 -- é");
    const args = [2, "a", "b", 3, "x"];
    expect(evalOf(script, encodeEvalsha(script.sha, args)).toString("utf8")).toBe(
      `*7\r\n$4\r\neval\r\n$${Buffer.byteLength(script.lua)}\r\n${script.lua}\r\n` +
        "$1\r\n2\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\n3\r\n$1\r\nx\r\n",
    );
    expect(() => evalOf(scriptOf("other", "return 2"), encodeEvalsha(script.sha, args))).toThrow(
      /not an EVALSHA/,
    );
  });
});

describe("the script runner on a 3-master cluster", () => {
  const node = storeClient("cluster");

  it("routes each call to its slot's master and reloads the script there after SCRIPT FLUSH", async () => {
    const { client } = node;
    const runner = new ClusterRunner(client);
    const script = scriptOf("port", PORT_LUA);
    const ranges = (await client.cluster("SLOTS")) as unknown as [number, number, [string, number]][];
    expect(ranges.length).toBeGreaterThanOrEqual(3);
    const ask = async () => {
      for (const [start, end, [, port]] of ranges)
        for (const slot of [start, end, (start + end) >> 1]) {
          // Keyless (0 keys): no node redirects it, so the port that answers is the runner's routing.
          const reply = await runner.runEncoded(script, encodeEvalsha(script.sha, [0]), slot);
          expect(reply, `slot ${slot}`).toBe(port);
        }
    };
    await ask(); // never loaded anywhere: NOSCRIPT → EVAL on each master
    for (const node of client.nodes("master"))
      expect(((await node.script("EXISTS", script.sha)) as number[])[0]).toBe(1);
    await Promise.all(client.nodes("master").map((node) => node.script("FLUSH")));
    await ask();
    // run(): routed by its first key's slot.
    const key = "{runner}:k";
    const owner = ranges.find(([s, e]) => keySlot(key) >= s && keySlot(key) <= e);
    expect(await runner.run(script, [key], [])).toBe(owner?.[2][1]);
  });
});
