/**
 * The accounting behind the own transport's attack bounds (protocol/h2/limits.ts, recv-flow.ts) and
 * the HPACK decoder's header-list bound; the attacks themselves are in test/attack/.
 */
import { describe, expect, it } from "vitest";
import { HpackDecoder } from "../../../src/protocol/h2/hpack.js";
import { BufferPool, DEFAULT_LIMITS, limitsWith, RateBudget } from "../../../src/protocol/h2/limits.js";
import { RecvFlow } from "../../../src/protocol/h2/recv-flow.js";

describe("RateBudget", () => {
  it("allows the burst at once, then refuses until time refills it", async () => {
    const b = new RateBudget(3, 1000);
    expect([b.take(), b.take(), b.take(), b.take()]).toEqual([true, true, true, false]);
    await new Promise((r) => setTimeout(r, 20));
    expect(b.take()).toBe(true);
  });
});

describe("limitsWith", () => {
  it("keeps the defaults for unset fields", () => {
    const l = limitsWith({ maxStreams: 5 });
    expect(l.maxStreams).toBe(5);
    expect(l.connectionWindow).toBe(DEFAULT_LIMITS.connectionWindow);
  });
});

describe("RecvFlow", () => {
  it("gives held bytes back as window only while the pool and the connection bound have room", () => {
    const pool = new BufferPool(100_000);
    const flow = new RecvFlow(pool, 65_535 + 50_000);
    expect(flow.receive(40_000)).toBe(true);
    flow.hold(40_000);
    expect(flow.update()).toBe(40_000); // reserved: the peer may send them again at once
    expect(pool.free).toBe(60_000);
    expect(flow.receive(40_000)).toBe(true);
    flow.hold(40_000); // only 10,000 more fit the connection's bound
    expect(pool.free).toBe(50_000);
    expect(flow.update()).toBe(10_000);
    expect(flow.held).toBe(80_000);
    flow.release(80_000); // consumed: the unreserved 30,000 are owed as window, the rest to the pool
    expect(pool.free).toBe(100_000);
    expect(flow.update()).toBe(0); // the peer still has more than half its window
    expect(flow.receive(10_000)).toBe(true);
    flow.discard(10_000);
    expect(flow.update()).toBe(40_000);
    expect(flow.window).toBe(65_535);
  });

  it("reports DATA past the window", () => {
    const flow = new RecvFlow(new BufferPool(0), 65_535);
    expect(flow.receive(65_535)).toBe(true);
    expect(flow.receive(1)).toBe(false);
  });

  it("returns its reservation to the pool when the connection closes", () => {
    const pool = new BufferPool(1000);
    const flow = new RecvFlow(pool, 1 << 20);
    flow.receive(600);
    flow.hold(600);
    expect(pool.free).toBe(400);
    flow.close();
    expect(pool.free).toBe(1000);
  });
});

describe("HpackDecoder header-list bound", () => {
  it("stops emitting past the bound and still keeps the dynamic table", () => {
    const d = new HpackDecoder(4096);
    const value = "v".repeat(1000);
    // Literal with incremental indexing, new name "x" (a 1,033-octet entry), then 100 references.
    const lit = Buffer.concat([
      Buffer.from([0x40, 1, 0x78, 0x7f, 0x80 | (1000 - 127 - 128 * 6), 6]),
      Buffer.from(value),
    ]);
    const block = Buffer.concat([lit, Buffer.alloc(100, 0xbe)]);
    const seen: string[] = [];
    expect(d.decode(block, 0, block.length, (n) => seen.push(n), 10_000)).toBe(false);
    expect(seen.length).toBe(9); // 9 × 1,033 octets fit 10,000
    // The next block can still reference the entry: the table followed the skimmed block.
    const next: string[] = [];
    expect(d.decode(Buffer.from([0xbe]), 0, 1, (n, v) => next.push(`${n}=${v.length}`), 10_000)).toBe(true);
    expect(next).toEqual(["x=1000"]);
  });

  it("past the bound, still inserts indexed literals, steps over the others and rejects bad input", () => {
    const d = new HpackDecoder(4096);
    const big = Buffer.concat([Buffer.from([0x00, 1, 0x61, 0x7f, 200 - 127]), Buffer.alloc(200, 0x62)]);
    // Over the bound at once (200 + 1 + 32 > 100), then a non-indexed literal, a static reference
    // and an incrementally indexed literal "y: z" that later blocks must see.
    const rest = Buffer.from([0x00, 1, 0x63, 1, 0x64, 0x82, 0x40, 1, 0x79, 1, 0x7a]);
    const block = Buffer.concat([big, rest]);
    const seen: string[] = [];
    expect(d.decode(block, 0, block.length, (n) => seen.push(n), 100)).toBe(false);
    expect(seen).toEqual([]);
    const next: string[] = [];
    expect(d.decode(Buffer.from([0xbe]), 0, 1, (n, v) => next.push(`${n}=${v}`), 100)).toBe(true);
    expect(next).toEqual(["y=z"]);
    const bad = (tail: number[]) => {
      const b = Buffer.concat([big, Buffer.from(tail)]);
      return () => new HpackDecoder(4096).decode(b, 0, b.length, () => {}, 100);
    };
    expect(bad([0x20])).toThrow(/size update after a header field/);
    expect(bad([0xc0])).toThrow(/past the end of the table/);
    expect(bad([0x80])).toThrow(/index 0/);
    expect(bad([0x00, 5, 0x61])).toThrow(/longer than the rest/);
  });
});
