/**
 * How long the breaker stays open: exponential in the number of back-to-back openings, with jitter so
 * a fleet of instances does not probe a recovering Redis in lockstep, and a cap.
 */

/** Open-duration settings. */
export interface BackoffSettings {
  /** Open time after the first opening, ms. @default 250 */
  readonly baseMs: number;
  /** Factor per back-to-back reopening (a failed half-open probe). @default 2 */
  readonly multiplier: number;
  /**
   * Upper bound of the open time, ms, jitter included. It bounds how long decisions stay off a store
   * that is back (plus one probe). @default 1000
   */
  readonly maxMs: number;
  /** Relative jitter: the time is scaled by a uniform factor in `[1 - jitter, 1 + jitter]`. @default 0.2 */
  readonly jitter: number;
}

/**
 * Open time for the `attempt`-th back-to-back opening (0 for the first):
 * `min(maxMs, baseMs * multiplier^attempt * (1 + jitter * (2r - 1)))`, never below 1 ms.
 * `random` returns a number in `[0, 1)` (injected so tests can pin it).
 */
export function openDurationMs(settings: BackoffSettings, attempt: number, random: () => number): number {
  const exp = settings.baseMs * settings.multiplier ** Math.max(0, attempt);
  const factor = 1 + settings.jitter * (2 * random() - 1);
  return Math.max(1, Math.min(settings.maxMs, exp * factor));
}
