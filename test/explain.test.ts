import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runExplain } from "../src/commands.js";
import { parseDescriptorArg } from "../src/explain.js";

const CONFIG = `domain: edge
descriptors:
  - key: tenant
    descriptors:
      - key: route_class
        value: read
        rate_limit: { unit: second, requests_per_unit: 100 }
      - key: route_class
        value: write
        rate_limit: { unit: second, requests_per_unit: 20 }
  - key: path
    value: "/api/*"
    rate_limit: { unit: minute, requests_per_unit: 60 }
  - key: internal
    value: "yes"
  - key: plan
    descriptors:
      - key: size
        rate_limit: { unit: hour, requests_per_unit: 5 }
tiers:
  default_tier: free
  tiers:
    - name: free
      limits:
        - rate_limit: { unit: minute, requests_per_unit: 7, name: free_any }
`;

let dir: string;
let config: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "tollgate-explain-"));
  config = join(dir, "edge.yaml");
  await writeFile(config, CONFIG);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function explain(...args: string[]) {
  const log: string[] = [];
  const error: string[] = [];
  const code = await runExplain(
    ["--config", config, ...args],
    { log: (l) => log.push(l), error: (l) => error.push(l) },
    {},
  );
  return { code, out: log.join("\n"), err: error.join("\n") };
}

describe("tollgate explain", () => {
  it("suggests the closest configured domain for an unknown one", async () => {
    const r = await explain("--domain", "egde", "--descriptor", "tenant=acme");
    expect(r.code).toBe(0);
    expect(r.out).toBe(
      'domain "egde" is not configured (did you mean "edge"?); configured: edge → every descriptor OK, no limit',
    );
  });

  it("shows each step of the walk and the rule, limits and key of a match", async () => {
    const r = await explain(
      "--domain",
      "edge",
      "--descriptor",
      "tenant=acme,route_class=read",
      "--key-prefix",
      "p:",
    );
    expect(r.out.split("\n")).toEqual([
      "descriptor tenant=acme,route_class=read:",
      "  tenant=acme → edge.tenant (any value)",
      "  route_class=read → edge.tenant.route_class_read (exact value)",
      `  rule: edge.tenant.route_class_read (${config}:5)`,
      "  limit 0: 100/second burst 100 gcra",
      "    key: p:tl:v1:{edge|tenant=acme,route_class=read}:g0",
    ]);
  });

  it("says how far the walk got when no rule matches", async () => {
    const r = await explain("--domain", "edge", "--descriptor", "plan=pro,color=red");
    expect(r.out.split("\n")).toEqual([
      "descriptor plan=pro,color=red:",
      "  plan=pro → edge.plan (any value)",
      "  color=red → nothing below edge.plan (there: size=(any))",
      "  no rule matches → OK, no limit",
    ]);
    // The tree has no route_class=delete below tenant, so the tiers section answers it.
    const tier = await explain("--domain", "edge", "--descriptor", "tenant=acme,route_class=delete");
    expect(tier.out).toContain(
      "  route_class=delete → nothing below edge.tenant (there: route_class=read, route_class=write)",
    );
    expect(tier.out).toContain("  answered by the tiers section: tier free");
    const top = await explain("--domain", "edge", "--descriptor", "user=u1");
    expect(top.out).toContain(
      "  user=u1 → nothing at the top level (there: internal=yes, path=/api/*, tenant=(any), plan=(any))",
    );
    const long = await explain("--domain", "edge", "--descriptor", "path=/api/x,verb=GET");
    expect(long.out).toContain("  path=/api/x → edge.path_/api/* (glob /api/*)");
    expect(long.out).toContain("  verb=GET → the tree ends at edge.path_/api/* (no deeper descriptors)");
    const short = await explain("--domain", "edge", "--descriptor", "plan=pro");
    expect(short.out).toContain("  the descriptor ends at edge.plan, which has no rate limit");
  });

  it("explains several descriptors, a whitelisted value and a tier answer in one call", async () => {
    const r = await explain(
      "--domain",
      "edge",
      "--descriptor",
      "internal=yes",
      "--descriptor=tenant=globex",
      "--descriptor",
      "path=/api/v1",
    );
    expect(r.code).toBe(0);
    const blocks = r.out.split(/\n(?=descriptor )/);
    expect(blocks).toHaveLength(3);
    expect(blocks[0]).toContain("whitelisted value → OK, no limit");
    expect(blocks[1]).toContain("answered by the tiers section: tier free");
    expect(blocks[1]).toContain("limit 0: 7/minute burst 7 gcra name=free_any");
    expect(blocks[2]).toContain("limit 0: 60/minute burst 60 gcra");
  });

  it("refuses a malformed --descriptor with the reason and the usage (exit 2)", async () => {
    for (const [arg, why] of [
      ["tenant", 'entry 1 "tenant" has no "=" (expected key=value)'],
      ["tenant=a,=b", 'entry 2 "=b" has an empty key'],
      ["", "empty (expected k=v[,k2=v2])"],
    ] as const) {
      const r = await explain("--domain", "edge", "--descriptor", arg);
      expect(r.code).toBe(2);
      expect(r.err).toContain(`tollgate explain: --descriptor ${JSON.stringify(arg)}: ${why}`);
      expect(r.err).toContain("usage: tollgate explain");
    }
    expect((await explain("--domain", "edge")).code).toBe(2);
    expect((await explain("--domain", "edge", "--descriptor", "a=b", "--bogus", "1")).err).toContain(
      "unknown option --bogus",
    );
  });

  it("parses values that contain = and keeps empty values", () => {
    expect(parseDescriptorArg("q=a=b,e=")).toEqual([
      { key: "q", value: "a=b" },
      { key: "e", value: "" },
    ]);
  });
});
