/**
 * TollgateConfigReloadFailing, TollgateDown and TollgateAbsent on recorded scrapes of a real tollgate:
 * a bad config reloaded by SIGHUP (the alert fires while it stays broken, not just for a while after
 * the failure, and resolves once a good reload lands), then the process killed (scrapes fail: up 0),
 * then the target gone from discovery (no up at all). The debug listener's /metrics (`--debug-addr`,
 * the port envoyproxy/ratelimit users scrape) is recorded as a second target and must agree.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { type Service, startService } from "../helpers/service.js";
import { steps, waitFor } from "./drive.js";
import { expectAlerts, hasPromtool, namesAlertsRead, ScrapeRecorder, TARGET } from "./scrapes.js";

const GOOD =
  "domain: edge\ndescriptors:\n  - key: tenant\n    rate_limit: { unit: minute, requests_per_unit: 5 }\n";
const BAD =
  "domain: edge\ndescriptors:\n  - key: tenant\n    rate_limit: { unit: fortnight, requests_per_unit: 5 }\n";

describe.skipIf(!(await hasPromtool()))("alerts on a real tollgate: reload failing, down, absent", () => {
  let svc: Service;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "tollgate-alert-reload-"));
    writeFileSync(join(dir, "edge.yaml"), GOOD);
    // Reloads only by SIGHUP here (no polling), so each phase starts exactly when the test says.
    svc = await startService({ config: dir, args: ["--reload-poll", "0s", "--debug-addr", "127.0.0.1:0"] });
  });
  afterAll(async () => {
    await svc?.stop("SIGKILL");
  });

  const reloadTo = async (text: string, expect: "ok" | "FAILED") => {
    writeFileSync(join(dir, "edge.yaml"), text);
    svc.proc.kill("SIGHUP");
    await waitFor(`reload ${expect}`, async () =>
      (await (await svc.http("/rlconfig")).text()).includes(`# last reload: ${expect}`),
    );
  };

  it("fires while the config stays broken and resolves after a good reload; fires Down, then Absent; on both ports", async () => {
    const rec = new ScrapeRecorder(await namesAlertsRead());
    const debug = new ScrapeRecorder(await namesAlertsRead());
    await steps(rec, svc, 3, undefined, { debug });
    rec.mark("broken");
    await reloadTo(BAD, "FAILED");
    // Longer than any 15-minute increase() window: the alert must not resolve while still broken.
    await steps(rec, svc, 22, undefined, { debug });
    rec.mark("fixed");
    await reloadTo(GOOD, "ok");
    await steps(rec, svc, 4, undefined, { debug });
    rec.mark("killed");
    await svc.stop("SIGKILL");
    await steps(rec, svc, 4, undefined, { debug });
    rec.mark("gone");
    for (let i = 0; i < 13; i++) for (const r of [rec, debug]) r.gone();

    const broken = rec.at("broken");
    const killed = rec.at("killed");
    const gone = rec.at("gone");
    const target = [{ ...TARGET }];
    const expected = [
      { alert: "TollgateConfigReloadFailing", step: broken - 1, firing: [] },
      { alert: "TollgateConfigReloadFailing", step: broken + 3, firing: [] }, // for: 5m
      { alert: "TollgateConfigReloadFailing", step: broken + 6, firing: target },
      { alert: "TollgateConfigReloadFailing", step: broken + 21, firing: target }, // still broken: still firing
      { alert: "TollgateConfigReloadFailing", step: rec.at("fixed") + 1, firing: [] },
      { alert: "TollgateDown", step: killed - 1, firing: [] },
      { alert: "TollgateDown", step: killed + 2, firing: target },
      { alert: "TollgateAbsent", step: killed + 2, firing: [] },
      { alert: "TollgateDown", step: gone + 6, firing: [] }, // no up sample left within the lookback
      { alert: "TollgateAbsent", step: gone + 12, firing: [{ job: "tollgate" }] },
    ];
    await expectAlerts(rec, expected);
    await expectAlerts(debug, expected);
  });
});
