/**
 * The RLQS metrics (`tollgate_rlqs_*`, defined in definitions.ts): stream accounting for the RLQS
 * service (protocol/rlqs/service.ts, `RlqsStreamEvents`) and the reports of each stream's session
 * (engine/rlqs/session.ts, `RlqsEvents`). {@link TollgateMetrics.rlqs} is the one instance.
 */
import type { MetricSet } from "./definitions.js";

/** Why an RLQS stream ended. */
export type RlqsCloseReason = "ok" | "idle" | "invalid_argument" | "internal" | "slow_reader" | "closed";

const CLOSE_REASONS: readonly RlqsCloseReason[] = [
  "ok",
  "idle",
  "invalid_argument",
  "internal",
  "slow_reader",
  "closed",
];

export class RlqsMetrics {
  constructor(private readonly m: MetricSet) {
    // Counters alerts read start at 0: a series born at its first increment hides that increment.
    for (const reason of CLOSE_REASONS) m.rlqsStreamsClosed.inc({ reason }, 0);
  }

  /** An RLQS stream opened. */
  rlqsStreamOpened(): void {
    this.m.rlqsStreams.inc();
  }

  /** An RLQS stream ended, and why. */
  rlqsStreamClosed(reason: RlqsCloseReason): void {
    this.m.rlqsStreams.dec();
    this.m.rlqsStreamsClosed.inc({ reason });
  }

  /** `buckets` bucket usages arrived in one report of a configured rlqs domain. */
  rlqsUsage(domain: string, buckets: number): void {
    this.m.rlqsUsages.inc({ domain }, buckets);
  }

  /** An assignment was sent. */
  rlqsAssignment(domain: string, kind: "allow_all" | "deny_all" | "token_bucket" | "fallback"): void {
    this.m.rlqsAssignments.inc({ domain, kind });
  }

  /** A bucket was abandoned. */
  rlqsAbandon(domain: string): void {
    this.m.rlqsAbandons.inc({ domain });
  }

  /** The shared usage board failed a report; `policy` answered. */
  rlqsBoardError(domain: string, policy: string): void {
    this.m.rlqsBoardErrors.inc({ domain, policy });
  }
}
