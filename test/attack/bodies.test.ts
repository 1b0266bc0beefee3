/**
 * Request bodies (issue 20): 20 connections each uploading 240 unfinished 4 MiB messages can make
 * the server hold no more than its per-connection and per-process bounds, and a long-lived connection
 * sending more than the initial window keeps going (the connection window is refilled as calls
 * consume their messages).
 */
import { connect } from "node:http2";
import { describe, expect, it } from "vitest";
import {
  check,
  DATA,
  END_HEADERS,
  expectTargets,
  frame,
  HEADERS,
  RawPeer,
  RLS_BLOCK,
  report,
  sleep,
  targetPerTest,
  underAttack,
} from "./kit.js";

const MIB = 1 << 20;

const start = targetPerTest();

/** One attacking connection: `streams` uploads of a 4 MiB message, within the windows granted. */
class Uploader {
  readonly peer: RawPeer;
  sent = 0;
  readonly #sentOn = new Map<number, number>();
  constructor(
    port: number,
    readonly streams: number,
  ) {
    this.peer = new RawPeer(port);
    this.peer.open();
    const open: Buffer[] = [];
    for (let i = 0; i < streams; i++) open.push(frame(HEADERS, END_HEADERS, 2 * i + 1, RLS_BLOCK));
    void this.peer.send(Buffer.concat(open));
  }

  /** Send what the windows allow now (16 KiB frames); false when nothing could be sent. */
  async step(): Promise<boolean> {
    const chunk = Buffer.alloc(16_384);
    const out: Buffer[] = [];
    let connRoom = this.peer.connectionWindow - this.sent;
    for (let i = 0; i < this.streams && connRoom > 0; i++) {
      const id = 2 * i + 1;
      const done = this.#sentOn.get(id) ?? 0;
      const room = (this.peer.streamWindows.get(id) ?? 65_535) - done;
      const n = Math.min(16_384, room, connRoom, 4 * MIB - 1 - done);
      if (n <= 0) continue;
      const payload = chunk.subarray(0, n);
      if (done === 0) payload.writeUInt32BE(4 * MIB - 5, 1); // the gRPC prefix: a 4 MiB message
      out.push(frame(DATA, 0, id, payload));
      this.#sentOn.set(id, done + n);
      this.sent += n;
      connRoom -= n;
    }
    if (out.length === 0) return false;
    await this.peer.send(Buffer.concat(out));
    return true;
  }
}

describe("request bodies, own transport", { retry: 1 }, () => {
  it("20 connections of 240 unfinished 4 MiB uploads stay within the buffer bounds", async () => {
    const svc = await start("tollgate", ["--grpc-max-buffered-bytes", String(64 * MIB)]);
    const port = svc.grpcPort;
    let uploaders: Uploader[] = [];
    const o = await underAttack(
      svc,
      async () => {
        uploaders = Array.from({ length: 20 }, () => new Uploader(port, 240));
        const end = Date.now() + 4000;
        while (Date.now() < end) {
          let any = false;
          for (const u of uploaders) any = (await u.step()) || any;
          await sleep(any ? 1 : 20);
        }
        return uploaders.reduce((sum, u) => sum + u.sent, 0);
      },
      4000,
    );
    const most = Math.max(...uploaders.map((u) => u.sent));
    report(
      "request bodies",
      `20 connections × 240 streams × 4 MiB: ${(o.result / MIB).toFixed(1)} MiB accepted in total, at most ${(most / MIB).toFixed(1)} MiB on one connection`,
      o.good,
      o.seen,
      o.peakMb,
    );
    // Per connection: its window bound (8 MiB) plus the protocol's first 64 KiB.
    expect(most).toBeLessThanOrEqual(8 * MIB + 65_535);
    // Per process: the pool (64 MiB here) plus each connection's first 64 KiB.
    expect(o.result).toBeLessThanOrEqual(64 * MIB + 20 * 65_535);
    await expectTargets(svc, o, 512, check);
    for (const u of uploaders) u.peer.close();
  }, 60_000);

  it("a long-lived connection sends many times the initial window: the connection window is refilled", async () => {
    const svc = await start("tollgate");
    const session = connect(`http://127.0.0.1:${svc.grpcPort}`);
    session.on("error", () => {});
    const message = Buffer.alloc(5 + 3 * MIB, 0x41);
    message[0] = 0;
    message.writeUInt32BE(3 * MIB, 1);
    const statuses: number[] = [];
    // 6 × 3 MiB = 18 MiB on one connection: past the 64 KiB initial window and the 8 MiB bound.
    for (let i = 0; i < 6; i++) {
      const status = await new Promise<number>((resolve) => {
        const stream = session.request({
          ":method": "POST",
          ":path": "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit",
          "content-type": "application/grpc",
          te: "trailers",
        });
        let code = -1;
        const take = (h: Record<string, unknown>) => {
          if (h["grpc-status"] !== undefined) code = Number(h["grpc-status"]);
        };
        stream.on("response", take);
        stream.on("trailers", take);
        stream.on("data", () => {});
        stream.on("error", () => {});
        stream.on("close", () => resolve(code));
        const timer = setTimeout(() => stream.close(), 10_000);
        stream.on("close", () => clearTimeout(timer));
        stream.end(message);
      });
      statuses.push(status);
    }
    session.close();
    // Every message arrived whole: decoded (3 MiB of "A" is not a RateLimitRequest: INVALID_ARGUMENT).
    expect(statuses).toEqual([3, 3, 3, 3, 3, 3]);
  }, 90_000);
});
