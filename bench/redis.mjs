/**
 * Private redis-server processes for the benchmark: one single node, or a 3-master Redis Cluster,
 * on free ports (never 6379), persistence off, killed by pid. (The TypeScript test helper in
 * test/helpers/redis.ts does the same for vitest; the harness runs on plain Node, so it has its own.)
 */
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const delay = (ms) => new Promise((r) => setTimeout(r, ms));

function portIsFree(port) {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(false));
    srv.listen({ port, host: "127.0.0.1", exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** A free port in 20000–54999 whose cluster bus port (+10000) is free too. */
export async function freePort() {
  for (let i = 0; i < 200; i++) {
    const port = 20_000 + Math.floor(Math.random() * 35_000);
    if (port !== 6379 && (await portIsFree(port)) && (await portIsFree(port + 10_000))) return port;
  }
  throw new Error("no free port found");
}

async function redisCli(port, ...args) {
  const { stdout } = await run("redis-cli", ["-p", String(port), ...args], { timeout: 5000 });
  return stdout.trim();
}

async function until(what, check) {
  for (let i = 0; i < 400; i++) {
    if (await check().catch(() => false)) return;
    await delay(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** One redis-server on a free port; `extra` are more server arguments. */
async function spawnRedis(dir, extra = []) {
  const port = await freePort();
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"];
  const child = spawn("redis-server", [...args, "--dir", dir, ...extra], { stdio: "ignore" });
  await until(`redis-server on ${port}`, async () => (await redisCli(port, "PING")) === "PONG");
  return { port, pid: child.pid, child };
}

function stopper(dir, nodes) {
  return async () => {
    for (const n of nodes) {
      if (n.child.exitCode !== null) continue;
      n.child.kill("SIGKILL");
      await new Promise((r) => n.child.once("exit", r));
    }
    rmSync(dir, { recursive: true, force: true });
  };
}

/** A single redis-server: `{ url, pids, stop() }`. */
export async function startRedis() {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-bench-redis-"));
  const node = await spawnRedis(dir);
  return { url: `redis://127.0.0.1:${node.port}`, pids: [node.pid], stop: stopper(dir, [node]) };
}

/** A Redis Cluster of `masters` masters and no replicas: `{ url, pids, stop() }`. */
export async function startCluster(masters = 3) {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-bench-cluster-"));
  const nodes = [];
  const stop = stopper(dir, nodes);
  try {
    for (let i = 0; i < masters; i++) {
      const conf = join(dir, `nodes-${i}.conf`);
      nodes.push(await spawnRedis(dir, ["--cluster-enabled", "yes", "--cluster-config-file", conf]));
    }
    const addrs = nodes.map((n) => `127.0.0.1:${n.port}`);
    await run("redis-cli", ["--cluster", "create", ...addrs, "--cluster-replicas", "0", "--cluster-yes"], {
      timeout: 20_000,
    });
    for (const n of nodes) {
      await until("cluster_state:ok", async () =>
        (await redisCli(n.port, "CLUSTER", "INFO")).includes("cluster_state:ok"),
      );
    }
    return { url: `redis-cluster://${addrs.join(",")}`, pids: nodes.map((n) => n.pid), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
