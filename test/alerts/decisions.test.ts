/**
 * TollgateDenyRatioHigh and TollgateNoMatchShareHigh on recorded scrapes of a real tollgate (memory
 * store): a tenant hammering past its limit makes half the decisions over-limit, then calm; then
 * descriptors that drifted away from the rules (no rule matches them), then calm. Each alert fires
 * while its condition lasts, resolves after, and stays quiet during the other's.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { type RlsClient, rlsClient } from "../chaos/rls-client.js";
import { type Service, startService } from "../helpers/service.js";
import { steps } from "./drive.js";
import { expectAlerts, hasPromtool, namesAlertsRead, ScrapeRecorder } from "./scrapes.js";

const CONFIG =
  "domain: edge\ndescriptors:\n  - key: tenant\n    rate_limit: { unit: hour, requests_per_unit: 5 }\n";
/** Calls per step per kind: well over the alerts' 1 decision/s at one step per minute. */
const PER_STEP = 40;

describe.skipIf(!(await hasPromtool()))("alerts on a real tollgate: deny ratio and no-match share", () => {
  let svc: Service;
  let client: RlsClient;
  let fresh = 0;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "tollgate-alert-decisions-"));
    writeFileSync(join(dir, "edge.yaml"), CONFIG);
    svc = await startService({ config: dir });
    client = rlsClient(svc.grpcPort);
  });
  afterAll(async () => {
    client?.close();
    await svc?.stop();
  });

  const calls = (n: number, descriptor: () => [string, string][]) =>
    Promise.all(Array.from({ length: n }, () => client.call("edge", [descriptor()])));
  const okTraffic = () => calls(PER_STEP, () => [["tenant", `fresh-${fresh++}`]]);
  const abuse = () => Promise.all([okTraffic(), calls(PER_STEP, () => [["tenant", "hot"]])]);
  const drift = () => Promise.all([okTraffic(), calls(PER_STEP, () => [["user", `u-${fresh++}`]])]);

  it("fires each alert while its condition lasts and resolves after", async () => {
    const rec = new ScrapeRecorder(await namesAlertsRead());
    await steps(rec, svc, 3, okTraffic);
    rec.mark("abuse");
    await steps(rec, svc, 14, abuse);
    rec.mark("calm");
    await steps(rec, svc, 8, okTraffic);
    rec.mark("drift");
    await steps(rec, svc, 14, drift);
    rec.mark("calm again");
    await steps(rec, svc, 8, okTraffic);

    const edge = [{ domain: "edge" }];
    await expectAlerts(rec, [
      { alert: "TollgateDenyRatioHigh", step: rec.at("abuse") + 5, firing: [] }, // for: 10m
      { alert: "TollgateDenyRatioHigh", step: rec.at("abuse") + 13, firing: edge },
      { alert: "TollgateDenyRatioHigh", step: rec.at("calm") + 7, firing: [] },
      { alert: "TollgateDenyRatioHigh", step: rec.at("drift") + 13, firing: [] },
      { alert: "TollgateNoMatchShareHigh", step: rec.at("abuse") + 13, firing: [] },
      { alert: "TollgateNoMatchShareHigh", step: rec.at("drift") + 5, firing: [] }, // for: 10m
      { alert: "TollgateNoMatchShareHigh", step: rec.at("drift") + 13, firing: edge },
      { alert: "TollgateNoMatchShareHigh", step: rec.at("calm again") + 7, firing: [] },
    ]);
  });
});
