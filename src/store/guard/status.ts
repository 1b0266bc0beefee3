/**
 * What operators see of the guard: the status object for `/rlconfig` and health details, and the one
 * log line written per breaker transition.
 */
import type { FailurePolicy } from "../../engine/types.js";
import type { BreakerSnapshot, BreakerState, Transition } from "./breaker.js";

/** The guard's state, JSON-ready. Times are ISO-8601. */
export interface GuardStatus {
  readonly kind: string;
  readonly state: BreakerState;
  /** True unless the breaker is closed: decisions follow the failure policy. */
  readonly degraded: boolean;
  /** When the breaker entered `state`. */
  readonly since: string;
  /** When an open breaker lets its first probe through. */
  readonly openUntil: string | undefined;
  readonly lastError: { readonly code: string; readonly message: string; readonly at: string } | undefined;
  readonly deadlineMs: number;
  readonly defaultPolicy: FailurePolicy;
  /** Instance count the `local` fallback divides limits by. */
  readonly instances: number;
  /** Answers that arrived after their deadline and were dropped. */
  readonly lateAnswers: number;
}

/** The guard-level fields of a status that the breaker does not know. */
export type GuardFacts = Pick<
  GuardStatus,
  "kind" | "deadlineMs" | "defaultPolicy" | "instances" | "lateAnswers"
>;

const iso = (ms: number) => new Date(ms).toISOString();

/** Build the status from a breaker snapshot and the guard's own facts. */
export function statusOf(s: BreakerSnapshot, facts: GuardFacts): GuardStatus {
  const e = s.lastError;
  return {
    ...facts,
    state: s.state,
    degraded: s.state !== "closed",
    since: iso(s.since),
    openUntil: s.openUntil === undefined ? undefined : iso(s.openUntil),
    lastError: e === undefined ? undefined : { code: e.code, message: e.message, at: iso(e.at) },
  };
}

/** The single log line of a transition: structured fields plus a message that says what it means. */
export function describeTransition(
  t: Transition,
  defaultPolicy: FailurePolicy,
): { fields: Record<string, unknown>; message: string } {
  const fields: Record<string, unknown> = { breaker: t.to, from: t.from, reason: t.reason };
  if (t.openMs !== undefined) fields.openMs = Math.round(t.openMs);
  if (t.lastError !== undefined) fields.lastError = { code: t.lastError.code, message: t.lastError.message };
  switch (t.to) {
    case "open":
      fields.defaultPolicy = defaultPolicy;
      return {
        fields,
        message: "store circuit breaker open: decisions follow each rule's on_store_error policy",
      };
    case "half_open":
      return { fields, message: "store circuit breaker half-open: probing the store" };
    case "closed":
      return { fields, message: "store circuit breaker closed: decisions are back on the store" };
  }
}
