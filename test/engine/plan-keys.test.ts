import { describe, expect, it } from "vitest";
import { bucketKey, parseBucketKey } from "../../src/engine/keys.js";
import { desc, engineFor, query } from "./engine-fixture.js";

const RULES = `
domain: edge
descriptors:
  - key: ip
    rate_limits:
      - { unit: second, requests_per_unit: 10 }
      - { unit: minute, requests_per_unit: 100 }
  - key: tenant
    shards: 3
    rate_limit: { unit: second, requests_per_unit: 300 }
    descriptors:
      - key: route_class
        rate_limit: { unit: second, requests_per_unit: 5 }
  - key: user
    rate_limit: { unit: second, requests_per_unit: 5 }
`;

const expected = (entries: [string, string][], limitIndex: number, shard?: number) =>
  bucketKey({
    prefix: "p:",
    domain: "edge",
    entries: entries.map(([key, value]) => ({ key, value })),
    limitIndex,
    algorithm: "gcra",
    shard,
  });

describe("planned bucket keys (cached per rule and entry values)", () => {
  it("are the keys bucketKey builds, on first sight, when seen again and past the cache bound", () => {
    const { engine } = engineFor(RULES, { keyPrefix: "p:" });
    // 25,000 distinct addresses overflow the per-rule cache twice; each is asked twice.
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 25_000; i += round === 0 ? 1 : 7) {
        const ip = `10.${i >> 8}.${i & 255}.1`;
        expect(engine.bucketKeys(query("edge", [desc(`ip=${ip}`)]))).toEqual([
          expected([["ip", ip]], 0),
          expected([["ip", ip]], 1),
        ]);
      }
    }
  });

  it("tell apart entry lists that share values but not keys, and every shard", () => {
    const { engine } = engineFor(RULES, { keyPrefix: "p:" });
    for (let n = 0; n < 2; n++) {
      expect(engine.bucketKeys(query("edge", [desc("user=read")]))).toEqual([
        expected([["user", "read"]], 0),
      ]);
      expect(engine.bucketKeys(query("edge", [desc("ip=read")]))).toEqual([
        expected([["ip", "read"]], 0),
        expected([["ip", "read"]], 1),
      ]);
      expect(engine.bucketKeys(query("edge", [desc("tenant=a")]))).toEqual(
        [0, 1, 2].map((s) => expected([["tenant", "a"]], 0, s)),
      );
      expect(engine.bucketKeys(query("edge", [desc("tenant=a,route_class=read")]))).toEqual([
        expected(
          [
            ["tenant", "a"],
            ["route_class", "read"],
          ],
          0,
        ),
      ]);
    }
  });

  it("charge the same buckets whether built or cached", async () => {
    const { engine, store } = engineFor(RULES, { keyPrefix: "p:" });
    for (let i = 0; i < 3; i++) await engine.shouldRateLimit(query("edge", [desc("user=u1")]));
    const [peek] = await store.take([
      {
        key: expected([["user", "u1"]], 0),
        policy: { algorithm: "gcra", limit: 5, periodMs: 1000, burst: 5 },
        cost: 0,
      },
    ]);
    expect(peek?.remaining).toBe(2);
  });

  it("name a request-supplied override's own bucket, which parseBucketKey reads back", () => {
    const { engine } = engineFor(RULES, { keyPrefix: "p:", defaultAlgorithm: "fixed_window" });
    const override = { requestsPerUnit: 7, unit: "hour" as const };
    const keys = engine.bucketKeys(query("edge", [desc("user=u1", { limit: override })]));
    expect(keys).toEqual([
      bucketKey({
        prefix: "p:",
        domain: "edge",
        entries: [{ key: "user", value: "u1" }],
        limitIndex: 0,
        algorithm: "fixed_window",
        override,
      }),
    ]);
    expect(parseBucketKey(keys[0] ?? "")).toMatchObject({ algorithm: "fixed_window", override });
  });
});
