import { describe, expect, it } from "vitest";
import { TollgateMetrics } from "../../src/metrics/metrics.js";
import { FakeClock } from "../helpers/fake-clock.js";

/** Value of one series in the registry, or undefined when the series does not exist. */
async function value(
  m: TollgateMetrics,
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  const metric = m.registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  const { values } = await metric.get();
  const found = values.find((v) =>
    Object.entries(labels).every(([k, want]) => String((v.labels as Record<string, unknown>)[k]) === want),
  );
  return found?.value;
}

async function seriesCount(m: TollgateMetrics, name: string): Promise<number> {
  const metric = m.registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  return (await metric.get()).values.length;
}

const quiet = { processMetrics: false } as const;

describe("TollgateMetrics", () => {
  it("counts decisions and hits by domain, rule path and result", async () => {
    const m = new TollgateMetrics(quiet);
    m.decision("edge", "edge.tenant.route_class_read", "ok", 1);
    m.decision("edge", "edge.tenant.route_class_read", "ok", 3);
    m.decision("edge", "edge.tenant.route_class_read", "over_limit", 2);
    m.decision("edge", "", "no_match", 1);
    const read = { domain: "edge", rule: "edge.tenant.route_class_read" };
    expect(await value(m, "tollgate_decisions_total", { ...read, result: "ok" })).toBe(2);
    expect(await value(m, "tollgate_decisions_total", { ...read, result: "over_limit" })).toBe(1);
    expect(await value(m, "tollgate_hits_total", { ...read, result: "ok" })).toBe(4);
    expect(await value(m, "tollgate_hits_total", { ...read, result: "over_limit" })).toBe(2);
    expect(await value(m, "tollgate_decisions_total", { domain: "edge", rule: "", result: "no_match" })).toBe(
      1,
    );
  });

  it("neither loses nor double-counts decisions across successive scrapes", async () => {
    const m = new TollgateMetrics(quiet);
    m.decision("edge", "edge.tenant", "over_limit", 2);
    await m.text();
    await m.text();
    m.decision("edge", "edge.tenant", "over_limit", 5);
    expect(await value(m, "tollgate_decisions_total", { result: "over_limit" })).toBe(2);
    expect(await value(m, "tollgate_hits_total", { result: "over_limit" })).toBe(7);
    expect(await m.text()).toContain(
      'tollgate_decisions_total{domain="edge",rule="edge.tenant",result="over_limit"} 2',
    );
  });

  it("keeps a check-only decision (0 hits) out of the hits counter", async () => {
    const m = new TollgateMetrics(quiet);
    m.decision("edge", "edge.tenant", "ok", 0);
    expect(await value(m, "tollgate_decisions_total", { result: "ok" })).toBe(1);
    expect(await seriesCount(m, "tollgate_hits_total")).toBe(0);
  });

  it("holds at most maxSeries detailed series after 100,000 distinct detail values, plus one overflow series", async () => {
    const m = new TollgateMetrics({ ...quiet, maxSeries: 1000 });
    for (let i = 0; i < 100_000; i++) {
      m.decision("edge", "edge.tenant", "ok", 1, `tenant_t${i}`);
    }
    expect(await seriesCount(m, "tollgate_detailed_decisions_total")).toBe(1001);
    expect(await value(m, "tollgate_detailed_decisions_total", { detail: "_overflow_" })).toBe(99_000);
    expect(await value(m, "tollgate_detailed_decisions_total", { detail: "tenant_t0" })).toBe(1);
    // The rule-level counter is unaffected by detail values.
    expect(await seriesCount(m, "tollgate_decisions_total")).toBe(1);
  });

  it("caps request-supplied limit overrides the same way", async () => {
    const m = new TollgateMetrics({ ...quiet, maxSeries: 50 });
    for (let i = 1; i <= 100_000; i++)
      m.overrideDecision("edge", { requestsPerUnit: i, unit: "minute" }, "ok");
    expect(await seriesCount(m, "tollgate_override_decisions_total")).toBe(51);
    expect(await value(m, "tollgate_override_decisions_total", { override: "7/minute" })).toBe(1);
    expect(await value(m, "tollgate_override_decisions_total", { override: "_overflow_" })).toBe(99_950);
  });

  it("folds a flood of unknown domains into one overflow series", async () => {
    const m = new TollgateMetrics({ ...quiet, maxSeries: 10 });
    for (let i = 0; i < 10_000; i++) m.decision(`d${i}`, "", "no_match", 1);
    expect(await seriesCount(m, "tollgate_decisions_total")).toBe(11);
    expect(await value(m, "tollgate_decisions_total", { domain: "_overflow_", rule: "_overflow_" })).toBe(
      9_990,
    );
  });

  it("keeps a detail value containing NUL intact in its label", async () => {
    const m = new TollgateMetrics(quiet);
    m.decision("edge", "edge.k", "ok", 1, "a\0b");
    expect(await value(m, "tollgate_detailed_decisions_total", { detail: "a\0b", rule: "edge.k" })).toBe(1);
  });

  it("reports breaker state as 0, 1, 2 and degraded mode as 0 or 1", async () => {
    const m = new TollgateMetrics(quiet);
    m.breakerState("open");
    expect(await value(m, "tollgate_breaker_state")).toBe(2);
    m.breakerState("half_open");
    expect(await value(m, "tollgate_breaker_state")).toBe(1);
    m.breakerState("closed");
    expect(await value(m, "tollgate_breaker_state")).toBe(0);
    m.degraded(true);
    expect(await value(m, "tollgate_degraded")).toBe(1);
    m.degraded(false);
    expect(await value(m, "tollgate_degraded")).toBe(0);
  });

  it("records lease grants, returns and local hit/miss so the hit ratio is derivable", async () => {
    const m = new TollgateMetrics(quiet);
    m.leaseGranted(50);
    m.leaseGranted(50);
    m.leaseReturned(7);
    m.leaseLocalHit();
    m.leaseLocalHit();
    m.leaseLocalHit();
    m.leaseLocalMiss();
    expect(await value(m, "tollgate_lease_grants_total")).toBe(2);
    expect(await value(m, "tollgate_lease_granted_tokens_total")).toBe(100);
    expect(await value(m, "tollgate_lease_returns_total")).toBe(1);
    expect(await value(m, "tollgate_lease_returned_tokens_total")).toBe(7);
    expect(await value(m, "tollgate_lease_local_total", { outcome: "hit" })).toBe(3);
    expect(await value(m, "tollgate_lease_local_total", { outcome: "miss" })).toBe(1);
  });

  it("stamps the last successful reload with the injected clock and counts failures apart", async () => {
    const clock = new FakeClock(1_700_000_000_000);
    const m = new TollgateMetrics({ ...quiet, clock });
    m.reload("success");
    clock.advance(60_000);
    m.reload("failure");
    expect(await value(m, "tollgate_config_last_reload_success_timestamp_seconds")).toBe(1_700_000_000);
    expect(await value(m, "tollgate_config_reloads_total", { result: "success" })).toBe(1);
    expect(await value(m, "tollgate_config_reloads_total", { result: "failure" })).toBe(1);
  });

  it("tracks in-flight requests, instances, rejections, store errors and round trips", async () => {
    const m = new TollgateMetrics(quiet);
    m.requestStarted();
    m.requestStarted();
    m.requestFinished();
    m.instances(3);
    m.rejected("overload");
    m.storeError("timeout");
    m.storeError("timeout");
    m.storeRoundTrips(4);
    expect(await value(m, "tollgate_in_flight_requests")).toBe(1);
    expect(await value(m, "tollgate_instances")).toBe(3);
    expect(await value(m, "tollgate_rejected_requests_total", { reason: "overload" })).toBe(1);
    expect(await value(m, "tollgate_store_errors_total", { kind: "timeout" })).toBe(2);
    expect(await value(m, "tollgate_store_round_trips_total")).toBe(4);
  });

  it("puts decision and store latencies in buckets that resolve a 20 ms budget", async () => {
    const m = new TollgateMetrics(quiet);
    m.decisionSeconds(0.00004);
    m.decisionSeconds(0.018);
    m.decisionSeconds(0.2);
    m.storeSeconds("take", 0.0009);
    const text = await m.text();
    expect(text).toContain('tollgate_decision_duration_seconds_bucket{le="0.00005"} 1');
    expect(text).toContain('tollgate_decision_duration_seconds_bucket{le="0.02"} 2');
    expect(text).toContain('tollgate_decision_duration_seconds_bucket{le="0.05"} 2');
    expect(text).toContain('tollgate_decision_duration_seconds_bucket{le="+Inf"} 3');
    expect(text).toContain('tollgate_store_duration_seconds_bucket{le="0.001",operation="take"} 1');
  });

  it("serves Prometheus text with Node process metrics on its own registry, not the global one", async () => {
    const m = new TollgateMetrics();
    const { register } = await import("prom-client");
    expect(m.contentType).toMatch(/^text\/plain/);
    const text = await m.text();
    expect(text).toContain("tollgate_process_resident_memory_bytes");
    expect(text).toContain("# TYPE tollgate_decisions_total counter");
    expect(await register.metrics()).not.toContain("tollgate_");
  });

  it("rejects a maxSeries below 1", () => {
    expect(() => new TollgateMetrics({ ...quiet, maxSeries: 0 })).toThrow(/maxSeries/);
  });
});
