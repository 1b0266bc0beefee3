/**
 * One Envoy's share of one shared limit (docs/rlqs.md, "Fairness model"): the usage board round
 * trips of a report and of a re-read between reports, and the failure policy when the shared board
 * fails.
 *
 * A report writes the Envoy's demand and the rate it holds (one call, which returns everybody's
 * entries), computes its fair rate from them, and when that rate differs from what the board
 * says, publishes it at once (a second call, only on a change), so the other instances see the
 * room it frees or takes before the next report. A share whose view shows somebody short of its
 * target, or that is in a shift (see `moving`), is *unsettled*: its instance re-reads the board
 * between reports (`rebalance`), raises it as soon as the room is there (a capped or growing share
 * to its target, another back to its `ceiling`) and lowers it when the rest of a shift lands,
 * instead of one reporting interval later (docs/rlqs.md, "How a shift travels").
 */

import type { UsageBoard } from "../../store/rlqs/board.js";
import type { FailurePolicy } from "../types.js";
import { type FairParams, nextRate, type Participant, shortOf, unsettled } from "./allocator.js";
import type { RlqsEvents, RlqsStrategy } from "./messages.js";
import type { SharedLimit } from "./resolve.js";
import { rateOf, type TokenBucketSpec, tokenBucketFor } from "./token-bucket.js";

/** What shares are computed with (the session's options). */
export interface ShareOptions {
  /** The shared board (Redis on Redis stores, in-process on memory). */
  readonly board: UsageBoard;
  /** In-process board used by the `local` failure policy while the shared one fails. */
  readonly localBoard: UsageBoard;
  /** Live tollgate instances: the `local` policy divides limits by it. */
  readonly instances: () => number;
  readonly events?: RlqsEvents;
}

/** One Envoy's participation in one shared bucket, kept between its reports. */
export interface Share {
  readonly domain: string;
  /** The usage hash of the bucket (engine/keys.ts quotaKey). */
  readonly key: string;
  /** Unique across instances, streams and buckets. */
  readonly participant: string;
  readonly params: FairParams;
  /** The limit in force (on the `local` policy: this instance's part of it). */
  readonly limit: SharedLimit;
  readonly staleMs: number;
  /** Whether the shared board answered (false: the `local` policy's board did). */
  readonly shared: boolean;
  /** Demand last written, requests per second. */
  readonly demand: number;
  /** Rate of the token bucket last computed, requests per second; also what the board holds. */
  held: number;
  /** Its demand moved materially at this report (see `moved`). */
  readonly shifted: boolean;
  /** Its demand rose materially at this report. */
  readonly rose: boolean;
  /**
   * Its demand rose materially at this report or the one before: a growing Envoy, which a re-read
   * may raise whenever the room is there (its demand is real; the others' reports of the same
   * shift free the room over the interval after its own).
   */
  readonly growing: boolean;
  /** A re-read changed its rate since this report. */
  changed: boolean;
  /**
   * The higher of the rate it held just before this report and the rate set at it: a re-read may
   * raise a share that is neither capped nor growing back up to this (undoing a lowering a
   * half-seen shift caused at the report or at a re-read since), never above it.
   */
  readonly ceiling: number;
  /**
   * In a shift: its demand moved materially at this report or the one before, or its assigned
   * rate changed at this report or at a re-read between the previous report and this one:
   * re-read until the next report. The other Envoys' reports of one shift land over the interval
   * after an Envoy's own, so a rate computed on a shift seen half way may be off its target once
   * the rest lands (over: the re-read lowers it; under: it raises it, see `ceiling`). A change
   * made by noise alone costs at most MAX_REREADS reads until the next report.
   */
  moving: boolean;
  /** Somebody on the board is short of its target, or this share is moving: re-read between reports. */
  unsettled: boolean;
  /**
   * This Envoy itself is short of its target (capped by the room the others hold): a re-read may
   * raise it to its target (as it may a `growing` one). Any other share is raised only back to its
   * `ceiling`: a target that rose because others' demand fell (a flip seen half way: one Envoy's
   * drop reported before another's rise) waits for the Envoy's own next report, so a transient
   * view does not hand out a share that must be taken back a moment later.
   */
  capped: boolean;
  /** Re-reads since the report (at most {@link MAX_REREADS} before the next one). */
  rereads: number;
}

