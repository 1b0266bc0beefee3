/**
 * A hard upper bound on one Redis call. ioredis' `commandTimeout` covers commands sent on their own,
 * but a command inside a Cluster auto-pipeline whose node died can stay pending until the slot map
 * changes (observed with ioredis 5.6: no reply, no timeout). A rate limit decision must never wait
 * that long, so every store call also races this deadline. The deadline is a timer of the injected
 * {@link Timers} (Node's by default; tests pass the fake clock).
 */
import { systemTimers, type TimerHandle, type Timers } from "../../engine/types.js";

/** Raised when a call outlives its deadline; classified as a transient `timeout`. */
export class CallTimeoutError extends Error {
  constructor(ms: number) {
    super(`Redis call timed out after ${ms} ms (callTimeoutMs)`);
    this.name = "CallTimeoutError";
  }
}

/**
 * Settle like `work`, or reject with `CallTimeoutError` after `ms` on `timers`, whichever comes first;
 * the timer is cleared either way.
 */
export function withDeadline<T>(work: Promise<T>, ms: number, timers: Timers = systemTimers): Promise<T> {
  let timer: TimerHandle;
  const expired = new Promise<never>((_, reject) => {
    timer = timers.set(() => reject(new CallTimeoutError(ms)), ms);
  });
  return Promise.race([work, expired]).finally(() => timers.clear(timer));
}
