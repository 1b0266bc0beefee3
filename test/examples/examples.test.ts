/**
 * Every Envoy / Istio / compose example runs with the tollgate config it is paired with: tollgate is
 * started on that config, and a request is sent the way that Envoy configuration would send it
 * (descriptors from its rate_limits actions and domain, or a CheckRequest with its context
 * extensions and forwarded metadata) through the official Envoy protos, until it is denied: OK
 * first, then the 429 with Retry-After.
 */
import { join } from "node:path";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, startApp } from "../../src/app.js";
import { loadSettings } from "../../src/settings.js";
import { decodeEnvoyJson, envoyRegistry } from "../helpers/envoy-protos.js";
import {
  createCheckClient,
  type OfficialCheckResponse,
  pbStruct,
} from "../helpers/ext-authz-check-client.js";
import { createRlsClient, type OfficialRateLimitResponse } from "../helpers/official-client.js";
import { asArray, asObject, at, descriptors, type Req, repo, selectRoute, yamlFile } from "./files.js";

const apps: App[] = [];
beforeAll(async () => {
  await envoyRegistry();
}, 120_000);
afterAll(async () => {
  for (const a of apps) await a.shutdown();
});

/** tollgate on `config` (a directory or file), memory store, free ports. */
async function serve(config: string): Promise<string> {
  const settings = loadSettings(
    ["--config", config, "--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0"],
    {},
  );
  const app = await startApp(settings, pino({ level: "silent" }));
  apps.push(app);
  return `127.0.0.1:${app.grpcAddress.port}`;
}

const hcmOf = (bootstrap: JsonObject) =>
  at(bootstrap, "static_resources", "listeners", 0, "filter_chains", 0, "filters", 0, "typed_config");
const filterOf = (hcm: JsonValue, name: string) =>
  asArray(at(hcm, "http_filters"), "http_filters").find((f) => at(f, "name") === name);
const routesOf = (hcm: JsonValue) => asArray(at(hcm, "route_config", "virtual_hosts", 0, "routes"), "routes");

/**
 * The export route: 10 an hour per tenant in envoy/config and envoy/config-jwt, so the 11th request
 * is denied; 20 a minute for tenant acme in config/ (what deploy/kubernetes mounts).
 */
const EXPORT: Req = { method: "POST", path: "/export/report.csv", headers: { "x-tenant-id": "acme" } };

/** Ask until denied (at most 30 times); returns every answer. */
async function untilDenied<T>(ask: () => Promise<T>, denied: (r: T) => boolean): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < 30; i++) {
    const r = await ask();
    out.push(r);
    if (denied(r)) break;
  }
  return out;
}

/** How many requests a pairing admits before the first denial. */
interface Pairing {
  readonly allowed: number;
}

function expectRlsDenial(answers: OfficialRateLimitResponse[], { allowed }: Pairing): void {
  expect(answers.map((a) => a.overall_code)).toEqual([...Array<string>(allowed).fill("OK"), "OVER_LIMIT"]);
  const headers = Object.fromEntries(
    (answers.at(-1)?.response_headers_to_add ?? []).map((h) => [h.key, h.value]),
  );
  expect(Number(headers["Retry-After"])).toBeGreaterThanOrEqual(1);
}

/** Send ShouldRateLimit as Envoy would for `req` given its rate_limits and domain. */
async function rlsPairing(
  address: string,
  domain: string,
  rateLimits: JsonValue[],
  pairing: Pairing = { allowed: 10 },
): Promise<void> {
  const sent = descriptors(rateLimits, EXPORT);
  expect(sent).toEqual([["tenant=acme", "route_class=export"]]);
  const request = {
    domain,
    descriptors: sent.map((entries) => ({
      entries: entries.map((e) => ({ key: e.slice(0, e.indexOf("=")), value: e.slice(e.indexOf("=") + 1) })),
    })),
  };
  const client = createRlsClient(address);
  try {
    expectRlsDenial(
      await untilDenied(
        () => client.shouldRateLimit(request),
        (r) => r.overall_code !== "OK",
      ),
      pairing,
    );
  } finally {
    client.close();
  }
}

/** The CheckRequest Envoy's ext_authz filter (as `bootstrap` configures it) sends for `req`. */
function checkRequest(
  bootstrap: JsonObject,
  req: Req,
  jwtPayload: Record<string, unknown> | undefined,
): object {
  const hcm = hcmOf(bootstrap);
  const extAuthz = at(filterOf(hcm, "envoy.filters.http.ext_authz"), "typed_config");
  const route = selectRoute(routesOf(hcm), req);
  const perRoute = at(route, "typed_per_filter_config", "envoy.filters.http.ext_authz");
  const namespaces = asArray(asObject(extAuthz, "ext_authz").metadata_context_namespaces ?? [], "namespaces");
  const metadata: Record<string, object> = {};
  const jwtFilter = filterOf(hcm, "envoy.filters.http.jwt_authn");
  if (
    jwtFilter !== undefined &&
    jwtPayload !== undefined &&
    namespaces.includes("envoy.filters.http.jwt_authn")
  ) {
    const providers = asObject(at(jwtFilter, "typed_config", "providers"), "providers");
    const key = String(at(Object.values(providers)[0], "payload_in_metadata"));
    metadata["envoy.filters.http.jwt_authn"] = pbStruct({ [key]: jwtPayload });
  }
  return {
    attributes: {
      source: { address: { socket_address: { address: "203.0.113.7", port_value: 50000 } } },
      request: {
        http: {
          method: req.method,
          path: req.path,
          host: "api.example.com",
          headers: {
            ":method": req.method,
            ":path": req.path,
            ":authority": "api.example.com",
            ...req.headers,
          },
        },
      },
      context_extensions: asObject(
        at(perRoute, "check_settings", "context_extensions"),
        "context_extensions",
      ),
      metadata_context: { filter_metadata: metadata },
    },
  };
}

