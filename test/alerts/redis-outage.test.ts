/**
 * TollgateDegraded and TollgateStoreErrors on recorded scrapes of a real tollgate over a private
 * redis-server: one store error (Redis frozen for one call) fires nothing; Redis SIGKILLed fires both
 * while it is down and they resolve once it is back. During the outage the `deny` domain answers
 * OVER_LIMIT by policy: TollgateDenyRatioHigh stays quiet, as those are not tenants over their limits.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RlsClient, rlsClient } from "../chaos/rls-client.js";
import { type RedisServer, startRedis } from "../helpers/redis.js";
import { type Service, startService } from "../helpers/service.js";
import { metricNow, steps, waitFor } from "./drive.js";
import { expectAlerts, hasPromtool, namesAlertsRead, ScrapeRecorder, TARGET } from "./scrapes.js";

const PER_STEP = 40;

describe.skipIf(!(await hasPromtool()))("alerts on a real tollgate: Redis outage", () => {
  let redis: RedisServer;
  let svc: Service;
  let client: RlsClient;
  let n = 0;
  beforeAll(async () => {
    redis = await startRedis();
    const dir = mkdtempSync(join(tmpdir(), "tollgate-alert-redis-"));
    for (const policy of ["deny", "local"])
      writeFileSync(
        join(dir, `${policy}.yaml`),
        `domain: ${policy}\non_store_error: ${policy}\ndescriptors:\n  - key: tenant\n    rate_limit: { unit: hour, requests_per_unit: 1000 }\n`,
      );
    // A deadline a loaded machine's healthy calls never miss: the one store error is the planned one.
    svc = await startService({ config: dir, store: redis.url, args: ["--store-deadline", "300ms"] });
    client = rlsClient(svc.grpcPort);
  });
  afterAll(async () => {
    client?.close();
    await svc?.stop();
    await redis?.stop();
  });

  const traffic = () =>
    Promise.all(
      Array.from({ length: PER_STEP }, (_, i) =>
        client.call(i % 4 === 0 ? "local" : "deny", [[["tenant", `t${n++}`]]]),
      ),
    );

  it("fires nothing on one store error, both alerts while Redis is down, and resolves once it is back", async () => {
    const rec = new ScrapeRecorder(await namesAlertsRead());
    await steps(rec, svc, 3, traffic);
    rec.mark("blip");
    process.kill(redis.pid, "SIGSTOP");
    const blip = await client.call("deny", [[["tenant", "blip"]]]);
    process.kill(redis.pid, "SIGCONT");
    expect(blip.code).toBe("OVER_LIMIT"); // answered by the deny policy after the 300 ms deadline
    expect(await metricNow(svc, 'tollgate_store_errors_total{kind="timeout"}')).toBe(1);
    await steps(rec, svc, 12, traffic);
    rec.mark("dead");
    await redis.kill("SIGKILL");
    await steps(rec, svc, 14, traffic);
    rec.mark("back");
    await redis.restart();
    // The breaker closes on the first probe that works: keep calling until it has.
    await waitFor("the breaker to close", async () => {
      await client.call("deny", [[["tenant", `probe-${n++}`]]]);
      return (await metricNow(svc, "tollgate_degraded")) === 0;
    });
    await steps(rec, svc, 8, traffic);

    const target = [{ ...TARGET }];
    const dead = rec.at("dead");
    await expectAlerts(rec, [
      { alert: "TollgateStoreErrors", step: dead - 1, firing: [] }, // the one error: nothing
      { alert: "TollgateDegraded", step: dead - 1, firing: [] },
      { alert: "TollgateDegraded", step: dead + 3, firing: target },
      { alert: "TollgateStoreErrors", step: dead + 5, firing: [] }, // for: 10m
      { alert: "TollgateStoreErrors", step: dead + 13, firing: [{ ...TARGET, kind: "circuit_open" }] },
      { alert: "TollgateDenyRatioHigh", step: dead + 13, firing: [] },
      { alert: "TollgateDegraded", step: rec.at("back") + 2, firing: [] },
      { alert: "TollgateStoreErrors", step: rec.at("back") + 7, firing: [] },
    ]);
  });
});
