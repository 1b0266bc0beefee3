import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { SETTINGS } from "../../src/settings.js";
import { imagePath, readDockerfile } from "./dockerfile.js";
import { asObject, at, repo } from "./files.js";

const docker = readDockerfile();
const pkg = JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as {
  version: string;
  license: string;
  engines: { node: string };
};

/** Whether a `>=X[.Y[.Z]]` engines range admits Node `version`. */
function admits(range: string, version: string): boolean {
  const m = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range.trim());
  if (m === null) throw new Error(`engines.node ${JSON.stringify(range)}: only >=X.Y.Z is read here`);
  const want = [m[1], m[2], m[3]].map((p) => Number(p ?? 0));
  const have = version.split(".").map(Number);
  for (let i = 0; i < 3; i++) if ((have[i] ?? 0) !== want[i]) return (have[i] ?? 0) > (want[i] ?? 0);
  return true;
}

describe("Dockerfile", () => {
  it("builds and runs on a Node.js LTS line that is still supported (22 or 24), in every stage", () => {
    expect(docker.bases.length).toBe(2);
    for (const base of docker.bases) expect(base).toMatch(/^node:(22|24)[.\w-]*$/);
  });

  it("keeps package.json engines honest: it admits the image's Node and the Node the tests run on", () => {
    const imageMajor = /^node:(\d+)/.exec(docker.bases[0] ?? "")?.[1] ?? "";
    expect(admits(pkg.engines.node, `${imageMajor}.0.0`)).toBe(true);
    expect(admits(pkg.engines.node, process.versions.node)).toBe(true);
    expect(admits(">=20", "19.9.0")).toBe(false);
  });

  it("labels the image with OCI annotations, the package's version and its license", () => {
    expect(docker.args.get("VERSION")).toBe(pkg.version);
    expect(docker.labels.get("org.opencontainers.image.version")).toMatch(/^\$\{VERSION\}$/);
    expect(docker.labels.get("org.opencontainers.image.licenses")).toBe(pkg.license);
    for (const key of ["title", "description", "revision", "created", "base.name"])
      expect(docker.labels.get(`org.opencontainers.image.${key}`)).toBeTruthy();
    expect(existsSync(join(repo, "LICENSE"))).toBe(true);
  });

  it("runs as a numeric non-root user, so Kubernetes' runAsNonRoot can verify it", () => {
    const [uid, gid] = docker.user.split(":").map(Number);
    expect(uid).toBeGreaterThan(0);
    expect(gid).toBeGreaterThan(0);
  });

  it("has a HEALTHCHECK that runs the built health check script", () => {
    expect(docker.healthcheck).toMatch(/--interval=\d+s .*CMD \["node", "dist\/healthcheck\.js"\]$/);
    expect(existsSync(join(repo, "src/healthcheck.ts"))).toBe(true);
  });

  it("bakes no TOLLGATE_* setting, so a drop-in Deployment's RUNTIME_ROOT, PORT and GRPC_PORT are not shadowed", () => {
    expect([...docker.env.keys()].filter((k) => k.startsWith("TOLLGATE_"))).toEqual([]);
  });

  it("reads the rules from /etc/tollgate/config by default and exposes the default ports and /bin/ratelimit's debug port", () => {
    expect(imagePath(docker, SETTINGS.config.default)).toBe("/etc/tollgate/config");
    const script = readFileSync(join(repo, "docker/ratelimit"), "utf8");
    const debugPort = Number(/\$\{DEBUG_PORT:=(\d+)\}/.exec(script)?.[1]);
    const port = (addr: string) => Number(addr.split(":").at(-1));
    const byNumber = (a: number, b: number) => a - b;
    expect([...docker.exposed].sort(byNumber)).toEqual(
      [port(SETTINGS.grpcAddr.default), port(SETTINGS.httpAddr.default), debugPort].sort(byNumber),
    );
  });

  it("installs docker/ratelimit as envoyproxy/ratelimit's entry point, /bin/ratelimit", () => {
    expect(docker.copies.get("/bin/ratelimit")).toBe("docker/ratelimit");
    expect(readFileSync(join(repo, "docker/ratelimit"), "utf8")).toMatch(/^#!\/bin\/sh\n/);
  });
});

describe("docker-compose.yml and the image", () => {
  const compose = asObject(
    parse(readFileSync(join(repo, "docker-compose.yml"), "utf8"), { merge: true }),
    "compose",
  );

  it("waits for tollgate's health from the image's HEALTHCHECK (the service sets none of its own)", () => {
    for (const name of ["envoy", "envoy-ext-authz"]) {
      const envoy = asObject(at(compose, "services", name), name);
      expect(at(envoy, "depends_on", "tollgate", "condition")).toBe("service_healthy");
    }
    expect(asObject(at(compose, "services", "tollgate"), "tollgate").healthcheck).toBeUndefined();
    expect(docker.healthcheck).not.toBe("");
  });

  it("runs every Envoy on a release line supported through 2026 (1.37 or newer, pinned to a minor)", () => {
    const images = Object.values(asObject(at(compose, "services"), "services"))
      .map((svc) => String(asObject(svc, "service").image ?? ""))
      .filter((image) => image.startsWith("envoyproxy/envoy"));
    expect(images.length).toBeGreaterThanOrEqual(2);
    for (const image of images) {
      const m = /^envoyproxy\/envoy:v1\.(\d+)(?:-latest|\.\d+)$/.exec(image);
      expect(m, image).not.toBeNull();
      expect(Number(m?.[1])).toBeGreaterThanOrEqual(37);
    }
  });
});
