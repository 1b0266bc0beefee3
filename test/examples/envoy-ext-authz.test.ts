import { readFile } from "node:fs/promises";
import type { JsonObject } from "@bufbuild/protobuf";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { decodeEnvoyJson, envoyRegistry } from "../helpers/envoy-protos.js";

const BOOTSTRAP = "envoy.config.bootstrap.v3.Bootstrap";
let bootstrap: JsonObject;

/** Follow a path of keys and indexes into JSON. */
function at(v: unknown, ...path: (string | number)[]): unknown {
  return path.reduce<unknown>((o, k) => (o as Record<string | number, unknown> | undefined)?.[k], v);
}

const hcm = () =>
  at(bootstrap, "static_resources", "listeners", 0, "filter_chains", 0, "filters", 0, "typed_config");
const filters = () => at(hcm(), "http_filters") as JsonObject[];
const extAuthz = () =>
  filters().find((f) => f.name === "envoy.filters.http.ext_authz")?.typed_config as JsonObject;

beforeAll(async () => {
  await envoyRegistry();
  bootstrap = parse(await readFile("envoy/envoy-ext-authz.yaml", "utf8")) as JsonObject;
}, 120_000);

describe("envoy/envoy-ext-authz.yaml", () => {
  it("decodes as an Envoy v3 Bootstrap with every typed_config resolved", async () => {
    await expect(decodeEnvoyJson(BOOTSTRAP, bootstrap)).resolves.toBeDefined();
  });

  it("is rejected when an ext_authz field is misspelled", async () => {
    const typo = structuredClone(bootstrap);
    const cfg = (
      at(
        typo,
        "static_resources",
        "listeners",
        0,
        "filter_chains",
        0,
        "filters",
        0,
        "typed_config",
        "http_filters",
      ) as JsonObject[]
    )[1]?.typed_config as JsonObject;
    cfg.failure_mode_alow = true;
    await expect(decodeEnvoyJson(BOOTSTRAP, typo)).rejects.toThrow(/failure_mode_alow/);
  });

  it("verifies the JWT before ext_authz and routes last", () => {
    expect(filters().map((f) => f.name)).toEqual([
      "envoy.filters.http.jwt_authn",
      "envoy.filters.http.ext_authz",
      "envoy.filters.http.router",
    ]);
  });

  it("calls tollgate over gRPC with a timeout, fails open and forwards the jwt_authn metadata", () => {
    expect(extAuthz()).toMatchObject({
      transport_api_version: "V3",
      grpc_service: { envoy_grpc: { cluster_name: "tollgate" }, timeout: "0.02s" },
      failure_mode_allow: true,
      metadata_context_namespaces: ["envoy.filters.http.jwt_authn"],
    });
    const jwt = filters()[0]?.typed_config as JsonObject;
    expect(at(jwt, "providers", "idp", "payload_in_metadata")).toBe("jwt_payload");
  });

  it("talks HTTP/2 to the tollgate cluster", () => {
    const clusters = at(bootstrap, "static_resources", "clusters") as JsonObject[];
    const tollgate = clusters.find((c) => c.name === "tollgate");
    expect(
      at(
        tollgate,
        "typed_extension_protocol_options",
        "envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
        "explicit_http_config",
      ),
    ).toEqual({ http2_protocol_options: {} });
  });

  it("selects tollgate's domain per route through context_extensions", () => {
    const route = at(
      hcm(),
      "route_config",
      "virtual_hosts",
      0,
      "routes",
      1,
      "typed_per_filter_config",
      "envoy.filters.http.ext_authz",
    );
    expect(at(route, "check_settings", "context_extensions")).toEqual({ domain: "edge" });
  });
});
