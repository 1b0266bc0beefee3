// Spawning tollgate (dist/cli.js) and reading Redis command counts for the RLQS benches
// (bench/rlqs.mjs, bench/rlqs-fairness-bench.mjs).
import { spawn } from "node:child_process";
import { freePort } from "./redis.mjs";

const cli = new URL("../dist/cli.js", import.meta.url).pathname;

/** Start `tollgate serve` on free ports; resolves once /healthcheck answers. Kill `proc` to stop. */
export async function startTollgate(config, store, transport) {
  const grpcPort = await freePort();
  const httpPort = await freePort();
  const proc = spawn(
    process.execPath,
    [cli, "serve", "--config", config, "--store", store, "--grpc-transport", transport],
    {
      env: {
        ...process.env,
        TOLLGATE_GRPC_ADDR: `127.0.0.1:${grpcPort}`,
        TOLLGATE_HTTP_ADDR: `127.0.0.1:${httpPort}`,
        TOLLGATE_LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "inherit", "inherit"],
    },
  );
  for (let i = 0; ; i++) {
    const ok = await fetch(`http://127.0.0.1:${httpPort}/healthcheck`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (i > 200) throw new Error("tollgate did not start");
    await new Promise((r) => setTimeout(r, 50));
  }
  return { proc, address: `127.0.0.1:${grpcPort}`, httpPort };
}

/** Calls per Redis command (INFO commandstats, without INFO itself). */
export async function commandStats(client) {
  const info = await client.info("commandstats");
  const out = {};
  for (const m of info.matchAll(/^cmdstat_([\w|]+):calls=(\d+)/gm))
    if (m[1] !== "info") out[m[1]] = Number(m[2]);
  return out;
}
