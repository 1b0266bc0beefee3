import { describe, expect, it } from "vitest";
import type { RateLimitQuery } from "../../src/engine/types.js";
import { desc, engineFor, query } from "./engine-fixture.js";

const RULES = `
domain: edge
descriptors:
  - key: tenant
    rate_limit: { unit: minute, requests_per_unit: 2, name: per_tenant }
  - key: trial
    shadow_mode: true
    rate_limit: { unit: minute, requests_per_unit: 1 }
  - key: q
    quota_mode: true
    rate_limit: { unit: minute, requests_per_unit: 1 }
  - key: hot
    shards: 4
    rate_limit: { unit: minute, requests_per_unit: 8 }
  - key: banned
    rate_limit: { unit: second, requests_per_unit: 0 }
  - key: plan
    rate_limits:
      - { unit: second, requests_per_unit: 3 }
      - { unit: day, requests_per_unit: 1000 }
`;

/** Every branch of a decision: plain, shadow, quota, shard retries, blocked, several limits, no match. */
const SEQUENCE: RateLimitQuery[] = Array.from({ length: 6 }, (_, i) => [
  query("edge", [desc("tenant=a")]),
  query("edge", [desc("tenant=a"), desc("trial=t")]),
  query("edge", [desc("q=x"), desc("plan=gold")]),
  query("edge", [desc("hot=k")]),
  query("edge", [desc("banned=b"), desc("tenant=b")]),
  query("edge", [desc("plan=gold")], i),
  query("nowhere", [desc("tenant=a")]),
  query("edge", [desc("unknown=1")]),
]).flat();

describe("decision paths", () => {
  it("answers synchronously on a store that answers now, and the same as through promises", async () => {
    let draws = 0;
    const random = () => (draws++ * 0.37) % 1;
    const now = engineFor(RULES, { random });
    const sync = SEQUENCE.map((q) => now.engine.shouldRateLimit(q));
    draws = 0;
    const later = engineFor(RULES, { random }, { answerNow: false });
    const viaPromises: unknown[] = [];
    let asynchronous = 0;
    for (const q of SEQUENCE) {
      const answer = later.engine.shouldRateLimit(q);
      if (answer instanceof Promise) asynchronous++;
      viaPromises.push(await answer);
    }
    // Without takeNow only the queries that need no store (no domain, no rule matched) are answered at once.
    expect(asynchronous).toBe(SEQUENCE.length - 12);
    // A sharded key denied on its shard retries on another: that second store call is a promise,
    // everything else is answered in the call itself.
    const promises = sync.filter((a) => a instanceof Promise);
    expect(promises.length).toBeLessThan(SEQUENCE.length / 4);
    expect(await Promise.all(sync)).toEqual(viaPromises);
    expect(now.storeCalls()).toBe(later.storeCalls());
    const codes = (viaPromises as { overallCode: string }[]).map((a) => a.overallCode);
    expect(codes).toContain("OVER_LIMIT");
    expect(codes).toContain("OK");
  });
});
