/**
 * Race a store call against a deadline. When the deadline wins, the call counts as failed and its late
 * answer (value or rejection) is dropped: nothing waits on it and no unhandled rejection escapes.
 */

import type { Timers } from "../../engine/types.js";
import { StoreError } from "../store.js";

/** Options of {@link withDeadline}. */
export interface DeadlineOptions {
  /** Milliseconds the call may take. */
  readonly ms: number;
  readonly timers: Timers;
  /** What was being done, for the error message (e.g. `"take"`). */
  readonly operation: string;
  /** Called when the answer arrives after the deadline (it is otherwise ignored). */
  readonly onLate?: () => void;
}

/** The error a call gets when its deadline passes: code `timeout`, transient. */
export function deadlineError(operation: string, ms: number): StoreError {
  return new StoreError(
    `store ${operation} did not answer within the ${ms} ms deadline (raise the store deadline setting if the store is just slow)`,
    { code: "timeout", transient: true },
  );
}

/** Resolve or reject like `call`, or reject with {@link deadlineError} once `opts.ms` has passed. */
export function withDeadline<T>(call: Promise<T>, opts: DeadlineOptions): Promise<T> {
  // On every decision's path (once per guard a call reaches): no closures per settle.
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const handle = opts.timers.set(() => {
      if (settled) return;
      settled = true;
      reject(deadlineError(opts.operation, opts.ms));
    }, opts.ms);
    /** First to answer: stop the timer; an answer after the deadline is only counted late. */
    const first = (): boolean => {
      if (settled) {
        opts.onLate?.();
        return false;
      }
      settled = true;
      opts.timers.clear(handle);
      return true;
    };
    call.then(
      (value) => {
        if (first()) resolve(value);
      },
      (err: unknown) => {
        if (first()) reject(err);
      },
    );
  });
}
