/**
 * One key's local lease: tokens this instance took from the shared bucket before spending them, when
 * the lease ends, and how big the next grant should be.
 *
 * Size adaptation (N = the rule's `lease.size`, the ceiling):
 * - grows ×2 when a lease was used up in less than half its ttl (a hot key should cost few round
 *   trips), starting from N/4;
 * - shrinks to half of what the shared bucket still holds after a grant (at least 1), so the last
 *   tokens of a nearly empty bucket are not stranded in one instance while another one denies.
 */
import type { LeaseOptions, Policy } from "../../engine/types.js";

/** Fixed-window tokens are not returned this close to the window end (at least; 10% of the period). */
const RETURN_MARGIN_MS = 50;

export class Lease {
  /** Tokens held locally, not yet spent. */
  tokens = 0;
  /** Clock ms after which unused tokens go back to the shared bucket. */
  expiresAtMs = 0;
  /** Whole tokens the shared bucket held after the last grant (best knowledge). */
  sharedRemaining: number;
  /** Ms until the shared bucket is full again, as of the last grant. */
  sharedResetAfterMs = 0;
  /** Size of the next grant. */
  size: number;
  /** The refill in flight (single-flight per key). */
  refill: Promise<void> | undefined;
  /** The last refill failed (shared store away or too slow). */
  failed = false;
  private grantedAtMs = Number.NEGATIVE_INFINITY;

  constructor(
    readonly key: string,
    readonly policy: Policy,
    readonly options: LeaseOptions,
  ) {
    this.size = Math.max(1, Math.floor(options.size / 4));
    this.sharedRemaining = policy.burst;
  }

  /**
   * Fixed window: the end of the window the tokens were counted in. They may not be spent after it
   * (the next window has a fresh count) nor given back after it (a refund would lower the next
   * window's count), so the lease ends there.
   */
  windowEndMs = Number.POSITIVE_INFINITY;

  /**
   * The shared bucket was found empty: until then, requests this lease cannot cover are denied here
   * without asking the shared store again (a hot key over its limit would otherwise cost a round
   * trip per request). Set to the time a quarter of a full lease needs to accumulate, so the next
   * grant is worth its round trip; tokens accumulate in the shared bucket meanwhile, not here.
   */
  emptyUntilMs = 0;

  expired(nowMs: number): boolean {
    return nowMs >= this.expiresAtMs || nowMs >= this.windowEndMs;
  }

  /** Whether unspent tokens may still go back to the shared bucket (margin for clock skew). */
  returnable(nowMs: number): boolean {
    return nowMs < this.windowEndMs - Math.max(RETURN_MARGIN_MS, this.policy.periodMs / 10);
  }

  /** Tokens to ask for when `need` more are needed now: enough to hold a whole lease again, no more. */
  want(need: number): number {
    return Math.max(need, this.size - this.tokens);
  }

  /**
   * Whether to top the lease up ahead of need: it holds less than a quarter of its size (and is big
   * enough for a quarter to be a token). The grant then arrives while the last tokens are spent, so a
   * hot key's requests do not wait on it; the lease still never holds more than its size.
   */
  low(): boolean {
    return this.tokens < Math.floor(this.size / 4);
  }

  /** Record a grant made at `nowMs`. */
  granted(nowMs: number, granted: number, remaining: number, resetAfterMs: number): void {
    // Used up (to below a quarter: a prefetch asks then) in less than half its ttl: grow.
    const fast =
      this.tokens <= Math.floor(this.size / 4) && nowMs - this.grantedAtMs < this.options.ttlMs / 2;
    if (nowMs >= this.windowEndMs) this.tokens = 0; // counted in a window that has ended
    const wanted = this.size;
    if (remaining === 0 && granted < wanted) {
      const perTokenMs = this.policy.periodMs / this.policy.limit;
      this.emptyUntilMs = nowMs + Math.ceil(perTokenMs * Math.max(1, Math.floor(this.options.size / 4)));
    }
    this.tokens += granted;
    this.sharedRemaining = remaining;
    this.sharedResetAfterMs = resetAfterMs;
    this.grantedAtMs = nowMs;
    this.expiresAtMs = nowMs + this.options.ttlMs;
    if (this.policy.algorithm === "fixed_window") this.windowEndMs = nowMs + resetAfterMs;
    let size = fast ? this.size * 2 : this.size;
    size = Math.min(size, Math.max(1, Math.floor(remaining / 2)), this.options.size);
    this.size = Math.max(1, size);
  }

  /** Best-knowledge remaining for a status: the shared bucket's last count plus our unspent tokens. */
  remaining(): number {
    return this.sharedRemaining + this.tokens;
  }

  /** Ms until the bucket would be full, estimated from the remaining count. */
  resetAfterMs(): number {
    const perToken = this.policy.periodMs / this.policy.limit;
    return Math.max(0, Math.ceil((this.policy.burst - this.remaining()) * perToken));
  }

  /** Ms until `cost` tokens could be there, given what we know. */
  retryAfterMs(cost: number): number {
    if (cost > this.policy.burst) return -1;
    const perToken = this.policy.periodMs / this.policy.limit;
    return Math.max(1, Math.ceil((cost - this.remaining()) * perToken));
  }
}
