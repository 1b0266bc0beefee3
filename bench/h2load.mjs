/**
 * Drive a target with h2load. h2load posts ONE body file per process (`-d`), so a load of C
 * connections is C h2load processes with `-c 1 -m <streams>`, each posting its own pre-encoded frame;
 * a scenario with more distinct requests than connections runs in rounds, each with new frames.
 * All h2load processes are pinned to one CPU (`taskset`, on a machine with ≥ 2 CPUs) so together
 * they take at most the one core a single multi-connection h2load would, leaving the rest to the
 * target and Redis. Per-request latencies come from `--log-file` (start µs, status, elapsed µs).
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { RLS_PATH } from "./frames.mjs";

const run = promisify(execFile);
/** `grpc-timeout` of every benchmark call (see `load`). */
const GRPC_TIMEOUT = "1S";

/** True when h2load is on PATH. */
export async function haveH2load() {
  return run("h2load", ["--version"]).then(
    () => true,
    () => false,
  );
}

function pinning() {
  const cpus = availableParallelism();
  return cpus >= 2 && existsSync("/usr/bin/taskset") ? ["taskset", "-c", String(cpus - 1)] : [];
}

/** Parse the totals h2load prints. */
export function parseH2loadOutput(text) {
  const m =
    /requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored/.exec(
      text,
    );
  if (!m) throw new Error(`unexpected h2load output:\n${text}`);
  const rate = /finished in ([\d.]+)(m?s), ([\d.]+) req\/s/.exec(text);
  return {
    done: Number(m[3]),
    succeeded: Number(m[4]),
    failed: Number(m[5]) + Number(m[6]),
    seconds: rate ? Number(rate[1]) / (rate[2] === "ms" ? 1000 : 1) : 0,
  };
}

/** Latencies (µs) of successful requests in one h2load log file. */
function readLatencies(file, into) {
  if (!existsSync(file)) return;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const [, status, elapsed] = line.split("\t");
    if (status === "200") into.push(Number(elapsed));
  }
}

/** The q-quantile (0..1) of sorted values, nearest rank. */
export function quantile(sorted, q) {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

/**
 * One load run: for each round, one h2load process per frame in `rounds[i]`, all for `seconds`.
 * `rps` (total requests/s, optional) is split evenly over the processes of a round. `beforeRound`
 * (optional) is awaited before each round, outside the measured time (the harness drives the raw
 * ceiling there).
 * @returns {{ requests, failed, seconds, throughput, p50Ms, p99Ms }}
 */
export async function load({ port, rounds, seconds, streams, rps, outDir, label, beforeRound }) {
  const pin = pinning();
  let requests = 0;
  let failed = 0;
  let elapsed = 0;
  const latencies = [];
  for (const [r, frames] of rounds.entries()) {
    if (beforeRound) await beforeRound(r);
    const procs = frames.map(async (frame, c) => {
      const base = join(outDir, `${label}-r${r}-c${c}`);
      writeFileSync(`${base}.body`, frame);
      rmSync(`${base}.log`, { force: true }); // h2load appends to an existing log file
      const args = ["-c", "1", "-t", "1", "-m", String(streams), "-D", `${Math.round(seconds * 1000)}ms`];
      args.push("-d", `${base}.body`, "-H", "content-type: application/grpc", "-H", "te: trailers");
      // Envoy's gRPC client sends the call's timeout (the rate limit filter's, 20 ms by default), so
      // each call carries a deadline; 1 s here, since at peak 512 streams queue for tens of ms.
      args.push("-H", `grpc-timeout: ${GRPC_TIMEOUT}`);
      args.push("--log-file", `${base}.log`);
      if (rps) args.push("--rps", String(Math.max(1, Math.round(rps / frames.length))));
      args.push(`http://127.0.0.1:${port}${RLS_PATH}`);
      const cmd = [...pin, "h2load", ...args];
      const { stdout } = await run(cmd[0], cmd.slice(1), { maxBuffer: 1 << 20 });
      return { totals: parseH2loadOutput(stdout), log: `${base}.log` };
    });
    const results = await Promise.all(procs);
    elapsed += Math.max(...results.map((x) => x.totals.seconds));
    for (const { totals, log } of results) {
      requests += totals.succeeded;
      failed += totals.failed;
      readLatencies(log, latencies);
    }
  }
  const sorted = Float64Array.from(latencies).sort();
  return {
    requests,
    failed,
    seconds: elapsed,
    throughput: elapsed > 0 ? requests / elapsed : 0,
    p50Ms: quantile(sorted, 0.5) / 1000,
    p99Ms: quantile(sorted, 0.99) / 1000,
  };
}
