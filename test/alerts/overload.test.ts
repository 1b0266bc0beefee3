/**
 * TollgateOverloaded and TollgateDecisionLatencyHigh on recorded scrapes of a real tollgate whose
 * store answers after 400 ms (a RESP peer) with `--max-in-flight 2`: each step 20 concurrent calls,
 * 2 decided slowly and 18 refused RESOURCE_EXHAUSTED. Then the store fails fast instead (answered by
 * policy at once): both alerts resolve.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GRPC, type RlsClient, rlsClient } from "../chaos/rls-client.js";
import { type FakeResp, startFakeResp } from "../helpers/fake-resp.js";
import { type Service, startService } from "../helpers/service.js";
import { steps } from "./drive.js";
import { expectAlerts, hasPromtool, namesAlertsRead, ScrapeRecorder, TARGET } from "./scrapes.js";

describe.skipIf(!(await hasPromtool()))("alerts on a real tollgate: overload and slow decisions", () => {
  let fake: FakeResp;
  let svc: Service;
  let client: RlsClient;
  beforeAll(async () => {
    fake = await startFakeResp({ kind: "slow", ms: 400 });
    const dir = mkdtempSync(join(tmpdir(), "tollgate-alert-overload-"));
    writeFileSync(
      join(dir, "deny.yaml"),
      "domain: deny\non_store_error: deny\ndescriptors:\n  - key: tenant\n    rate_limit: { unit: hour, requests_per_unit: 100 }\n",
    );
    svc = await startService({
      config: dir,
      store: fake.url,
      args: [
        "--max-in-flight",
        "2",
        "--store-deadline",
        "2s",
        "--redis-command-timeout",
        "2s",
        "--breaker-failures",
        "100000",
      ],
    });
    client = rlsClient(svc.grpcPort);
  });
  afterAll(async () => {
    client?.close();
    await svc?.stop();
    await fake?.close();
  });

  let refused = 0;
  const burst = async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => client.call("deny", [[["tenant", `t${i}`]]])),
    );
    refused += answers.filter((a) => a.grpcStatus === GRPC.RESOURCE_EXHAUSTED).length;
  };
  const calm = async () => {
    for (let i = 0; i < 5; i++) await client.call("deny", [[["tenant", `c${i}`]]]);
  };

  it("fires both while calls pile up on a slow store and resolves once answers are quick again", async () => {
    const rec = new ScrapeRecorder(await namesAlertsRead());
    await steps(rec, svc, 2);
    rec.mark("overload");
    await steps(rec, svc, 8, burst);
    expect(refused).toBeGreaterThanOrEqual(8 * 10);
    rec.mark("fast");
    fake.setMode({ kind: "drop" });
    await steps(rec, svc, 8, calm);

    const target = [{ ...TARGET }];
    const overload = rec.at("overload");
    await expectAlerts(rec, [
      { alert: "TollgateOverloaded", step: overload - 1, firing: [] },
      { alert: "TollgateOverloaded", step: overload + 3, firing: [] }, // for: 5m
      { alert: "TollgateOverloaded", step: overload + 7, firing: target },
      { alert: "TollgateDecisionLatencyHigh", step: overload + 7, firing: target },
      { alert: "TollgateOverloaded", step: rec.at("fast") + 7, firing: [] },
      { alert: "TollgateDecisionLatencyHigh", step: rec.at("fast") + 7, firing: [] },
    ]);
  });
});
