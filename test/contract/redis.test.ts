import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisStore } from "../../src/store/redis/redis-store.js";
import { keysWithoutTtl, type RedisServer, startRedis } from "../helpers/redis.js";
import { describeOverdraftContract } from "./overdraft-contract.js";
import { describeStoreContract } from "./store-contract.js";

// Redis scripts read the server's TIME, so `advance` really waits (the suite keeps waits short).
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

let server: RedisServer;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

const harness = async () => {
  const store = new RedisStore({ url: server.url });
  await store.ready();
  return { store, advance: sleep, close: () => store.close() };
};

describeStoreContract("redis (single redis-server)", harness, { realTime: true });
describeOverdraftContract("redis (single redis-server)", harness, { realTime: true });

describe("after the redis contract suite", () => {
  it("left no key without a TTL", async () => {
    const client = server.client();
    expect(await client.dbsize()).toBeGreaterThan(0);
    expect(await keysWithoutTtl(client)).toEqual([]);
  });
});
