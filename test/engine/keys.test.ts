import { describe, expect, it } from "vitest";
import {
  bucketKey,
  entriesPart,
  instancesKey,
  keyHead,
  keyTail,
  type ParsedKey,
  parseBucketKey,
  parseKey,
  quotaKey,
  tenantTiersKey,
} from "../../src/engine/keys.js";
import { type Entry, UNIT_MS, type Unit } from "../../src/engine/types.js";
import { Prng } from "../fuzz/prng.js";

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

describe("every key keys.ts builds", () => {
  /** Characters that stress the escaping: delimiters, escapes, braces, control bytes, unicode. */
  const NASTY = [
    "%",
    "{",
    "}",
    "=",
    ",",
    "|",
    ":",
    "#",
    "\n",
    "\u0000",
    "\u007f",
    "_",
    "ü",
    "🚦",
    "%7B",
    "tl:v1:{",
  ];
  const text = (rng: Prng, min = 0) => {
    let out = "";
    for (let i = rng.int(min, 6); i > 0; i--)
      out += rng.next() < 0.4 ? rng.pick(NASTY) : rng.word(rng.int(1, 3));
    return out;
  };
  const entries = (rng: Prng): Entry[] =>
    Array.from({ length: rng.int(0, 3) }, () => ({ key: text(rng, 1), value: text(rng) }));
  const units = Object.keys(UNIT_MS) as Unit[];

  /** One key of each builder from `rng`, with what parseKey must give back. */
  function samples(rng: Prng): [string, ParsedKey][] {
    const prefix = text(rng);
    const domain = text(rng);
    const es = entries(rng);
    const algorithm = rng.pick(["gcra", "fixed_window"] as const);
    const shard = rng.next() < 0.5 ? undefined : rng.int(0, 64);
    const bucket = { prefix, domain, entries: es, limitIndex: rng.int(0, 12), algorithm, shard };
    const override = { requestsPerUnit: rng.int(1, 1_000_000), unit: rng.pick(units) };
    const overridden = { prefix, domain, entries: es, limitIndex: 0, algorithm, shard: undefined, override };
    return [
      [bucketKey(bucket), { kind: "bucket", parts: { ...bucket, override: undefined } }],
      [bucketKey(overridden), { kind: "override", parts: overridden }],
      [quotaKey(prefix, domain, es), { kind: "quota", prefix, domain, entries: es }],
      [tenantTiersKey(prefix), { kind: "tenant-tiers", prefix }],
      [instancesKey(prefix), { kind: "instances", prefix }],
    ];
  }

  it("parses back to what built it (bucket, override, quota, tenant-tiers, instances), 2,000 seeded rounds", () => {
    const seed = 23;
    const rng = new Prng(seed);
    for (let round = 0; round < 2_000; round++) {
      for (const [key, expected] of samples(rng)) {
        expect(parseKey(key), `seed ${seed} round ${round}: ${JSON.stringify(key)}`).toEqual(expected);
        // The prefix never opens a hash tag: the first brace of every key opens tollgate's own tag.
        expect(key.indexOf("{"), key).toBe(key.indexOf("tl:v1:{") + 6);
      }
    }
  });

  it("parse the RLQS usage key and the singleton keys, which parseBucketKey does not", () => {
    const entries = [{ key: "tenant", value: "acme" }];
    expect(parseBucketKey(quotaKey("prod:", "edge", entries))).toBeUndefined();
    expect(parseKey(quotaKey("prod:", "edge", entries))).toEqual({
      kind: "quota",
      prefix: "prod:",
      domain: "edge",
      entries,
    });
    expect(parseKey("prod:tl:v1:{tenant-tiers}")).toEqual({ kind: "tenant-tiers", prefix: "prod:" });
    expect(parseKey("tl:v1:{instances}")).toEqual({ kind: "instances", prefix: "" });
    for (const bad of [
      "something-else",
      "tl:v1:{instances}:x",
      "tl:v1:{edge|a}:q",
      "tl:v1:{other}",
      "tl:v2:{instances}",
    ])
      expect(parseKey(bad), bad).toBeUndefined();
  });

  it("escape braces in the prefix of the instances key, as in every other key", () => {
    expect(instancesKey("")).toBe("tl:v1:{instances}");
    expect(instancesKey("prod:")).toBe("prod:tl:v1:{instances}");
    expect(instancesKey("{team}%:")).toBe("%7Bteam%7D%25:tl:v1:{instances}");
    expect(instancesKey("{team}:")).toBe(tenantTiersKey("{team}:").replace("tenant-tiers", "instances"));
  });
});
