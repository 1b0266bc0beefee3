/**
 * A hand-moved clock for unit tests: time only changes when the test says so.
 */
import type { Clock } from "../../src/engine/types.js";

/** A {@link Clock} that starts at `startMs` and moves only with `advance` / `set`. */
export class FakeClock implements Clock {
  #nowMs: number;

  /** @param startMs epoch ms to start at. @default 1_700_000_000_000 (2023-11-14T22:13:20Z) */
  constructor(startMs = 1_700_000_000_000) {
    this.#nowMs = startMs;
  }

  now(): number {
    return this.#nowMs;
  }

  /** Move time forward by `ms` (may be fractional; negative is refused). */
  advance(ms: number): void {
    if (ms < 0) throw new RangeError(`a clock does not go back (advance ${ms})`);
    this.#nowMs += ms;
  }

  /** Jump to an absolute epoch ms. */
  set(ms: number): void {
    this.#nowMs = ms;
  }
}
