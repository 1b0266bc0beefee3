/**
 * The one behaviour suite every Store passes: memory, single Redis, Redis Cluster, and the lease and
 * guard decorators. It proves the TypeScript math and the Lua scripts agree on what callers see.
 *
 * Real-time backends (Redis scripts read the server's TIME) really wait in `advance`, so every test
 * advances at most ~300 ms in total and allows `SLACK_MS` of real elapsed time in its assertions.
 * Keys are hash-tagged per case (`{t:case}:a`) so all keys of one call share a cluster slot.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Calendar, computeCalendarWindow } from "../../src/engine/calendar.js";
import { type Policy, UNIT_MS } from "../../src/engine/types.js";
import type { Outcome, Take } from "../../src/store/store.js";
import type { StoreContractOptions, StoreHarness } from "./harness.js";

export type { StoreContractOptions, StoreHarness } from "./harness.js";

/** Real ms that may pass between two calls of a real-time backend. */
const SLACK_MS = 60;

const gcra = (limit: number, periodMs: number, burst: number): Policy => ({
  algorithm: "gcra",
  limit,
  periodMs,
  burst,
});
const fixed = (limit: number, periodMs: number): Policy => ({
  algorithm: "fixed_window",
  limit,
  periodMs,
  burst: limit,
});

/** Run the store contract against the backend built by `make` (one harness for the whole suite). */
export function describeStoreContract(
  name: string,
  make: () => Promise<StoreHarness>,
  opts: StoreContractOptions = {},
): void {
  const realTime = opts.realTime ?? false;
  const slack = realTime ? SLACK_MS : 0;
  /** Expect `actual` to be `expected`, or up to the real-time slack below it. */
  const near = (actual: number, expected: number) => {
    expect(actual).toBeLessThanOrEqual(expected);
    expect(actual).toBeGreaterThanOrEqual(expected - slack);
  };

  describe(`store contract: ${name}`, () => {
    let h: StoreHarness;
    beforeAll(async () => {
      h = await make();
    });
    afterAll(async () => {
      await h?.close();
    });

    const take = async (key: string, policy: Policy, cost = 1): Promise<Outcome> => {
      const [outcome] = await h.store.take([{ key, policy, cost }]);
      if (!outcome) throw new Error("store returned no outcome");
      return outcome;
    };
    const takeAll = (takes: readonly Take[]) => h.store.take(takes);
    /** Start at the beginning of a fixed window with at least `minLeftMs` of it left. */
    const alignToWindow = async (key: string, policy: Policy, minLeftMs: number) => {
      const { resetAfterMs } = await take(key, policy, 0);
      if (!realTime) await h.advance(resetAfterMs);
      else if (resetAfterMs < minLeftMs) await h.advance(resetAfterMs + 2);
    };

    it("GCRA admits a full burst, then denies the next request", async () => {
      const p = gcra(10, 1000, 5);
      for (let left = 4; left >= 0; left--) {
        const o = await take("{t:burst}:a", p);
        expect(o.allowed).toBe(true);
        expect(o.remaining).toBe(left);
        expect(o.retryAfterMs).toBe(0);
      }
      const denied = await take("{t:burst}:a", p);
      expect(denied.allowed).toBe(false);
      expect(denied.remaining).toBe(0);
      near(denied.retryAfterMs, 100);
    });

    it("GCRA refills one token per emission interval", async () => {
      const p = gcra(10, 1000, 2);
      expect((await take("{t:refill}:a", p, 2)).allowed).toBe(true);
      expect((await take("{t:refill}:a", p)).allowed).toBe(false);
      if (!realTime) {
        await h.advance(99);
        expect((await take("{t:refill}:a", p)).allowed).toBe(false);
        await h.advance(1);
      } else {
        await h.advance(100);
      }
      const refilled = await take("{t:refill}:a", p);
      expect(refilled).toMatchObject({ allowed: true, remaining: 0 });
      expect((await take("{t:refill}:a", p)).allowed).toBe(false);
    });

    it("GCRA remaining counts whole tokens only", async () => {
      const p = gcra(10, 1000, 5);
      expect((await take("{t:whole}:a", p, 2)).remaining).toBe(3);
      await h.advance(50);
      expect((await take("{t:whole}:a", p, 0)).remaining).toBe(3);
      await h.advance(50);
      expect((await take("{t:whole}:a", p, 0)).remaining).toBe(4);
    });

    it("a cost of 0 peeks at a bucket and charges nothing", async () => {
      const p = gcra(10, 1000, 3);
      const fresh = await take("{t:peek}:a", p, 0);
      expect(fresh).toEqual({ allowed: true, remaining: 3, retryAfterMs: 0, resetAfterMs: 0 });
      for (let i = 0; i < 10; i++) await take("{t:peek}:a", p, 0);
      expect(await take("{t:peek}:a", p, 3)).toMatchObject({ allowed: true, remaining: 0 });
      const empty = await take("{t:peek}:a", p, 0);
      expect(empty).toMatchObject({ allowed: true, remaining: 0, retryAfterMs: 0 });
      near(empty.resetAfterMs, 300);

      const w = fixed(3, 60_000);
      for (let i = 0; i < 5; i++) expect((await take("{t:peek}:w", w, 0)).remaining).toBe(3);
      expect(await take("{t:peek}:w", w, 3)).toMatchObject({ allowed: true, remaining: 0 });
    });

    it("a cost larger than the capacity is denied with retry-after -1 and charges nothing", async () => {
      const p = gcra(10, 1000, 5);
      expect(await take("{t:huge}:a", p, 6)).toEqual({
        allowed: false,
        remaining: 5,
        retryAfterMs: -1,
        resetAfterMs: 0,
      });
      expect(await take("{t:huge}:a", p, 5)).toMatchObject({ allowed: true, remaining: 0 });

      const w = fixed(3, 60_000);
      expect(await take("{t:huge}:w", w, 4)).toMatchObject({
        allowed: false,
        remaining: 3,
        retryAfterMs: -1,
      });
      expect(await take("{t:huge}:w", w, 3)).toMatchObject({ allowed: true, remaining: 0 });
    });

    it("a denied call charges none of its buckets, not even those that would pass alone", async () => {
      const a = gcra(10, 1000, 5);
      const b = gcra(10, 1000, 1);
      const c = fixed(5, 3_600_000);
      expect((await take("{t:aon}:b", b)).allowed).toBe(true);
      const [oa, ob, oc] = await takeAll([
        { key: "{t:aon}:a", policy: a, cost: 1 },
        { key: "{t:aon}:b", policy: b, cost: 1 },
        { key: "{t:aon}:c", policy: c, cost: 1 },
      ]);
      expect(ob?.allowed).toBe(false);
      // The others alone would pass, and report themselves as they are: uncharged.
      expect(oa).toMatchObject({ allowed: true, remaining: 5, resetAfterMs: 0 });
      expect(oc).toMatchObject({ allowed: true, remaining: 5 });
      expect((await take("{t:aon}:a", a, 0)).remaining).toBe(5);
      expect((await take("{t:aon}:c", c, 0)).remaining).toBe(5);
    });

    it("retry-after is the time until the cost would be admitted", async () => {
      const p = gcra(20, 1000, 4);
      expect((await take("{t:retry}:a", p, 4)).allowed).toBe(true);
      const denied = await take("{t:retry}:a", p, 3);
      expect(denied.allowed).toBe(false);
      near(denied.retryAfterMs, 150);
      if (!realTime) {
        await h.advance(denied.retryAfterMs - 1);
        expect(await take("{t:retry}:a", p, 3)).toMatchObject({ allowed: false, retryAfterMs: 1 });
        await h.advance(1);
      } else {
        await h.advance(denied.retryAfterMs + 2);
      }
      expect(await take("{t:retry}:a", p, 3)).toMatchObject({ allowed: true, remaining: 0 });
    });

    it("reset-after is the time until the bucket is full again", async () => {
      const p = gcra(20, 1000, 4);
      near((await take("{t:reset-after}:a", p)).resetAfterMs, 50);
      near((await take("{t:reset-after}:a", p, 2)).resetAfterMs, 150);
      await h.advance(150);
      expect(await take("{t:reset-after}:a", p, 0)).toEqual({
        allowed: true,
        remaining: 4,
        retryAfterMs: 0,
        resetAfterMs: 0,
      });
    });

    it("a fixed window counts hits and starts again at the window end", async () => {
      const w = fixed(3, 120);
      await alignToWindow("{t:window}:a", w, 80);
      const first = await take("{t:window}:a", w);
      expect(first).toMatchObject({ allowed: true, remaining: 2, retryAfterMs: 0 });
      if (!realTime) expect(first.resetAfterMs).toBe(120);
      expect(first.resetAfterMs).toBeGreaterThan(0);
      expect(first.resetAfterMs).toBeLessThanOrEqual(120);
      expect((await take("{t:window}:a", w, 2)).remaining).toBe(0);
      const full = await take("{t:window}:a", w, 0);
      expect(full.remaining).toBe(0);
      await h.advance(full.resetAfterMs + (realTime ? 2 : 0));
      const next = await take("{t:window}:a", w);
      expect(next).toMatchObject({ allowed: true, remaining: 2 });
      if (!realTime) expect(next.resetAfterMs).toBe(120);
    });

    it("a fixed window denies past its limit with retry-after at the window end", async () => {
      const w = fixed(2, 120);
      await alignToWindow("{t:window-deny}:a", w, 80);
      expect((await take("{t:window-deny}:a", w, 2)).allowed).toBe(true);
      if (!realTime) await h.advance(20);
      const denied = await take("{t:window-deny}:a", w);
      expect(denied).toMatchObject({ allowed: false, remaining: 0 });
      expect(denied.retryAfterMs).toBe(denied.resetAfterMs);
      if (!realTime) expect(denied.retryAfterMs).toBe(100);
      expect(denied.retryAfterMs).toBeGreaterThan(0);
      expect(denied.retryAfterMs).toBeLessThanOrEqual(120);
      await h.advance(denied.retryAfterMs + (realTime ? 2 : 0));
      expect(await take("{t:window-deny}:a", w)).toMatchObject({ allowed: true, remaining: 1 });
    });

    it("a calendar window resets at the calendar boundary of its time zone, not an epoch multiple", async () => {
      // An ISO week (Monday, UTC) and a month in UTC+14: epoch-aligned windows would end on a
      // Thursday and every 30 days, so only the calendar explains these reset times.
      const cases: Calendar[] = [
        { unit: "week", timeZone: "UTC" },
        { unit: "month", timeZone: "Pacific/Kiritimati" },
      ];
      for (const calendar of cases) {
        const key = `{t:calendar}:${calendar.unit}`;
        const policy: Policy = { ...fixed(3, UNIT_MS[calendar.unit]), calendar };
        const now = h.now?.() ?? Date.now();
        const w = computeCalendarWindow(now, calendar);
        const first = await take(key, policy, 2);
        expect(first).toMatchObject({ allowed: true, remaining: 1, retryAfterMs: 0 });
        // Redis reads its own TIME: allow a second for the calls (and no window may end meanwhile).
        expect(first.resetAfterMs).toBeLessThanOrEqual(w.endMs - now + (realTime ? 1000 : 0));
        expect(first.resetAfterMs).toBeGreaterThanOrEqual(w.endMs - now - (realTime ? 1000 : 0));
        const denied = await take(key, policy, 2);
        expect(denied).toMatchObject({ allowed: false, remaining: 1 });
        expect(denied.retryAfterMs).toBe(denied.resetAfterMs);
        expect(Math.abs(denied.resetAfterMs - first.resetAfterMs)).toBeLessThanOrEqual(slack + 1000);
        if (!realTime) {
          await h.advance(first.resetAfterMs - 1);
          expect(await take(key, policy, 2)).toMatchObject({ allowed: false, retryAfterMs: 1 });
          await h.advance(1);
          const next = await take(key, policy, 3);
          expect(next).toMatchObject({ allowed: true, remaining: 0 });
          expect(next.resetAfterMs).toBe(w.nextEndMs - w.endMs);
        }
      }
    });

    it("several limits on distinct keys are charged together and each reports its own bucket", async () => {
      const perSecond = gcra(3, 1000, 3);
      const perMinute = gcra(100, 60_000, 100);
      const both: Take[] = [
        { key: "{t:multi}:second", policy: perSecond, cost: 1 },
        { key: "{t:multi}:minute", policy: perMinute, cost: 1 },
      ];
      for (let i = 1; i <= 3; i++) {
        const [s, m] = await takeAll(both);
        expect(s).toMatchObject({ allowed: true, remaining: 3 - i });
        expect(m).toMatchObject({ allowed: true, remaining: 100 - i });
      }
      const [s, m] = await takeAll(both);
      expect(s?.allowed).toBe(false);
      near(s?.retryAfterMs ?? 0, 334);
      expect(m).toMatchObject({ allowed: true, remaining: 97 });
    });

    it("reset() makes buckets full again", async () => {
      const p = gcra(10, 1000, 2);
      const w = fixed(2, 3_600_000);
      await takeAll([
        { key: "{t:reset}:a", policy: p, cost: 2 },
        { key: "{t:reset}:w", policy: w, cost: 2 },
      ]);
      expect((await take("{t:reset}:a", p)).allowed).toBe(false);
      expect((await take("{t:reset}:w", w)).allowed).toBe(false);
      await h.store.reset(["{t:reset}:a", "{t:reset}:w"]);
      expect(await take("{t:reset}:a", p, 0)).toMatchObject({ remaining: 2, resetAfterMs: 0 });
      expect((await take("{t:reset}:w", w, 0)).remaining).toBe(2);
    });

    it("refund gives tokens back, never beyond a full bucket", async () => {
      const refund = h.store.refund?.bind(h.store);
      expect(refund, "this store must implement refund()").toBeTypeOf("function");
      if (!refund) return;
      const p = gcra(10, 1000, 5);
      expect((await take("{t:refund}:a", p, 5)).remaining).toBe(0);
      await refund([{ key: "{t:refund}:a", policy: p, cost: 2 }]);
      expect((await take("{t:refund}:a", p, 0)).remaining).toBe(2);
      await refund([{ key: "{t:refund}:a", policy: p, cost: 10 }]);
      expect(await take("{t:refund}:a", p, 0)).toMatchObject({ remaining: 5, resetAfterMs: 0 });
      await refund([{ key: "{t:refund}:absent", policy: p, cost: 3 }]);
      expect((await take("{t:refund}:absent", p, 0)).remaining).toBe(5);

      const w = fixed(3, 3_600_000);
      expect((await take("{t:refund}:w", w, 3)).remaining).toBe(0);
      await refund([{ key: "{t:refund}:w", policy: w, cost: 1 }]);
      expect((await take("{t:refund}:w", w, 0)).remaining).toBe(1);
      await refund([{ key: "{t:refund}:w", policy: w, cost: 10 }]);
      expect((await take("{t:refund}:w", w, 0)).remaining).toBe(3);
    });

    it("200 concurrent takes on one bucket admit exactly its capacity", async () => {
      const p = gcra(1, 60_000, 50);
      const w = fixed(30, 3_600_000);
      const outcomes = await Promise.all([
        ...Array.from({ length: 200 }, () => take("{t:race}:a", p)),
        ...Array.from({ length: 200 }, () => take("{t:race}:w", w)),
      ]);
      expect(outcomes.slice(0, 200).filter((o) => o.allowed)).toHaveLength(50);
      expect(outcomes.slice(200).filter((o) => o.allowed)).toHaveLength(30);
    });
  });
}
