import { describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/config/document.js";
import { child, choice, count, flag, has, items, text } from "../../src/config/fields.js";
import { ROWS } from "../../src/config/schema.js";

const YAML = `domain: edge
descriptors:
  - key: ip
    shadow_mode: true
    rate_limit: { unit: MINUTE, requests_per_unit: 5, algorithm: fixed_window }
`;

describe("typed config readers (one per field kind, driven by the schema row)", () => {
  it("give each value its row's type", () => {
    const root = parseConfigText("f.yaml", YAML).documents[0]?.root;
    if (root === undefined) throw new Error("no root");
    expect(text(root, ROWS.domain)).toBe("edge");
    const [d] = items(root, ROWS.descriptors) ?? [];
    if (d === undefined) throw new Error("no descriptor");
    expect(flag(d, ROWS.shadow_mode)).toBe(true);
    expect(flag(d, ROWS.quota_mode)).toBe(false);
    const l = child(d, ROWS.rate_limit);
    if (l === undefined) throw new Error("no rate_limit");
    const unit: "second" | "minute" | "hour" | "day" | "week" | "month" | "year" | undefined = choice(
      l,
      ROWS.unit,
    );
    expect(unit).toBe("minute");
    expect(choice(l, ROWS.algorithm)).toBe("fixed_window");
    expect(count(l, ROWS.requests_per_unit)).toBe(5);
    expect(count(l, ROWS.burst)).toBeUndefined();
    expect(has(l, ROWS.burst)).toBe(false);
  });

  it("refuse a row of another context (a programming error, not a config problem)", () => {
    const root = parseConfigText("f.yaml", YAML).documents[0]?.root;
    if (root === undefined) throw new Error("no root");
    expect(() => text(root, ROWS.key)).toThrow('"key" is no key of "root"');
  });
});
