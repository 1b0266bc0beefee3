/**
 * Control frames cost constant work (issue 20): a WINDOW_UPDATE flood while hundreds of answers wait
 * on zero stream windows, SETTINGS frames of thousands of entries, and a PING flood from a peer that
 * never reads the acknowledgements, each against the own transport with another client measuring.
 */
import { describe, expect, it } from "vitest";
import {
  check,
  ENHANCE_YOUR_CALM,
  expectTargets,
  frame,
  INITIAL_WINDOW_SIZE,
  PING,
  RawPeer,
  report,
  request,
  settings,
  sleep,
  targetPerTest,
  u32,
  underAttack,
  WINDOW_UPDATE,
} from "./kit.js";

const start = targetPerTest();

describe("control frames, own transport", { retry: 1 }, () => {
  it("a WINDOW_UPDATE flood does not walk the streams waiting on their own windows", async () => {
    const svc = await start("tollgate");
    const peer = new RawPeer(svc.grpcPort);
    peer.open([[INITIAL_WINDOW_SIZE, 0]]); // every answer's DATA waits on its stream window
    const streams = 900;
    const reqs: Buffer[] = [];
    for (let i = 0; i < streams; i++) reqs.push(request(2 * i + 1));
    await peer.send(Buffer.concat(reqs));
    await sleep(300);
    const updates = 200_000;
    const o = await underAttack(svc, async () => {
      const batch = Buffer.concat(Array.from({ length: 5000 }, () => frame(WINDOW_UPDATE, 0, 0, u32(1))));
      for (let sent = 0; sent < updates; sent += 5000) await peer.send(batch);
      // The PING is answered once every WINDOW_UPDATE before it was read.
      const t = Date.now();
      await peer.send(frame(PING, 0, 0, Buffer.alloc(8)));
      await peer.until(() => peer.pingAcks > 0, 5000, "the PING ACK after the flood");
      return Date.now() - t;
    });
    report(
      "WINDOW_UPDATE flood",
      `${streams} parked answers, ${updates} WINDOW_UPDATE(0,+1) (${((updates * 13) / 1e6).toFixed(1)} MB), PING ACK ${o.result} ms after`,
      o.good,
      o.seen,
      o.peakMb,
    );
    expect(peer.closed).toBe(false);
    expect(o.result).toBeLessThan(2000);
    await expectTargets(svc, o, 200, check);
    peer.close();
  }, 60_000);

  it("a SETTINGS frame of 2,730 entries gets GOAWAY ENHANCE_YOUR_CALM at once", async () => {
    const svc = await start("tollgate");
    const peer = new RawPeer(svc.grpcPort);
    peer.open();
    const reqs: Buffer[] = [];
    for (let i = 0; i < 500; i++) reqs.push(request(2 * i + 1));
    await peer.send(Buffer.concat(reqs));
    const o = await underAttack(svc, async () => {
      const big = settings(
        Array.from({ length: 2730 }, (_, i) => [INITIAL_WINDOW_SIZE, i % 2 ? 65_535 : 1] as const),
      );
      let frames = 0;
      while (peer.goawayCode === undefined && !peer.closed && frames < 200) {
        await peer.send(big);
        frames++;
        await sleep(1);
      }
      await peer.until(() => peer.goawayCode !== undefined, 3000, "GOAWAY");
      return frames;
    });
    report(
      "SETTINGS of 2,730 entries",
      `${o.result} frames sent, GOAWAY ${peer.goawayCode}`,
      o.good,
      o.seen,
      o.peakMb,
    );
    expect(peer.goawayCode).toBe(ENHANCE_YOUR_CALM);
    await expectTargets(svc, o, 200, check);
    peer.close();
  }, 60_000);

  it("a peer that floods PING and never reads the ACKs is cut", async () => {
    // The output stall deadline is the request deadline (10 s by default); 1 s keeps the test short.
    const svc = await start("tollgate", ["--grpc-request-timeout", "1s"]);
    const peer = new RawPeer(svc.grpcPort, { read: false });
    peer.open();
    const o = await underAttack(svc, async () => {
      const batch = Buffer.concat(Array.from({ length: 1000 }, () => frame(PING, 0, 0, Buffer.alloc(8))));
      let bytes = 0;
      const deadline = Date.now() + 15_000;
      while (!peer.closed && Date.now() < deadline && bytes < 200e6) {
        const ok = await Promise.race([peer.send(batch), sleep(2000).then(() => true)]);
        if (!ok) break;
        bytes += batch.length;
      }
      await peer.until(() => peer.closed, 15_000, "the connection to be cut");
      return bytes;
    });
    report(
      "PING flood, ACKs unread",
      `${(o.result / 1e6).toFixed(1)} MB of PING sent before the cut, in ${o.ms} ms`,
      o.good,
      o.seen,
      o.peakMb,
    );
    expect(peer.closed).toBe(true);
    await expectTargets(svc, o, 200, check);
  }, 60_000);
});
