import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, posix } from "node:path";
import { promisify } from "node:util";
import type { JsonObject } from "@bufbuild/protobuf";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { SETTINGS } from "../../src/settings.js";
import { asArray, asObject, at, firstEndpoint, repo, yamlFile } from "./files.js";

let compose: JsonObject;
const service = (name: string) => asObject(at(compose, "services", name), `service ${name}`);

beforeAll(async () => {
  // Compose resolves `<<:` merge keys, so the test does too.
  compose = asObject(
    parse(await readFile(join(repo, "docker-compose.yml"), "utf8"), { merge: true }),
    "compose",
  );
});

interface Mount {
  readonly source: string;
  readonly target: string;
}
function mounts(name: string): Mount[] {
  const volumes = service(name).volumes;
  return (volumes === undefined ? [] : asArray(volumes, "volumes")).map((v) => {
    const [source = "", target = ""] = String(v).split(":");
    return { source, target };
  });
}
/** The repo file mounted at `target` in service `name`. */
function mountedFrom(name: string, target: string): string {
  const m = mounts(name).find((x) => x.target === target);
  if (m === undefined) throw new Error(`${name} mounts nothing at ${target}`);
  return posix.normalize(m.source);
}
function port(addr: string): number {
  return Number(addr.slice(addr.lastIndexOf(":") + 1));
}
function publishes(name: string, p: number): boolean {
  const ports = service(name).ports;
  return ports !== undefined && asArray(ports, "ports").some((x) => String(x).endsWith(`:${p}`));
}
function commandArgs(name: string): string[] {
  return asArray(at(service(name), "command"), "command").map(String);
}
function env(name: string, key: string): string {
  return String(at(service(name), "environment", key));
}

