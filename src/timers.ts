/**
 * Timers for deadlines: the store guard's (one per store call) and the gRPC call's (`grpc-timeout`,
 * which Envoy sends on every rate limit call). A deadline is a timer, not a clock read, so tests
 * inject fake timers driven by a fake clock and never sleep (see test/store/guard/fake-time.ts).
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
export const nodeTimers: Timers = {
  set(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clear(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
};

/** One queued callback; `fn` is dropped when it is cleared. */
interface Entry {
  readonly at: number;
  fn: (() => void) | undefined;
}

/** The callbacks of one duration, in the order they fall due, behind one timer of `base`. */
class Queue {
  readonly entries: Entry[] = [];
  head = 0;
  armed = false;
}

/**
 * Timers for many callbacks of the same few durations, such as the guard's deadline (one per store
 * call, always the same length). Callbacks of one duration fall due in the order they were set, so
 * each duration is a FIFO queue behind one timer of `base`, armed for its first entry: setting one
 * is an array push and clearing one drops its callback. The Node timer it replaces (a timer-list
 * insert, a libuv clock read, then a removal, on every store call) was ~1% of the CPU per decision
 * in the bench profile, three times over in a cluster (one guard per master a request touches).
 * Callbacks run no earlier than `ms` after they were set, like `setTimeout`'s.
 */
export function queuedTimers(
  base: Timers = nodeTimers,
  now: () => number = performance.now.bind(performance),
): Timers {
  const queues = new Map<number, Queue>();
  const arm = (ms: number, q: Queue) => {
    const first = q.entries[q.head];
    if (first === undefined) {
      queues.delete(ms);
      return;
    }
    q.armed = true;
    base.set(() => fire(ms, q), Math.max(0, first.at - now()));
  };
  const fire = (ms: number, q: Queue) => {
    // Still armed while callbacks run: one that sets a timer of this duration only queues it.
    const t = now();
    const { entries } = q;
    while (q.head < entries.length) {
      const e = entries[q.head] as Entry;
      if (e.at > t && e.fn !== undefined) break;
      q.head++;
      const fn = e.fn;
      e.fn = undefined;
      fn?.();
    }
    if (q.head === entries.length) {
      entries.length = 0;
      q.head = 0;
    } else if (q.head > 1024 && q.head * 2 > entries.length) {
      entries.splice(0, q.head);
      q.head = 0;
    }
    q.armed = false;
    arm(ms, q);
  };
  return {
    set(fn, ms) {
      let q = queues.get(ms);
      if (q === undefined) {
        q = new Queue();
        queues.set(ms, q);
      }
      const entry: Entry = { at: now() + ms, fn };
      q.entries.push(entry);
      if (!q.armed) arm(ms, q);
      return entry;
    },
    clear(handle) {
      (handle as Entry).fn = undefined;
    },
  };
}

/** The default deadline timers: {@link queuedTimers} over Node's, unref'ed. */
export const systemTimers: Timers = queuedTimers();
