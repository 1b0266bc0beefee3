/**
 * Connections and streams (issue 20): slowloris (connections that never finish the handshake), the
 * connection cap, one connection opening far more streams than its share (and never finishing them),
 * and answers parked behind a zero window, each against the own transport with another client measuring.
 */
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { PREFACE } from "../../src/protocol/h2/frames.js";
import {
  CANCEL,
  check,
  END_HEADERS,
  ENHANCE_YOUR_CALM,
  expectTargets,
  frame,
  HEADERS,
  INITIAL_WINDOW_SIZE,
  RawPeer,
  REFUSED_STREAM,
  RLS_BLOCK,
  report,
  request,
  sleep,
  targetPerTest,
  underAttack,
} from "./kit.js";

const start = targetPerTest();

describe("connections and streams, own transport", { retry: 1 }, () => {
  it("slowloris: connections without a preface or SETTINGS are closed at the handshake deadline", async () => {
    const svc = await start("tollgate", ["--grpc-handshake-timeout", "1s"]);
    const port = svc.grpcPort;
    const sockets: { closed: boolean }[] = [];
    const o = await underAttack(svc, async () => {
      for (let i = 0; i < 400; i++) {
        const s = connect(port, "127.0.0.1");
        const entry = { closed: false };
        s.on("error", () => {});
        s.on("close", () => {
          entry.closed = true;
        });
        s.on("data", () => {});
        if (i % 2 === 1) s.write(PREFACE); // half send the preface, then nothing
        sockets.push(entry);
      }
      const t = Date.now();
      while (sockets.some((s) => !s.closed) && Date.now() - t < 5000) await sleep(50);
      return Date.now() - t;
    });
    const open = sockets.filter((s) => !s.closed).length;
    report(
      "slowloris",
      `400 connections, ${open} still open ${o.result} ms after the last opened`,
      o.good,
      o.seen,
      o.peakMb,
    );
    expect(open).toBe(0);
    await expectTargets(svc, o, 512, check);
  }, 60_000);

  it("connections past --grpc-max-connections are closed as they arrive", async () => {
    const svc = await start("tollgate", ["--grpc-max-connections", "20"]);
    const port = svc.grpcPort;
    const peers = Array.from({ length: 40 }, () => {
      const p = new RawPeer(port);
      p.open();
      return p;
    });
    await sleep(1000);
    const open = peers.filter((p) => !p.closed).length;
    expect(open).toBeLessThanOrEqual(20);
    expect(open).toBeGreaterThan(0);
    for (const p of peers) p.close();
    await sleep(200);
    expect(await (await svc.http("/healthcheck")).status).toBe(200);
  }, 30_000);

  it("one connection cannot take every in-flight slot, and its unfinished requests are reset at the deadline", async () => {
    const svc = await start("tollgate", [
      "--max-in-flight",
      "300",
      "--grpc-max-concurrent-streams",
      "100",
      "--grpc-request-timeout",
      "1s",
    ]);
    const peer = new RawPeer(svc.grpcPort);
    peer.open();
    const o = await underAttack(
      svc,
      async () => {
        const open: Buffer[] = [];
        for (let i = 0; i < 1000; i++) open.push(frame(HEADERS, END_HEADERS, 2 * i + 1, RLS_BLOCK));
        await peer.send(Buffer.concat(open));
        await peer.until(() => (peer.resets.get(CANCEL) ?? 0) >= 100, 5000, "the deadline resets");
        return { refused: peer.resets.get(REFUSED_STREAM) ?? 0, cancelled: peer.resets.get(CANCEL) ?? 0 };
      },
      2000,
    );
    report(
      "stream-count abuse",
      `1000 unfinished streams on one connection: ${o.result.refused} refused, ${o.result.cancelled} reset at the deadline`,
      o.good,
      o.seen,
      o.peakMb,
    );
    expect(o.result.refused).toBe(900);
    expect(o.result.cancelled).toBe(100);
    await expectTargets(svc, o, 200, check);
    peer.close();
  }, 60_000);

  it("answers parked behind a zero window past --grpc-max-unsent-bytes end the connection", async () => {
    const svc = await start("tollgate", ["--grpc-max-unsent-bytes", "4096"]);
    const peer = new RawPeer(svc.grpcPort);
    peer.open([[INITIAL_WINDOW_SIZE, 0]]);
    const o = await underAttack(svc, async () => {
      let id = 1;
      while (peer.goawayCode === undefined && !peer.closed && id < 1000) {
        const batch: Buffer[] = [];
        for (let i = 0; i < 20; i++, id += 2) batch.push(request(id));
        await peer.send(Buffer.concat(batch));
        await sleep(5);
      }
      await peer.until(() => peer.goawayCode !== undefined, 3000, "GOAWAY");
      return (id - 1) / 2;
    });
    report(
      "parked answers",
      `${o.result} answers parked before GOAWAY ${peer.goawayCode}`,
      o.good,
      o.seen,
      o.peakMb,
    );
    expect(peer.goawayCode).toBe(ENHANCE_YOUR_CALM);
    await expectTargets(svc, o, 200, check);
    peer.close();
  }, 60_000);
});
