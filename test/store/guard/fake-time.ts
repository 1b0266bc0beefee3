/**
 * A fake clock that is also the guard's timer source: `advance(ms)` moves time and fires the timers
 * that fall due, in order. Tests move time explicitly and never sleep.
 */
import type { Clock } from "../../../src/engine/types.js";
import type { TimerHandle, Timers } from "../../../src/timers.js";

interface Pending {
  readonly id: number;
  readonly at: number;
  readonly fn: () => void;
}

export class FakeTime implements Clock, Timers {
  #now: number;
  #nextId = 1;
  #pending: Pending[] = [];

  constructor(startMs = 1_700_000_000_000) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  set(fn: () => void, ms: number): TimerHandle {
    const id = this.#nextId++;
    this.#pending.push({ id, at: this.#now + ms, fn });
    return id;
  }

  clear(handle: TimerHandle): void {
    this.#pending = this.#pending.filter((p) => p.id !== handle);
  }

  /** Timers not yet fired or cleared. */
  get pendingTimers(): number {
    return this.#pending.length;
  }

  /** Move time forward by `ms`, firing due timers in time order, then let promise callbacks run. */
  async advance(ms: number): Promise<void> {
    const end = this.#now + ms;
    for (;;) {
      const due = this.#pending.filter((p) => p.at <= end).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (due === undefined) break;
      this.#pending = this.#pending.filter((p) => p !== due);
      this.#now = Math.max(this.#now, due.at);
      due.fn();
      await flush();
    }
    this.#now = end;
    await flush();
  }
}

/** Let queued promise callbacks run (a few macrotask-free microtask turns). */
export async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}
