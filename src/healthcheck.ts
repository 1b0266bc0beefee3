/**
 * The container image's HEALTHCHECK (`node dist/healthcheck.js`): asks `GET /healthcheck` on the
 * HTTP address tollgate serves (`TOLLGATE_HTTP_ADDR`, or a drop-in Deployment's HOST/PORT, read as
 * `serve` reads it) and exits 0 on 200, 1 otherwise: not listening yet, draining (500), or no answer
 * within 2 s. Docker and compose use it; Kubernetes ignores image health checks and uses the
 * Deployment's probes instead.
 */
import { fileURLToPath } from "node:url";
import { loadSettings, SettingsError } from "./settings.js";

/** The URL of `/healthcheck` for a listen address: a wildcard host is asked on loopback. */
export function healthcheckUrl(addr: { readonly host: string; readonly port: number }): string {
  const host = addr.host === "0.0.0.0" || addr.host === "::" ? "127.0.0.1" : addr.host;
  return `http://${host.includes(":") ? `[${host}]` : host}:${addr.port}/healthcheck`;
}

async function main(): Promise<number> {
  try {
    const res = await fetch(healthcheckUrl(loadSettings([]).httpAddr), { signal: AbortSignal.timeout(2000) });
    return res.status === 200 ? 0 : 1;
  } catch (err) {
    console.error(`tollgate healthcheck: ${err instanceof SettingsError ? err.message : String(err)}`);
    return 1;
  }
}

// Run only as the entry point (`node dist/healthcheck.js`), not when a test imports healthcheckUrl.
if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = await main();
