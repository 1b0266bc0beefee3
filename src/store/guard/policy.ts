/**
 * Failure policies: which one applies to a batch of takes, and the answers of `allow`, `deny` and
 * `error` (the `local` answer comes from the fallback store, see fallback.ts).
 */
import type { FailurePolicy } from "../../engine/types.js";
import { type Outcome, StoreError, type Take } from "../store.js";

/** Picks the failure policy of one `take` batch. */
export type PolicyResolver = (takes: readonly Take[]) => FailurePolicy;

/** Most decisive first: a batch with mixed policies follows the first one of this list it contains. */
const PRECEDENCE: readonly FailurePolicy[] = ["error", "deny", "local", "allow"];

/**
 * The default resolver: each take's `onStoreError`, else `fallback`; when a batch mixes policies the
 * most decisive wins (`error` > `deny` > `local` > `allow`), so a rule that asks to fail closed is never
 * failed open because another bucket of the same request allows it.
 */
export function resolveByTakes(fallback: FailurePolicy): PolicyResolver {
  return (takes) => {
    let rank = Number.POSITIVE_INFINITY;
    for (const t of takes) rank = Math.min(rank, PRECEDENCE.indexOf(t.onStoreError ?? fallback));
    return PRECEDENCE[rank] ?? fallback;
  };
}

/** `allow`: every take admitted, `remaining` counted down from the rule's limit. */
export function allowAll(takes: readonly Take[]): Outcome[] {
  return takes.map((t) => ({
    allowed: true,
    remaining: Math.max(0, t.policy.limit - Math.max(0, t.cost)),
    retryAfterMs: 0,
    resetAfterMs: 0,
    policy: "allow",
  }));
}

/** `deny`: every take refused; retry after `retryAfterMs`, raised to at least one second. */
export function denyAll(takes: readonly Take[], retryAfterMs: number): Outcome[] {
  const retry = Math.max(1_000, Math.ceil(retryAfterMs));
  return takes.map(() => ({
    allowed: false,
    remaining: 0,
    retryAfterMs: retry,
    resetAfterMs: retry,
    policy: "deny",
  }));
}

/**
 * `error`: the error the protocol layer turns into gRPC UNAVAILABLE (never UNKNOWN, which Envoy reads
 * as OK), so Envoy's `failure_mode_deny` decides.
 */
export function unavailable(cause: unknown): StoreError {
  const why = cause instanceof Error ? `: ${cause.message}` : "";
  return new StoreError(`rate limit store unavailable${why}`, {
    code: "unavailable",
    transient: true,
    cause,
  });
}