describe("docker-compose.yml", () => {
  it("runs Redis, tollgate, Envoy, an echo upstream, Prometheus and Grafana, plus a cluster profile", () => {
    const names = Object.keys(asObject(at(compose, "services"), "services"));
    for (const n of ["redis", "tollgate", "envoy", "echo", "prometheus", "grafana"])
      expect(names).toContain(n);
    const cluster = names.filter((n) => asArray(service(n).profiles ?? [], "profiles").includes("cluster"));
    expect(cluster.sort()).toEqual(["redis-cluster-init", "redis-node-1", "redis-node-2", "redis-node-3"]);
    const extAuthz = names.filter((n) =>
      asArray(service(n).profiles ?? [], "profiles").includes("ext-authz"),
    );
    expect(extAuthz).toEqual(["envoy-ext-authz"]);
  });

  it("mounts only files and directories that exist in the repository", () => {
    const missing: string[] = [];
    for (const name of Object.keys(asObject(at(compose, "services"), "services"))) {
      for (const m of mounts(name))
        if (m.source.startsWith(".") && !existsSync(join(repo, m.source))) missing.push(m.source);
      const build = service(name).build;
      if (build !== undefined && !existsSync(join(repo, String(build), "Dockerfile")))
        missing.push(`${String(build)}/Dockerfile`);
    }
    expect(missing).toEqual([]);
  });

  it("builds tollgate from a Dockerfile whose COPY sources exist", async () => {
    const dockerfile = await readFile(join(repo, "Dockerfile"), "utf8");
    const sources = [...dockerfile.matchAll(/^COPY\s+(?!--from)(.+)$/gm)].flatMap((m) =>
      (m[1] ?? "").trim().split(/\s+/).slice(0, -1),
    );
    expect(sources.length).toBeGreaterThan(3);
    expect(sources.filter((s) => !existsSync(join(repo, s)))).toEqual([]);
  });

  it("gives tollgate its rules and addresses through setting env vars that src/settings.ts defines", () => {
    const names = new Set(Object.values(SETTINGS).map((s) => s.env));
    for (const key of Object.keys(asObject(at(service("tollgate"), "environment"), "environment")))
      expect(names).toContain(key);
    expect(mountedFrom("tollgate", env("tollgate", SETTINGS.config.env))).toBe("envoy/config");
    expect(port(env("tollgate", SETTINGS.grpcAddr.env))).toBe(port(SETTINGS.grpcAddr.default));
    expect(port(env("tollgate", SETTINGS.httpAddr.env))).toBe(port(SETTINGS.httpAddr.default));
  });

  it.each([
    ["envoy", "envoy/envoy.yaml"],
    ["envoy-ext-authz", "envoy/envoy-ext-authz-header.yaml"],
  ])("starts %s on %s, whose clusters reach compose services on the ports they listen on", async (name, file) => {
    const args = commandArgs(name);
    const configPath = args[args.indexOf("-c") + 1] ?? "";
    expect(mountedFrom(name, configPath)).toBe(file);
    const bootstrap = await yamlFile(file);
    const listens: Record<string, number> = {
      tollgate: port(env("tollgate", SETTINGS.grpcAddr.env)),
      echo: port(commandArgs("echo").find((a) => a.startsWith("-listen=")) ?? ""),
    };
    for (const c of asArray(at(bootstrap, "static_resources", "clusters"), "clusters")) {
      const addr = firstEndpoint(c);
      const host = String(at(addr, "address"));
      expect(Object.keys(asObject(at(compose, "services"), "services"))).toContain(host);
      expect(at(addr, "port_value")).toBe(listens[host]);
    }
    expect(
      publishes(
        name,
        Number(at(bootstrap, "static_resources", "listeners", 0, "address", "socket_address", "port_value")),
      ),
    ).toBe(true);
  });

  it("has Prometheus scrape tollgate's HTTP port at /metrics and load the mounted alert rules", async () => {
    const configFile =
      commandArgs("prometheus")
        .find((a) => a.startsWith("--config.file="))
        ?.split("=")[1] ?? "";
    expect(mountedFrom("prometheus", configFile)).toBe("envoy/prometheus/prometheus.yml");
    const prom = await yamlFile("envoy/prometheus/prometheus.yml");
    const job = asArray(at(prom, "scrape_configs"), "scrape_configs").find(
      (j) => at(j, "job_name") === "tollgate",
    );
    expect(at(job, "metrics_path")).toBe("/metrics");
    expect(at(job, "static_configs", 0, "targets")).toEqual([
      `tollgate:${port(env("tollgate", SETTINGS.httpAddr.env))}`,
    ]);
    for (const rules of asArray(at(prom, "rule_files"), "rule_files")) {
      const inContainer = posix.join(posix.dirname(configFile), String(rules));
      expect(mountedFrom("prometheus", inContainer)).toBe("envoy/prometheus/alerts.yaml");
    }
  });

  it.skipIf(!existsSync("/usr/bin/promtool") && process.env.CI === undefined)(
    "has a prometheus.yml that promtool accepts",
    async () => {
      const { stdout } = await promisify(execFile)("promtool", [
        "check",
        "config",
        join(repo, "envoy/prometheus/prometheus.yml"),
      ]);
      expect(stdout).toContain("is valid prometheus config file syntax");
    },
  );

  it("provisions Grafana with the compose Prometheus and the tollgate dashboard", async () => {
    const ds = await yamlFile("envoy/grafana/provisioning/datasources/prometheus.yaml");
    const url = new URL(String(at(ds, "datasources", 0, "url")));
    expect(url.hostname).toBe("prometheus");
    expect(publishes("prometheus", Number(url.port))).toBe(true);
    const provider = await yamlFile("envoy/grafana/provisioning/dashboards/tollgate.yaml");
    const dir = String(at(provider, "providers", 0, "options", "path"));
    expect(mountedFrom("grafana", posix.join(dir, "tollgate.json"))).toBe("envoy/grafana/tollgate.json");
    expect(mountedFrom("grafana", "/etc/grafana/provisioning")).toBe("envoy/grafana/provisioning");
  });

  it("joins the three cluster nodes on the ports they listen on", () => {
    const init = commandArgs("redis-cluster-init").join(" ");
    for (const n of [1, 2, 3]) {
      const args = commandArgs(`redis-node-${n}`);
      const p = args[args.indexOf("--port") + 1];
      expect(args).toContain("--cluster-enabled");
      expect(init).toContain(`redis-node-${n} | cut -d' ' -f1):${p}`);
    }
  });
});
