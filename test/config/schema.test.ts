import { describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/config/document.js";
import { parseDuration } from "../../src/config/duration.js";
import { ConfigError } from "../../src/config/errors.js";
import { BASE_SCHEMA, defineSchema, extendSchema } from "../../src/config/schema.js";
import { closest } from "../../src/config/suggest.js";
import type { CheckedObject } from "../../src/config/walk.js";

describe("schema extension", () => {
  const schema = extendSchema(BASE_SCHEMA, [
    { name: "tiers", in: ["root"], type: { kind: "list", context: "tier" } },
    { name: "name", in: ["tier"], type: { kind: "string" }, required: true },
    { name: "multiplier", in: ["tier"], type: { kind: "uint", min: 1, max: 100 } },
  ]);

  it("validates a new section and hands its values back through the parsed documents", () => {
    const { documents } = parseConfigText(
      "t.yaml",
      "domain: d\ntiers:\n  - { name: gold, multiplier: 4 }\n",
      {
        schema,
      },
    );
    const tiers = documents[0]?.root?.values.get("tiers") as CheckedObject[];
    expect(tiers.map((t) => [t.values.get("name"), t.values.get("multiplier")])).toEqual([["gold", 4]]);
  });

  it("rejects the new keys' problems the same way as the base schema", () => {
    const run = () => parseConfigText("t.yaml", "domain: d\ntiers:\n  - { nmae: gold }\n", { schema });
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(/t\.yaml:3:7: tiers\[0\]\.nmae: unknown key "nmae" \(did you mean "name"\?\)/);
  });

  it("keeps the base schema unchanged", () => {
    expect(() => parseConfigText("t.yaml", "domain: d\ntiers: []\n")).toThrow(/unknown key "tiers"/);
  });

  it("refuses a key declared twice in one context", () => {
    const row = { name: "x", in: ["root"], type: { kind: "bool" } } as const;
    expect(() => defineSchema([row, row])).toThrow('schema: key "x" declared twice in "root"');
  });
});

describe("closest", () => {
  it("suggests a near typo, a truncated key, or nothing", () => {
    expect(closest("requets_per_unit", ["unit", "requests_per_unit"])).toBe("requests_per_unit");
    expect(closest("shadow", ["shadow_mode", "share_threshold"])).toBe("shadow_mode");
    expect(closest("colour", ["unit", "name"])).toBeUndefined();
  });
});

describe("parseDuration", () => {
  it("reads ms, s, m and h and rejects anything else", () => {
    expect([parseDuration("250ms"), parseDuration("5s"), parseDuration("1m"), parseDuration("2h")]).toEqual([
      250, 5000, 60000, 7_200_000,
    ]);
    expect([parseDuration("5"), parseDuration("1.5s"), parseDuration("-1s"), parseDuration("1d")]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});

describe("scalars in string fields", () => {
  const parsedValue = (yaml: string) => {
    const { ruleSet } = parseConfigText(
      "v.yaml",
      `domain: d\ndescriptors:\n  - key: k\n    value: ${yaml}\n`,
    );
    const level = ruleSet.domains.get("d")?.root;
    return [...(level?.byKey.values() ?? [])].flatMap((k) => [...k.exact.values()]).map((n) => n.value);
  };

  it("keeps the text of unquoted ints and bools, as envoyproxy/ratelimit does", () => {
    expect(parsedValue("10")).toEqual(["10"]);
    expect(parsedValue("007")).toEqual(["007"]);
    expect(parsedValue("true")).toEqual(["true"]);
    expect(parsedValue('"1.50"')).toEqual(["1.50"]);
  });

  it("rejects unquoted floats in any spelling with a hint to quote them", () => {
    for (const float of ["1.5", "1e3", ".inf", "-0.0"]) {
      expect(() => parsedValue(float)).toThrow(
        `must be a string, got the float ${float}: quote it (value: "${float}")`,
      );
    }
  });
});
