/**
 * The timer seam of the guard. The deadline is a timer, not a clock read, so tests inject fake
 * timers driven by a fake clock and never sleep (see test/store/guard/fake-time.ts).
 */

/** An opaque handle returned by {@link Timers.set}. */
export type TimerHandle = unknown;

/** Schedule and cancel one-shot callbacks. */
export interface Timers {
  /** Call `fn` once after `ms` milliseconds. The timer must not keep the process alive. */
  set(fn: () => void, ms: number): TimerHandle;
  /** Cancel a timer; cancelling a fired or cancelled one is a no-op. */
  clear(handle: TimerHandle): void;
}

/** Node timers, unref'ed so a pending deadline never holds the process open at shutdown. */
export const systemTimers: Timers = {
  set(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clear(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
};
