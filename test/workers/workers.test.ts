/**
 * `--workers N`: the in-process store refuses N > 1; on a private redis-server two workers share the
 * listen sockets (one port each for gRPC and HTTP, port 0 included), both answer, limits stay exact
 * across them, `/metrics` shows the whole group, SIGHUP reaches every worker, a killed worker is
 * replaced, and SIGTERM drains them all and exits 0.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Answer, rlsClient } from "../chaos/rls-client.js";
import { createRlsClient } from "../helpers/official-client.js";
import { type RedisServer, startRedis } from "../helpers/redis.js";
import { runCli, type Service, startService } from "../helpers/service.js";

const CAP = 30;
const CONFIG = `
domain: edge
descriptors:
  - key: tenant
    rate_limit: { unit: hour, requests_per_unit: ${CAP} }
`;
/** Every decision by Redis (no local fallback), so exactness is exact. */
const ARGS = ["--workers", "2", "--store-deadline", "2s", "--redis-command-timeout", "2s"];
const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function configDir(text = CONFIG): string {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-workers-"));
  writeFileSync(join(dir, "edge.yaml"), text);
  return dir;
}

/** Series of `name` in a Prometheus text exposition: labels text → value. */
function series(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name} `) && !line.startsWith(`${name}{`)) continue;
    const labels = line.slice(name.length, line.lastIndexOf(" "));
    out.set(labels, Number(line.slice(line.lastIndexOf(" ") + 1)));
  }
  return out;
}
const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
const pidsOf = (text: string) =>
  [...series(text, "tollgate_worker_info").keys()].map((l) => Number(/pid="(\d+)"/.exec(l)?.[1]));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Poll `/metrics` until `ok(text)` or `ms` pass; returns the last text. */
async function metricsUntil(svc: Service, ok: (text: string) => boolean, ms = 10_000): Promise<string> {
  const end = Date.now() + ms;
  let text = "";
  while (Date.now() < end) {
    // A kept-alive connection to a killed worker fails once: ask again.
    text = await svc.http("/metrics").then(
      (r) => r.text(),
      () => "",
    );
    if (ok(text)) return text;
    await delay(100);
  }
  return text;
}

describe("--workers with the in-process store", () => {
  it("refuses to start: exit 2 and one line naming the setting and why", async () => {
    const { code, stderr, stdout } = await runCli(["serve", "--config", configDir(), "--workers", "2"]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr.trim().split("\n")).toHaveLength(1);
    expect(stderr).toMatch(
      /^tollgate: --workers 2 needs a Redis store .*memory store keeps its buckets in each process/,
    );
  });

  it("refuses --workers 0 (one per CPU) too", async () => {
    const { code, stderr } = await runCli(["serve", "--config", configDir(), "--workers", "0"]);
    expect({ code, stderr }).toMatchObject({ code: 2 });
    expect(stderr).toMatch(/--workers 0 \(one per CPU\) needs a Redis store/);
  });
});

describe("--workers whose workers cannot boot", () => {
  it("exits 1 once instead of restarting them forever (bad config)", async () => {
    const config = configDir("domain: edge\ndescriptors: [oops\n");
    // The config is read before the store is touched: nothing listens on port 1.
    const run = runCli(["serve", "--config", config, "--store", "redis://127.0.0.1:1", ...ARGS]);
    const { code, stdout } = await run;
    expect(code).toBe(1);
    expect(stdout).toMatch(/worker exited before it listened; stopping/);
    expect(stdout).not.toMatch(/worker died; restarting/);
  });
});

describe("two workers on one redis-server", () => {
  let redis: RedisServer;
  let svc: Service;
  beforeAll(async () => {
    redis = await startRedis();
    svc = await startService({ config: configDir(), store: redis.url, args: ARGS });
  });
  afterAll(async () => {
    await svc?.stop("SIGKILL");
    await redis?.stop();
  });

  it("logs one ready line, once both workers listen on the same (port 0) sockets", async () => {
    const ready = svc.output.filter((l) => l.includes('"tollgate ready"'));
    expect(ready).toHaveLength(1);
    const line = JSON.parse(ready[0] ?? "{}") as { workers: number; pids: number[]; scheduling: string };
    expect(line.workers).toBe(2);
    expect(new Set(line.pids).size).toBe(2);
    expect(line.scheduling).toBe("round-robin");
    // Each worker logs "worker listening" on its own stdout, which reaches us through a pipe that
    // the primary's IPC "ready" can overtake: wait (bounded) for both lines.
    const listening = () => svc.output.filter((l) => l.includes('"worker listening"'));
    for (let i = 0; i < 40 && listening().length < 2; i++) await new Promise((r) => setTimeout(r, 50));
    expect(listening()).toHaveLength(2);
    const text = await (await svc.http("/metrics")).text();
    expect(pidsOf(text).sort()).toEqual([...line.pids].sort());
    expect(series(text, "tollgate_workers").get("")).toBe(2);
  });

  it("serves the official Envoy client", async () => {
    const client = createRlsClient(svc.grpcAddress);
    try {
      const res = await client.shouldRateLimit({
        domain: "edge",
        descriptors: [{ entries: [{ key: "tenant", value: "official" }] }],
      });
      expect(res.overall_code).toBe("OK");
      expect(res.statuses[0]?.limit_remaining).toBe(CAP - 1);
    } finally {
      client.close();
    }
  });

  it("admits exactly the limit over many connections, both workers answering, counters summed", async () => {
    const before = await (await svc.http("/metrics")).text();
    const clients = Array.from({ length: 8 }, () => rlsClient(svc.grpcPort));
    const TOTAL = 200;
    let answers: Answer[];
    try {
      answers = await Promise.all(
        clients.flatMap((c) =>
          Array.from({ length: TOTAL / clients.length }, () =>
            c.call("edge", [[["tenant", "shared"]]], { deadlineMs: 10_000 }),
          ),
        ),
      );
    } finally {
      for (const c of clients) c.close();
    }
    expect(answers.filter((a) => a.grpcStatus !== 0)).toEqual([]);
    expect(answers.filter((a) => a.code === "OK")).toHaveLength(CAP);
    expect(answers.filter((a) => a.code === "OVER_LIMIT")).toHaveLength(TOTAL - CAP);

    const after = await (await svc.http("/metrics")).text();
    const perWorker = series(after, "tollgate_worker_requests_total");
    const gained = [...perWorker].map(
      ([k, v]) => v - (series(before, "tollgate_worker_requests_total").get(k) ?? 0),
    );
    expect(gained).toHaveLength(2);
    for (const g of gained) expect(g).toBeGreaterThan(0); // 8 connections round-robin over 2 workers
    expect(gained.reduce((a, b) => a + b, 0)).toBe(TOTAL);
    const decided = (t: string) => sum(series(t, "tollgate_decisions_total"));
    expect(decided(after) - decided(before)).toBe(TOTAL);
    const over = (t: string) =>
      series(t, "tollgate_decisions_total").get('{domain="edge",rule="edge.tenant",result="over_limit"}') ??
      0;
    expect(over(after) - over(before)).toBe(TOTAL - CAP);
  });

  it("heartbeats once per worker: two distinct instance ids, instances gauge 2", async () => {
    // The heartbeat beats every 5 s (its first beat may come before the client has connected).
    const text = await metricsUntil(svc, (t) => series(t, "tollgate_instances").get("") === 2, 8_000);
    expect(series(text, "tollgate_instances").get("")).toBe(2);
    const members = await redis.client().zrange("tl:v1:{instances}", 0, -1);
    expect(new Set(members).size).toBe(2);
  });

  it("SIGHUP makes every worker reload", async () => {
    const ok = (t: string) => series(t, "tollgate_config_reloads_total").get('{result="success"}') ?? 0;
    const before = ok(await (await svc.http("/metrics")).text());
    svc.proc.kill("SIGHUP");
    const text = await metricsUntil(svc, (t) => ok(t) === before + 2, 5_000);
    expect(ok(text)).toBe(before + 2);
  });

  it("replaces a worker that dies, keeps serving, and drains everything on SIGTERM (exit 0)", async () => {
    const pids = pidsOf(await (await svc.http("/metrics")).text());
    const victim = pids[0] ?? -1;
    process.kill(victim, "SIGKILL");
    const text = await metricsUntil(
      svc,
      (t) =>
        pidsOf(t).length === 2 && !pidsOf(t).includes(victim) && series(t, "tollgate_workers").get("") === 2,
    );
    const now = pidsOf(text);
    expect(now).toHaveLength(2);
    expect(now).not.toContain(victim);
    expect(series(text, "tollgate_worker_restarts_total").get("")).toBe(1);
    expect(svc.output.some((l) => l.includes('"worker died; restarting"'))).toBe(true);
    const client = rlsClient(svc.grpcPort);
    expect((await client.call("edge", [[["tenant", "after-restart"]]])).code).toBe("OK");
    client.close();

    expect(await svc.stop("SIGTERM")).toBe(0);
    for (const pid of now) expect(alive(pid)).toBe(false);
    expect(svc.output.filter((l) => l.includes('"stopped"'))).toHaveLength(3);
  });
});
