/**
 * The Lua scripts and their TypeScript specification agree. Each scripted call runs against a private
 * redis-server; the TypeScript side evaluates the same call on a snapshot of the same state at the
 * Redis TIME read just before and just after it. The script ran in between, so it must match one of
 * them exactly on allowed/remaining, and lie between them on retry/reset and on what it wrote.
 */
import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Algorithm, Policy } from "../../../src/engine/types.js";
import { type CallResult, evaluateCall, type StoredBucket } from "../../../src/store/memory/call.js";
import { fixedWindowRefund } from "../../../src/store/memory/fixed-window.js";
import { gcraRefund } from "../../../src/store/memory/gcra.js";
import { batchLua } from "../../../src/store/redis/scripts.js";
import type { Outcome, Take } from "../../../src/store/store.js";
import { type RedisServer, startRedis } from "../../helpers/redis.js";

const lua = (name: string) => readFileSync(new URL(`../../../lua/${name}`, import.meta.url), "utf8");
const SCRIPTS: Record<Algorithm, string> = { gcra: lua("gcra.lua"), fixed_window: lua("fixed_window.lua") };
const REFUND = lua("refund.lua");
const BATCH: Record<Algorithm, string> = {
  gcra: batchLua(lua("batch.lua"), SCRIPTS.gcra, true),
  fixed_window: batchLua(lua("batch.lua"), SCRIPTS.fixed_window, false),
};

const POLICIES: Record<Algorithm, Record<string, Policy>> = {
  gcra: {
    "{t:agree}:g-10ps": { algorithm: "gcra", limit: 10, periodMs: 1000, burst: 5 },
    "{t:agree}:g-3ps": { algorithm: "gcra", limit: 3, periodMs: 1000, burst: 3 },
    "{t:agree}:g-100ps": { algorithm: "gcra", limit: 100, periodMs: 1000, burst: 2 },
    "{t:agree}:g-7pm": { algorithm: "gcra", limit: 7, periodMs: 60_000, burst: 4 },
    "{t:agree}:go-4ps": { algorithm: "gcra", limit: 4, periodMs: 1000, burst: 4, maxDebt: 6 },
    "{t:agree}:go-3pm": { algorithm: "gcra", limit: 3, periodMs: 60_000, burst: 2, maxDebt: 0 },
  },
  fixed_window: {
    "{t:agree}:f-3ps": { algorithm: "fixed_window", limit: 3, periodMs: 1000, burst: 3 },
    "{t:agree}:f-5pm": { algorithm: "fixed_window", limit: 5, periodMs: 60_000, burst: 5 },
    "{t:agree}:f-2p7": { algorithm: "fixed_window", limit: 2, periodMs: 7, burst: 2 },
    "{t:agree}:fo-3ps": { algorithm: "fixed_window", limit: 3, periodMs: 1000, burst: 3, maxDebt: 4 },
  },
};

/** Deterministic PRNG (mulberry32) so a failure replays. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let server: RedisServer;
let redis: Redis;
beforeAll(async () => {
  server = await startRedis();
  redis = server.client();
});
afterAll(async () => {
  await server?.stop();
});

async function redisNowUs(): Promise<number> {
  const [sec, usec] = await redis.time();
  return Number(sec) * 1_000_000 + Number(usec);
}

/** Index of the epoch-aligned window of `periodMs` holding `nowUs`. */
const windowIndex = (nowUs: number, periodMs: number) => Math.floor(Math.floor(nowUs / 1000) / periodMs);

/**
 * The state of `takes`' buckets as the scripts see it (a counter without a positive TTL is absent),
 * from the GET and PTTL replies read in the same transaction as the call.
 * A counter expires exactly at the end of the window it was created in; a GCRA key lives until its
 * tat plus 1 ms (an expired tat is in the past, which reads as a full bucket anyway).
 */
