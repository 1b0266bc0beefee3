/**
 * Merge the take script calls of one event-loop turn into one script call per algorithm (single node
 * and Sentinel). Under load hundreds of requests are decided per turn; one EVALSHA carrying all of
 * them costs ioredis one Command, one reply parse and one deadline instead of one per request
 * (bench/RESULTS.md). Redis runs the merged calls one after another inside the batch script, each
 * all-or-nothing on its own exactly as separate EVALSHAs would run (lua/batch.lua.txt wraps the
 * ordinary scripts unchanged).
 *
 * A turn ends at `setImmediate`, the point where ioredis' own auto-pipeline would have flushed, so a
 * call waits no longer than before. A batch holds at most `maxCalls` calls; a turn with more sends
 * several. When a batch fails, every call in it fails with the same error (as a pipeline whose
 * connection dropped does).
 */
import type { Algorithm } from "../../engine/types.js";
import type { Outcome, Take } from "../store.js";

/** Sends one merged call: `calls` in order, answered with one outcome list per call. */
export type BatchSender = (algorithm: Algorithm, calls: readonly (readonly Take[])[]) => Promise<Outcome[][]>;

interface Pending {
  readonly calls: (readonly Take[])[];
  readonly resolve: ((outcomes: Outcome[]) => void)[];
  readonly reject: ((err: unknown) => void)[];
}

const emptyPending = (): Pending => ({ calls: [], resolve: [], reject: [] });

/** Collects take calls per algorithm until the end of the turn, then sends them merged. */
export class TakeBatcher {
  readonly #send: BatchSender;
  readonly #maxCalls: number;
  #gcra: Pending = emptyPending();
  #fixedWindow: Pending = emptyPending();
  #scheduled = false;

  /** `maxCalls` ≥ 1: calls per merged script call. */
  constructor(send: BatchSender, maxCalls: number) {
    if (!Number.isInteger(maxCalls) || maxCalls < 1)
      throw new RangeError(`maxCalls must be ≥ 1, got ${maxCalls}`);
    this.#send = send;
    this.#maxCalls = maxCalls;
  }

  /** Queue one call (takes of one algorithm); settles when its batch answers. */
  take(algorithm: Algorithm, takes: readonly Take[]): Promise<Outcome[]> {
    const pending = algorithm === "gcra" ? this.#gcra : this.#fixedWindow;
    const answer = new Promise<Outcome[]>((resolve, reject) => {
      pending.calls.push(takes);
      pending.resolve.push(resolve);
      pending.reject.push(reject);
    });
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(flushBatcher, this);
    }
    return answer;
  }

  /** Send everything queued (called at the end of the turn). */
  flush(): void {
    this.#scheduled = false;
    const gcra = this.#gcra;
    const fixedWindow = this.#fixedWindow;
    if (gcra.calls.length > 0) this.#gcra = emptyPending();
    if (fixedWindow.calls.length > 0) this.#fixedWindow = emptyPending();
    this.#sendAll("gcra", gcra);
    this.#sendAll("fixed_window", fixedWindow);
  }

  #sendAll(algorithm: Algorithm, pending: Pending): void {
    const n = pending.calls.length;
    for (let from = 0; from < n; from += this.#maxCalls) {
      const to = Math.min(n, from + this.#maxCalls);
      const calls = from === 0 && to === n ? pending.calls : pending.calls.slice(from, to);
      let sent: Promise<Outcome[][]>;
      try {
        sent = this.#send(algorithm, calls);
      } catch (err) {
        sent = Promise.reject(err);
      }
      sent.then(
        (answers) => {
          if (answers.length !== to - from) {
            const err = new Error(`merged reply answers ${answers.length} calls, expected ${to - from}`);
            for (let i = from; i < to; i++) (pending.reject[i] as (e: unknown) => void)(err);
            return;
          }
          for (let i = from; i < to; i++)
            (pending.resolve[i] as (o: Outcome[]) => void)(answers[i - from] as Outcome[]);
        },
        (err: unknown) => {
          for (let i = from; i < to; i++) (pending.reject[i] as (e: unknown) => void)(err);
        },
      );
    }
  }
}

function flushBatcher(batcher: TakeBatcher): void {
  batcher.flush();
}
