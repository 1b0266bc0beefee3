/**
 * The one hand-moved clock for tests: time only changes when the test says so. It is also a timer
 * source ({@link Timers}), so the code under test can take it for both its clock and its deadlines
 * and a test never sleeps.
 */
import type { Clock, TimerHandle, Timers } from "../../src/engine/types.js";

interface Pending {
  readonly id: number;
  readonly at: number;
  readonly fn: () => void;
}

/** A {@link Clock} and {@link Timers} that start at `startMs` and move only with `advance` / `tick`. */
export class FakeClock implements Clock, Timers {
  #nowMs: number;
  #nextId = 1;
  #pending: Pending[] = [];

  /** @param startMs epoch ms to start at. @default 1_700_000_000_000 (2023-11-14T22:13:20Z) */
  constructor(startMs = 1_700_000_000_000) {
    this.#nowMs = startMs;
  }

  now(): number {
    return this.#nowMs;
  }

  /** Schedule `fn` at `ms` from now (it runs when `advance` or `tick` moves time past it). */
  set(fn: () => void, ms: number): TimerHandle {
    const id = this.#nextId++;
    this.#pending.push({ id, at: this.#nowMs + ms, fn });
    return id;
  }

  clear(handle: TimerHandle): void {
    this.#pending = this.#pending.filter((p) => p.id !== handle);
  }

  /** Timers not yet fired or cleared. */
  get pendingTimers(): number {
    return this.#pending.length;
  }

  /**
   * Move time forward by `ms` (may be fractional; negative is refused), running the timers that fall
   * due on the way in time order, synchronously: promise callbacks they queue run after the caller's
   * own code. Use {@link tick} when a timer's effect goes through promises.
   */
  advance(ms: number): void {
    const end = this.#forward(ms);
    for (let due = this.#nextDue(end); due !== undefined; due = this.#nextDue(end)) this.#fire(due);
    this.#nowMs = end;
  }

  /**
   * Move time forward by `ms`, running the timers that fall due in time order and letting queued
   * promise callbacks run after each (so a timer set from one of them is honoured within the same
   * call), then once more at the end.
   */
  async tick(ms: number): Promise<void> {
    const end = this.#forward(ms);
    for (let due = this.#nextDue(end); due !== undefined; due = this.#nextDue(end)) {
      this.#fire(due);
      await flush();
    }
    this.#nowMs = end;
    await flush();
  }

  #forward(ms: number): number {
    if (!(ms >= 0)) throw new RangeError(`a clock does not go back (advance ${ms})`);
    return this.#nowMs + ms;
  }

  /** The earliest pending timer due by `end` (ties in the order they were set). */
  #nextDue(end: number): Pending | undefined {
    let due: Pending | undefined;
    for (const p of this.#pending) {
      if (p.at <= end && (due === undefined || p.at < due.at || (p.at === due.at && p.id < due.id))) due = p;
    }
    return due;
  }

  #fire(due: Pending): void {
    this.#pending = this.#pending.filter((p) => p !== due);
    this.#nowMs = Math.max(this.#nowMs, due.at);
    due.fn();
  }
}

/** Let queued promise callbacks run (a few macrotask-free microtask turns). */
export async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}