function snapshot(
  takes: readonly Take[],
  read: ReadonlyMap<string, { value: string | null; pttl: number }>,
  nowUs: number,
): Map<string, StoredBucket> {
  const state = new Map<string, StoredBucket>();
  for (const { key, policy } of takes) {
    const got = read.get(key);
    if (state.has(key) || got === undefined || got.value === null || got.pttl <= 0) continue;
    const expiresAtMs =
      policy.algorithm === "fixed_window"
        ? (windowIndex(nowUs, policy.periodMs) + 1) * policy.periodMs
        : Number(got.value) / 1000 + 1;
    state.set(key, { value: Number(got.value), expiresAtMs });
  }
  return state;
}

/** A reader of `state` as it is at `nowUs` (expired entries are absent, as in the memory store). */
const readAt = (state: ReadonlyMap<string, StoredBucket>, nowUs: number) => (key: string) => {
  const entry = state.get(key);
  return entry && Math.floor(nowUs / 1000) < entry.expiresAtMs ? entry : undefined;
};

/** One take's ARGV: cost, limit, periodMs, burst, maxDebt (-1: not an overdraft bucket). */
function takeArgs(cost: number, p: Policy): number[] {
  return [cost, p.limit, p.periodMs, p.burst, p.maxDebt ?? -1];
}

function argv(takes: readonly Take[]): number[] {
  return takes.flatMap((t) => [...takeArgs(t.cost, t.policy)]);
}

function decode(reply: unknown): Outcome[] {
  const flat = reply as number[];
  const out: Outcome[] = [];
  for (let i = 0; i < flat.length; i += 4) {
    const [allowed, remaining, retryAfterMs, resetAfterMs] = flat.slice(i, i + 4) as [
      number,
      number,
      number,
      number,
    ];
    out.push({ allowed: allowed === 1, remaining, retryAfterMs, resetAfterMs });
  }
  return out;
}

const decision = (outcomes: readonly Outcome[]) => outcomes.map((o) => [o.allowed, o.remaining]);

/**
 * Expect `x` between `a` and `b`, in either order, give or take 1 ms: both sides round µs to whole ms
 * with `ceil` after float arithmetic done in a different order (Lua doubles vs JS), which can land one
 * ms apart at a boundary (seen once in CI: 4 vs 5). Decisions themselves are compared exactly above.
 */
function between(x: number, a: number, b: number, what: string): void {
  expect(x, what).toBeGreaterThanOrEqual(Math.min(a, b) - 1);
  expect(x, what).toBeLessThanOrEqual(Math.max(a, b) + 1);
}

/** Calls skipped because Redis' TIME went backwards inside their transaction. */
let clockSteps = 0;

