/**
 * Timers for deadlines: the store guard's (one per store call) and the gRPC call's (`grpc-timeout`,
 * which Envoy sends on every rate limit call). A deadline is a timer, not a clock read, so tests
 * inject fake timers driven by a fake clock and never sleep (see test/helpers/fake-clock.ts).
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

/** Durations that can have a queue at once; a timer of any other duration is a `base` timer. */
const MAX_QUEUES = 256;

/**
 * The callbacks of one duration in the order they fall due: a ring of due times (a typed array) and
 * callbacks, so a pending timer is no heap object of its own (with 1 s deadlines, one object per
 * call outlived the young generation and its promotion cost more than the Node timer it replaced).
 * Entry `seq` (counted from the queue's first) sits at `(start + seq - headSeq) & mask`.
 */
class Queue {
  at = new Float64Array(64);
  fns: ((() => void) | undefined)[] = new Array(64).fill(undefined);
  start = 0;
  size = 0;
  /** Sequence number of the entry at `start`. */
  headSeq: number;
  armed = false;

  constructor(
    readonly id: number,
    readonly ms: number,
    firstSeq: number,
  ) {
    this.headSeq = firstSeq;
  }

  push(at: number, fn: () => void): number {
    if (this.size === this.at.length) this.#grow();
    const i = (this.start + this.size) & (this.at.length - 1);
    this.at[i] = at;
    this.fns[i] = fn;
    this.size++;
    return this.headSeq + this.size - 1;
  }

  clear(seq: number): void {
    const offset = seq - this.headSeq;
    if (offset >= 0 && offset < this.size) this.fns[(this.start + offset) & (this.at.length - 1)] = undefined;
  }

  #grow(): void {
    const n = this.at.length;
    const at = new Float64Array(n * 2);
    const fns: ((() => void) | undefined)[] = new Array(n * 2).fill(undefined);
    for (let k = 0; k < n; k++) {
      const i = (this.start + k) & (n - 1);
      at[k] = this.at[i] as number;
      fns[k] = this.fns[i];
    }
    this.at = at;
    this.fns = fns;
    this.start = 0;
  }
}

/** A timer set on `base` because every queue was taken (rare: many distinct durations at once). */
class BaseHandle {
  constructor(readonly handle: TimerHandle) {}
}

/**
 * Timers for many callbacks of the same few durations, such as the guard's deadline (one per store
 * call, always the same length) and the gRPC call's. Callbacks of one duration fall due in the order
 * they were set, so each duration is a FIFO queue behind one timer of `base`, armed for its first
 * live entry: setting a timer appends to the queue, clearing one drops its callback. The Node timer
 * this replaces (a timer-list insert and a libuv clock read, then a removal, on every call) showed in
 * the bench profile on every decision, three times over in a cluster (one guard per master a request
 * touches). Callbacks run no earlier than `ms` after they were set, like `setTimeout`'s. A handle is
 * a number (the entry's sequence number and its queue), so setting a timer allocates nothing.
 */
export function queuedTimers(
  base: Timers = nodeTimers,
  now: () => number = performance.now.bind(performance),
): Timers {
  const byMs = new Map<number, Queue>();
  const byId: (Queue | undefined)[] = new Array(MAX_QUEUES).fill(undefined);
  const freeIds = Array.from({ length: MAX_QUEUES }, (_, i) => MAX_QUEUES - 1 - i);
  /** Sequence numbers below this were handed out by queues now gone: a new queue starts here. */
  let seqFloor = 0;

  const arm = (q: Queue) => {
    if (q.size === 0) {
      // Gone until a timer of this duration is set again; its handles can never match a later queue.
      byMs.delete(q.ms);
      byId[q.id] = undefined;
      freeIds.push(q.id);
      seqFloor = Math.max(seqFloor, q.headSeq);
      return;
    }
    q.armed = true;
    base.set(() => fire(q), Math.max(0, (q.at[q.start] as number) - now()));
  };
  const fire = (q: Queue) => {
    // Still armed while callbacks run: one that sets a timer of this duration only queues it.
    const t = now();
    while (q.size > 0) {
      const i = q.start;
      const fn = q.fns[i];
      if (fn !== undefined && (q.at[i] as number) > t) break;
      q.fns[i] = undefined;
      q.start = (i + 1) & (q.at.length - 1);
      q.size--;
      q.headSeq++;
      fn?.();
    }
    q.armed = false;
    arm(q);
  };
  return {
    set(fn, ms) {
      let q = byMs.get(ms);
      if (q === undefined) {
        const id = freeIds.pop();
        if (id === undefined) return new BaseHandle(base.set(fn, ms));
        q = new Queue(id, ms, seqFloor);
        byMs.set(ms, q);
        byId[id] = q;
      }
      const seq = q.push(now() + ms, fn);
      if (!q.armed) arm(q);
      return seq * MAX_QUEUES + q.id;
    },
    clear(handle) {
      if (handle instanceof BaseHandle) {
        base.clear(handle.handle);
        return;
      }
      if (typeof handle !== "number") return;
      const id = handle % MAX_QUEUES;
      byId[id]?.clear((handle - id) / MAX_QUEUES);
    },
  };
}

/** The default deadline timers: {@link queuedTimers} over Node's, unref'ed. */
export const systemTimers: Timers = queuedTimers();