/**
 * Re-reads of one share between two of its reports: Redis calls stay bounded by reports (at most
 * 1 + 1 + MAX_REREADS × 2 per report: the report, its publish, and each re-read with its publish;
 * about 1 while shares are settled).
 */
export const MAX_REREADS = 8;

/** What one report of a limited bucket asks for. */
export interface ShareRequest {
  readonly domain: string;
  readonly key: string;
  readonly participant: string;
  readonly demand: number;
  /** Rate held now (undefined: no token bucket assigned yet). */
  readonly previous: number | undefined;
  /** Demand of its previous report (undefined: none). */
  readonly previousDemand: number | undefined;
  /** What the previous report saw of a shift (undefined: none). */
  readonly before?: Pick<Share, "shifted" | "rose" | "changed"> | undefined;
  readonly limit: SharedLimit;
  readonly minShare: number;
  readonly threshold: number;
  readonly staleMs: number;
  /** The failure policy of the bucket's rule (or its domain's, or the default). */
  readonly policy: () => FailurePolicy;
}

/**
 * The allocator's knobs for a share in a shift (its demand moved at this report or the one before,
 * or a re-read changed its rate since): half the `reassign_percent` hysteresis. A rate computed
 * while the others' reports of the same shift were still landing is provisional; with the full
 * hysteresis it could stay `reassign_percent` plus one interval's count noise off its settled
 * target until a report moved it (docs/rlqs.md, "Rounding"). With none at all, every re-read
 * would re-send on noise, and each changed assignment restarts the Envoy's bucket full (a burst).
 */
const duringShift = (params: FairParams): FairParams => ({ ...params, threshold: params.threshold / 2 });

/** The view with `participant`'s held rate replaced (what the board holds after a publish). */
const withHeld = (view: readonly Participant[], participant: string, held: number) =>
  view.map((p) => (p.id === participant ? { ...p, held } : p));

/**
 * Report one Envoy's demand of a shared limit: its strategy and share, or undefined when the
 * board failed under the `error` policy (nothing is sent).
 */
export async function reportShare(
  o: ShareOptions,
  r: ShareRequest,
): Promise<{ readonly strategy: RlqsStrategy; readonly share?: Share } | undefined> {
  const entry = { participant: r.participant, demand: r.demand, held: r.previous ?? 0 };
  let view: Participant[];
  let limit = r.limit;
  let board = o.board;
  try {
    view = await o.board.report(r.key, entry, r.staleMs);
  } catch {
    const policy = r.policy();
    o.events?.rlqsBoardError(r.domain, policy);
    if (policy === "allow") return { strategy: { blanket: "ALLOW_ALL" } };
    if (policy === "deny") return { strategy: { blanket: "DENY_ALL" } };
    if (policy === "error") return undefined;
    const n = Math.max(1, o.instances());
    limit = { ratePerSec: r.limit.ratePerSec / n, burst: Math.max(1, Math.floor(r.limit.burst / n)) };
    board = o.localBoard;
    view = await board.report(r.key, entry, r.staleMs);
  }
  const params = { limit: limit.ratePerSec, minShare: r.minShare, threshold: r.threshold };
  const shifted = moved(r.previousDemand, r.demand, r.threshold);
  // A shift this Envoy is part of may still be landing: the hysteresis is halved (see `moving`).
  const inShift = shifted || r.before?.shifted === true || r.before?.changed === true;
  const tokenBucket = tokenBucketFor(
    nextRate(inShift ? duringShift(params) : params, view, r.participant, r.previous),
    limit,
  );
  const held = rateOf(tokenBucket);
  if (held !== entry.held) await publish(board, r.key, { ...entry, held }, r.staleMs);
  // In a shift: the others' reports of the same shift may land just after this one, so it looks
  // again until its next report (their new demand can lower this share, or free room). nextRate
  // moves a held rate only materially (past the hysteresis, to give back a material excess, or to
  // fit the room), so a settled share costs nothing here; re-reads are bounded by MAX_REREADS.
  const rose = shifted && r.demand > (r.previousDemand ?? 0);
  const moving = inShift || (r.previous !== undefined && held !== r.previous);
  const share: Share = {
    domain: r.domain,
    key: r.key,
    participant: r.participant,
    params,
    limit,
    staleMs: r.staleMs,
    shared: board === o.board,
    demand: r.demand,
    held,
    shifted,
    rose,
    growing: rose || r.before?.rose === true,
    changed: false,
    ceiling: Math.max(held, r.previous ?? 0),
    moving,
    unsettled: moving || unsettled(params, withHeld(view, r.participant, held)),
    capped: shortOf(params, view, r.participant, held),
    rereads: 0,
  };
  return { strategy: { tokenBucket }, share };
}