/** Run one scripted call and check it against the TypeScript evaluation of the same call. */
async function checkCall(algorithm: Algorithm, takes: readonly Take[]): Promise<Outcome[]> {
  const keys = takes.map((t) => t.key);
  const unique = [...new Set(keys)];
  // TIME, the state, the script and TIME again in one MULTI: Redis runs them back to back, so the
  // script's own TIME lies microseconds inside [before, after] and no other command (or client
  // scheduling delay under a loaded machine) falls in between.
  const tx = redis.multi().time();
  for (const key of unique) tx.get(key).pttl(key);
  tx.eval(SCRIPTS[algorithm], keys.length, ...keys, ...argv(takes));
  for (const key of unique) tx.get(key).pttl(key);
  tx.time();
  const replies = ((await tx.exec()) ?? []).map(([error, result]) => {
    if (error) throw error;
    return result;
  });
  const usOf = (t: unknown) => Number((t as string[])[0]) * 1_000_000 + Number((t as string[])[1]);
  const before = usOf(replies[0]);
  const after = usOf(replies[replies.length - 1]);
  const read = new Map(
    unique.map((key, i) => [
      key,
      { value: replies[1 + 2 * i] as string | null, pttl: replies[2 + 2 * i] as number },
    ]),
  );
  const state = snapshot(takes, read, before);
  const evalAt = 1 + 2 * unique.length;
  const reply = decode(replies[evalAt]);
  const written = new Map(
    unique.map((key, i) => [
      key,
      { value: replies[evalAt + 1 + 2 * i] as string | null, pttl: replies[evalAt + 2 + 2 * i] as number },
    ]),
  );
  if (after < before) {
    // The wall clock stepped back inside the transaction (NTP on a VM): [before, after] bounds
    // nothing. Counted by the caller, which allows only a few.
    clockSteps++;
    return reply;
  }
  const early: CallResult = evaluateCall(takes, readAt(state, before), before);
  const late: CallResult = evaluateCall(takes, readAt(state, after), after);
  // Everything needed to replay a failure by hand.
  const label = JSON.stringify({
    takes: takes.map((t) => [t.key, t.cost]),
    before,
    after,
    state: [...state],
    early: [...early.writes],
    late: [...late.writes],
  });
  expect([decision(early.outcomes), decision(late.outcomes)], label).toContainEqual(decision(reply));
  reply.forEach((o, i) => {
    const policy = takes[i]?.policy as Policy;
    if (
      policy.algorithm === "fixed_window" &&
      windowIndex(before, policy.periodMs) !== windowIndex(after, policy.periodMs)
    ) {
      // A window ended during the call: time to window end jumps back up to a whole period.
      expect(o.resetAfterMs).toBeGreaterThan(0);
      expect(o.resetAfterMs).toBeLessThanOrEqual(policy.periodMs);
      return;
    }
    between(o.retryAfterMs, early.outcomes[i]?.retryAfterMs ?? 0, late.outcomes[i]?.retryAfterMs ?? 0, label);
    between(o.resetAfterMs, early.outcomes[i]?.resetAfterMs ?? 0, late.outcomes[i]?.resetAfterMs ?? 0, label);
  });
  // The evaluations the script's decision matches (both unless a boundary passed during the call).
  const matching = [early, late].filter((c) => isDeepStrictEqual(decision(c.outcomes), decision(reply)));
  const first = matching[0] ?? early;
  for (const key of unique) {
    const { value, pttl } = written.get(key) ?? { value: null, pttl: -2 };
    const expected = first.writes.get(key) ?? readAt(state, after)(key);
    if (expected === undefined) {
      // Nothing was written: an absent (or expired) bucket stays absent. Redis' expiry clock may
      // trail TIME by a ms, so a counter due at the window end may still show 1-2 ms of TTL.
      if (value !== null) expect(pttl, `${label} ${key}`).toBeLessThanOrEqual(2);
      continue;
    }
    if (value === null) {
      // A short-lived bucket may have expired by its TTL within the transaction: only once it was due.
      expect(expected.expiresAtMs, `${label} ${key} vanished early`).toBeLessThanOrEqual(after / 1000 + 2);
      continue;
    }
    // The written state moves continuously with time: it lies between the two evaluations' writes.
    // When only the late evaluation charged, the script ran at most (after - before) µs earlier, and a
    // tat moves at most 1 µs per µs (plus 1 for rounding).
    const hi = late.writes.get(key)?.value ?? expected.value;
    const lo =
      early.writes.get(key)?.value ?? (late.writes.has(key) ? hi - (after - before) - 1 : expected.value);
    between(Number(value), lo, hi, `${label} ${key} state`);
  }
  return reply;
}

function randomCall(rand: () => number): { algorithm: Algorithm; takes: Take[] } {
  const algorithm: Algorithm = rand() < 0.6 ? "gcra" : "fixed_window";
  const keys = Object.keys(POLICIES[algorithm]);
  const count = 1 + Math.floor(rand() * 3);
  const takes: Take[] = [];
  for (let i = 0; i < count; i++) {
    const key = keys[Math.floor(rand() * keys.length)] ?? "";
    const policy = POLICIES[algorithm][key] as Policy;
    // Refunds (negative), checks, charges, and some over the burst (overdraft buckets take them).
    const r = rand();
    const cost =
      r < 0.1
        ? policy.burst + 1 + Math.floor(rand() * 6)
        : r < 0.25
          ? -1 - Math.floor(rand() * 3)
          : Math.floor(rand() * 4);
    takes.push({ key, policy, cost });
  }
  return { algorithm, takes };
}

