import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { type HeaderFormat, type HeaderStatus, rateLimitHeaders } from "../../src/engine/headers.js";

const DOC = readFileSync(new URL("../../docs/config.md", import.meta.url), "utf8");

/** The docs' example blocks, by their first line (`# legacy, allowed`). */
function examples(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const m of DOC.matchAll(/```text\n# (\w+), (allowed|denied)\n([\s\S]*?)```/g))
    out.set(`${m[1]}, ${m[2]}`, (m[3] ?? "").trimEnd().split("\n"));
  return out;
}

/** The docs' scenario: [tenant] bound by per_second with 3 of 10 left (then denied), [ip] at 93 of 100. */
function statuses(denied: boolean): HeaderStatus[] {
  return [
    {
      limit: { requestsPerUnit: 10, unit: "second", name: "per_second" },
      remaining: denied ? 0 : 3,
      resetSec: 1,
      over: denied,
      enforcedOver: denied,
    },
    {
      limit: { requestsPerUnit: 100, unit: "minute", name: "per_ip" },
      remaining: 93,
      resetSec: 5,
      over: false,
      enforcedOver: false,
    },
  ];
}

describe("docs/config.md, Response headers", () => {
  it.each([
    "legacy",
    "draft03",
    "ietf",
  ] as HeaderFormat[])("shows exactly what format %s produces", (format) => {
    const docs = examples();
    for (const denied of [false, true]) {
      const headers = rateLimitHeaders(statuses(denied), {
        format,
        nowMs: Date.UTC(2026, 0, 1),
        jitterSec: 0,
        random: () => 0,
      });
      expect(docs.get(`${format}, ${denied ? "denied" : "allowed"}`)).toEqual(
        headers.map((h) => `${h.key}: ${h.value}`),
      );
    }
  });
});
