/**
 * Success/failure counts over a sliding time window, kept in a ring of fixed slots so recording and
 * reading are O(slots) with no allocation per call. Time comes from the caller (an injected clock).
 */

/** Totals over the window. */
export interface WindowCounts {
  readonly total: number;
  readonly failures: number;
}

/** Options of {@link SlidingWindow}. */
export interface SlidingWindowOptions {
  /** Window length in milliseconds. */
  readonly windowMs: number;
  /** Slots the window is cut into; accuracy is `windowMs / slots`. @default 10 */
  readonly slots?: number;
}

/** Counts of calls and failures during the last `windowMs` (to slot accuracy). */
export class SlidingWindow {
  readonly #slotMs: number;
  readonly #starts: number[];
  readonly #totals: number[];
  readonly #failures: number[];

  constructor(opts: SlidingWindowOptions) {
    const slots = Math.max(1, Math.floor(opts.slots ?? 10));
    this.#slotMs = Math.max(1, opts.windowMs / slots);
    this.#starts = new Array<number>(slots).fill(Number.NEGATIVE_INFINITY);
    this.#totals = new Array<number>(slots).fill(0);
    this.#failures = new Array<number>(slots).fill(0);
  }

  /** Record one call at `now` (ms). */
  record(now: number, failed: boolean): void {
    const start = Math.floor(now / this.#slotMs) * this.#slotMs;
    const i = Math.floor(now / this.#slotMs) % this.#starts.length;
    if (this.#starts[i] !== start) {
      this.#starts[i] = start;
      this.#totals[i] = 0;
      this.#failures[i] = 0;
    }
    this.#totals[i] = (this.#totals[i] ?? 0) + 1;
    if (failed) this.#failures[i] = (this.#failures[i] ?? 0) + 1;
  }

  /** Calls and failures whose slot lies within the window ending at `now`. */
  counts(now: number): WindowCounts {
    const oldest = Math.floor(now / this.#slotMs) * this.#slotMs - (this.#starts.length - 1) * this.#slotMs;
    let total = 0;
    let failures = 0;
    for (let i = 0; i < this.#starts.length; i++) {
      if ((this.#starts[i] ?? Number.NEGATIVE_INFINITY) < oldest) continue;
      total += this.#totals[i] ?? 0;
      failures += this.#failures[i] ?? 0;
    }
    return { total, failures };
  }

  /** Forget everything (the breaker clears its window when it closes). */
  clear(): void {
    this.#starts.fill(Number.NEGATIVE_INFINITY);
    this.#totals.fill(0);
    this.#failures.fill(0);
  }
}
