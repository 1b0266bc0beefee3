import { describe, expect, it } from "vitest";
import { bucketKey, entriesPart, keyHead, keyTail, parseBucketKey } from "../../src/engine/keys.js";

const parts = (entries: [string, string][], extra: { shard?: number } = {}) => ({
  prefix: "prod:",
  domain: "edge",
  entries: entries.map(([key, value]) => ({ key, value })),
  limitIndex: 1,
  algorithm: "gcra" as const,
  ...extra,
});

describe("bucket keys", () => {
  it("are versioned, prefixed and hash-tagged on the descriptor", () => {
    expect(
      bucketKey(
        parts([
          ["tenant", "acme"],
          ["route_class", "read"],
        ]),
      ),
    ).toBe("prod:tl:v1:{edge|tenant=acme,route_class=read}:g1");
  });

  it("give each shard its own hash tag", () => {
    expect(bucketKey(parts([["tenant", "acme"]], { shard: 3 }))).toBe("prod:tl:v1:{edge|tenant=acme#3}:g1");
  });

  it("cannot collide when underscores or delimiters move between key and value", () => {
    const a = bucketKey(parts([["a_b", "c"]]));
    const b = bucketKey(parts([["a", "b_c"]]));
    const c = bucketKey(parts([["a=b", "c"]]));
    const d = bucketKey(parts([["a", "b=c"]]));
    const e = bucketKey(parts([["a", "b,c=d"]]));
    const f = bucketKey(
      parts([
        ["a", "b"],
        ["c", "d"],
      ]),
    );
    expect(new Set([a, b, c, d, e, f]).size).toBe(6);
  });

  it("keep a value with braces from breaking the hash tag", () => {
    const key = bucketKey(parts([["tenant", "}{evil"]]));
    expect(key.indexOf("}")).toBe(key.lastIndexOf("}"));
    expect(key).toContain("%7D%7Bevil");
  });

  it("round-trip through parseBucketKey, escapes, unicode and shards included", () => {
    for (const p of [
      parts([
        ["tenant", "acme"],
        ["route_class", "read"],
      ]),
      parts([["k%", "v:{},|=#\n"]], { shard: 2 }),
      parts([["tenant", "ünïcødé 🚦"]]),
    ]) {
      const parsed = parseBucketKey(bucketKey(p));
      expect(parsed).toEqual({ ...p, shard: p.shard });
    }
    expect(parseBucketKey("something-else")).toBeUndefined();
  });

  it("name a request-supplied override by its limit, and round-trip it through parseBucketKey", () => {
    for (const algorithm of ["gcra", "fixed_window"] as const) {
      const p = { ...parts([["k%", "v:{},|=#"]]), algorithm, limitIndex: 0 };
      const override = { requestsPerUnit: 100, unit: "minute" as const };
      const key = bucketKey({ ...p, override });
      expect(key).toBe(
        `prod:tl:v1:{edge|k%25=v%3A%7B%7D%2C%7C%3D%23}:o${algorithm === "gcra" ? "g" : "f"}100_minute`,
      );
      expect(parseBucketKey(key)).toEqual({ ...p, shard: undefined, override });
      expect(parseBucketKey(bucketKey(p))?.override).toBeUndefined();
    }
    expect(parseBucketKey("tl:v1:{edge|a=b}:og5_fortnight")).toBeUndefined();
    expect(parseBucketKey("tl:v1:{edge|a=b#1}:og5_minute")).toBeUndefined();
  });

  it("escape braces in the prefix so it can never open a hash tag of its own", () => {
    const p = { ...parts([["tenant", "acme"]]), prefix: "{team}%:" };
    const key = bucketKey(p);
    expect(key).toBe("%7Bteam%7D%25:tl:v1:{edge|tenant=acme}:g1");
    expect(parseBucketKey(key)).toEqual({ ...p, shard: undefined });
  });

  it("are the cached head and tail around the per-request entries", () => {
    const p = parts([["tenant", "a:b"]], { shard: 0 });
    expect(
      keyHead(p.prefix, p.domain) + entriesPart(p.entries) + keyTail(p.algorithm, p.limitIndex, p.shard),
    ).toBe(bucketKey(p));
    expect(keyTail("fixed_window", 2)).toBe("}:f2");
  });
});
