import { join } from "node:path";
import type { JsonObject } from "@bufbuild/protobuf";
import { beforeAll, describe, expect, it } from "vitest";
import { FULL_SCHEMA } from "../../src/config/full-schema.js";
import { loadConfig } from "../../src/config/load.js";
import type { RuleSet } from "../../src/engine/types.js";
import { decodeEnvoyJson, envoyRegistry } from "../helpers/envoy-protos.js";
import {
  asArray,
  asObject,
  at,
  descriptors,
  edgeRuleSet,
  type Req,
  repo,
  rulePathFor,
  yamlFile,
} from "./files.js";

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
let kubernetesRules: RuleSet;

beforeAll(async () => {
  await envoyRegistry();
  for (const f of FILES) docs.set(f, await yamlFile(f));
  edgeRules = await edgeRuleSet();
  kubernetesRules = (await loadConfig(join(repo, "config"), { schema: FULL_SCHEMA })).ruleSet;
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

  it("inserts the ratelimit filter before the router, calling tollgate through Istio's mesh cluster for its Service", () => {
    const all = patches(FILES[0] ?? "");
    const [filter] = all;
    expect(at(filter, "patch", "operation")).toBe("INSERT_BEFORE");
    expect(at(filter, "match", "listener", "filterChain", "filter", "subFilter", "name")).toBe(
      "envoy.filters.http.router",
    );
    const rl = at(filter, "patch", "value", "typed_config");
    expect(at(rl, "domain")).toBe("edge");
    expect(at(rl, "timeout")).toBe("0.02s");
    expect(at(rl, "failure_mode_deny")).toBe(false);
    expect(at(rl, "enable_x_ratelimit_headers")).toBe("OFF");
    // Istio's own cluster for Service tollgate.tollgate port 8081 (HTTP/2 from appProtocol grpc, EDS,
    // mesh mTLS): no cluster of our own, which is plaintext and bypasses the mesh.
    expect(at(rl, "rate_limit_service", "grpc_service", "envoy_grpc")).toEqual({
      cluster_name: "outbound|8081||tollgate.tollgate.svc.cluster.local",
      authority: "tollgate.tollgate.svc.cluster.local",
    });
    expect(all.map((p) => at(p, "applyTo"))).toEqual(["HTTP_FILTER"]);
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
    // The rules deploy/kubernetes mounts (config/) limit the same descriptors, for any tenant.
    const other = [["tenant=globex", `route_class=${cls}`]];
    expect(rulePathFor(kubernetesRules, other[0] ?? [])).toBe(`edge.tenant.route_class_${cls}`);
  });
});

describe("the edge rules the gateway's descriptors meet", () => {
  it("limit only the route classes the gateway sends", () => {
    expect(rulePathFor(edgeRules, ["tenant=acme", "route_class=read"])).toBe("edge.tenant.route_class_read");
    expect(rulePathFor(edgeRules, ["tenant=acme", "route_class=admin"])).toBeUndefined();
    expect(rulePathFor(edgeRules, ["tenant=acme"])).toBeUndefined();
  });
});
