/**
 * Throwaway TLS material for tests, made with openssl in a temp dir: two CAs (`ca`, `other-ca`), a
 * `localhost`/127.0.0.1 server certificate and a client certificate signed by `ca`, and a client
 * certificate signed by `other-ca` (one a server must refuse).
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The files made: `ca.crt`, `server.crt`, `server.key`, `client.crt`, `client.key`, `other-client.*`. */
export interface TestCerts {
  /** The directory holding them (remove it when done). */
  readonly dir: string;
  /** The contents of each file. */
  readonly pem: Readonly<Record<string, Buffer>>;
}

/** Make the CAs and certificates. */
export async function makeTestCerts(): Promise<TestCerts> {
  const dir = await mkdtemp(join(tmpdir(), "tollgate-tls-"));
  const pem: Record<string, Buffer> = {};
  const ssl = (...args: string[]) => run("openssl", args, { cwd: dir, timeout: 10_000 });
  // Two CAs: ours, and another one whose client certificate our server must not accept.
  for (const ca of ["ca", "other-ca"])
    await ssl(
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      `${ca}.key`,
      "-out",
      `${ca}.crt`,
      "-days",
      "1",
      "-subj",
      `/CN=tollgate-test-${ca}`,
    );
  await writeFile(join(dir, "san.ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\n");
  for (const [name, ca] of [
    ["server", "ca"],
    ["client", "ca"],
    ["other-client", "other-ca"],
  ] as const) {
    await ssl(
      "req",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      `${name}.key`,
      "-out",
      `${name}.csr`,
      "-subj",
      `/CN=${name === "server" ? "localhost" : "tollgate-client"}`,
    );
    await ssl(
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      `${ca}.crt`,
      "-CAkey",
      `${ca}.key`,
      "-CAcreateserial",
      "-out",
      `${name}.crt`,
      "-days",
      "1",
      "-extfile",
      "san.ext",
    );
  }
  for (const f of [
    "ca.crt",
    "server.crt",
    "server.key",
    "client.crt",
    "client.key",
    "other-client.crt",
    "other-client.key",
  ])
    pem[f] = await readFile(join(dir, f));
  return { dir, pem };
}
