/**
 * The RLQS usage board contract (src/store/rlqs/board.ts), run over memory, a single Redis and a
 * 3-master cluster: what a report returns, staleness, leave, key isolation, and TTLs.
 */
import { describe, expect, it } from "vitest";
import { quotaKey } from "../../src/engine/keys.js";
import type { UsageBoard } from "../../src/store/rlqs/board.js";

/** A board under test and how to move its clock. */
export interface BoardHarness {
  readonly board: UsageBoard;
  /** Let `ms` pass (fake clock, or a real wait for Redis, whose TIME the script reads). */
  advance(ms: number): Promise<void>;
  close(): Promise<void>;
}

let seq = 0;
const key = (tenant: string) => quotaKey("test:", "edge", [{ key: "tenant", value: `${tenant}-${++seq}` }]);
const byId = (ps: { id: string; demand: number; held: number }[]) =>
  [...ps].sort((a, b) => a.id.localeCompare(b.id));

export function describeBoardContract(name: string, make: () => Promise<BoardHarness>): void {
  describe(`rlqs usage board contract: ${name}`, () => {
    it("returns every live participant of the bucket, the reporter included", async () => {
      const h = await make();
      try {
        const k = key("acme");
        expect(await h.board.report(k, { participant: "i1/s1", demand: 70, held: 0 }, 5000)).toEqual([
          { id: "i1/s1", demand: 70, held: 0 },
        ]);
        await h.board.report(k, { participant: "i2/s1", demand: 20.5, held: 10.25 }, 5000);
        const view = await h.board.report(k, { participant: "i1/s1", demand: 65, held: 60 }, 5000);
        expect(byId(view)).toEqual([
          { id: "i1/s1", demand: 65, held: 60 },
          { id: "i2/s1", demand: 20.5, held: 10.25 },
        ]);
      } finally {
        await h.close();
      }
    });

    it("reads every live participant without writing one", async () => {
      const h = await make();
      try {
        const k = key("read");
        expect(await h.board.read(k, 5000)).toEqual([]);
        await h.board.report(k, { participant: "a", demand: 7, held: 3 }, 5000);
        expect(await h.board.read(k, 5000)).toEqual([{ id: "a", demand: 7, held: 3 }]);
        expect(await h.board.report(k, { participant: "b", demand: 1, held: 0 }, 5000)).toHaveLength(2);
        await h.advance(400);
        // A read drops stale entries too (the writes above are 400 ms old).
        expect(await h.board.read(k, 150)).toEqual([]);
        expect(await h.board.read(key("never-written"), 5000)).toEqual([]);
      } finally {
        await h.close();
      }
    });

    it("keeps buckets apart", async () => {
      const h = await make();
      try {
        const a = key("a");
        const b = key("b");
        await h.board.report(a, { participant: "p", demand: 1, held: 1 }, 5000);
        expect(await h.board.report(b, { participant: "q", demand: 2, held: 2 }, 5000)).toEqual([
          { id: "q", demand: 2, held: 2 },
        ]);
      } finally {
        await h.close();
      }
    });

    it("drops entries not refreshed within staleMs", async () => {
      const h = await make();
      try {
        const k = key("stale");
        await h.board.report(k, { participant: "old", demand: 5, held: 5 }, 150);
        await h.advance(400);
        const view = await h.board.report(k, { participant: "new", demand: 1, held: 0 }, 150);
        expect(view).toEqual([{ id: "new", demand: 1, held: 0 }]);
      } finally {
        await h.close();
      }
    });

    it("forgets a participant that leaves", async () => {
      const h = await make();
      try {
        const k = key("leave");
        await h.board.report(k, { participant: "a", demand: 5, held: 5 }, 5000);
        await h.board.report(k, { participant: "b", demand: 5, held: 5 }, 5000);
        await h.board.leave(k, "a");
        await h.board.leave(key("never-reported"), "x");
        expect(await h.board.report(k, { participant: "b", demand: 6, held: 5 }, 5000)).toEqual([
          { id: "b", demand: 6, held: 5 },
        ]);
      } finally {
        await h.close();
      }
    });

    it("stores rates with sub-unit precision and clamps nonsense to 0", async () => {
      const h = await make();
      try {
        const k = key("precision");
        const view = await h.board.report(k, { participant: "p", demand: 0.333333, held: 0.000001 }, 5000);
        expect(view).toEqual([{ id: "p", demand: 0.333333, held: 0.000001 }]);
      } finally {
        await h.close();
      }
    });
  });
}
