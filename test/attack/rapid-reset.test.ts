/**
 * Rapid reset (CVE-2023-44487) against the own transport: one connection opens streams with a whole
 * request and resets each in the same write. The server must cut it once the reset budget is spent
 * (GOAWAY ENHANCE_YOUR_CALM), decide none of the reset requests, and keep the other client fast.
 */
import { describe, expect, it } from "vitest";
import {
  CANCEL,
  cpuMs,
  DATA,
  END_HEADERS,
  END_STREAM,
  ENHANCE_YOUR_CALM,
  frame,
  HEADERS,
  healthy,
  metric,
  p99Bound,
  RawPeer,
  RLS_BLOCK,
  RST_STREAM,
  report,
  rlsMessage,
  rssPeak,
  sleep,
  targetPerTest,
  u32,
  wellBehaved,
} from "./kit.js";

const start = targetPerTest();

describe("rapid reset, own transport", { retry: 1 }, () => {
  it("cuts the connection past the reset budget, decides no reset request, keeps the other client fast", async () => {
    // A smaller budget than the default 1000 (nghttp2's): the test shows the cut, not the budget's size.
    const svc = await start("tollgate", ["--grpc-reset-burst", "200"]);
    const pid = svc.proc.pid as number;
    const good = await wellBehaved(svc.grpcPort);
    const rss = rssPeak(pid);
    const decisionsBefore = await metric(svc, "tollgate_decisions_total");
    const cpu0 = cpuMs(pid);
    const peer = new RawPeer(svc.grpcPort);
    peer.open();
    const msg = rlsMessage("attacker");
    let sent = 0;
    let id = 1;
    const started = Date.now();
    while (peer.goawayCode === undefined && !peer.closed && sent < 20_000 && Date.now() - started < 5000) {
      const batch: Buffer[] = [];
      for (let i = 0; i < 100; i++, id += 2) {
        batch.push(
          frame(HEADERS, END_HEADERS, id, RLS_BLOCK),
          frame(DATA, END_STREAM, id, msg),
          frame(RST_STREAM, 0, id, u32(CANCEL)),
        );
      }
      sent += 100;
      if (!(await peer.send(Buffer.concat(batch)))) break;
      await sleep(2);
    }
    await peer.until(() => peer.goawayCode !== undefined || peer.closed, 3000, "the connection to be cut");
    await sleep(Math.max(0, 1500 - (Date.now() - started))); // at least 75 calls measured
    const attackCpu = cpuMs(pid) - cpu0;
    const seen = await good.stop();
    const peakMb = rss.stop();
    peer.close();
    const attackerDecisions = (await metric(svc, "tollgate_decisions_total")) - decisionsBefore - seen.calls;
    report(
      "rapid reset",
      `${sent} streams reset, GOAWAY ${peer.goawayCode}, ${attackerDecisions} decided, server CPU ${attackCpu} ms in ${Date.now() - started} ms`,
      good,
      seen,
      peakMb,
    );
    expect(peer.goawayCode).toBe(ENHANCE_YOUR_CALM);
    // The budget is 200 at once: the cut comes within the next few writes.
    expect(sent).toBeLessThan(1000);
    // Requests reset in the chunk that completed them are never decoded nor decided.
    expect(attackerDecisions).toBeLessThan(sent * 0.05);
    expect(seen.failures).toBe(0);
    expect(seen.timeouts).toBe(0);
    expect(seen.p99).toBeLessThanOrEqual(p99Bound(good.baseline));
    expect(peakMb).toBeLessThanOrEqual(200);
    expect(await healthy(svc)).toBe(true);
  }, 30_000);
});
