/**
 * What the lease layer needs from the shared store: take up to N tokens from one bucket (the grant is
 * whatever is there, possibly 0) and give unused tokens back. RedisStore (lua/lease.lua) and
 * MemoryStore implement it.
 */
import type { Take } from "../store.js";

export interface Grant {
  /** Tokens taken from the shared bucket for the local lease (0 ≤ granted ≤ wanted). */
  readonly granted: number;
  /** Whole tokens left in the shared bucket after the grant. */
  readonly remaining: number;
  /** Ms until the shared bucket is full again (GCRA) or its window ends (fixed window). */
  readonly resetAfterMs: number;
}

export interface LeaseBackend {
  /** Take up to `take.cost` tokens from `take.key`, atomically. */
  grant(take: Take): Promise<Grant>;
  /** Give `cost` tokens back to each bucket. */
  refund(takes: readonly Take[]): Promise<void>;
}
