/**
 * Spawn a private Redis Sentinel for tests, on a free port, killed by pid afterwards.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, waitExit, waitPing } from "./redis.js";

/** A private Redis Sentinel monitoring one master. */
export interface RedisSentinel {
  readonly port: number;
  readonly pid: number;
  /** `redis-sentinel://127.0.0.1:PORT/MASTERNAME`. */
  readonly url: string;
  stop(): Promise<void>;
}

/** What a test sentinel monitors and how quickly it acts. */
export interface StartSentinelOptions {
  readonly masterPort: number;
  readonly masterName: string;
  /** `down-after-milliseconds`: how long the master may be silent before it is down. @default 1000 (ms) */
  readonly downAfterMs?: number;
  /** `failover-timeout`: bound of one failover attempt (also the pause before a retry). @default 10000 (ms) */
  readonly failoverTimeoutMs?: number;
}

/** Start `redis-server --sentinel` monitoring the master on `masterPort` as `masterName` (quorum 1). */
export async function startSentinel(opts: StartSentinelOptions): Promise<RedisSentinel> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), `tollgate-sentinel-${port}-`));
  const conf = join(dir, "sentinel.conf");
  // Sentinel rewrites its config file, so it must be a writable file of its own.
  writeFileSync(
    conf,
    [
      `port ${port}`,
      "bind 127.0.0.1",
      `dir ${dir}`,
      `sentinel monitor ${opts.masterName} 127.0.0.1 ${opts.masterPort} 1`,
      `sentinel down-after-milliseconds ${opts.masterName} ${opts.downAfterMs ?? 1000}`,
      `sentinel failover-timeout ${opts.masterName} ${opts.failoverTimeoutMs ?? 10_000}`,
      "",
    ].join("\n"),
  );
  const child = spawn("redis-server", [conf, "--sentinel"], { stdio: "ignore" });
  const stop = async () => {
    child.kill("SIGKILL");
    await waitExit(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitPing(port, child);
  } catch (err) {
    await stop();
    throw err;
  }
  return { port, pid: child.pid ?? -1, url: `redis-sentinel://127.0.0.1:${port}/${opts.masterName}`, stop };
}