describe("lua scripts against their TypeScript specification", () => {
  it("agree on 600 random multi-bucket calls of both algorithms, refunds and overdraft buckets included", async () => {
    const rand = prng(20240611);
    let denied = 0;
    for (let i = 0; i < 600; i++) {
      const { algorithm, takes } = randomCall(rand);
      const reply = await checkCall(algorithm, takes);
      if (reply.some((o) => !o.allowed)) denied++;
    }
    expect(clockSteps, "calls whose clock stepped back").toBeLessThan(5);
    // The scenario must exercise both admission and denial to mean anything.
    expect(denied).toBeGreaterThan(60);
    expect(denied).toBeLessThan(540);
  });

  it("agree on refunds of both algorithms", async () => {
    const g = POLICIES.gcra["{t:agree}:g-7pm"] as Policy;
    const f = POLICIES.fixed_window["{t:agree}:f-5pm"] as Policy;
    const gKey = "{t:refund-agree}:g";
    const fKey = "{t:refund-agree}:f";
    await checkCall("gcra", [{ key: gKey, policy: g, cost: 4 }]);
    await checkCall("fixed_window", [{ key: fKey, policy: f, cost: 4 }]);
    for (const cost of [1, 2, 5]) {
      const now = await redisNowUs();
      const tat = Number(await redis.get(gKey));
      const count = Number(await redis.get(fKey));
      const takes = [
        { key: gKey, policy: g, cost },
        { key: fKey, policy: f, cost },
      ];
      const args = takes.flatMap((t) => [
        t.policy.algorithm,
        t.cost,
        t.policy.limit,
        t.policy.periodMs,
        t.policy.burst,
      ]);
      await redis.eval(REFUND, 2, gKey, fKey, ...args);
      const next = gcraRefund({ storedTat: tat, nowUs: now, cost, policy: g });
      const storedTat = await redis.get(gKey);
      if (next === "delete") expect(storedTat).toBeNull();
      else expect(Number(storedTat)).toBe(next?.tat);
      expect(Number(await redis.get(fKey))).toBe(fixedWindowRefund(count, cost));
    }
    expect(await redis.get(gKey)).toBeNull();
    expect(await redis.get(fKey)).toBe("0");
    expect(await redis.pttl(fKey)).toBeGreaterThan(0);
  });

  it("store the theoretical arrival time with every microsecond", async () => {
    // 3 per second, burst 3: T = 333333.33 µs, stored rounded to a 16-digit integer.
    const before = await redisNowUs();
    await redis.eval(SCRIPTS.gcra, 1, "{t:precision}:a", 1, 3, 1000, 3, -1);
    const after = await redisNowUs();
    const stored = await redis.get("{t:precision}:a");
    expect(stored).toMatch(/^\d{16}$/);
    between(Number(stored), before + 333_333, after + 333_333, "tat");
  });

  it("answer a wrong number of arguments with an error reply and write nothing", async () => {
    await expect(redis.eval(SCRIPTS.gcra, 2, "{t:bad}:a", "{t:bad}:b", 1, 10, 1000)).rejects.toThrow(
      /expected 10 ARGV for 2 keys, got 3/,
    );
    await expect(redis.eval(SCRIPTS.fixed_window, 1, "{t:bad}:a", 1)).rejects.toThrow(/expected 5 ARGV/);
    await expect(redis.eval(REFUND, 1, "{t:bad}:a", "token_bucket", 1, 10, 1000, 5)).rejects.toThrow(
      /unknown algorithm token_bucket/,
    );
    expect(await redis.exists("{t:bad}:a", "{t:bad}:b")).toBe(0);
  });

  it("answer a batch of calls (batch.lua) exactly as the same calls one by one", async () => {
    // Minute-long policies only: the batch and the one-by-one run are ~100 µs apart, which must not
    // regain a token or end a window.
    const long: Record<Algorithm, Policy[]> = {
      gcra: [
        POLICIES.gcra["{t:agree}:g-7pm"] as Policy,
        { algorithm: "gcra", limit: 4, periodMs: 60_000, burst: 2 },
      ],
      fixed_window: [POLICIES.fixed_window["{t:agree}:f-5pm"] as Policy],
    };
    const rand = prng(7);
    let denied = 0;
    for (const algorithm of ["gcra", "fixed_window"] as const) {
      for (let round = 0; round < 4; round++) {
        // 24 calls of 1-3 takes on 3 buckets, charging or peeking, some over the burst.
        const calls = Array.from({ length: 24 }, () =>
          Array.from({ length: 1 + Math.floor(rand() * 3) }, () => {
            const policy = long[algorithm][Math.floor(rand() * long[algorithm].length)] as Policy;
            const r = rand();
            const cost = r < 0.1 ? policy.burst + 1 : r < 0.2 ? -1 : Math.floor(rand() * 3);
            return { bucket: `${policy.limit}:${Math.floor(rand() * 2)}`, policy, cost };
          }),
        );
        const keyOf = (side: string, bucket: string) => `{t:batch-${algorithm}-${round}}:${side}:${bucket}`;
        const batchKeys = calls.flatMap((c) => c.map((t) => keyOf("b", t.bucket)));
        const batchArgv = calls.flatMap((c) => c.flatMap((t) => takeArgs(t.cost, t.policy)));
        // TIME before and after: the one-by-one calls run later than the merged one inside the
        // transaction, so their ms answers may trail by up to the transaction's own duration.
        const tx = redis.multi().time();
        tx.eval(
          BATCH[algorithm],
          batchKeys.length,
          ...batchKeys,
          calls.length,
          ...calls.map((c) => c.length),
          ...batchArgv,
        );
        for (const c of calls) {
          const keys = c.map((t) => keyOf("s", t.bucket));
          tx.eval(SCRIPTS[algorithm], keys.length, ...keys, ...c.flatMap((t) => takeArgs(t.cost, t.policy)));
        }
        tx.time();
        const replies = ((await tx.exec()) ?? []).map(([error, result]) => {
          if (error) throw error;
          return result as number[];
        });
        const usOf = (t: unknown) => Number((t as string[])[0]) * 1e6 + Number((t as string[])[1]);
        const slackMs = 1 + Math.ceil((usOf(replies.at(-1)) - usOf(replies[0])) / 1000);
        const merged = replies[1] as number[];
        const single = replies.slice(2, -1).flat();
        expect(merged.length).toBe(single.length);
        for (let i = 0; i < merged.length; i += 4) {
          expect([merged[i], merged[i + 1]], `take ${i / 4} of round ${round}`).toEqual([
            single[i],
            single[i + 1],
          ]);
          expect(Math.abs((merged[i + 2] ?? 0) - (single[i + 2] ?? 0))).toBeLessThanOrEqual(slackMs);
          expect(Math.abs((merged[i + 3] ?? 0) - (single[i + 3] ?? 0))).toBeLessThanOrEqual(slackMs);
          if (merged[i] === 0) denied++;
        }
        for (const bucket of new Set(calls.flatMap((c) => c.map((t) => t.bucket)))) {
          const [b, one] = await Promise.all([redis.get(keyOf("b", bucket)), redis.get(keyOf("s", bucket))]);
          if (algorithm === "fixed_window" || b === null || one === null) expect(b).toBe(one);
          else expect(Math.abs(Number(b) - Number(one)), `${bucket} tat`).toBeLessThan(50_000);
        }
      }
    }
    expect(denied).toBeGreaterThan(20);
  });

  it("answer a batch whose counts do not add up with an error reply and write nothing", async () => {
    await expect(redis.eval(BATCH.gcra, 2, "{t:bb}:a", "{t:bb}:b", 1, 1, 1, 10, 1000, 5, -1)).rejects.toThrow(
      /tollgate batch: expected 1 KEYS and 7 ARGV for 1 calls, got 2 and 7/,
    );
    await expect(redis.eval(BATCH.fixed_window, 1, "{t:bb}:a", 0)).rejects.toThrow(
      /ARGV\[1\] must be the number of calls/,
    );
    await expect(redis.eval(BATCH.gcra, 1, "{t:bb}:a", 1, 1, 1, 10, 1000, 5)).rejects.toThrow(
      /expected 1 KEYS and 7 ARGV/,
    );
    await expect(redis.eval(BATCH.gcra, 1, "{t:bb}:a", 1, "x", 1, 10, 1000, 5, -1)).rejects.toThrow(
      /key count of call 1 must be a whole number >= 1/,
    );
    await expect(redis.eval(BATCH.gcra, 1, "{t:bb}:a", 1.5, 1, 1, 10, 1000, 5, -1)).rejects.toThrow(
      /ARGV\[1\] must be the number of calls/,
    );
    expect(await redis.exists("{t:bb}:a", "{t:bb}:b")).toBe(0);
  });

  it("fail only the call of a batch whose command fails, and run the others", async () => {
    const p = POLICIES.gcra["{t:agree}:g-7pm"] as Policy;
    const args = (cost: number) => takeArgs(cost, p);
    await redis.hset("{t:bf}:hash", "a", "1"); // GET on a hash: WRONGTYPE inside the second call
    const reply = (await redis.eval(
      BATCH.gcra,
      4,
      "{t:bf}:one",
      "{t:bf}:hash",
      "{t:bf}:one",
      "{t:bf}:two",
      3,
      1,
      2,
      1,
      ...args(1),
      ...args(1),
      ...args(1),
      ...args(1),
    )) as unknown[];
    expect(reply.slice(0, 4)).toEqual([1, 3, 0, expect.any(Number)]); // burst 4
    expect(String(reply[4])).toMatch(/WRONGTYPE/);
    expect(reply.slice(5, 12)).toEqual([0, 0, 0, 0, 0, 0, 0]);
    // The third call ran after the failed one.
    expect(reply.slice(12, 14)).toEqual([1, 3]);
    // The failed call charged nothing, not even its first bucket.
    expect(await redis.get("{t:bf}:one")).not.toBeNull();
    const peek = (await redis.eval(SCRIPTS.gcra, 1, "{t:bf}:one", ...args(0))) as number[];
    expect(peek[1]).toBe(3);
    await redis.del("{t:bf}:hash");
  });

  it("leave no key without a TTL", async () => {
    const keys = await redis.keys("*");
    expect(keys.length).toBeGreaterThan(0);
    const ttls = await Promise.all(keys.map((k) => redis.pttl(k)));
    expect(keys.filter((_, i) => (ttls[i] ?? -1) < 0)).toEqual([]);
  });
});

