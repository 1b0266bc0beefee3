/**
 * Every tollgate metric reads what its help text says after a scripted scenario on a running
 * tollgate over a private redis-server: known requests in, exact values out. One `it` per metric,
 * and a last check that no tollgate metric (Node process metrics and `--workers` series aside) was
 * left without one. The debug listener (`--debug-addr`, where envoyproxy/ratelimit's users scrape)
 * is scraped at every step too and must show the same series and values.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TollgateMetrics } from "../../src/metrics/metrics.js";
import { waitFor } from "../alerts/drive.js";
import { parseExposition } from "../alerts/scrapes.js";
import { type RedisServer, startRedis } from "../helpers/redis.js";
import { type Service, startService } from "../helpers/service.js";

const EDGE = [
  "domain: edge",
  "descriptors:",
  "  - key: tenant",
  "    rate_limit: { unit: hour, requests_per_unit: 2 }",
  "  - key: shadow",
  "    shadow_mode: true",
  "    rate_limit: { unit: hour, requests_per_unit: 1 }",
  "  - key: free",
  "    rate_limit: { unlimited: true }",
  "  - key: user",
  "    detailed_metric: true",
  "    rate_limit: { unit: hour, requests_per_unit: 100 }",
  "  - key: leased",
  "    lease: { size: 10, ttl: 300ms }",
  "    rate_limit: { unit: hour, requests_per_unit: 1000 }",
  "",
].join("\n");
const policyDomain = (name: string, policy: string) =>
  `domain: ${name}\non_store_error: ${policy}\ndescriptors:\n  - key: tenant\n    rate_limit: { unit: hour, requests_per_unit: 100 }\n`;

type Sample = ReturnType<typeof parseExposition>[number];

const PACKAGE_VERSION = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

/** The names TollgateMetrics defines (Node process metrics and `--workers` series aside). */
async function definedNames(): Promise<string[]> {
  return (await new TollgateMetrics({ processMetrics: false }).registry.getMetricsAsJSON()).map(
    (m) => m.name,
  );
}

/** `name{labels} value` lines of the samples of metrics named in `names`, sorted. */
function seriesOf(samples: readonly Sample[], names: ReadonlySet<string>): string[] {
  const base = (name: string) => name.replace(/_(bucket|count|sum)$/, "");
  return samples
    .filter((s) => names.has(s.name) || names.has(base(s.name)))
    .map((s) => `${s.name}${JSON.stringify(Object.entries(s.labels).sort())} ${s.value}`)
    .sort();
}

