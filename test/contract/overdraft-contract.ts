/**
 * The overdraft and refund behaviours every Store passes (memory, single Redis, Redis Cluster, the
 * lease decorator): a positive charge on an overdraft bucket (`policy.maxDebt`) is always applied,
 * into debt up to `maxDebt`; the bucket admits (a check with cost 0 included) while it holds one whole
 * token; a negative cost gives tokens back, never above a full bucket, always allowed; and both are
 * applied whatever the rest of their call decides, while ordinary buckets stay all-or-nothing.
 *
 * Minute- and hour-long policies only, so the few real ms a Redis backend spends between calls change
 * no token count (retry times are compared with `near`).
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { LeaseOptions, Policy } from "../../src/engine/types.js";
import type { Outcome, Take } from "../../src/store/store.js";
import type { StoreContractOptions, StoreHarness } from "./harness.js";

/** Real ms that may pass between two calls of a real-time backend. */
const SLACK_MS = 60;

const gcra = (limit: number, burst: number, maxDebt?: number): Policy =>
  maxDebt === undefined
    ? { algorithm: "gcra", limit, periodMs: 60_000, burst }
    : { algorithm: "gcra", limit, periodMs: 60_000, burst, maxDebt };
const fixed = (limit: number, maxDebt?: number): Policy =>
  maxDebt === undefined
    ? { algorithm: "fixed_window", limit, periodMs: 3_600_000, burst: limit }
    : { algorithm: "fixed_window", limit, periodMs: 3_600_000, burst: limit, maxDebt };

/** Options of the overdraft contract. */
export interface OverdraftContractOptions extends StoreContractOptions {
  /**
   * Put this lease on every take that checks, refunds or charges an overdraft bucket (the lease layer
   * must send them to the shared bucket unchanged). @default none
   */
  readonly lease?: LeaseOptions;
}

