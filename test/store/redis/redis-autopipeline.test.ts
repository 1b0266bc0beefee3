import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Policy } from "../../../src/engine/types.js";
import { RedisStore } from "../../../src/store/redis/redis-store.js";
import { type RedisServer, startRedis } from "../../helpers/redis.js";

const policy: Policy = { algorithm: "gcra", limit: 100, periodMs: 60_000, burst: 100 };

// ioredis builds each auto-pipeline from the commands defined when it starts; a script command first
// defined while one is pending made the queuing throw and crashed the process with "results[i] is not
// iterable" (redis/ioredis#1931). Every command is now defined when the store is built.
describe("script commands under auto-pipelining", () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("serves calls of new key counts and lease grants issued in one tick on a fresh store", async () => {
    const store = new RedisStore({ url: server.url, commandTimeoutMs: 2000 });
    await store.ready();
    const keys = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `{ap:${tag}}:k${i}`);
    const calls = [1, 2, 3, 5, 8, 13].flatMap((n) => [
      store.take(keys(n, `a${n}`).map((key) => ({ key, policy, cost: 1 }))),
      store.take(
        keys(n, `b${n}`).map((key) => ({
          key,
          policy: { ...policy, algorithm: "fixed_window" as const },
          cost: 1,
        })),
      ),
      store.grant({ key: `{ap:l${n}}:k`, policy, cost: 10 }),
    ]);
    const results = await Promise.all(calls);
    expect(results).toHaveLength(18);
    const over = keys(70, "big").map((key) => ({ key, policy, cost: 1 })); // beyond the defined commands: EVAL
    expect((await store.take(over)).every((o) => o.allowed)).toBe(true);
    await store.close();
  });
});
