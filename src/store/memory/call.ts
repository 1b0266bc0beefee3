/**
 * One all-or-nothing call over several buckets: the executable specification of one run of
 * lua/gcra.lua or lua/fixed_window.lua (which take one algorithm each; this takes any mix).
 *
 * Phase 1 evaluates every Take against the stored state, forced ones (refunds, overdraft charges)
 * first, where several Takes of one call on the same key see each other's charge. Phase 2 writes
 * every charged bucket only when every Take was allowed (cost 0 never writes). When any Take is
 * denied only the forced Takes' buckets are written, and allowed ordinary Takes report their bucket
 * as it is, uncharged (see `Outcome`); forced Takes report it after themselves (their `uncharged` is
 * their outcome).
 */
import { isForced, type Outcome, type Take } from "../store.js";
import { fixedWindowStep } from "./fixed-window.js";
import { gcraStep } from "./gcra.js";

/** A bucket's state (GCRA tat in µs, or a window counter) and its absolute expiry in ms. */
export interface StoredBucket {
  readonly value: number;
  readonly expiresAtMs: number;
}

/** Result of {@link evaluateCall}. */
export interface CallResult {
  readonly outcomes: Outcome[];
  /** Buckets to write, by key; empty when the call is denied. */
  readonly writes: ReadonlyMap<string, StoredBucket>;
}

const NO_WRITES: ReadonlyMap<string, StoredBucket> = new Map();

interface Evaluated {
  readonly outcome: Outcome;
  readonly uncharged: Outcome;
  readonly write: StoredBucket | undefined;
}

function evaluate(take: Take, stored: StoredBucket | undefined, nowUs: number): Evaluated {
  // Inputs and results are written out as literals: object spread is slow on the hot path.
  if (take.policy.algorithm === "gcra") {
    const step = gcraStep({ storedTat: stored?.value, nowUs, cost: take.cost, policy: take.policy });
    const w = step.write;
    return {
      outcome: step.outcome,
      uncharged: step.uncharged,
      write: w && { value: w.tat, expiresAtMs: w.expiresAtMs },
    };
  }
  const step = fixedWindowStep({ storedCount: stored?.value, nowUs, cost: take.cost, policy: take.policy });
  const w = step.write;
  // A new counter expires at the window end; an increment keeps the counter's TTL.
  return {
    outcome: step.outcome,
    uncharged: step.uncharged,
    write: w && { value: w.count, expiresAtMs: stored?.expiresAtMs ?? w.expiresAtMs },
  };
}

/**
 * Evaluate `takes` at `nowUs` (integer µs) against the live state `read` returns (undefined when a
 * bucket is absent or expired). Forced takes (refunds, overdraft charges: `isForced`) are evaluated
 * first, in order, and always written; the others after them, written only when every take of the
 * call (forced ones included) is allowed.
 */
export function evaluateCall(
  takes: readonly Take[],
  read: (key: string) => StoredBucket | undefined,
  nowUs: number,
): CallResult {
  const pending = new Map<string, StoredBucket>();
  const evaluated: Evaluated[] = new Array(takes.length);
  let allAllowed = true;
  let forced: boolean[] | undefined;
  for (let i = 0; i < takes.length; i++) {
    const take = takes[i] as Take;
    if (!isForced(take)) continue;
    forced ??= new Array(takes.length).fill(false);
    forced[i] = true;
    const e = evaluate(take, pending.get(take.key) ?? read(take.key), nowUs);
    evaluated[i] = e;
    if (!e.outcome.allowed) allAllowed = false;
    if (e.write) pending.set(take.key, e.write);
  }
  // What a denied call writes: the forced takes' buckets alone.
  const forcedWrites = forced === undefined ? NO_WRITES : new Map(pending);
  for (let i = 0; i < takes.length; i++) {
    if (forced?.[i]) continue;
    const take = takes[i] as Take;
    const e = evaluate(take, pending.get(take.key) ?? read(take.key), nowUs);
    evaluated[i] = e;
    if (!e.outcome.allowed) allAllowed = false;
    if (e.write) pending.set(take.key, e.write);
  }
  if (!allAllowed) {
    return {
      outcomes: evaluated.map((e) => (e.outcome.allowed ? e.uncharged : e.outcome)),
      writes: forcedWrites,
    };
  }
  return { outcomes: evaluated.map((e) => e.outcome), writes: pending };
}
