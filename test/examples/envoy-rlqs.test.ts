/**
 * envoy/envoy-rlqs.yaml decodes as an Envoy v3 Bootstrap against the official protos (every
 * typed_config resolved, unknown fields rejected), and agrees with its tollgate config
 * (envoy/config-rlqs): the BucketId keys it builds are the config's rlqs keys, its reporting
 * interval is the config's, and each bucket resolves to the rule the comments promise.
 */
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { loadServingConfig } from "../../src/config/serving.js";
import { bucketEntries, resolveBucket } from "../../src/engine/rlqs/resolve.js";
import { decodeEnvoyJson, envoyRegistry } from "../helpers/envoy-protos.js";
import { asArray, at, yamlFile } from "./files.js";

const BOOTSTRAP = "envoy.config.bootstrap.v3.Bootstrap";
let bootstrap: JsonObject;

beforeAll(async () => {
  await envoyRegistry();
  bootstrap = await yamlFile("envoy/envoy-rlqs.yaml");
}, 120_000);

const filter = () =>
  at(
    at(bootstrap, "static_resources", "listeners", 0, "filter_chains", 0, "filters", 0),
    "typed_config",
    "http_filters",
    0,
  );
const settingsOf = (): JsonValue[] => {
  const m = at(filter(), "typed_config", "bucket_matchers");
  const list = asArray(at(m, "matcher_list", "matchers"), "matchers").map((x) =>
    at(x, "on_match", "action", "typed_config"),
  );
  return [...list, at(m, "on_no_match", "action", "typed_config")];
};

describe("envoy/envoy-rlqs.yaml", () => {
  it("decodes as an Envoy v3 Bootstrap with every typed_config resolved", async () => {
    await expect(decodeEnvoyJson(BOOTSTRAP, bootstrap)).resolves.toBeDefined();
  });

  it("is rejected when a bucket settings field is misspelled", async () => {
    const typo = structuredClone(bootstrap);
    const m = at(
      at(typo, "static_resources", "listeners", 0, "filter_chains", 0, "filters", 0),
      "typed_config",
      "http_filters",
      0,
      "typed_config",
      "bucket_matchers",
    );
    const s = at(m, "on_no_match", "action", "typed_config") as JsonObject;
    s.reporting_intervall = s.reporting_interval ?? "1s";
    delete s.reporting_interval;
    await expect(decodeEnvoyJson(BOOTSTRAP, typo)).rejects.toThrow(/reporting_intervall/);
  });

  it("runs the rate_limit_quota filter before the router, domain edge, against the tollgate cluster", () => {
    expect(at(filter(), "name")).toBe("envoy.filters.http.rate_limit_quota");
    expect(at(filter(), "typed_config", "domain")).toBe("edge");
    expect(at(filter(), "typed_config", "rlqs_server", "envoy_grpc", "cluster_name")).toBe("tollgate");
  });

  it("builds {tenant, route_class} BucketIds with deny settings and both fallbacks", () => {
    for (const s of settingsOf()) {
      expect(Object.keys(at(s, "bucket_id_builder", "bucket_id_builder") as JsonObject).sort()).toEqual([
        "route_class",
        "tenant",
      ]);
      expect(at(s, "deny_response_settings", "http_status", "code")).toBe("TooManyRequests");
      expect(at(s, "no_assignment_behavior", "fallback_rate_limit", "blanket_rule")).toBe("ALLOW_ALL");
      expect(at(s, "expired_assignment_behavior", "reuse_last_assignment")).toEqual({});
    }
  });

  it("agrees with envoy/config-rlqs: keys, reporting interval, and the rules each bucket meets", async () => {
    const config = await loadServingConfig((o) => loadConfig("envoy/config-rlqs", o), {
      defaultAlgorithm: "gcra",
      tenantsPath: "",
      maxKeyValueBytes: 256,
    });
    const rlqs = config.rlqs.get("edge");
    if (rlqs === undefined) throw new Error("no rlqs section for edge");
    for (const s of settingsOf()) {
      const keys = Object.keys(at(s, "bucket_id_builder", "bucket_id_builder") as JsonObject).sort();
      expect(rlqs.keys.map((k) => k.key).sort()).toEqual(keys);
      expect(at(s, "reporting_interval")).toBe(`${rlqs.reportingIntervalMs / 1000}s`);
    }
    const resolve = (tenant: string, routeClass: string) =>
      resolveBucket(
        config.rules.domains.get("edge"),
        config.tiers,
        bucketEntries(
          rlqs,
          new Map([
            ["route_class", routeClass],
            ["tenant", tenant],
          ]),
        ),
      );
    expect(resolve("acme", "read")).toMatchObject({ kind: "limited", limit: { ratePerSec: 100, burst: 50 } });
    expect(resolve("acme", "write")).toMatchObject({ kind: "limited", limit: { ratePerSec: 20, burst: 10 } });
    expect(resolve("internal", "write")).toMatchObject({ kind: "allow_all", why: "unlimited" });
    expect(resolve("blocked", "read").kind).toBe("deny_all");
  });
});
