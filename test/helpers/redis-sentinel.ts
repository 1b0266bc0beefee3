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

/** Start `redis-server --sentinel` monitoring the master on `masterPort` as `masterName`. */
export async function startSentinel(opts: {
  masterPort: number;
  masterName: string;
}): Promise<RedisSentinel> {
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
      `sentinel down-after-milliseconds ${opts.masterName} 1000`,
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
