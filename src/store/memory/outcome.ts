/** Outcome helpers shared by the GCRA and fixed-window math. */
import type { Outcome } from "../store.js";

/** `peek` refused: same tokens and reset, not allowed, admitted after `retryAfterMs` (-1: never). */
export function denied(peek: Outcome, retryAfterMs: number): Outcome {
  return { allowed: false, remaining: peek.remaining, retryAfterMs, resetAfterMs: peek.resetAfterMs };
}
