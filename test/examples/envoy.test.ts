import type { JsonObject } from "@bufbuild/protobuf";
import { beforeAll, describe, expect, it } from "vitest";
import type { RuleSet } from "../../src/engine/types.js";
import { decodeEnvoyJson, envoyRegistry } from "../helpers/envoy-protos.js";
import {
  asArray,
  at,
  descriptors,
  edgeRuleSet,
  firstEndpoint,
  type Req,
  rulePathFor,
  selectRoute,
  yamlFile,
} from "./files.js";

const BOOTSTRAP = "envoy.config.bootstrap.v3.Bootstrap";
let bootstrap: JsonObject;
let edgeRules: RuleSet;

beforeAll(async () => {
  await envoyRegistry();
  bootstrap = await yamlFile("envoy/envoy.yaml");
  edgeRules = await edgeRuleSet();
});

const hcm = () => at(bootstrap, "static_resources", "listeners", 0, "filter_chains", 0, "filters", 0);
const httpFilters = () => asArray(at(hcm(), "typed_config", "http_filters"), "http_filters");
const cluster = (name: string) =>
  asArray(at(bootstrap, "static_resources", "clusters"), "clusters").find((c) => at(c, "name") === name);

describe("envoy/envoy.yaml", () => {
  it("decodes as an Envoy v3 Bootstrap with every typed_config resolved", async () => {
    await expect(decodeEnvoyJson(BOOTSTRAP, bootstrap)).resolves.toBeDefined();
  });

  it("is rejected when a field inside a typed_config is misspelled", async () => {
    const typo = structuredClone(bootstrap);
    const filter = at(typo, "static_resources", "listeners", 0, "filter_chains", 0, "filters", 0);
    const rl = at(filter, "typed_config", "http_filters", 0, "typed_config") as JsonObject;
    rl.failure_mode_denny = rl.failure_mode_deny ?? false;
    delete rl.failure_mode_deny;
    await expect(decodeEnvoyJson(BOOTSTRAP, typo)).rejects.toThrow(/failure_mode_denny/);
  });

  it("is rejected when a typed_config names a type that does not exist", async () => {
    const typo = structuredClone(bootstrap);
    const filter = at(typo, "static_resources", "listeners", 0, "filter_chains", 0, "filters", 0);
    const router = at(filter, "typed_config", "http_filters", 1, "typed_config") as JsonObject;
    router["@type"] = "type.googleapis.com/envoy.extensions.filters.http.router.v3.Routr";
    await expect(decodeEnvoyJson(BOOTSTRAP, typo)).rejects.toThrow(/Routr/);
  });

  it("listens on :10000 and runs the ratelimit filter before the router", () => {
    expect(at(bootstrap, "static_resources", "listeners", 0, "address", "socket_address", "port_value")).toBe(
      10000,
    );
    expect(httpFilters().map((f) => at(f, "name"))).toEqual([
      "envoy.filters.http.ratelimit",
      "envoy.filters.http.router",
    ]);
  });

  it("asks domain edge within 20 ms, fails open, and speaks RLS v3 to the tollgate cluster", () => {
    const rl = at(httpFilters()[0], "typed_config");
    expect(at(rl, "domain")).toBe("edge");
    expect(at(rl, "timeout")).toBe("0.02s");
    expect(at(rl, "failure_mode_deny")).toBe(false);
    expect(at(rl, "rate_limit_service", "transport_api_version")).toBe("V3");
    expect(at(rl, "rate_limit_service", "grpc_service", "envoy_grpc", "cluster_name")).toBe("tollgate");
  });

  it("reaches tollgate:8081 over HTTP/2 and the echo upstream over HTTP", () => {
    const tollgate = cluster("tollgate");
    const opts = at(
      tollgate,
      "typed_extension_protocol_options",
      "envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
    );
    expect(at(opts, "explicit_http_config", "http2_protocol_options")).toEqual({});
    const addr = firstEndpoint(tollgate);
    expect(addr).toEqual({ address: "tollgate", port_value: 8081 });
    expect(firstEndpoint(cluster("echo"))).toEqual({ address: "echo", port_value: 8080 });
  });

  const routes = () =>
    asArray(at(hcm(), "typed_config", "route_config", "virtual_hosts", 0, "routes"), "routes");
  const cases: [string, string, string][] = [
    ["GET", "/items/1", "read"],
    ["HEAD", "/items", "read"],
    ["POST", "/items", "write"],
    ["PUT", "/items/1", "write"],
    ["DELETE", "/items/1", "write"],
    ["GET", "/export/all.csv", "export"],
    ["POST", "/export", "export"],
  ];
  it.each(
    cases,
  )("sends [tenant, route_class] for %s %s with route_class %s, a descriptor edge.yaml limits", (method, path, cls) => {
    const req: Req = { method, path, headers: { "x-tenant-id": "acme" } };
    const route = selectRoute(routes(), req);
    expect(at(route, "route", "cluster")).toBe("echo");
    const sent = descriptors(asArray(at(route, "route", "rate_limits"), "rate_limits"), req);
    expect(sent).toEqual([["tenant=acme", `route_class=${cls}`]]);
    expect(rulePathFor(edgeRules, sent[0] ?? [])).toBe(`edge.tenant.route_class_${cls}`);
  });

  it("sends no descriptor for a request without x-tenant-id", () => {
    const req: Req = { method: "GET", path: "/", headers: {} };
    const route = selectRoute(routes(), req);
    expect(descriptors(asArray(at(route, "route", "rate_limits"), "rate_limits"), req)).toEqual([]);
  });
});
