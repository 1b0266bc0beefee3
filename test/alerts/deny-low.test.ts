/**
 * TollgateDenyRatioAbnormallyLow on recorded scrapes of a real tollgate, one step per 5 minutes of
 * Prometheus time: a day in which a tenant keeps going over its limit, then denials stop while
 * traffic goes on (the alert fires after an hour without denials and its 30-minute `for:`), then
 * denials resume (it resolves). Each call carries 320 descriptors so a step holds over 300 decisions.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { type Entries, type RlsClient, rlsClient } from "../chaos/rls-client.js";
import { type Service, startService } from "../helpers/service.js";
import { steps } from "./drive.js";
import { expectAlerts, hasPromtool, namesAlertsRead, ScrapeRecorder } from "./scrapes.js";

const CONFIG =
  "domain: edge\ndescriptors:\n  - key: tenant\n    rate_limit: { unit: hour, requests_per_unit: 1 }\n";

describe.skipIf(!(await hasPromtool()))("alerts on a real tollgate: denials stop", () => {
  let svc: Service;
  let client: RlsClient;
  let n = 0;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "tollgate-alert-low-"));
    writeFileSync(join(dir, "edge.yaml"), CONFIG);
    svc = await startService({ config: dir, args: ["--max-descriptors", "400"] });
    client = rlsClient(svc.grpcPort);
  });
  afterAll(async () => {
    client?.close();
    await svc?.stop();
  });

  // Over 300 decisions per 5-minute step: the alert's more than 1 decision/s.
  const traffic = () =>
    client.call(
      "edge",
      Array.from({ length: 320 }, (): Entries => [["tenant", `t${n++}`]]),
    );
  const withDenials = () => Promise.all([traffic(), client.call("edge", [[["tenant", "hot"]]])]);

  it("fires once a domain that denied all day has denied nothing for an hour, and resolves when denials resume", async () => {
    const rec = new ScrapeRecorder(await namesAlertsRead(), { stepMinutes: 5 });
    await steps(rec, svc, 290, withDenials); // a day and a bit
    rec.mark("stopped");
    await steps(rec, svc, 24, traffic); // two hours without a denial
    rec.mark("resumed");
    await steps(rec, svc, 4, withDenials);

    const stopped = rec.at("stopped");
    await expectAlerts(rec, [
      { alert: "TollgateDenyRatioAbnormallyLow", step: stopped - 1, firing: [] },
      { alert: "TollgateDenyRatioAbnormallyLow", step: stopped + 10, firing: [] }, // within the hour
      { alert: "TollgateDenyRatioAbnormallyLow", step: stopped + 22, firing: [{ domain: "edge" }] },
      { alert: "TollgateDenyRatioAbnormallyLow", step: rec.at("resumed") + 2, firing: [] },
    ]);
  });
});