/**
 * Whether demand moved from `before` to `now` by more than twice `threshold` (at least a quarter) of
 * the larger: a shift, not the count noise of a small share (8 ± 1 requests a report is 12 %).
 */
const moved = (before: number | undefined, now: number, threshold: number) =>
  before !== undefined && Math.abs(now - before) > Math.max(2 * threshold, 0.25) * Math.max(before, now);

/** Write a changed held rate; a failure leaves it to the next report (best effort). */
async function publish(
  board: UsageBoard,
  key: string,
  entry: { participant: string; demand: number; held: number },
  staleMs: number,
): Promise<void> {
  await board.report(key, entry, staleMs).catch(() => {});
}

/** Board reads of one rebalancing tick, shared by the streams of one instance (key → view). */
export type TickReads = Map<string, Promise<Participant[]>>;

/**
 * Re-read the board for an unsettled share (one read per bucket per tick, shared through `reads`)
 * and move it to its fair rate if that changed materially: the new token bucket, or undefined.
 * A changed rate is published before it is returned (and the tick's cached view dropped, so the
 * next stream of this instance on the bucket reads what it took).
 */
export async function rebalanceShare(
  o: ShareOptions,
  share: Share,
  reads: TickReads,
): Promise<TokenBucketSpec | undefined> {
  if (share.rereads >= MAX_REREADS) {
    share.unsettled = false; // its next report looks again
    return undefined;
  }
  share.rereads++;
  const board = share.shared ? o.board : o.localBoard;
  let read = reads.get(share.key);
  if (read === undefined) {
    read = board.read(share.key, share.staleMs);
    reads.set(share.key, read);
  }
  let view: Participant[];
  try {
    view = await read;
  } catch {
    return undefined; // the next report applies the failure policy
  }
  if (!view.some((p) => p.id === share.participant)) {
    share.unsettled = false; // pruned as stale: the next report writes it again
    return undefined;
  }
  const params = share.moving ? duringShift(share.params) : share.params;
  let tokenBucket = tokenBucketFor(nextRate(params, view, share.participant, share.held), share.limit);
  // A capped or growing share is raised to its fair rate; another only back up to its ceiling
  // (see `capped`, `growing`, `ceiling`); lowering is always allowed.
  if (rateOf(tokenBucket) > share.held && !(share.capped || share.growing)) {
    const back = Math.min(rateOf(tokenBucket), share.ceiling);
    tokenBucket =
      back - share.held > params.threshold * share.held
        ? tokenBucketFor(back, share.limit)
        : tokenBucketFor(share.held, share.limit);
  }
  const held = rateOf(tokenBucket);
  // Changed: the rest of the shift may still land, keep looking until the next report.
  if (held !== share.held) {
    share.moving = true;
    share.changed = true;
  }
  share.unsettled = share.moving || unsettled(share.params, withHeld(view, share.participant, held));
  share.capped = shortOf(share.params, view, share.participant, held);
  if (held === share.held) return undefined;
  share.held = held;
  reads.delete(share.key);
  await publish(
    board,
    share.key,
    { participant: share.participant, demand: share.demand, held },
    share.staleMs,
  );
  return tokenBucket;
}
