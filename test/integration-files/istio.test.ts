import type { JsonObject } from "@bufbuild/protobuf";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { parseConfigText } from "../../src/config/document.js";
import type { RuleSet } from "../../src/engine/types.js";
import { decodeEnvoyJson, envoyRegistry } from "../helpers/envoy-protos.js";
import { asArray, asObject, at, descriptors, edgeRuleSet, type Req, rulePathFor, yamlFile } from "./files.js";

/** The Envoy message an EnvoyFilter patch value is, by `applyTo` (Istio's mapping). */
const PATCH_TYPE: Readonly<Record<string, string>> = {
  HTTP_FILTER: "envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter",
  CLUSTER: "envoy.config.cluster.v3.Cluster",
  VIRTUAL_HOST: "envoy.config.route.v3.VirtualHost",
  HTTP_ROUTE: "envoy.config.route.v3.Route",
  LISTENER: "envoy.config.listener.v3.Listener",
  NETWORK_FILTER: "envoy.config.listener.v3.Filter",
};

const FILES = ["envoy/istio/ratelimit-filter.yaml", "envoy/istio/ratelimit-actions.yaml"];
const docs = new Map<string, JsonObject>();
let edgeRules: RuleSet;

beforeAll(async () => {
  await envoyRegistry();
  for (const f of FILES) docs.set(f, await yamlFile(f));
  edgeRules = await edgeRuleSet();
});

function patches(file: string): JsonObject[] {
  return asArray(at(docs.get(file), "spec", "configPatches"), "configPatches").map((p) =>
    asObject(p, "patch"),
  );
}

async function decodePatch(p: JsonObject): Promise<unknown> {
  const type = PATCH_TYPE[String(at(p, "applyTo"))];
  if (type === undefined) throw new Error(`no Envoy type known for applyTo ${String(p.applyTo)}`);
  return decodeEnvoyJson(type, at(p, "patch", "value"));
}

describe("envoy/istio EnvoyFilters", () => {
  it.each(FILES)("%s is a networking.istio.io EnvoyFilter on the ingress gateway", (file) => {
    const doc = docs.get(file);
    expect(at(doc, "apiVersion")).toBe("networking.istio.io/v1alpha3");
    expect(at(doc, "kind")).toBe("EnvoyFilter");
    expect(at(doc, "spec", "workloadSelector", "labels")).toEqual({ istio: "ingressgateway" });
  });

  it.each(FILES)("every patch.value in %s decodes as the Envoy message its applyTo names", async (file) => {
    for (const p of patches(file)) await expect(decodePatch(p)).resolves.toBeDefined();
  });

  it("rejects a patch value with a misspelled field", async () => {
    const [filter] = patches(FILES[0] ?? "");
    const typo = structuredClone(filter) as JsonObject;
    const config = at(typo, "patch", "value", "typed_config") as JsonObject;
    config.domian = config.domain ?? "";
    delete config.domain;
    await expect(decodePatch(typo)).rejects.toThrow(/domian/);
  });

  it("inserts the ratelimit filter before the router and points it at the added HTTP/2 cluster", () => {
    const [filter, cluster] = patches(FILES[0] ?? "");
    expect(at(filter, "patch", "operation")).toBe("INSERT_BEFORE");
    expect(at(filter, "match", "listener", "filterChain", "filter", "subFilter", "name")).toBe(
      "envoy.filters.http.router",
    );
    const rl = at(filter, "patch", "value", "typed_config");
    expect(at(rl, "domain")).toBe("edge");
    expect(at(rl, "timeout")).toBe("0.02s");
    expect(at(rl, "failure_mode_deny")).toBe(false);
    const clusterName = at(rl, "rate_limit_service", "grpc_service", "envoy_grpc", "cluster_name");
    expect(at(cluster, "applyTo")).toBe("CLUSTER");
    expect(at(cluster, "patch", "value", "name")).toBe(clusterName);
    const h2 = at(cluster, "patch", "value", "typed_extension_protocol_options");
    expect(at(h2, "envoy.extensions.upstreams.http.v3.HttpProtocolOptions", "explicit_http_config")).toEqual({
      http2_protocol_options: {},
    });
  });

  const cases: [string, string, string][] = [
    ["GET", "/items", "read"],
    ["HEAD", "/", "read"],
    ["POST", "/items", "write"],
    ["DELETE", "/items/9", "write"],
    ["GET", "/export/report", "export"],
    ["PUT", "/export", "export"],
  ];
  it.each(
    cases,
  )("the virtual host sends exactly one descriptor for %s %s, with route_class %s", (method, path, cls) => {
    const [vhost] = patches(FILES[1] ?? "");
    const req: Req = { method, path, headers: { "x-tenant-id": "acme" } };
    const sent = descriptors(asArray(at(vhost, "patch", "value", "rate_limits"), "rate_limits"), req);
    expect(sent).toEqual([["tenant=acme", `route_class=${cls}`]]);
    expect(rulePathFor(edgeRules, sent[0] ?? [])).toBe(`edge.tenant.route_class_${cls}`);
  });
});

describe("envoy/istio/configmap.yaml", () => {
  it("holds the same edge rules as envoy/config/edge.yaml", async () => {
    const cm = await yamlFile("envoy/istio/configmap.yaml");
    expect(at(cm, "kind")).toBe("ConfigMap");
    const embedded = String(at(cm, "data", "edge.yaml"));
    expect(parse(embedded)).toEqual(await yamlFile("envoy/config/edge.yaml"));
    // tollgate's own loader accepts it as it would from the mounted volume.
    const { ruleSet } = parseConfigText("configmap:edge.yaml", embedded);
    expect(rulePathFor(ruleSet, ["tenant=acme", "route_class=export"])).toBe(
      "edge.tenant.route_class_export",
    );
  });

  it("limits only the route classes the gateway sends", () => {
    expect(rulePathFor(edgeRules, ["tenant=acme", "route_class=read"])).toBe("edge.tenant.route_class_read");
    expect(rulePathFor(edgeRules, ["tenant=acme", "route_class=admin"])).toBeUndefined();
    expect(rulePathFor(edgeRules, ["tenant=acme"])).toBeUndefined();
  });
});