/*
 * lua/batch.lua's write-back for GCRA batches: each key of a merged call is read and written once,
 * with the last call's value and expiry, and a failed final write fails exactly the calls that wrote
 * that key. (That a batch answers as the same calls one by one is tested above.)
 */
const PLAIN_GCRA_BATCH = batchLua(lua("batch.lua"), SCRIPTS.gcra, false);

/** A GCRA take of 10 per minute, burst 5: [cost, limit, periodMs, burst, maxDebt]. */
const wbTake = (cost: number) => [cost, 10, 60_000, 5, -1];

/** Calls of GET, SET and TIME Redis counted since the last CONFIG RESETSTAT. */
async function commandCalls(): Promise<Record<string, number>> {
  const info = await redis.info("commandstats");
  const calls: Record<string, number> = { get: 0, set: 0, time: 0 };
  for (const m of info.matchAll(/^cmdstat_(get|set|time):calls=(\d+)/gm))
    calls[m[1] as string] = Number(m[2]);
  return calls;
}

/** One merged call: each call is a list of [key, cost] takes. */
async function merged(script: string, calls: readonly (readonly [string, number])[][]): Promise<unknown[]> {
  const takes = calls.flat();
  return (await redis.eval(
    script,
    takes.length,
    ...takes.map(([key]) => key),
    calls.length,
    ...calls.map((c) => c.length),
    ...takes.flatMap(([, cost]) => wbTake(cost)),
  )) as unknown[];
}

