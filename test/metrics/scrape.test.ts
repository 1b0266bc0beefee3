/**
 * Integration: a real Prometheus (Debian package `prometheus`) scrapes tollgate's HTTP side door
 * serving TollgateMetrics at GET /metrics, and the expected series appear in its query API.
 * Prometheus runs on free loopback ports with its own temp storage and is killed by pid.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TollgateMetrics } from "../../src/metrics/metrics.js";
import { createHttpServer, type HttpServer } from "../../src/protocol/http.js";

const BIN = "/usr/bin/prometheus";
// .ci/run installs Debian's `prometheus`; outside CI the test is skipped when it is absent.
const available = existsSync(BIN) || process.env.CI !== undefined;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

interface Sample {
  readonly metric: Record<string, string>;
  readonly value: [number, string];
}

describe.skipIf(!available)("Prometheus scraping tollgate", () => {
  const metrics = new TollgateMetrics();
  let http: HttpServer;
  let prom: ChildProcess | undefined;
  let dir: string;
  let api: string;
  let stderr = "";

  beforeAll(async () => {
    http = createHttpServer({
      routes: new Map([
        [
          "GET /metrics",
          async () => ({ status: 200, body: await metrics.text(), contentType: metrics.contentType }),
        ],
      ]),
    });
    const { port } = await http.listen("127.0.0.1", 0);
    metrics.decision("edge", "edge.tenant.route_class_read", "ok", 1);
    metrics.decision("edge", "edge.tenant.route_class_read", "over_limit", 1);
    metrics.decisionSeconds(0.0007);
    metrics.reload("success");

    dir = await mkdtemp(join(tmpdir(), "tollgate-prom-"));
    const config = join(dir, "prometheus.yml");
    await writeFile(
      config,
      `global: { scrape_interval: 1s }\nscrape_configs:\n  - job_name: tollgate\n    metrics_path: /metrics\n    static_configs: [{ targets: ["127.0.0.1:${port}"] }]\n`,
    );
    const promPort = await freePort();
    api = `http://127.0.0.1:${promPort}/api/v1`;
    prom = spawn(
      BIN,
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${join(dir, "data")}`,
        `--web.listen-address=127.0.0.1:${promPort}`,
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    prom.stderr?.on("data", (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
  });

  afterAll(async () => {
    if (prom?.pid !== undefined && prom.exitCode === null) {
      const exited = new Promise((r) => prom?.once("exit", r));
      process.kill(prom.pid, "SIGKILL");
      await exited;
    }
    await http?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Polls an instant query until it returns samples (Prometheus needs a scrape or two), up to 20 s. */
  async function query(q: string): Promise<Sample[]> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      try {
        const res = await fetch(`${api}/query?query=${encodeURIComponent(q)}`);
        const body = (await res.json()) as { data?: { result?: Sample[] } };
        const result = body.data?.result ?? [];
        if (result.length > 0) return result;
      } catch {
        // not listening yet
      }
      if (prom?.exitCode !== null || Date.now() > deadline) {
        throw new Error(`no samples for ${q}; prometheus stderr:\n${stderr}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it("sees the scrape target up", async () => {
    const [up] = await query('up{job="tollgate"} == 1');
    expect(up?.value[1]).toBe("1");
  });

  it("stores decisions by domain, rule and result", async () => {
    const samples = await query('tollgate_decisions_total{domain="edge"}');
    const byResult = Object.fromEntries(samples.map((s) => [s.metric.result, s.value[1]]));
    expect(byResult).toEqual({ ok: "1", over_limit: "1" });
    expect(samples.every((s) => s.metric.rule === "edge.tenant.route_class_read")).toBe(true);
  });

  it("stores the decision histogram, reload gauge and Node process metrics", async () => {
    const [bucket] = await query('tollgate_decision_duration_seconds_bucket{le="0.001"}');
    expect(bucket?.value[1]).toBe("1");
    const [reload] = await query("tollgate_config_last_reload_success_timestamp_seconds");
    expect(Number(reload?.value[1])).toBeGreaterThan(0);
    await expect(query("tollgate_process_resident_memory_bytes")).resolves.toHaveLength(1);
  });
});
