/**
 * The guard's log of an outage: one `warn` when the breaker opens, one `info` when it closes again
 * with a summary of the outage (how long, how many probes failed, the first and last error), and
 * while it lasts at most one `warn` summary per `summaryEveryMs`. The open ⇄ half-open cycle of
 * probing (about once a second per instance with the default settings) writes no line of its own
 * above `debug`.
 */
import type { FailurePolicy } from "../../engine/types.js";
import type { LastError, Transition } from "./breaker.js";
import type { GuardLogger } from "./events.js";
import { describeTransition } from "./status.js";

/** One outage: from the breaker opening until it closes. */
interface Outage {
  readonly since: number;
  readonly firstError: LastError | undefined;
  lastError: LastError | undefined;
  /** Probes that failed since the outage began, and since the last summary line. */
  failedProbes: number;
  failedSinceSummary: number;
  lastSummaryAt: number;
}

/** Options of {@link OutageLog}. */
export interface OutageLogOptions {
  readonly logger: GuardLogger;
  readonly defaultPolicy: FailurePolicy;
  /** Least time between two "still failing" summaries during one outage, ms. @default 60000 */
  readonly summaryEveryMs?: number;
}

const errorOf = (e: LastError | undefined) =>
  e === undefined ? undefined : { code: e.code, message: e.message, at: new Date(e.at).toISOString() };

/** Turns breaker transitions into the few log lines an operator needs (see the module comment). */
export class OutageLog {
  readonly #o: Required<OutageLogOptions>;
  #outage: Outage | undefined;

  constructor(options: OutageLogOptions) {
    this.#o = { summaryEveryMs: 60_000, ...options };
  }

  /** Log what `t` means (called once per breaker transition). */
  transitioned(t: Transition): void {
    const { logger, defaultPolicy } = this.#o;
    const line = describeTransition(t, defaultPolicy);
    const outage = this.#outage;
    if (outage === undefined) {
      if (t.to === "open") {
        this.#outage = {
          since: t.at,
          firstError: t.lastError,
          lastError: t.lastError,
          failedProbes: 0,
          failedSinceSummary: 0,
          lastSummaryAt: t.at,
        };
        logger.warn(line.fields, line.message);
      } else if (t.to === "closed") logger.info(line.fields, line.message);
      else logger.debug?.(line.fields, line.message);
      return;
    }
    if (t.to === "closed") {
      this.#outage = undefined;
      logger.info(
        { ...line.fields, ...this.#summary(outage, t.at, outage.failedProbes) },
        `${line.message} after ${Math.round((t.at - outage.since) / 1000)} s`,
      );
      return;
    }
    if (t.to === "open") {
      outage.failedProbes++;
      outage.failedSinceSummary++;
      outage.lastError = t.lastError ?? outage.lastError;
    }
    logger.debug?.(line.fields, line.message);
    if (t.at - outage.lastSummaryAt >= this.#o.summaryEveryMs) {
      logger.warn(
        { breaker: t.to, ...this.#summary(outage, t.at, outage.failedSinceSummary), defaultPolicy },
        `store still failing: ${outage.failedSinceSummary} failed probe(s) in the last ${Math.round((t.at - outage.lastSummaryAt) / 1000)} s; decisions follow each rule's on_store_error policy`,
      );
      outage.failedSinceSummary = 0;
      outage.lastSummaryAt = t.at;
    }
  }

  #summary(outage: Outage, now: number, failedProbes: number): Record<string, unknown> {
    return {
      outageMs: Math.round(now - outage.since),
      since: new Date(outage.since).toISOString(),
      failedProbes,
      firstError: errorOf(outage.firstError),
      lastError: errorOf(outage.lastError),
    };
  }
}
