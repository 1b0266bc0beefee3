import { create, toBinary } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { parseResources } from "../../../src/config/xds-source.js";
import {
  RateLimitConfigSchema,
  RateLimitUnit,
} from "../../../src/gen/ratelimit/config/ratelimit/v3/rls_conf_pb.js";
import { decodeRlsConfigs, RLS_CONFIG_TYPE_URL } from "../../../src/protocol/xds/rls-config.js";

describe("RateLimitConfig resources as config documents", () => {
  const config = create(RateLimitConfigSchema, {
    name: "gw/edge",
    domain: "edge",
    descriptors: [
      {
        key: "tenant",
        descriptors: [
          {
            key: "route",
            value: "1.5",
            rateLimit: {
              unit: RateLimitUnit.WEEK,
              requestsPerUnit: 7,
              name: "weekly",
              replaces: [{ name: "daily" }],
            },
            shadowMode: true,
            quotaMode: true,
            detailedMetric: true,
          },
        ],
      },
      { key: "health", value: "yes", rateLimit: { unlimited: true } },
      { key: "blocked", rateLimit: { unit: RateLimitUnit.SECOND } },
    ],
  });

  it("writes every field in the YAML shape files use, leaving proto3 defaults out", () => {
    const [resource] = decodeRlsConfigs([anyPack(RateLimitConfigSchema, config)]);
    expect(resource).toEqual({
      name: "gw/edge",
      config: {
        domain: "edge",
        descriptors: [
          {
            key: "tenant",
            descriptors: [
              {
                key: "route",
                value: "1.5",
                rate_limit: {
                  unit: "week",
                  requests_per_unit: 7,
                  name: "weekly",
                  replaces: [{ name: "daily" }],
                },
                shadow_mode: true,
                detailed_metric: true,
                quota_mode: true,
              },
            ],
          },
          { key: "health", value: "yes", rate_limit: { requests_per_unit: 0, unlimited: true } },
          { key: "blocked", rate_limit: { unit: "second", requests_per_unit: 0 } },
        ],
      },
    });
  });

  it("compiles to the same rules as the equivalent file (a string value stays a string)", () => {
    const { ruleSet } = parseResources(decodeRlsConfigs([anyPack(RateLimitConfigSchema, config)]), {});
    const tenant = ruleSet.domains.get("edge")?.root.byKey.get("tenant")?.fallback;
    const route = tenant?.children.nodes[0];
    expect(route?.value).toBe("1.5");
    expect(route?.rule?.limits.map((l) => [l.requestsPerUnit, l.unit, l.name])).toEqual([
      [7, "week", "weekly"],
    ]);
    expect(route?.rule?.replaces).toEqual(["daily"]);
    expect(
      ruleSet.domains.get("edge")?.root.byKey.get("blocked")?.fallback?.rule?.limits[0]?.requestsPerUnit,
    ).toBe(0);
  });

  it("refuses a resource of another type or bytes that are not a RateLimitConfig", () => {
    expect(() =>
      decodeRlsConfigs([
        { $typeName: "google.protobuf.Any", typeUrl: "type.googleapis.com/x.Y", value: new Uint8Array() },
      ]),
    ).toThrow('resources[0] has type "type.googleapis.com/x.Y", expected');
    expect(() =>
      decodeRlsConfigs([
        {
          $typeName: "google.protobuf.Any",
          typeUrl: RLS_CONFIG_TYPE_URL,
          value: new Uint8Array([0x0a, 0x05, 0x61]),
        },
      ]),
    ).toThrow("resources[0] is not a RateLimitConfig");
    expect(toBinary(RateLimitConfigSchema, config).length).toBeGreaterThan(0);
  });
});