async function extAuthzPairing(address: string, request: object): Promise<OfficialCheckResponse[]> {
  const client = createCheckClient(address);
  try {
    const answers = await untilDenied(
      () => client.check(request),
      (r) => (r.status?.code ?? 0) !== 0,
    );
    expect(answers.map((a) => a.status?.code ?? 0)).toEqual([...Array<number>(10).fill(0), 8]);
    expect(answers[0]?.ok_response?.response_headers_to_add?.map((h) => h.header?.key)).toContain(
      "X-RateLimit-Remaining",
    );
    const denied = answers.at(-1)?.denied_response;
    expect(denied?.status?.code).toBe("TooManyRequests");
    const retry = denied?.headers?.find((h) => h.header?.key === "Retry-After")?.header?.value;
    expect(Number(retry)).toBeGreaterThanOrEqual(1);
    return answers;
  } finally {
    await client.close();
  }
}

describe("examples and their tollgate configs, end to end", () => {
  it.each([
    "envoy/envoy.yaml",
    "envoy/envoy-ext-authz.yaml",
    "envoy/envoy-ext-authz-header.yaml",
  ])("%s decodes as an Envoy v3 Bootstrap", async (file) => {
    await expect(
      decodeEnvoyJson("envoy.config.bootstrap.v3.Bootstrap", await yamlFile(file)),
    ).resolves.toBeDefined();
  });

  it("envoy/envoy.yaml (RLS, docker compose) with envoy/config", async () => {
    const bootstrap = await yamlFile("envoy/envoy.yaml");
    const hcm = hcmOf(bootstrap);
    const domain = String(at(filterOf(hcm, "envoy.filters.http.ratelimit"), "typed_config", "domain"));
    const route = selectRoute(routesOf(hcm), EXPORT);
    await rlsPairing(
      await serve(join(repo, "envoy/config")),
      domain,
      asArray(at(route, "route", "rate_limits"), "rl"),
    );
  });

  it("envoy/istio EnvoyFilters (RLS) with config/, the ConfigMap deploy/kubernetes generates", async () => {
    const filter = await yamlFile("envoy/istio/ratelimit-filter.yaml");
    const actions = await yamlFile("envoy/istio/ratelimit-actions.yaml");
    const domain = String(at(filter, "spec", "configPatches", 0, "patch", "value", "typed_config", "domain"));
    const rateLimits = asArray(
      at(actions, "spec", "configPatches", 0, "patch", "value", "rate_limits"),
      "rl",
    );
    // config/Kustomization turns config/ into the ConfigMap unchanged (kubernetes.test.ts checks it
    // byte for byte). acme's exports: 20 a minute, GCRA: one token back every 3 s, far longer
    // than 21 local calls take.
    await rlsPairing(await serve(join(repo, "config")), domain, rateLimits, { allowed: 20 });
  });

  it("envoy/envoy-ext-authz-header.yaml (ext_authz, compose profile ext-authz) with envoy/config", async () => {
    const bootstrap = await yamlFile("envoy/envoy-ext-authz-header.yaml");
    const address = await serve(join(repo, "envoy/config"));
    await extAuthzPairing(address, checkRequest(bootstrap, EXPORT, undefined));
  });

  it("envoy/envoy-ext-authz.yaml (ext_authz with JWT) with envoy/config-jwt, trusting only the verified payload", async () => {
    const bootstrap = await yamlFile("envoy/envoy-ext-authz.yaml");
    const address = await serve(join(repo, "envoy/config-jwt"));
    // A client-set x-tenant-id is not where this config reads the tenant.
    const req: Req = { ...EXPORT, headers: { "x-tenant-id": "mallory" } };
    await extAuthzPairing(
      address,
      checkRequest(bootstrap, req, { iss: "https://idp.example.com/", tenant: "acme" }),
    );
    const client = createCheckClient(address);
    try {
      const other = await client.check(
        checkRequest(bootstrap, req, { iss: "https://idp.example.com/", tenant: "globex" }),
      );
      expect(other.status?.code ?? 0).toBe(0);
      const noClaim = await client.check(checkRequest(bootstrap, req, { sub: "u1" }));
      expect(noClaim.denied_response?.status?.code).toBe("BadRequest");
    } finally {
      await client.close();
    }
  });
});
