/**
 * Overdraft rules and refunds through the engine: the AI-gateway flow (check-only at request time,
 * the stream-done charge past the remainder, a refund), and how forced charges combine with the
 * all-or-nothing rules of the same request (blocked descriptors, shadow mode, shard retries).
 */
import { describe, expect, it } from "vitest";
import { desc, engineFor, query } from "./engine-fixture.js";

const RULES = `
domain: ai
descriptors:
  - key: tokens
    overdraft: true
    rate_limit: { unit: minute, requests_per_unit: 1000 }
  - key: requests
    rate_limit: { unit: minute, requests_per_unit: 5 }
  - key: banned
    rate_limit: { unit: minute, requests_per_unit: 0 }
  - key: trial
    shadow_mode: true
    overdraft: true
    max_debt: 100
    rate_limit: { unit: minute, requests_per_unit: 10 }
  - key: hot
    shards: 2
    rate_limit: { unit: minute, requests_per_unit: 2 }
`;

const check = (entries: string) => desc(entries, { hitsAddend: 0 });
const charge = (entries: string, hits: number) => desc(entries, { hitsAddend: hits });
const refund = (entries: string, hits: number) => desc(entries, { hitsAddend: hits, negativeHits: true });

describe("overdraft rules and refunds in the engine", () => {
  it("replays the AI flow: check admitted, charge past the remainder applied, check denied, refund, check admitted", async () => {
    const { engine } = engineFor(RULES);
    expect((await engine.shouldRateLimit(query("ai", [charge("tokens=t", 900)]))).overallCode).toBe("OK");
    const first = await engine.shouldRateLimit(query("ai", [check("tokens=t")]));
    expect(first.overallCode).toBe("OK");
    expect(first.statuses[0]?.limitRemaining).toBe(100);
    // Stream done: 5,000 tokens with 100 left. Admitted (the balance was positive) and applied.
    const done = await engine.shouldRateLimit(query("ai", [charge("tokens=t", 5000)]));
    expect(done.overallCode).toBe("OK");
    expect(done.statuses[0]?.limitRemaining).toBe(0);
    // 4,900 tokens of debt at 1,000 a minute: one token is back after 4,901 × 60 ms = 294.06 s.
    const denied = await engine.shouldRateLimit(query("ai", [check("tokens=t")]));
    expect(denied.overallCode).toBe("OVER_LIMIT");
    expect(denied.statuses[0]).toMatchObject({
      code: "OVER_LIMIT",
      limitRemaining: 0,
      durationUntilResetSec: 295,
    });
    const back = await engine.shouldRateLimit(query("ai", [refund("tokens=t", 4950)]));
    expect(back.overallCode).toBe("OK");
    expect(back.statuses[0]?.limitRemaining).toBe(50);
    const again = await engine.shouldRateLimit(query("ai", [check("tokens=t")]));
    expect(again.overallCode).toBe("OK");
    expect(again.statuses[0]?.limitRemaining).toBe(50);
  });

  it("charges an overdraft descriptor although another descriptor of the request is over", async () => {
    const { engine } = engineFor(RULES);
    for (let i = 0; i < 5; i++) await engine.shouldRateLimit(query("ai", [desc("requests=r")]));
    const r = await engine.shouldRateLimit(query("ai", [desc("requests=r"), charge("tokens=u", 300)]));
    expect(r.overallCode).toBe("OVER_LIMIT");
    expect(r.statuses[1]).toMatchObject({ code: "OK", limitRemaining: 700 });
    expect((await engine.shouldRateLimit(query("ai", [check("tokens=u")]))).statuses[0]?.limitRemaining).toBe(
      700,
    );
  });

  it("charges an overdraft descriptor and refunds beside a blocked (requests_per_unit 0) descriptor", async () => {
    const { engine } = engineFor(RULES);
    await engine.shouldRateLimit(query("ai", [charge("requests=q", 3)]));
    const r = await engine.shouldRateLimit(
      query("ai", [desc("banned=x"), charge("tokens=v", 10), refund("requests=q", 2), desc("requests=z")]),
    );
    expect(r.overallCode).toBe("OVER_LIMIT");
    expect((await engine.shouldRateLimit(query("ai", [check("tokens=v")]))).statuses[0]?.limitRemaining).toBe(
      990,
    );
    expect(
      (await engine.shouldRateLimit(query("ai", [check("requests=q")]))).statuses[0]?.limitRemaining,
    ).toBe(4);
    // The ordinary descriptor of the denied request consumed nothing.
    expect(
      (await engine.shouldRateLimit(query("ai", [check("requests=z")]))).statuses[0]?.limitRemaining,
    ).toBe(5);
  });

  it("a denied overdraft descriptor leaves the request's ordinary buckets uncharged", async () => {
    const { engine } = engineFor(RULES);
    await engine.shouldRateLimit(query("ai", [charge("tokens=w", 1000)]));
    const r = await engine.shouldRateLimit(query("ai", [desc("requests=w"), charge("tokens=w", 1)]));
    expect(r.overallCode).toBe("OVER_LIMIT");
    expect(r.statuses[0]).toMatchObject({ code: "OK", limitRemaining: 5 });
    expect(
      (await engine.shouldRateLimit(query("ai", [check("requests=w")]))).statuses[0]?.limitRemaining,
    ).toBe(5);
  });

  it("charges a shadow-mode overdraft rule once, and the admitted ordinary buckets after it", async () => {
    const { engine, calls } = engineFor(RULES, {}, { answerNow: false });
    await engine.shouldRateLimit(query("ai", [charge("trial=s", 10)]));
    calls.length = 0;
    const r = await engine.shouldRateLimit(query("ai", [charge("trial=s", 20), desc("requests=s")]));
    expect(r.overallCode).toBe("OK");
    expect(r.statuses[0]?.code).toBe("OK");
    // The second call charges only the ordinary bucket the shadow denial kept uncharged.
    expect(calls.map((c) => c.map((t) => t.cost))).toEqual([[20, 1], [1]]);
    expect(
      (await engine.shouldRateLimit(query("ai", [check("requests=s")]))).statuses[0]?.limitRemaining,
    ).toBe(4);
  });

  it("a refund is never applied twice when a sharded descriptor is retried on another shard", async () => {
    const { engine, calls } = engineFor(RULES, {}, { answerNow: false });
    await engine.shouldRateLimit(query("ai", [charge("requests=h", 4)]));
    await engine.shouldRateLimit(query("ai", [desc("hot=k")])); // random 0: shard 0 holds 1
    calls.length = 0;
    const r = await engine.shouldRateLimit(query("ai", [desc("hot=k"), refund("requests=h", 2)]));
    expect(r.overallCode).toBe("OK");
    expect(calls).toHaveLength(2);
    expect(calls[1]?.map((t) => t.cost)).toEqual([1, 0]);
    expect(
      (await engine.shouldRateLimit(query("ai", [check("requests=h")]))).statuses[0]?.limitRemaining,
    ).toBe(3);
  });
});
