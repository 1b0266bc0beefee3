/**
 * createStore's instance heartbeat uses the one instances key of engine/keys.ts: a `--key-prefix`
 * with braces is escaped there like in every other key, so it cannot open a hash tag of its own.
 */
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { instancesKey } from "../../src/engine/keys.js";
import { systemClock } from "../../src/engine/types.js";
import { TollgateMetrics } from "../../src/metrics/metrics.js";
import { loadSettings } from "../../src/settings.js";
import { createStore } from "../../src/store/create.js";
import { type RedisServer, startRedis } from "../helpers/redis.js";

describe("createStore on Redis", () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it("registers the instance under instancesKey(--key-prefix), braces of the prefix escaped", async () => {
    const s = loadSettings(["--store", redis.url, "--key-prefix", "{team}:"], {});
    const built = createStore(s, {
      clock: systemClock,
      metrics: new TollgateMetrics({ maxSeries: 100, clock: systemClock }),
      logger: pino({ level: "silent" }),
    });
    const client = redis.client();
    try {
      await built.start();
      const deadline = Date.now() + 5_000;
      while ((await client.zcard(instancesKey("{team}:"))) === 0) {
        if (Date.now() > deadline) throw new Error("the instance never registered");
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(await client.keys("*instances*")).toEqual(["%7Bteam%7D:tl:v1:{instances}"]);
    } finally {
      await built.close();
    }
  });
});
