/**
 * Merge the take script calls of one event-loop turn into one script call per algorithm (and, in a
 * cluster, per slot: a script's keys share one). Under load hundreds of requests are decided per turn;
 * one EVALSHA carrying all of them costs ioredis one Command, one reply parse and one deadline instead
 * of one per request (docs/decisions/merged-redis-calls.md). Redis runs the merged calls one after
 * another inside the batch script, each all-or-nothing on its own exactly as separate EVALSHAs would
 * run (lua/batch.lua wraps the ordinary scripts unchanged).
 *
 * A turn ends at `setImmediate`, the point where ioredis' own auto-pipeline would have flushed, so a
 * call waits no longer than before. A batch holds at most `maxCalls` calls; a turn with more sends
 * several. When a batch fails, every call in it fails with the same error (as a pipeline whose
 * connection dropped does).
 */
import type { Algorithm } from "../../engine/types.js";
import type { Outcome, Take } from "../store.js";

/** One merged call: take calls of one algorithm (and, in a cluster, one slot), in order. */
export interface Batch {
  readonly algorithm: Algorithm;
  /** Cluster slot of every key; -1 on a single node. */
  readonly slot: number;
  readonly calls: readonly (readonly Take[])[];
}

/**
 * Sends the merged calls of one turn (together, so a cluster store can pipeline those of one node):
 * one promise per batch, answered per call with its outcomes, or the error that call alone failed
 * with (the others of the batch ran).
 */
export type BatchSender = (batches: readonly Batch[]) => Promise<(Outcome[] | Error)[]>[];

interface Pending {
  readonly algorithm: Algorithm;
  readonly slot: number;
  readonly calls: (readonly Take[])[];
  readonly resolve: ((outcomes: Outcome[]) => void)[];
  readonly reject: ((err: unknown) => void)[];
}

/** Collects take calls per algorithm until the end of the turn, then sends them merged. */
export class TakeBatcher {
  readonly #send: BatchSender;
  readonly #maxCalls: number;
  /** Calls of this turn by (slot, algorithm). */
  #pending = new Map<number, Pending>();
  #scheduled = false;

  /** `maxCalls` ≥ 1: calls per merged script call. */
  constructor(send: BatchSender, maxCalls: number) {
    if (!Number.isInteger(maxCalls) || maxCalls < 1)
      throw new RangeError(`maxCalls must be ≥ 1, got ${maxCalls}`);
    this.#send = send;
    this.#maxCalls = maxCalls;
  }

  /** Queue one call (takes of one algorithm and slot); settles when its batch answers. */
  take(algorithm: Algorithm, takes: readonly Take[], slot = -1): Promise<Outcome[]> {
    const id = slot * 2 + (algorithm === "gcra" ? 0 : 1);
    let pending = this.#pending.get(id);
    if (pending === undefined) {
      pending = { algorithm, slot, calls: [], resolve: [], reject: [] };
      this.#pending.set(id, pending);
    }
    const queue = pending;
    const answer = new Promise<Outcome[]>((resolve, reject) => {
      queue.calls.push(takes);
      queue.resolve.push(resolve);
      queue.reject.push(reject);
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
    const queued = this.#pending;
    if (queued.size === 0) return;
    this.#pending = new Map();
    // Each pending list cut into batches of at most maxCalls; `owners[i]` answers `batches[i]`.
    const batches: Batch[] = [];
    const owners: { pending: Pending; from: number; to: number }[] = [];
    for (const pending of queued.values()) {
      const n = pending.calls.length;
      for (let from = 0; from < n; from += this.#maxCalls) {
        const to = Math.min(n, from + this.#maxCalls);
        const calls = from === 0 && to === n ? pending.calls : pending.calls.slice(from, to);
        batches.push({ algorithm: pending.algorithm, slot: pending.slot, calls });
        owners.push({ pending, from, to });
      }
    }
    let sent: Promise<(Outcome[] | Error)[]>[];
    try {
      sent = this.#send(batches);
    } catch (err) {
      sent = batches.map(() => Promise.reject(err));
    }
    owners.forEach(({ pending, from, to }, b) => {
      const answer = sent[b] ?? Promise.reject(new Error(`merged call ${b} was not sent`));
      answer.then(
        (answers) => {
          if (answers.length !== to - from) {
            const err = new Error(`merged reply answers ${answers.length} calls, expected ${to - from}`);
            for (let i = from; i < to; i++) (pending.reject[i] as (e: unknown) => void)(err);
            return;
          }
          for (let i = from; i < to; i++) {
            const answer = answers[i - from];
            if (answer instanceof Error) (pending.reject[i] as (e: unknown) => void)(answer);
            else (pending.resolve[i] as (o: Outcome[]) => void)(answer as Outcome[]);
          }
        },
        (err: unknown) => {
          for (let i = from; i < to; i++) (pending.reject[i] as (e: unknown) => void)(err);
        },
      );
    });
  }
}

function flushBatcher(batcher: TakeBatcher): void {
  batcher.flush();
}