/** `calls` calls, each charging every one of `keys` by 1. */
const batch = async (script: string, keys: readonly string[], calls: number) =>
  (await merged(
    script,
    Array.from({ length: calls }, () => keys.map((key) => [key, 1] as [string, number])),
  )) as number[];

describe("batch.lua write-back (GCRA)", () => {
  it("reads and writes each key once per batch, where one-by-one calls touch it every time", async () => {
    const keys = ["{t:wb}:a", "{t:wb}:b"];
    await redis.config("RESETSTAT");
    const merged = await batch(BATCH.gcra, keys, 4);
    expect(await commandCalls()).toEqual({ get: 2, set: 2, time: 1 });

    const plainKeys = ["{t:wb}:pa", "{t:wb}:pb"];
    await redis.config("RESETSTAT");
    const plain = await batch(PLAIN_GCRA_BATCH, plainKeys, 4);
    expect(await commandCalls()).toEqual({ get: 8, set: 8, time: 4 });

    // Same decisions: 4 admitted with 4, 3, 2, 1 left on each bucket.
    const decisions = (reply: number[]) => reply.filter((_, i) => i % 4 < 2);
    expect(decisions(merged)).toEqual(decisions(plain));
    expect(decisions(merged)).toEqual([1, 4, 1, 4, 1, 3, 1, 3, 1, 2, 1, 2, 1, 1, 1, 1]);
  });

  it("writes the last call's tat and expiry, as the last of the one-by-one calls does", async () => {
    const before = Number((await redis.time())[0]) * 1000;
    await batch(BATCH.gcra, ["{t:wb}:last"], 3);
    const tat = Number(await redis.get("{t:wb}:last"));
    const pexpireAt = await redis.pexpiretime("{t:wb}:last");
    // 3 tokens of 6 s each ahead of now (the bucket starts full): tat ≈ now + 18 s, in µs.
    expect(tat / 1000 - before).toBeGreaterThanOrEqual(18_000);
    expect(tat / 1000 - before).toBeLessThan(18_000 + 2_000);
    expect(pexpireAt).toBe(Math.ceil(tat / 1000) + 1);
  });

  it("lets a later call of the batch see an earlier call's charge, and a denied call write nothing", async () => {
    // burst 5: five calls pass, the sixth and seventh are denied and must not move the tat.
    const reply = await batch(BATCH.gcra, ["{t:wb}:deny"], 7);
    expect(reply.filter((_, i) => i % 4 === 0)).toEqual([1, 1, 1, 1, 1, 0, 0]);
    const tat = Number(await redis.get("{t:wb}:deny"));
    const now = Number((await redis.time())[0]) * 1_000_000;
    expect(tat - now).toBeLessThan(5 * 6_000_000 + 2_000_000);
    expect(tat - now).toBeGreaterThan(5 * 6_000_000 - 2_000_000);
  });

  it("fails every call that wrote a key whose final write fails (OOM), and only those", async () => {
    await redis.config("SET", "maxmemory-policy", "noeviction");
    await redis.config("SET", "maxmemory", "1");
    try {
      // Call 1 charges a, call 2 charges b, call 3 peeks at a (cost 0: no write).
      const reply = await merged(BATCH.gcra, [[["{t:oom}:a", 1]], [["{t:oom}:b", 1]], [["{t:oom}:a", 0]]]);
      expect(reply[0]).toMatch(/^OOM /);
      expect(reply.slice(1, 4)).toEqual([0, 0, 0]);
      expect(reply[4]).toMatch(/^OOM /);
      expect(reply.slice(5, 8)).toEqual([0, 0, 0]);
      // The peek answers (it read call 1's charge, which was then not written: it errs on the
      // side of fewer tokens).
      expect(reply.slice(8, 10)).toEqual([1, 4]);
    } finally {
      await redis.config("SET", "maxmemory", "0");
    }
    expect(await redis.mget("{t:oom}:a", "{t:oom}:b")).toEqual([null, null]);
  });

  it("is not used for fixed-window batches, whose script also reads PTTL and writes INCRBY", () => {
    const fixedWindow = lua("fixed_window.lua");
    expect(batchLua(lua("batch.lua"), fixedWindow, false)).not.toMatch(/^local redis = write_back$/m);
    expect(BATCH.gcra).toMatch(/^local redis = write_back$/m);
    expect(() => batchLua("--@CALL@", SCRIPTS.gcra, true)).toThrow(/lacks its --@CALL@ line/);
  });
});
