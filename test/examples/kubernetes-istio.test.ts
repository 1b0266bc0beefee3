import type { JsonObject } from "@bufbuild/protobuf";
import { beforeAll, describe, expect, it } from "vitest";
import { at } from "./files.js";
import { one } from "./kubernetes.js";
import { egressPorts, ingressPorts, kubectl, list, objects, renderOverlays } from "./overlays.js";

beforeAll(renderOverlays, 60_000);

describe.skipIf(!kubectl)("deploy/kubernetes with Istio", () => {
  /** The rate limit service an EnvoyFilter's HTTP_FILTER patch calls. */
  const grpcService = (filter: JsonObject) =>
    at(
      filter,
      "spec",
      "configPatches",
      0,
      "patch",
      "value",
      "typed_config",
      "rate_limit_service",
      "grpc_service",
      "envoy_grpc",
    );

  it.each([
    "istio",
    "istio-ambient",
  ])("%s calls tollgate through the mesh cluster Istio builds for the rendered Service", (o) => {
    const service = one(objects(o), "Service", "tollgate");
    const fqdn = `${String(at(service, "metadata", "name"))}.${String(at(service, "metadata", "namespace"))}.svc.cluster.local`;
    const grpc = list(at(service, "spec", "ports")).find((p) => p.name === "grpc");
    const filter = one(objects(o), "EnvoyFilter", "tollgate-ratelimit-filter");
    expect(grpcService(filter)).toEqual({
      cluster_name: `outbound|${String(grpc?.port)}||${fqdn}`,
      authority: fqdn,
    });
    const patches = list(at(filter, "spec", "configPatches"));
    expect(patches.filter((p) => p.applyTo === "CLUSTER")).toEqual([]);
  });

  it("lets only the gateway's namespace reach the gRPC port, with sidecars, and gives the proxy istiod", () => {
    const filterNamespace = at(
      one(objects("istio"), "EnvoyFilter", "tollgate-ratelimit-filter"),
      "metadata",
      "namespace",
    );
    expect(ingressPorts("istio").get(8081)).toEqual([filterNamespace]);
    expect(egressPorts("istio")).toContain(15012);
    expect(at(one(objects("istio"), "Namespace"), "metadata", "labels", "istio-injection")).toBe("enabled");
    expect(at(one(objects("istio"), "PeerAuthentication"), "spec", "mtls", "mode")).toBe("STRICT");
  });

  it("attaches the ambient EnvoyFilters to a Gateway API gateway in their own namespace, and opens HBONE", () => {
    for (const f of objects("istio-ambient").filter((x) => x.kind === "EnvoyFilter")) {
      expect(at(f, "spec")).not.toHaveProperty("workloadSelector");
      expect(at(f, "spec", "targetRefs", 0)).toMatchObject({
        group: "gateway.networking.k8s.io",
        kind: "Gateway",
      });
    }
    expect(ingressPorts("istio-ambient").get(15008)).toEqual(["*"]);
    expect(egressPorts("istio-ambient")).toContain(15008);
    expect(
      at(one(objects("istio-ambient"), "Namespace"), "metadata", "labels", "istio.io/dataplane-mode"),
    ).toBe("ambient");
  });
});