describe("metrics read what their help text says", () => {
  let redis: RedisServer;
  let svc: Service;
  let dir: string;
  const covered = new Set<string>();
  let startedAt = 0;
  const snapshots = new Map<string, Sample[]>();
  /** The debug port's /metrics, scraped right after each snapshot of the HTTP port's. */
  const debugSnapshots = new Map<string, Sample[]>();

  const scrape = async () => parseExposition(await (await svc.http("/metrics")).text());
  const snapshot = async (at: string) => {
    snapshots.set(at, await scrape());
    debugSnapshots.set(at, parseExposition(await (await svc.debug("/metrics")).text()));
  };
  const post = (body: object) => svc.http("/json", { method: "POST", body: JSON.stringify(body) });
  const decide = (domain: string, entries: Record<string, string>, extra: object = {}) =>
    post({
      domain,
      descriptors: [{ entries: Object.entries(entries).map(([key, value]) => ({ key, value })), ...extra }],
    });
  /** The value of `name{labels}` in snapshot `at` (labels must match exactly the ones given). */
  const value = (at: string, name: string, labels: Record<string, string> = {}) => {
    covered.add(name.replace(/_(bucket|count|sum)$/, ""));
    const hit = (snapshots.get(at) ?? []).filter(
      (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
    );
    if (hit.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} matches ${hit.length} series`);
    return hit[0]?.value;
  };

  beforeAll(async () => {
    redis = await startRedis();
    dir = mkdtempSync(join(tmpdir(), "tollgate-truth-"));
    writeFileSync(join(dir, "edge.yaml"), EDGE);
    writeFileSync(join(dir, "closed.yaml"), policyDomain("closed", "deny"));
    writeFileSync(join(dir, "open.yaml"), policyDomain("open", "allow"));
    startedAt = Date.now() / 1000;
    svc = await startService({
      config: dir,
      store: redis.url,
      args: ["--store-deadline", "500ms", "--reload-poll", "0s", "--debug-addr", "127.0.0.1:0"],
    });
    // At start, once the first heartbeat is in.
    await waitFor("the first heartbeat", async () =>
      (await scrape()).some((s) => s.name === "tollgate_instances" && s.value === 1),
    );
    await snapshot("start");

    // Decisions on the store.
    for (let i = 0; i < 3; i++) await decide("edge", { tenant: "acme" }); // ok, ok, over_limit
    await decide("edge", { tenant: "pair" }, { hitsAddend: "2" }); // ok, 2 hits
    await decide("edge", { tenant: "ov" }, { limit: { requestsPerUnit: 7, unit: "MINUTE" } }); // ok, override
    await decide("edge", { shadow: "s" });
    await decide("edge", { shadow: "s" }); // shadow_over_limit
    await decide("edge", { free: "f" }); // unlimited
    await decide("edge", { nothing: "n" }); // no_match
    await decide("edge", { user: "alice" }); // detailed
    for (let i = 0; i < 3; i++) await decide("edge", { leased: "l" }); // 1 lease miss (grant), 2 hits
    // Refused before a decision.
    expect((await decide("edge", { tenant: "big" }, { hitsAddend: "4294967295" })).status).toBe(400);
    expect((await post({ domain: "" })).status).toBe(400);
    // The lease expires (300 ms) and the sweep (every 250 ms) gives its unused tokens back.
    await waitFor("the lease return", async () =>
      (await scrape()).some((s) => s.name === "tollgate_lease_returns_total" && s.value === 1),
    );
    await snapshot("decided");

    // A failed reload: the previous rules stay.
    writeFileSync(
      join(dir, "edge.yaml"),
      EDGE.replace("unit: hour, requests_per_unit: 2", "unit: fortnight"),
    );
    svc.proc.kill("SIGHUP");
    await waitFor("the failed reload", async () =>
      (await (await svc.http("/rlconfig")).text()).includes("last reload: FAILED"),
    );
    await snapshot("reload failed");

    // Redis dies: one call fails on the store and is answered by the local fallback.
    await redis.kill("SIGKILL");
    await decide("edge", { tenant: "during" });
    await snapshot("one error");
    for (let i = 0; i < 6; i++) await decide("edge", { tenant: `d${i}` }); // the breaker opens at 5 failures in a row
    await decide("closed", { tenant: "x" }); // policy_deny
    await decide("open", { tenant: "x" }); // policy_allow
    await snapshot("outage");

    await redis.restart();
    await waitFor("the breaker to close", async () => {
      await decide("edge", { tenant: "probe" });
      return (await scrape()).some((s) => s.name === "tollgate_degraded" && s.value === 0);
    });
    await snapshot("recovered");
  });
  afterAll(async () => {
    await svc?.stop();
    await redis?.stop();
  });

  it("tollgate_decisions_total: descriptors decided by domain, rule and result, policy answers apart", () => {
    const d = (rule: string, result: string, at = "decided") =>
      value(at, "tollgate_decisions_total", { domain: "edge", rule, result });
    expect(d("edge.tenant", "ok", "start")).toBe(0); // configured rules exported at 0
    expect(d("edge.tenant", "over_limit", "start")).toBe(0);
    expect(d("", "no_match", "start")).toBe(0);
    expect(d("edge.tenant", "ok")).toBe(4); // acme ×2, pair, ov
    expect(d("edge.tenant", "over_limit")).toBe(1);
    expect(d("edge.shadow", "ok")).toBe(1);
    expect(d("edge.shadow", "shadow_over_limit")).toBe(1);
    expect(d("edge.free", "unlimited")).toBe(1);
    expect(d("", "no_match")).toBe(1);
    expect(d("edge.user", "ok")).toBe(1);
    expect(d("edge.leased", "ok")).toBe(3);
    // During the outage: the local fallback answered edge, the policies the other two domains.
    expect(d("edge.tenant", "fallback", "outage")).toBe(7);
    expect(d("edge.tenant", "over_limit", "outage")).toBe(1); // unchanged by the outage
    expect(value("outage", "tollgate_decisions_total", { domain: "closed", result: "policy_deny" })).toBe(1);
    expect(value("outage", "tollgate_decisions_total", { domain: "open", result: "policy_allow" })).toBe(1);
  });

  it("tollgate_hits_total: hits_addend charged or checked, by result", () => {
    const h = (result: string) =>
      value("decided", "tollgate_hits_total", { domain: "edge", rule: "edge.tenant", result });
    expect(h("ok")).toBe(5); // acme 1 + 1, pair 2, ov 1
    expect(h("over_limit")).toBe(1);
  });

  it("tollgate_detailed_decisions_total: detailed_metric rules by the descriptor's key_value", () => {
    expect(
      value("decided", "tollgate_detailed_decisions_total", {
        rule: "edge.user",
        detail: "user_alice",
        result: "ok",
      }),
    ).toBe(1);
  });

  it("tollgate_override_decisions_total: descriptors with a request-supplied limit, by override", () => {
    expect(
      value("decided", "tollgate_override_decisions_total", { override: "7/minute", result: "ok" }),
    ).toBe(1);
  });

  it("tollgate_decision_duration_seconds: one observation per decided request", () => {
    expect(value("decided", "tollgate_decision_duration_seconds_count")).toBe(13);
    expect(value("decided", "tollgate_decision_duration_seconds_bucket", { le: "+Inf" })).toBe(13);
    expect(value("decided", "tollgate_decision_duration_seconds_sum")).toBeGreaterThan(0);
  });

  it("tollgate_store_duration_seconds and tollgate_store_round_trips_total: store calls on Redis", () => {
    const ops = (operation: string) =>
      value("decided", "tollgate_store_duration_seconds_count", { operation }) ?? 0;
    // Takes that reached Redis: acme ×3, pair, ov, shadow ×2, user (not free, nothing, leased, refused).
    expect(ops("take")).toBe(8);
    // Calls were one at a time, so none shared a round trip: one per operation, plus the PING at start.
    expect(value("decided", "tollgate_store_round_trips_total")).toBe(
      ops("take") + ops("lease") + ops("refund") + 1,
    );
  });

  it("tollgate_store_errors_total: classified store errors, each counted once, every kind from 0", () => {
    for (const kind of ["timeout", "connection", "circuit_open", "script"])
      expect(value("start", "tollgate_store_errors_total", { kind })).toBe(0);
    expect(value("one error", "tollgate_store_errors_total", { kind: "connection" })).toBe(1);
    // Five failures in a row open the breaker; the calls after it are not tried.
    expect(value("outage", "tollgate_store_errors_total", { kind: "connection" })).toBe(5);
    expect(value("outage", "tollgate_store_errors_total", { kind: "circuit_open" })).toBe(4);
  });

  it("tollgate_breaker_state and tollgate_degraded: open and degraded during the outage, closed after", () => {
    expect(value("start", "tollgate_breaker_state")).toBe(0);
    expect(value("start", "tollgate_degraded")).toBe(0);
    expect(value("outage", "tollgate_breaker_state")).toBe(2);
    expect(value("outage", "tollgate_degraded")).toBe(1);
    expect(value("recovered", "tollgate_breaker_state")).toBe(0);
    expect(value("recovered", "tollgate_degraded")).toBe(0);
  });

  it("tollgate_lease_*: grants from the store, local hits and misses, unused tokens given back", () => {
    const v = (name: string, labels: Record<string, string> = {}) => value("decided", name, labels) ?? -1;
    // One grant per lease call to the store.
    expect(v("tollgate_lease_grants_total")).toBe(
      v("tollgate_store_duration_seconds_count", { operation: "lease" }),
    );
    expect(v("tollgate_lease_grants_total")).toBeGreaterThanOrEqual(1);
    // Each of the 3 leased takes is a local hit or a miss that went to the store.
    expect(
      v("tollgate_lease_local_total", { outcome: "hit" }) +
        v("tollgate_lease_local_total", { outcome: "miss" }),
    ).toBe(3);
    // The expired lease went back once, with every granted token the 3 takes (cost 1) did not use.
    expect(v("tollgate_lease_returns_total")).toBe(1);
    expect(v("tollgate_lease_returned_tokens_total")).toBe(v("tollgate_lease_granted_tokens_total") - 3);
  });

  it("tollgate_instances: the live instances from the first heartbeat, kept during the outage", () => {
    expect(value("start", "tollgate_instances")).toBe(1);
    expect(value("outage", "tollgate_instances")).toBe(1);
  });

  it("tollgate_config_*: loads by result, whether the last one worked, and when the last good one was", () => {
    expect(value("start", "tollgate_config_reloads_total", { result: "success" })).toBe(1);
    expect(value("start", "tollgate_config_reloads_total", { result: "failure" })).toBe(0);
    expect(value("start", "tollgate_config_last_reload_successful")).toBe(1);
    expect(value("reload failed", "tollgate_config_reloads_total", { result: "failure" })).toBe(1);
    expect(value("reload failed", "tollgate_config_last_reload_successful")).toBe(0);
    const at = value("start", "tollgate_config_last_reload_success_timestamp_seconds") ?? 0;
    expect(at).toBeGreaterThanOrEqual(startedAt - 1);
    expect(at).toBeLessThanOrEqual(Date.now() / 1000);
    expect(value("reload failed", "tollgate_config_last_reload_success_timestamp_seconds")).toBe(at);
  });

  it("tollgate_rejected_requests_total and tollgate_in_flight_requests: refused before a decision; none in flight after", () => {
    for (const reason of ["overload", "deadline"])
      expect(value("decided", "tollgate_rejected_requests_total", { reason })).toBe(0);
    expect(value("decided", "tollgate_rejected_requests_total", { reason: "invalid_argument" })).toBe(2);
    expect(value("decided", "tollgate_in_flight_requests")).toBe(0);
  });

  it("tollgate_build_info: 1, labelled with the package version, the Node.js version and the gRPC transport", () => {
    const labels = { version: PACKAGE_VERSION, node_version: process.versions.node, transport: "tollgate" };
    for (const at of ["start", "recovered"]) expect(value(at, "tollgate_build_info", labels)).toBe(1);
    expect((snapshots.get("start") ?? []).filter((s) => s.name === "tollgate_build_info")).toHaveLength(1);
  });

  it("the debug port serves the same tollgate series with the same values at every step", async () => {
    const names = new Set(await definedNames());
    for (const [at, samples] of snapshots) {
      const onHttp = seriesOf(samples, names);
      expect(onHttp.length).toBeGreaterThan(20);
      expect({ at, series: seriesOf(debugSnapshots.get(at) ?? [], names) }).toEqual({ at, series: onHttp });
    }
  });

  it("leaves no tollgate metric without a check here (RLQS ones: rlqs-truth.test.ts)", async () => {
    const rlqs = (n: string) => n.startsWith("tollgate_rlqs_");
    expect((await definedNames()).filter((n) => !covered.has(n) && !rlqs(n))).toEqual([]);
  });
});
