import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JsonObject } from "@bufbuild/protobuf";
import { create } from "@bufbuild/protobuf";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { loadConfig } from "../../src/config/load.js";
import { loadServingConfig } from "../../src/config/serving.js";
import { HealthCheckRequestSchema } from "../../src/gen/grpc/health/v1/health_pb.js";
import { HealthState, healthMethod } from "../../src/protocol/health.js";
import { loadSettings, parseDuration, SETTINGS } from "../../src/settings.js";
import { validationOptionsOf } from "../../src/validation.js";
import { imagePath, readDockerfile } from "./dockerfile.js";
import { asArray, asObject, at, repo } from "./files.js";
import { id, OVERLAYS, one, schemaErrors, unknownFields } from "./kubernetes.js";
import {
  container,
  deployment,
  egressPorts,
  env,
  envValue,
  ingressPorts,
  kubectl,
  labelsMatch,
  list,
  objects,
  podLabels,
  podSpec,
  renderOverlays,
} from "./overlays.js";

const version = (JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as { version: string }).version;
const docker = readDockerfile();
const CLUSTER_SCOPED = new Set(["Namespace"]);

beforeAll(renderOverlays, 60_000);

describe.skipIf(!kubectl)("deploy/kubernetes overlays (kubectl kustomize)", () => {
  it.each(
    OVERLAYS,
  )("%s validates against the Kubernetes, Istio and Prometheus Operator schemas", async (o) => {
    expect(objects(o).length).toBeGreaterThanOrEqual(6);
    expect((await Promise.all(objects(o).map(schemaErrors))).flat()).toEqual([]);
  });

  it("uses no field that a schema does not define, in any overlay", async () => {
    const unique = new Map<string, JsonObject>();
    for (const o of OVERLAYS) for (const obj of objects(o)) unique.set(JSON.stringify(obj), obj);
    expect(await unknownFields("overlays", [...unique.values()])).toEqual([]);
  }, 60_000);

  it("would reject a misspelled field and a wrongly typed value", async () => {
    const bad = structuredClone(deployment("redis"));
    const c = asObject(at(bad, "spec", "template", "spec", "containers", 0), "container");
    c.readinesProbe = c.readinessProbe ?? {};
    asObject(at(bad, "spec"), "spec").replicas = "3";
    expect(await schemaErrors(bad)).toEqual([expect.stringMatching(/spec\/replicas must be integer/)]);
    const typo = await unknownFields("typo", [bad]);
    expect(typo.some((e) => e.includes("'\"readinesProbe\"' does not exist"))).toBe(true);
  }, 60_000);

  it.each(OVERLAYS)("%s puts every namespaced object in an explicit namespace", (o) => {
    const missing = objects(o).filter(
      (obj) =>
        !CLUSTER_SCOPED.has(String(obj.kind)) && asObject(at(obj, "metadata"), "m").namespace === undefined,
    );
    expect(missing.map(id)).toEqual([]);
  });

  it.each(OVERLAYS)("%s selects the Deployment's pods from the Service, PDB, NetworkPolicy and HPA", (o) => {
    const objs = objects(o);
    const labels = podLabels(o);
    expect(labelsMatch(at(deployment(o), "spec", "selector", "matchLabels"), labels)).toBe(true);
    expect(labelsMatch(at(one(objs, "Service", "tollgate"), "spec", "selector"), labels)).toBe(true);
    expect(labelsMatch(at(one(objs, "NetworkPolicy"), "spec", "podSelector", "matchLabels"), labels)).toBe(
      true,
    );
    for (const pdb of objs.filter((x) => x.kind === "PodDisruptionBudget"))
      expect(labelsMatch(at(pdb, "spec", "selector", "matchLabels"), labels)).toBe(true);
    for (const hpa of objs.filter((x) => x.kind === "HorizontalPodAutoscaler"))
      expect(at(hpa, "spec", "scaleTargetRef")).toEqual({
        apiVersion: "apps/v1",
        kind: "Deployment",
        name: "tollgate",
      });
    for (const pa of objs.filter((x) => x.kind === "PeerAuthentication"))
      expect(labelsMatch(at(pa, "spec", "selector", "matchLabels"), labels)).toBe(true);
  });

  it.each(
    OVERLAYS,
  )("%s serves gRPC on a port named grpc with appProtocol grpc, on the ports the settings and Dockerfile use", (o) => {
    const service = one(objects(o), "Service", "tollgate");
    const ports = new Map(list(at(service, "spec", "ports")).map((p) => [String(p.name), p]));
    const containerPorts = new Map(
      list(container(o).ports).map((p) => [String(p.name), Number(p.containerPort)]),
    );
    const grpcPort = Number(SETTINGS.grpcAddr.default.split(":")[1]);
    const httpPort = Number(SETTINGS.httpAddr.default.split(":")[1]);
    expect(ports.get("grpc")).toMatchObject({ port: grpcPort, targetPort: "grpc", appProtocol: "grpc" });
    expect(ports.get("http")).toMatchObject({ port: httpPort, targetPort: "http" });
    expect(containerPorts).toEqual(
      new Map([
        ["grpc", grpcPort],
        ["http", httpPort],
      ]),
    );
    // The image bakes no address (it would shadow a drop-in Deployment's PORT/GRPC_PORT): the
    // Deployment sets both, on the ports the image exposes.
    for (const [name, addr] of [
      [SETTINGS.grpcAddr.env, grpcPort],
      [SETTINGS.httpAddr.env, httpPort],
    ] as const) {
      expect(Number(envValue(o, name).split(":")[1])).toBe(addr);
      expect(docker.exposed).toContain(addr);
    }
    expect([...ingressPorts(o).keys()]).toEqual(expect.arrayContaining([grpcPort, httpPort]));
  });

  it.each(
    OVERLAYS,
  )("%s mounts the rules as a directory at the image's default config path, set explicitly, from the generated ConfigMap", (o) => {
    const path = imagePath(docker, SETTINGS.config.default);
    expect(envValue(o, SETTINGS.config.env)).toBe(path);
    const mount = list(container(o).volumeMounts).find((m) => m.mountPath === path);
    expect(mount?.subPath).toBeUndefined();
    expect(mount?.readOnly).toBe(true);
    const volume = list(podSpec(o).volumes).find((v) => v.name === mount?.name);
    const configMap = one(objects(o), "ConfigMap", String(at(volume, "configMap", "name")));
    expect(configMap).toBeDefined();
  });

  it("fills the ConfigMap with config/'s rule files as they are, every one of them, and serve loads them with the Deployment's settings", async () => {
    const data = asObject(at(one(objects("redis"), "ConfigMap", "tollgate-config"), "data"), "data");
    const files = readdirSync(join(repo, "config")).filter((f) => /\.ya?ml$/.test(f));
    expect(Object.keys(data).sort()).toEqual(files.sort());
    const mounted = await mkdtemp(join(tmpdir(), "tollgate-configmap-"));
    try {
      for (const f of files) {
        expect(data[f]).toBe(readFileSync(join(repo, "config", f), "utf8"));
        await writeFile(join(mounted, f), String(data[f]));
      }
      // Read as serve reads the mount (rules, ext_authz and tiers sections), with the settings the
      // Deployment's literal environment gives.
      const literal = [...env("redis")].filter(([, e]) => e.value !== undefined);
      const settings = loadSettings([], Object.fromEntries(literal.map(([k, e]) => [k, String(e.value)])));
      const config = await loadServingConfig((o) => loadConfig(mounted, o), validationOptionsOf(settings));
      expect(config.rules.files.length).toBe(files.length);
      expect(config.rules.domains.size).toBeGreaterThan(0);
    } finally {
      await rm(mounted, { recursive: true, force: true });
    }
  });

  it.each(
    OVERLAYS,
  )("%s gives a drain (preStop + drain timeout + a workers primary's 5 s) less time than the grace period", (o) => {
    const preStop = Number(at(container(o), "lifecycle", "preStop", "sleep", "seconds"));
    const drainMs = parseDuration(envValue(o, SETTINGS.drainTimeout.env)) ?? Number.NaN;
    const grace = Number(at(podSpec(o), "terminationGracePeriodSeconds"));
    expect(preStop).toBeGreaterThan(0);
    expect(preStop + drainMs / 1000 + 5).toBeLessThan(grace);
    const proxy = asObject(at(deployment(o), "spec", "template", "metadata"), "meta").annotations;
    const istio = proxy === undefined ? undefined : asObject(proxy, "annotations")["proxy.istio.io/config"];
    if (istio !== undefined) {
      const drain = parseDuration(String(at(parse(String(istio)), "terminationDrainDuration"))) ?? Number.NaN;
      expect(drain / 1000).toBeGreaterThanOrEqual(preStop + drainMs / 1000);
      expect(drain / 1000).toBeLessThan(grace);
    }
  });

  it.each(
    OVERLAYS,
  )("%s probes readiness through gRPC health on the grpc port and liveness on /livez, which stays up while draining", async (o) => {
    const c = container(o);
    const readiness = asObject(at(c, "readinessProbe"), "readiness");
    expect(at(readiness, "grpc", "port")).toBe(Number(SETTINGS.grpcAddr.default.split(":")[1]));
    // The service name is one tollgate's health method answers (an unknown one is NOT_FOUND).
    const state = new HealthState();
    state.setServing(true);
    const answer = await healthMethod(state).handle(
      create(HealthCheckRequestSchema, { service: String(at(readiness, "grpc", "service")) }),
      {} as never,
    );
    expect(answer.status).toBe(1);
    expect(at(c, "livenessProbe", "httpGet")).toEqual({ path: "/livez", port: "http" });
    expect(at(c, "startupProbe", "httpGet")).toEqual({ path: "/livez", port: "http" });
  });

  it.each(
    OVERLAYS,
  )("%s runs non-root as the Dockerfile's user, read-only, without capabilities, under RuntimeDefault seccomp", (o) => {
    const [uid, gid] = docker.user.split(":").map(Number);
    expect(at(podSpec(o), "securityContext")).toMatchObject({
      runAsNonRoot: true,
      runAsUser: uid,
      runAsGroup: gid,
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(at(container(o), "securityContext")).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ["ALL"] },
    });
    expect(podSpec(o).automountServiceAccountToken).toBe(false);
    expect(podSpec(o).enableServiceLinks).toBe(false);
  });

  it.each(OVERLAYS)("%s spreads pods across zones and requests CPU and memory with a memory limit", (o) => {
    const keys = list(podSpec(o).topologySpreadConstraints).map((t) => t.topologyKey);
    expect(keys).toContain("topology.kubernetes.io/zone");
    const resources = asObject(at(container(o), "resources"), "resources");
    expect(Object.keys(asObject(at(resources, "requests"), "requests")).sort()).toEqual(["cpu", "memory"]);
    expect(Object.keys(asObject(at(resources, "limits"), "limits"))).toEqual(["memory"]);
  });

  it.each(OVERLAYS)("%s runs the image of this release and names only settings that exist", (o) => {
    expect(at(container(o), "image")).toBe(`tollgate:${version}`);
    expect(asObject(podLabels(o), "labels")["app.kubernetes.io/version"]).toBe(version);
    const names = new Set(Object.values(SETTINGS).map((s) => s.env));
    for (const name of env(o).keys()) expect(names).toContain(name);
  });

  it("runs the memory store as exactly one pod, without autoscaler or disruption budget", () => {
    expect(at(deployment("memory"), "spec", "replicas")).toBe(1);
    expect(envValue("memory", SETTINGS.store.env)).toBe("memory");
    expect(
      objects("memory").filter(
        (x) => x.kind === "HorizontalPodAutoscaler" || x.kind === "PodDisruptionBudget",
      ),
    ).toEqual([]);
    expect(egressPorts("memory")).toEqual([53, 53]);
  });

  it.each([
    "redis",
    "redis-cluster",
    "istio",
    "istio-ambient",
    "prometheus-operator",
  ])("%s reads the store URL from a Secret, reaches Redis' port, and scales from three pods", (o) => {
    expect(at(env(o).get(SETTINGS.store.env), "valueFrom", "secretKeyRef")).toEqual({
      name: "tollgate-redis",
      key: "url",
    });
    expect(egressPorts(o)).toContain(6379);
    expect(
      Number(at(one(objects(o), "HorizontalPodAutoscaler"), "spec", "minReplicas")),
    ).toBeGreaterThanOrEqual(3);
    expect(at(one(objects(o), "PodDisruptionBudget"), "spec", "maxUnavailable")).toBe(1);
    expect(deployment(o).spec).not.toHaveProperty("replicas");
  });
});

describe("config/Kustomization", () => {
  it("lists every rule file of config/, so none is left out of the ConfigMap", () => {
    const kustomization = parse(readFileSync(join(repo, "config/Kustomization"), "utf8"));
    const generator = asObject(at(kustomization, "configMapGenerator", 0), "generator");
    const listed = asArray(at(generator, "files"), "files").map(String).sort();
    expect(listed).toEqual(
      readdirSync(join(repo, "config"))
        .filter((f) => /\.ya?ml$/.test(f))
        .sort(),
    );
    expect(at(generator, "options", "disableNameSuffixHash")).toBe(true);
  });
});
