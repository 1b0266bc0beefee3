/**
 * Moves this instance's unsettled RLQS shares between reports (docs/rlqs.md, "Fairness model").
 *
 * A share is unsettled while somebody on its bucket's board is short of its target (a growing
 * Envoy capped by what the others still hold, or one that has not got its first assignment), or
 * until its next report while it is in a shift (its demand moved, or its rate changed, at this
 * report or just before: engine/rlqs/share.ts `moving`). The
 * room it waits for comes when another Envoy (on any instance) publishes a lower rate; without a
 * re-read, the short Envoy would get it only at its own next report, up to one reporting interval
 * later. So every `reporting_interval / TICKS_PER_INTERVAL` while some stream of this instance has
 * an unsettled share, one tick re-reads each such bucket's board once (shared by the instance's
 * streams on it) and sends the raised (or lowered) assignments. Armed on demand through injected
 * timers: nothing runs, and Redis sees nothing beyond the reports, while shares are settled; a
 * share is re-read at most `MAX_REREADS` times between two of its reports (engine/rlqs/share.ts).
 */
import type { Clock, TimerHandle, Timers } from "../types.js";
import type { TickReads } from "./share.js";

/** Re-reads per reporting interval while a share is unsettled. */
export const TICKS_PER_INTERVAL = 8;
/** Shortest tick, ms. */
export const MIN_TICK_MS = 10;

/** One stream, as the rebalancer sees it. */
export interface RebalanceMember {
  /** Whether it has an unsettled share. */
  readonly unsettled: boolean;
  /** Its domain's reporting interval, ms (undefined before its first report). */
  readonly reportingIntervalMs: number | undefined;
  /** Re-read and send what moved, in the stream's own order (after any report in progress). */
  rebalance(reads: TickReads): Promise<void>;
}

/** Tick period for a reporting interval, ms. */
export const tickMs = (reportingIntervalMs: number) =>
  Math.max(MIN_TICK_MS, Math.floor(reportingIntervalMs / TICKS_PER_INTERVAL));

/** See the module comment. */
export class Rebalancer {
  readonly #timers: Timers;
  readonly #clock: Clock;
  readonly #members = new Set<RebalanceMember>();
  #timer: TimerHandle | undefined;
  #due = Number.POSITIVE_INFINITY;
  #running = false;
  #closed = false;
  /** Ticks run (for tests and the bench). */
  ticks = 0;

  constructor(opts: { readonly timers: Timers; readonly clock: Clock }) {
    this.#timers = opts.timers;
    this.#clock = opts.clock;
  }

  add(member: RebalanceMember): void {
    this.#members.add(member);
  }

  delete(member: RebalanceMember): void {
    this.#members.delete(member);
  }

  /** A member may have become unsettled (after a report): tick within its period if so. */
  wake(member: RebalanceMember): void {
    if (!member.unsettled || member.reportingIntervalMs === undefined) return;
    this.#arm(tickMs(member.reportingIntervalMs));
  }

  #arm(delayMs: number): void {
    // A running tick re-arms itself when it ends, from the members' state then.
    if (this.#closed || this.#running) return;
    const due = this.#clock.now() + delayMs;
    if (this.#timer !== undefined) {
      if (this.#due <= due) return;
      this.#timers.clear(this.#timer);
    }
    this.#due = due;
    this.#timer = this.#timers.set(() => void this.#tick(), delayMs);
  }

  async #tick(): Promise<void> {
    this.#timer = undefined;
    this.#due = Number.POSITIVE_INFINITY;
    this.#running = true;
    this.ticks++;
    const reads: TickReads = new Map();
    try {
      // One stream after the other: a stream that takes room publishes it before the next reads.
      for (const m of [...this.#members]) if (m.unsettled) await m.rebalance(reads);
    } finally {
      this.#running = false;
    }
    let next = Number.POSITIVE_INFINITY;
    for (const m of this.#members)
      if (m.unsettled && m.reportingIntervalMs !== undefined)
        next = Math.min(next, tickMs(m.reportingIntervalMs));
    if (Number.isFinite(next)) this.#arm(next);
  }

  /** Stop ticking (server shutdown). */
  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) this.#timers.clear(this.#timer);
    this.#timer = undefined;
    this.#members.clear();
  }
}
