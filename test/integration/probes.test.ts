import { execFile } from "node:child_process";
import { connect } from "node:http2";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { healthcheckUrl } from "../../src/healthcheck.js";
import { startService } from "../helpers/service.js";

const HEALTHCHECK = fileURLToPath(new URL("../../dist/healthcheck.js", import.meta.url));
const CONFIG = fileURLToPath(new URL("../../config", import.meta.url));

/** Exit code of the image's HEALTHCHECK command against `httpAddr` (or with the variables of `env`). */
async function healthcheck(
  httpAddr: string,
  env: NodeJS.ProcessEnv = { TOLLGATE_HTTP_ADDR: httpAddr },
): Promise<number> {
  const inherited = Object.entries(process.env).filter(
    ([k]) => !k.startsWith("TOLLGATE_") && k !== "HOST" && k !== "PORT",
  );
  try {
    await promisify(execFile)(process.execPath, [HEALTHCHECK], {
      env: { ...Object.fromEntries(inherited), ...env },
      timeout: 10_000,
    });
    return 0;
  } catch (err) {
    return (err as { code?: number }).code ?? -1;
  }
}

describe("the probes the Deployment and the image use", () => {
  it("keep /livez at 200 while draining, when /healthcheck and the image's HEALTHCHECK turn unready", async () => {
    const svc = await startService({ config: CONFIG });
    const addr = `127.0.0.1:${svc.httpPort}`;
    expect((await svc.http("/livez")).status).toBe(200);
    expect((await svc.http("/healthcheck")).status).toBe(200);
    expect(await healthcheck(addr)).toBe(0);

    // A call left half-sent keeps the drain open (up to --drain-timeout) while the probes are read.
    const session = connect(`http://${svc.grpcAddress}`);
    const call = { ":method": "POST", "content-type": "application/grpc", te: "trailers" };
    const stream = session.request({ ...call, ":path": "/grpc.health.v1.Health/Check" });
    stream.on("error", () => undefined);
    stream.write(Buffer.from([0, 0, 0]));
    await new Promise((r) => setTimeout(r, 100));
    svc.proc.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 300));

    expect((await svc.http("/healthcheck")).status).toBe(500);
    expect((await svc.http("/livez")).status).toBe(200);
    expect(await healthcheck(addr)).toBe(1);
    session.destroy();
    expect(await svc.exited).toBe(0);
    expect(await healthcheck(addr)).toBe(1);
  });

  it("asks the port of a drop-in Deployment's HOST/PORT when no TOLLGATE_HTTP_ADDR is set (the image bakes none)", async () => {
    const svc = await startService({ config: CONFIG });
    try {
      expect(await healthcheck("", { HOST: "127.0.0.1", PORT: String(svc.httpPort) })).toBe(0);
      expect(await healthcheck("", { HOST: "127.0.0.1", PORT: String(svc.grpcPort) })).toBe(1);
    } finally {
      svc.proc.kill("SIGTERM");
      await svc.exited;
    }
  });

  it("asks a wildcard listen address on loopback and brackets IPv6 hosts", () => {
    expect(healthcheckUrl({ host: "0.0.0.0", port: 8080 })).toBe("http://127.0.0.1:8080/healthcheck");
    expect(healthcheckUrl({ host: "::1", port: 9 })).toBe("http://[::1]:9/healthcheck");
    expect(healthcheckUrl({ host: "10.1.2.3", port: 80 })).toBe("http://10.1.2.3:80/healthcheck");
  });
});
