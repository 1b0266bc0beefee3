import { describe, expect, it } from "vitest";
import { type DomainExtraction, extractDescriptors, type ValueSource } from "../../src/engine/extract.js";
import { attrs } from "../helpers/ext-authz-attrs.js";

const domain = (
  ...descriptors: { entries: [string, ValueSource][]; required?: boolean }[]
): DomainExtraction => ({
  domain: "edge",
  descriptors: descriptors.map((d) => ({
    entries: d.entries.map(([key, source]) => ({ key, source })),
    required: d.required ?? false,
  })),
});
const header = (name: string): ValueSource => ({ kind: "header", name });

describe("extractDescriptors", () => {
  it("builds one query descriptor per rule, entries in order", () => {
    const rules = domain({
      entries: [
        ["tenant", header("x-tenant")],
        ["plan", { kind: "literal", value: "gold" }],
      ],
    });
    const out = extractDescriptors(rules, attrs({ headers: { "x-tenant": "acme" } }));
    expect(out).toEqual({
      ok: true,
      descriptors: [
        {
          entries: [
            { key: "tenant", value: "acme" },
            { key: "plan", value: "gold" },
          ],
          limit: undefined,
          hitsAddend: undefined,
        },
      ],
    });
  });

  it("reads a context extension", () => {
    const rules = domain({ entries: [["route", { kind: "context_extension", name: "route_name" }]] });
    const out = extractDescriptors(rules, attrs({ contextExtensions: { route_name: "checkout" } }));
    expect(out.ok && out.descriptors[0]?.entries).toEqual([{ key: "route", value: "checkout" }]);
  });

  it("reads the source IP and the masked subnet", () => {
    const rules = domain(
      { entries: [["ip", { kind: "source_ip" }]] },
      { entries: [["subnet", { kind: "source_subnet", ipv4Prefix: 24, ipv6Prefix: 56 }]] },
    );
    const out = extractDescriptors(rules, attrs({ sourceIp: "198.51.100.23" }));
    expect(out.ok && out.descriptors.map((d) => d.entries[0]?.value)).toEqual([
      "198.51.100.23",
      "198.51.100.0/24",
    ]);
  });

  it("skips a descriptor whose value is missing and keeps the others", () => {
    const rules = domain(
      { entries: [["tenant", header("x-tenant")]] },
      { entries: [["ip", { kind: "source_ip" }]] },
    );
    const out = extractDescriptors(rules, attrs());
    expect(out.ok && out.descriptors.map((d) => d.entries[0]?.key)).toEqual(["ip"]);
  });

  it("skips a whole descriptor when any one of its entries is missing", () => {
    const rules = domain({
      entries: [
        ["ip", { kind: "source_ip" }],
        ["tenant", header("x-tenant")],
      ],
    });
    expect(extractDescriptors(rules, attrs())).toEqual({ ok: true, descriptors: [] });
  });

  it("treats an empty header value as missing", () => {
    const rules = domain({ entries: [["tenant", header("x-tenant")]], required: true });
    expect(extractDescriptors(rules, attrs({ headers: { "x-tenant": "" } })).ok).toBe(false);
  });

  it("denies with a reason when a required descriptor is missing", () => {
    const rules = domain(
      { entries: [["ip", { kind: "source_ip" }]] },
      { entries: [["tenant", header("x-tenant")]], required: true },
    );
    expect(extractDescriptors(rules, attrs())).toEqual({
      ok: false,
      missing: { descriptor: 1, key: "tenant", reason: 'no value for "tenant" from header "x-tenant"' },
    });
  });

  it("treats a value longer than the byte bound as missing", () => {
    const rules = domain({ entries: [["tenant", header("x-tenant")]], required: true });
    const out = extractDescriptors(rules, attrs({ headers: { "x-tenant": "é".repeat(6) } }), {
      maxValueBytes: 10,
    });
    expect(out).toEqual({
      ok: false,
      missing: {
        descriptor: 0,
        key: "tenant",
        reason: 'value for "tenant" from header "x-tenant" is longer than 10 bytes',
      },
    });
  });

  it("uses the path without query string only when a rule asks for the raw path", () => {
    const a = attrs({ path: "/v1/orders/42", query: "debug=1" });
    const bare = domain({ entries: [["path", { kind: "raw_path", includeQuery: false }]] });
    const withQuery = domain({ entries: [["path", { kind: "raw_path", includeQuery: true }]] });
    expect(extractDescriptors(bare, a)).toMatchObject({
      descriptors: [{ entries: [{ value: "/v1/orders/42" }] }],
    });
    expect(extractDescriptors(withQuery, a)).toMatchObject({
      descriptors: [{ entries: [{ value: "/v1/orders/42?debug=1" }] }],
    });
  });
});
