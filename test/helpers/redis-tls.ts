/**
 * Spawn a private TLS-only redis-server for tests, with a throwaway CA, killed by pid afterwards.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileAsync, freePort, waitExit, waitPing } from "./redis.js";

/** A private TLS-only redis-server with a CA of its own. */
export interface TlsRedisServer {
  readonly port: number;
  /** `rediss://localhost:PORT` (the certificate is issued to `localhost`). */
  readonly url: string;
  /** PEM file of the CA that signed the server certificate. */
  readonly caFile: string;
  stop(): Promise<void>;
}

/** Create a throwaway CA and a `localhost` certificate with openssl, then start a TLS-only server. */
export async function startTlsRedis(): Promise<TlsRedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), `tollgate-tls-${port}-`));
  const f = (name: string) => join(dir, name);
  const ssl = (...args: string[]) => execFileAsync("openssl", args, { timeout: 10_000 });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  await ssl(
    "req",
    "-x509",
    ...ec,
    "-keyout",
    f("ca.key"),
    "-out",
    f("ca.pem"),
    "-days",
    "1",
    "-subj",
    "/CN=tollgate-test-ca",
  );
  await ssl("req", ...ec, "-keyout", f("server.key"), "-out", f("server.csr"), "-subj", "/CN=localhost");
  writeFileSync(f("ext.cnf"), "subjectAltName=DNS:localhost,IP:127.0.0.1\n");
  await ssl(
    "x509",
    "-req",
    "-in",
    f("server.csr"),
    "-CA",
    f("ca.pem"),
    "-CAkey",
    f("ca.key"),
    "-CAcreateserial",
    "-out",
    f("server.pem"),
    "-days",
    "1",
    "-extfile",
    f("ext.cnf"),
  );
  const args = [
    "--port",
    "0",
    "--tls-port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "no",
  ];
  args.push("--tls-cert-file", f("server.pem"), "--tls-key-file", f("server.key"));
  args.push("--tls-ca-cert-file", f("ca.pem"), "--tls-auth-clients", "no", "--dir", dir);
  const child = spawn("redis-server", args, { stdio: "ignore" });
  const stop = async () => {
    child.kill("SIGKILL");
    await waitExit(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitPing(port, child, ["--tls", "--cacert", f("ca.pem")]);
  } catch (err) {
    await stop();
    throw err;
  }
  return { port, url: `rediss://localhost:${port}`, caFile: f("ca.pem"), stop };
}
