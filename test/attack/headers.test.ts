/**
 * Header blocks as attacks (issue 20): the HPACK bomb (one 4 KB table entry referenced thousands of
 * times per block), 20 connections each leaving a 64 KB header block unfinished, and the bounds on a
 * block's CONTINUATION frames and size, each against the own transport with another client measuring.
 */
import { describe, expect, it } from "vitest";
import { literalField } from "../../src/protocol/h2/frames.js";
import {
  CONTINUATION,
  check,
  END_HEADERS,
  END_STREAM,
  ENHANCE_YOUR_CALM,
  expectTargets,
  frame,
  HEADERS,
  RawPeer,
  REFUSED_STREAM,
  RLS_BLOCK,
  report,
  sleep,
  targetPerTest,
  underAttack,
} from "./kit.js";

const start = targetPerTest();

/** HPACK literal with incremental indexing, new name: `name: value` enters the dynamic table. */
function indexed(name: string, value: string): Buffer {
  const v = Buffer.from(value, "latin1");
  const len = [0x7f, ...varint(v.length - 127)];
  return Buffer.concat([Buffer.from([0x40, name.length]), Buffer.from(name, "latin1"), Buffer.from(len), v]);
}

function varint(n: number): number[] {
  const out: number[] = [];
  let v = n;
  while (v >= 128) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}

describe("header blocks, own transport", { retry: 1 }, () => {
  it("an HPACK bomb is refused without decoding it, and the connection cut past the budget", async () => {
    const svc = await start("tollgate");
    const peer = new RawPeer(svc.grpcPort);
    peer.open();
    const o = await underAttack(svc, async () => {
      let id = 1;
      let blocks = 0;
      // The first block enters a 4,000-byte value in the table; every block references it 12,000 times
      // (48 MB of header list from 16 KB).
      const refs = Buffer.alloc(12_000, 0xbe);
      const first = Buffer.concat([RLS_BLOCK, indexed("x-bomb", "a".repeat(4000)), refs]);
      const next = Buffer.concat([RLS_BLOCK, refs]);
      while (peer.goawayCode === undefined && !peer.closed && blocks < 2000) {
        const batch: Buffer[] = [];
        for (let i = 0; i < 20; i++, id += 2, blocks++)
          batch.push(frame(HEADERS, END_HEADERS | END_STREAM, id, blocks === 0 ? first : next));
        if (!(await peer.send(Buffer.concat(batch)))) break;
        await sleep(2);
      }
      await peer.until(() => peer.goawayCode !== undefined, 3000, "GOAWAY");
      return blocks;
    });
    const refused = peer.resets.get(REFUSED_STREAM) ?? 0;
    report(
      "HPACK bomb",
      `${o.result} blocks of 16 KB (48 MB of header list each) sent, ${refused} refused, GOAWAY ${peer.goawayCode}`,
      o.good,
      o.seen,
      o.peakMb,
    );
    expect(peer.goawayCode).toBe(ENHANCE_YOUR_CALM);
    expect(refused).toBeGreaterThan(0);
    expect(o.result).toBeLessThan(200); // the budget: 20 at once (and 2/s)
    await expectTargets(svc, o, 200, check);
    peer.close();
  }, 60_000);

  it("20 connections leaving a 64 KB header block unfinished are cut at the deadline", async () => {
    const svc = await start("tollgate", ["--grpc-request-timeout", "1s"]);
    const port = svc.grpcPort;
    const peers: RawPeer[] = [];
    const o = await underAttack(svc, async () => {
      const filler = Buffer.from(literalField("x-pad", "p".repeat(16_000)));
      for (let c = 0; c < 20; c++) {
        const peer = new RawPeer(port);
        peer.open();
        await peer.send(
          Buffer.concat([
            frame(HEADERS, 0, 1, Buffer.concat([RLS_BLOCK, filler])),
            frame(CONTINUATION, 0, 1, filler),
            frame(CONTINUATION, 0, 1, filler),
            frame(CONTINUATION, 0, 1, filler),
          ]),
        );
        peers.push(peer);
      }
      const t = Date.now();
      await peers[0]?.until(() => peers.every((p) => p.goawayCode !== undefined), 5000, "every GOAWAY");
      return Date.now() - t;
    });
    report(
      "unfinished header blocks",
      `20 connections × 64 KB, all cut ${o.result} ms after (deadline 1 s)`,
      o.good,
      o.seen,
      o.peakMb,
    );
    for (const p of peers) expect(p.goawayCode).toBe(ENHANCE_YOUR_CALM);
    expect(o.result).toBeLessThan(3000);
    await expectTargets(svc, o, 512, check);
    for (const p of peers) p.close();
  }, 60_000);

  it("a header block of 9 CONTINUATION frames, or over 80 KiB, ends the connection", async () => {
    const svc = await start("tollgate");
    const many = new RawPeer(svc.grpcPort);
    many.open();
    const small = Buffer.from(literalField("x-a", "b"));
    const frames = [frame(HEADERS, 0, 1, RLS_BLOCK)];
    for (let i = 0; i < 9; i++) frames.push(frame(CONTINUATION, 0, 1, small));
    await many.send(Buffer.concat(frames));
    await many.until(() => many.goawayCode !== undefined, 3000, "GOAWAY after 9 CONTINUATION frames");
    expect(many.goawayCode).toBe(ENHANCE_YOUR_CALM);

    const big = new RawPeer(svc.grpcPort);
    big.open();
    const filler = Buffer.from(literalField("x-pad", "p".repeat(16_000)));
    const parts = [frame(HEADERS, 0, 1, Buffer.concat([RLS_BLOCK, filler]))];
    for (let i = 0; i < 5; i++) parts.push(frame(CONTINUATION, 0, 1, filler));
    await big.send(Buffer.concat(parts));
    await big.until(() => big.goawayCode !== undefined, 3000, "GOAWAY past 80 KiB");
    expect(big.goawayCode).toBe(ENHANCE_YOUR_CALM);
    many.close();
    big.close();
  }, 30_000);
});