/** Run the overdraft contract against the backend built by `make`. */
export function describeOverdraftContract(
  name: string,
  make: () => Promise<StoreHarness>,
  opts: OverdraftContractOptions = {},
): void {
  const slack = (opts.realTime ?? false) ? SLACK_MS : 0;
  /** Expect `actual` to be `expected`, or up to the real-time slack below it. */
  const near = (actual: number, expected: number) => {
    expect(actual).toBeLessThanOrEqual(expected);
    expect(actual).toBeGreaterThanOrEqual(expected - slack);
  };

  describe(`overdraft and refund contract: ${name}`, () => {
    let h: StoreHarness;
    beforeAll(async () => {
      h = await make();
      return () => h?.close();
    });

    const tk = (key: string, policy: Policy, cost: number): Take => {
      const leased = opts.lease !== undefined && (cost <= 0 || policy.maxDebt !== undefined);
      return leased ? { key, policy, cost, lease: opts.lease } : { key, policy, cost };
    };
    const take = async (key: string, policy: Policy, cost: number): Promise<Outcome> => {
      const [outcome] = await h.store.take([tk(key, policy, cost)]);
      if (!outcome) throw new Error("store returned no outcome");
      return outcome;
    };

    it("GCRA: a charge past the balance is applied into debt; checks are denied until a token is back", async () => {
      const p = gcra(10, 10, 100); // one token per 6 s
      const k = "{t:od-g}:a";
      expect(await take(k, p, 9)).toMatchObject({ allowed: true, remaining: 1 });
      expect(await take(k, p, 0)).toMatchObject({ allowed: true, remaining: 1 });
      // 50 tokens with 1 left: admitted (the balance was positive) and applied in full.
      const charged = await take(k, p, 50);
      expect(charged).toMatchObject({ allowed: true, remaining: 0, retryAfterMs: 0 });
      near(charged.resetAfterMs, 354_000);
      // 49 tokens of debt: one token is back after 49 + 1 emission intervals.
      const check = await take(k, p, 0);
      expect(check).toMatchObject({ allowed: false, remaining: 0 });
      near(check.retryAfterMs, 300_000);
      // A charge while in debt is denied and still applied.
      const late = await take(k, p, 5);
      expect(late.allowed).toBe(false);
      near(late.retryAfterMs, 330_000);
      near((await take(k, p, 0)).retryAfterMs, 330_000);
      // A refund of 55 leaves 54 s ahead: one whole token, admitted again.
      expect(await take(k, p, -55)).toMatchObject({ allowed: true, remaining: 1, retryAfterMs: 0 });
      expect(await take(k, p, 0)).toMatchObject({ allowed: true, remaining: 1 });
    });

    it("GCRA: debt stops at max_debt tokens past empty, whatever is charged", async () => {
      const p = gcra(10, 10, 20);
      const k = "{t:od-cap}:a";
      near((await take(k, p, 1_000_000)).resetAfterMs, 180_000);
      near((await take(k, p, 0)).retryAfterMs, 126_000);
      expect((await take(k, p, 1_000_000)).allowed).toBe(false);
      near((await take(k, p, 0)).retryAfterMs, 126_000);
    });

    it("fixed window: the counter goes past the limit up to limit + max_debt; refunds bring it down", async () => {
      const w = fixed(10, 100);
      const k = "{t:od-f}:a";
      expect(await take(k, w, 8)).toMatchObject({ allowed: true, remaining: 2 });
      expect(await take(k, w, 50)).toMatchObject({ allowed: true, remaining: 0 });
      const check = await take(k, w, 0);
      expect(check).toMatchObject({ allowed: false, remaining: 0 });
      expect(check.retryAfterMs).toBe(check.resetAfterMs);
      expect(check.retryAfterMs).toBeGreaterThan(0);
      expect((await take(k, w, 1)).allowed).toBe(false); // applied: 59
      expect(await take(k, w, -55)).toMatchObject({ allowed: true, remaining: 6 });
      expect(await take(k, w, 1000)).toMatchObject({ allowed: true, remaining: 0 }); // capped at 110
      expect(await take(k, w, -105)).toMatchObject({ allowed: true, remaining: 5 });
    });

    it("a calendar month (fixed window) overdraft goes into debt, denies checks until its end, takes refunds", async () => {
      const month: Policy = {
        algorithm: "fixed_window",
        limit: 10,
        periodMs: 30 * 86_400_000,
        burst: 10,
        calendar: { unit: "month", timeZone: "UTC" },
        maxDebt: 100,
      };
      const k = "{t:od-cal}:a";
      expect(await take(k, month, 40)).toMatchObject({ allowed: true, remaining: 0 });
      const check = await take(k, month, 0);
      expect(check.allowed).toBe(false);
      expect(check.retryAfterMs).toBe(check.resetAfterMs);
      expect(await take(k, month, -35)).toMatchObject({ allowed: true, remaining: 5 });
    });

    it("an overdraft charge is applied although another bucket denies the call, which charges no ordinary bucket", async () => {
      const o = gcra(10, 10, 100);
      const full = gcra(10, 1);
      const a = gcra(10, 5);
      await take("{t:od-x1}:b", full, 1);
      const [ob, oo, oa] = await h.store.take([
        tk("{t:od-x1}:b", full, 1),
        tk("{t:od-x2}:o", o, 4),
        tk("{t:od-x2}:a", a, 1),
      ]);
      expect(ob?.allowed).toBe(false);
      expect(oo).toMatchObject({ allowed: true, remaining: 6 });
      expect(oa).toMatchObject({ allowed: true, remaining: 5 });
      expect((await take("{t:od-x2}:o", o, 0)).remaining).toBe(6);
      expect((await take("{t:od-x2}:a", a, 0)).remaining).toBe(5);
    });

    it("an overdraft bucket in debt denies the call: its charge is applied, ordinary buckets are not charged", async () => {
      const o = gcra(10, 10, 100);
      const a = gcra(10, 5);
      const w = fixed(5);
      await take("{t:od-y}:o", o, 10);
      const [oa, oo, ow] = await h.store.take([
        tk("{t:od-y}:a", a, 1),
        tk("{t:od-y}:o", o, 3),
        tk("{t:od-y}:w", w, 1),
      ]);
      expect(oo?.allowed).toBe(false);
      near(oo?.retryAfterMs ?? 0, 24_000);
      expect(oa).toMatchObject({ allowed: true, remaining: 5 });
      expect(ow).toMatchObject({ allowed: true, remaining: 5 });
      expect((await take("{t:od-y}:a", a, 0)).remaining).toBe(5);
      expect((await take("{t:od-y}:w", w, 0)).remaining).toBe(5);
      near((await take("{t:od-y}:o", o, 0)).retryAfterMs, 24_000);
    });

    it("a negative cost refunds an ordinary bucket, never above full, and is always allowed", async () => {
      const p = gcra(10, 5);
      const k = "{t:rf-g}:a";
      expect((await take(k, p, 5)).remaining).toBe(0);
      expect(await take(k, p, -2)).toMatchObject({ allowed: true, remaining: 2, retryAfterMs: 0 });
      expect(await take(k, p, -10)).toMatchObject({ allowed: true, remaining: 5, resetAfterMs: 0 });
      expect(await take("{t:rf-g}:absent", p, -3)).toMatchObject({ allowed: true, remaining: 5 });

      const w = fixed(3);
      expect((await take("{t:rf-f}:w", w, 3)).remaining).toBe(0);
      expect(await take("{t:rf-f}:w", w, -1)).toMatchObject({ allowed: true, remaining: 1 });
      expect(await take("{t:rf-f}:w", w, -10)).toMatchObject({ allowed: true, remaining: 3 });
      expect(await take("{t:rf-f}:absent", w, -2)).toMatchObject({ allowed: true, remaining: 3 });
    });

    it("a refund is applied although another bucket denies its call", async () => {
      const p = gcra(10, 5);
      const full = gcra(10, 1);
      await take("{t:rf-x}:a", p, 4);
      await take("{t:rf-x}:b", full, 1);
      const [ob, oa] = await h.store.take([tk("{t:rf-x}:b", full, 1), tk("{t:rf-x}:a", p, -3)]);
      expect(ob?.allowed).toBe(false);
      expect(oa).toMatchObject({ allowed: true, remaining: 4 });
      expect((await take("{t:rf-x}:a", p, 0)).remaining).toBe(4);
    });
  });
}
