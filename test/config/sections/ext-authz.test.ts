import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/config/errors.js";
import { loadConfig } from "../../../src/config/load.js";
import { EXT_AUTHZ_SCHEMA, extAuthzRulesOf } from "../../../src/config/sections/ext-authz.js";
import { parseExtAuthzConfigText } from "../../../src/config/sections/ext-authz-parse.js";
import { sourceValue } from "../../../src/engine/extract.js";
import { attrs } from "../../helpers/ext-authz-attrs.js";

const RULES = `
descriptors:
  - key: tenant
    rate_limit: { unit: minute, requests_per_unit: 10 }
`;

/** Problems of a config whose ext_authz section is `section` (indented YAML). */
function problems(section: string): string[] {
  try {
    parseExtAuthzConfigText("edge.yaml", `domain: edge${RULES}ext_authz:\n${section}`);
  } catch (err) {
    if (err instanceof ConfigError)
      return err.problems.map((p) => `${p.line}:${p.column} ${p.path}: ${p.message}`);
    throw err;
  }
  return [];
}

const VALID = `domain: edge${RULES}ext_authz:
  descriptors:
    - required: true
      entries:
        - key: tenant
          jwt_claim: { claim: org.tenant, claim_header: X-JWT-Tenant, payload_metadata: jwt_payload }
        - key: route_class
          route_class:
            default: other
            routes:
              - { methods: "GET, head", prefix: /v1/, class: read }
              - { path: "/v2/*/export", class: export }
    - entries:
        - { key: subnet, source_subnet: { ipv6_prefix: 48 } }
        - { key: ip, source_ip: true }
        - { key: tenant, header: X-Tenant }
        - { key: route, context_extension: route_name }
        - { key: plan, literal: 42 }
        - { key: path, raw_path: { include_query: true } }
`;

