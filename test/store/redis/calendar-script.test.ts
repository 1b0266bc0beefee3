/**
 * lua/fixed_window.lua with a calendar window (periodMs 0, burst `start:end:nextEnd`): the script
 * picks the window end with Redis TIME from the boundaries the caller computed with its own clock,
 * so a tollgate clock that is ahead of or behind Redis across a boundary still counts to the real
 * boundary (src/store/redis/calendar-argv.ts).
 */
import { readFileSync } from "node:fs";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RedisServer, startRedis } from "../../helpers/redis.js";

const SCRIPT = readFileSync(new URL("../../../lua/fixed_window.lua", import.meta.url), "utf8");

let server: RedisServer;
let client: Redis;
beforeAll(async () => {
  server = await startRedis();
  client = server.client();
});
afterAll(async () => {
  await server?.stop();
});

/** Redis TIME in ms. */
async function redisNowMs(): Promise<number> {
  const [s, us] = await client.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

/** One take of `cost` on `key`, limit 5, with the calendar window text `window`. */
async function take(key: string, window: string, cost = 1): Promise<number[]> {
  const reply = await client.eval(SCRIPT, 1, key, cost, 5, 0, window, -1);
  return (reply as unknown[]).map(Number);
}

const HOUR = 3_600_000;

describe("fixed_window.lua with calendar boundaries", () => {
  it("ends the window at `end` when Redis TIME is inside [start, end)", async () => {
    const now = await redisNowMs();
    const [allowed, remaining, , reset] = await take(
      "{t:cal}:inside",
      `${now - HOUR}:${now + HOUR}:${now + 25 * HOUR}`,
    );
    expect([allowed, remaining]).toEqual([1, 4]);
    expect(reset).toBeGreaterThan(HOUR - 1000);
    expect(reset).toBeLessThanOrEqual(HOUR);
    const pttl = await client.pttl("{t:cal}:inside");
    expect(pttl).toBeGreaterThan(HOUR - 1000);
    expect(pttl).toBeLessThanOrEqual(HOUR);
  });

  it("ends the window at `start` when the caller's clock is ahead across a boundary", async () => {
    const now = await redisNowMs();
    const [, , , reset] = await take("{t:cal}:ahead", `${now + HOUR}:${now + 25 * HOUR}:${now + 49 * HOUR}`);
    expect(reset).toBeGreaterThan(HOUR - 1000);
    expect(reset).toBeLessThanOrEqual(HOUR);
  });

  it("ends the window at `nextEnd` when the caller's clock is behind across a boundary", async () => {
    const now = await redisNowMs();
    const [, , , reset] = await take("{t:cal}:behind", `${now - 25 * HOUR}:${now - HOUR}:${now + 2 * HOUR}`);
    expect(reset).toBeGreaterThan(2 * HOUR - 1000);
    expect(reset).toBeLessThanOrEqual(2 * HOUR);
  });

  it("fails with an error reply and writes nothing when the clocks are more than a window apart", async () => {
    const now = await redisNowMs();
    await expect(take("{t:cal}:skew", `${now - 3 * HOUR}:${now - 2 * HOUR}:${now - HOUR}`)).rejects.toThrow(
      /calendar window of \{t:cal\}:skew ends at \d+, before Redis TIME \d+ \(the clocks of tollgate and Redis are a window apart\)/,
    );
    expect(await client.exists("{t:cal}:skew")).toBe(0);
  });

  it("refuses a malformed window text", async () => {
    await expect(take("{t:cal}:bad", "1:2")).rejects.toThrow(/must be start:end:nextEnd, got 1:2/);
  });
});
