/**
 * The processes under test, each its own OS process so its CPU time can be read from /proc:
 * the two baselines (bench/baselines/*.mjs) and tollgate (`node dist/cli.js serve`) on a store.
 * Every target is `{ name, pid, grpcPort, httpPort?, stop() }`.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { freePort } from "./redis.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const delay = (ms) => new Promise((r) => setTimeout(r, ms));

function stopChild(child) {
  return async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  };
}

/** Collect a child's stderr (last 4 KiB) for error messages. */
function tail(child) {
  let text = "";
  child.stderr.on("data", (d) => {
    text = (text + d).slice(-4096);
  });
  return () => text;
}

/**
 * Start a baseline script that prints `LISTENING <port>`; `nodeArgs` go to node (e.g. `--cpu-prof`),
 * `scriptArgs` to the script.
 */
export async function startBaseline(name, script, nodeArgs = [], scriptArgs = []) {
  const path = fileURLToPath(new URL(script, import.meta.url));
  const child = spawn(process.execPath, [...nodeArgs, path, ...scriptArgs], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stderr = tail(child);
  const port = await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = /LISTENING (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once("exit", (code) => reject(new Error(`${name} exited (${code}): ${stderr()}`)));
  });
  return { name, pid: child.pid, grpcPort: port, stop: stopChild(child) };
}

/** The V8 flag tollgate ships with (Dockerfile, npm start); see bench/history/2026-12.md, "Young generation". */
export const SEMI_SPACE = "--max-semi-space-size=64";

/**
 * Start tollgate on `store` (`memory` or a Redis URL) with the rules in `config`, and wait until
 * `/healthcheck` answers 200. `nodeArgs` go to node (e.g. `--cpu-prof`).
 */
export async function startTollgate({ name, store, config, nodeArgs = [], extraArgs = [] }) {
  const grpcPort = await freePort();
  const httpPort = await freePort();
  // As shipped (Dockerfile ENTRYPOINT, npm start): a 64 MB young generation.
  const args = [SEMI_SPACE, ...nodeArgs, "dist/cli.js", "serve", "--config", config, "--store", store];
  args.push("--grpc-addr", `127.0.0.1:${grpcPort}`, "--http-addr", `127.0.0.1:${httpPort}`);
  args.push("--log-level", "warn", ...extraArgs);
  const child = spawn(process.execPath, args, { cwd: root, stdio: ["ignore", "ignore", "pipe"] });
  const stderr = tail(child);
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`tollgate (${name}) exited: ${stderr()}`);
    const ok = await fetch(`http://127.0.0.1:${httpPort}/healthcheck`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { name, pid: child.pid, grpcPort, httpPort, stop: stopChild(child) };
    await delay(50);
  }
  await stopChild(child)();
  throw new Error(`tollgate (${name}) did not become healthy: ${stderr()}`);
}