describe("ext_authz config section", () => {
  it("compiles every source into frozen rules, with defaults filled in", () => {
    const { extAuthz } = parseExtAuthzConfigText("edge.yaml", VALID);
    expect(extAuthz.defaultDomain).toBe("edge");
    const edge = extAuthz.domains.get("edge");
    expect(Object.isFrozen(edge)).toBe(true);
    const [first, second] = edge?.descriptors ?? [];
    expect(first?.required).toBe(true);
    expect(first?.entries[0]?.source).toEqual({
      kind: "jwt_claim",
      claim: "org.tenant",
      claimPath: ["org", "tenant"],
      claimHeader: "x-jwt-tenant",
      payloadMetadataKey: "jwt_payload",
      metadataNamespace: "envoy.filters.http.jwt_authn",
      tokenHeader: "authorization",
      decodeToken: true,
    });
    expect(second?.required).toBe(false);
    expect(second?.entries.map((e) => e.source)).toEqual([
      { kind: "source_subnet", ipv4Prefix: 24, ipv6Prefix: 48 },
      { kind: "source_ip" },
      { kind: "header", name: "x-tenant" },
      { kind: "context_extension", name: "route_name" },
      { kind: "literal", value: "42" },
      { kind: "raw_path", includeQuery: true },
    ]);
  });

  it("compiles the route-class table with upper-cased methods and globs", () => {
    const { extAuthz } = parseExtAuthzConfigText("edge.yaml", VALID);
    const source = extAuthz.domains.get("edge")?.descriptors[0]?.entries[1]?.source;
    if (source === undefined) throw new Error("no route_class source");
    expect(sourceValue(source, attrs({ method: "HEAD", path: "/v1/x" }))).toBe("read");
    expect(sourceValue(source, attrs({ method: "POST", path: "/v2/acme/export" }))).toBe("export");
    expect(sourceValue(source, attrs({ method: "POST", path: "/v1/x" }))).toBe("other");
  });

  it("rejects an entry without a value source", () => {
    expect(problems("  descriptors:\n    - entries:\n        - key: tenant\n")).toEqual([
      "8:11 ext_authz.descriptors[0].entries[0]: needs one value source (header, jwt_claim, source_ip, source_subnet, route_class, context_extension, literal, raw_path)",
    ]);
  });

  it("rejects an entry with two value sources", () => {
    expect(
      problems("  descriptors:\n    - entries:\n        - { key: t, header: x-t, literal: a }\n"),
    ).toEqual([
      "8:11 ext_authz.descriptors[0].entries[0]: has 2 value sources (header, literal): use exactly one",
    ]);
  });

  it("points at raw_path when a header source names :path", () => {
    expect(problems('  descriptors:\n    - entries:\n        - { key: p, header: ":path" }\n')).toEqual([
      '8:29 ext_authz.descriptors[0].entries[0].header: must not be ":path": raw paths become bucket keys only through raw_path',
    ]);
  });

  it("rejects an unknown key with a suggestion, through the shared schema walker", () => {
    expect(problems("  descriptors:\n    - entries:\n        - { key: t, headr: x-t }\n")).toContain(
      '8:21 ext_authz.descriptors[0].entries[0].headr: unknown key "headr" (did you mean "header"?)',
    );
  });

  it("rejects route rows without exactly one of prefix and path, and paths without a leading slash", () => {
    const section = `  descriptors:
    - entries:
        - key: rc
          route_class:
            routes:
              - { class: read }
              - { prefix: v1, class: read }
              - { prefix: /a, path: /b, class: x }
`;
    expect(problems(section)).toEqual([
      '11:17 ext_authz.descriptors[0].entries[0].route_class.routes[0]: needs exactly one of "prefix" and "path" (a glob)',
      '12:27 ext_authz.descriptors[0].entries[0].route_class.routes[1].prefix: must start with "/", got "v1"',
      '13:17 ext_authz.descriptors[0].entries[0].route_class.routes[2]: needs exactly one of "prefix" and "path" (a glob)',
    ]);
  });

  it("rejects a route-class table with neither routes nor default, and a bad method", () => {
    const section = `  descriptors:
    - entries:
        - { key: rc, route_class: {} }
        - { key: rc2, route_class: { routes: [{ methods: "GET;POST", prefix: /, class: a }] } }
`;
    expect(problems(section)).toEqual([
      "8:35 ext_authz.descriptors[0].entries[0].route_class: needs routes or a default class",
      '9:58 ext_authz.descriptors[0].entries[1].route_class.routes[0].methods: "GET;POST" is not an HTTP method (write e.g. "GET, HEAD")',
    ]);
  });

  it("rejects subnet prefixes out of range", () => {
    expect(
      problems("  descriptors:\n    - entries:\n        - { key: s, source_subnet: { ipv4_prefix: 33 } }\n"),
    ).toEqual([
      "8:51 ext_authz.descriptors[0].entries[0].source_subnet.ipv4_prefix: must be an integer from 0 to 32, got 33",
    ]);
  });

  it("rejects a JWT claim that could never be read", () => {
    expect(
      problems(
        "  descriptors:\n    - entries:\n        - { key: t, jwt_claim: { claim: a..b, decode_token: false } }\n",
      ),
    ).toEqual([
      '8:41 ext_authz.descriptors[0].entries[0].jwt_claim.claim: has an empty segment: "a..b"',
      "8:61 ext_authz.descriptors[0].entries[0].jwt_claim.decode_token: is false but neither claim_header nor payload_metadata is set: no claim could be read",
    ]);
  });

  it("rejects empty descriptor and entry lists and source_ip: false", () => {
    expect(problems("  descriptors: []\n")).toEqual([
      "6:16 ext_authz.descriptors: must list at least one descriptor",
    ]);
    expect(problems("  descriptors:\n    - entries: []\n")).toEqual([
      "7:16 ext_authz.descriptors[0].entries: must list at least one entry",
    ]);
    expect(problems("  descriptors:\n    - entries: [{ key: i, source_ip: false }]\n")).toEqual([
      "7:38 ext_authz.descriptors[0].entries[0].source_ip: must be true (or leave it out)",
    ]);
  });

  it("reports section problems together with the rule problems of the same file", () => {
    const text = `domain: edge\ndescriptors:\n  - key: tenant\n    rate_limit: { unit: minutes, requests_per_unit: 1 }\next_authz:\n  descriptors:\n    - entries: [{ key: t }]\n`;
    expect(() => parseExtAuthzConfigText("edge.yaml", text)).toThrow(
      /2 problems[\s\S]*unknown unit "minutes"[\s\S]*needs one value source/,
    );
  });
});

describe("ext_authz rules of a directory load", () => {
  it("compiles the section of files loaded with EXT_AUTHZ_SCHEMA, and reports its problems", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tollgate-extauthz-"));
    try {
      await writeFile(join(dir, "edge.yaml"), VALID);
      await writeFile(
        join(dir, "partner.yaml"),
        "domain: partner\next_authz:\n  default: true\n  descriptors:\n    - entries: [{ key: k, header: x-k }]\n",
      );
      const load = await loadConfig(dir, { schema: EXT_AUTHZ_SCHEMA });
      const rules = extAuthzRulesOf(load, { maxValueBytes: 64 });
      expect([...rules.domains.keys()].sort()).toEqual(["edge", "partner"]);
      expect(rules.defaultDomain).toBe("partner");
      expect(rules.maxValueBytes).toBe(64);
      await writeFile(join(dir, "edge.yaml"), VALID.replace("ext_authz:\n", "ext_authz:\n  default: true\n"));
      const twoDefaults = await loadConfig(dir, { schema: EXT_AUTHZ_SCHEMA });
      expect(() => extAuthzRulesOf(twoDefaults)).toThrow(
        /only one domain may be the ext_authz default \("edge" is/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
