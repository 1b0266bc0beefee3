import { describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/config/document.js";
import { traceDescriptor } from "../../src/config/match-trace.js";
import { matchDescriptor } from "../../src/engine/match.js";
import type { Entry } from "../../src/engine/types.js";
import { Prng } from "../fuzz/prng.js";

const CONFIG = `domain: d
descriptors:
  - key: a
    rate_limit: { unit: second, requests_per_unit: 1 }
    descriptors:
      - key: b
        value: x
        rate_limit: { unit: second, requests_per_unit: 2 }
      - key: b
        value: "y*"
        descriptors:
          - key: c
            rate_limit: { unit: second, requests_per_unit: 3 }
      - key: b
  - key: a
    value: "1"
  - key: a
    value: "2*"
    share_threshold: true
    rate_limit: { unit: second, requests_per_unit: 4 }
  - key: c
    descriptors:
      - key: a
        value: x
`;

describe("traceDescriptor", () => {
  const domain = parseConfigText("d.yaml", CONFIG).ruleSet.domains.get("d");
  if (domain === undefined) throw new Error("no domain");

  it("ends on a rule exactly when matchDescriptor finds one, at the same node (2000 random descriptors)", () => {
    const rng = new Prng(24);
    for (let i = 0; i < 2000; i++) {
      const entries: Entry[] = Array.from({ length: rng.int(1, 4) }, () => ({
        key: rng.pick(["a", "b", "c", "z"]),
        value: rng.pick(["1", "2", "20", "x", "y", "yy", ""]),
      }));
      const match = matchDescriptor(domain, entries);
      const trace = traceDescriptor(domain, entries);
      const last = trace.steps.at(-1)?.node;
      if (match === undefined) expect(["no-node", "no-rule", "tree-ends"]).toContain(trace.end.kind);
      else {
        expect(trace.end.kind).toBe(match.rule === undefined ? "whitelisted" : "rule");
        expect(last).toBe(match.node);
        expect(trace.steps).toHaveLength(entries.length);
      }
    }
  });

  it("names how each level matched", () => {
    const t = traceDescriptor(domain, [
      { key: "a", value: "9" },
      { key: "b", value: "yes" },
      { key: "c", value: "q" },
    ]);
    expect(t.steps.map((s) => [s.path, s.how])).toEqual([
      ["d.a", "default"],
      ["d.a.b_y*", "glob"],
      ["d.a.b_y*.c", "default"],
    ]);
    expect(t.end).toEqual({ kind: "rule" });
  });
});
