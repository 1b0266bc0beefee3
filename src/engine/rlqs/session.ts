/**
 * One RLQS stream's state machine (docs/rlqs.md): plain values in (decoded usage reports), plain
 * actions out (assignments and abandons), a clock and a usage board injected. No protobuf here.
 *
 * Per report and bucket: resolve the BucketId through the rules; for a shared limit, record this
 * Envoy's demand and held rate on the board and compute its fair rate from everybody's
 * (engine/rlqs/share.ts); send an assignment when the bucket is new on this stream, when the
 * strategy changed, or when half the TTL has passed since the last one (so it never expires while
 * the stream lives). A bucket with no requests for `idle_intervals` reports is abandoned. Between
 * reports, `rebalance` moves unsettled shares as soon as the board has room for them.
 */
import { quotaKey } from "../keys.js";
import type { Clock, FailurePolicy } from "../types.js";
import {
  canonical,
  fingerprint,
  type RlqsAction,
  type RlqsConfigView,
  RlqsInputError,
  type RlqsReport,
  type RlqsStrategy,
} from "./messages.js";
import { BucketIdError, bucketEntries, type Resolution, resolveBucket } from "./resolve.js";
import { rebalanceShare, reportShare, type Share, type ShareOptions, type TickReads } from "./share.js";
import type { RlqsDomain } from "./types.js";

/** Options of {@link RlqsSession}. */
export interface RlqsSessionOptions extends ShareOptions {
  readonly config: () => RlqsConfigView;
  readonly clock: Clock;
  /** Unique across instances and time: instance id and stream number. */
  readonly participant: string;
  /** Failure policy of rules and domains that set no `on_store_error`. */
  readonly defaultPolicy: FailurePolicy;
  /** `--key-prefix`. */
  readonly keyPrefix: string;
}

interface BucketState {
  readonly bucket: ReadonlyMap<string, string>;
  lastReportAt: number;
  idleReports: number;
  /** Fingerprint and time of the last assignment sent. */
  sent: { fingerprint: string; at: number } | undefined;
  /** Its share of a shared limit, once it had one. */
  share: Share | undefined;
  /** TTL of the domain's assignments, ms. */
  ttlMs: number;
}

/** See the module comment. */
export class RlqsSession {
  readonly #o: RlqsSessionOptions;
  #domain: string | undefined;
  #intervalMs: number | undefined;
  readonly #buckets = new Map<string, BucketState>();

  constructor(opts: RlqsSessionOptions) {
    this.#o = opts;
  }

  /** The stream's domain, once its first report named it. */
  get domain(): string | undefined {
    return this.#domain;
  }

  /** Buckets this stream tracks. */
  get size(): number {
    return this.#buckets.size;
  }

  /** The domain's reporting interval as of the last report, ms. */
  get reportingIntervalMs(): number | undefined {
    return this.#intervalMs;
  }

  /** Whether some bucket's share is still moving (the rebalancer should call {@link rebalance}). */
  get unsettled(): boolean {
    for (const s of this.#buckets.values()) if (s.share?.unsettled === true) return true;
    return false;
  }

  /** Check a report (throws RlqsInputError) and return the domain settings it runs under. */
  #check(
    report: RlqsReport,
    config: RlqsConfigView,
  ): { settings: RlqsDomain; entries: ReturnType<typeof bucketEntries>[] } {
    if (this.#domain === undefined) {
      if (report.domain === "")
        throw new RlqsInputError("the first usage report of a stream must set domain");
    } else if (report.domain !== "" && report.domain !== this.#domain)
      throw new RlqsInputError(
        `domain ${JSON.stringify(report.domain)} differs from the stream's ${JSON.stringify(this.#domain)}`,
      );
    const domain = this.#domain ?? report.domain;
    const settings = config.rlqs.get(domain);
    if (settings === undefined)
      throw new RlqsInputError(`domain ${JSON.stringify(domain)} has no rlqs section in the config`);
    if (report.usages.length === 0) throw new RlqsInputError("bucket_quota_usages is empty");
    const entries = report.usages.map((u, i) => {
      try {
        return bucketEntries(settings, u.bucket);
      } catch (err) {
        if (err instanceof BucketIdError)
          throw new RlqsInputError(`bucket_quota_usages[${i}]: ${err.message}`);
        throw err;
      }
    });
    this.#domain = domain;
    this.#intervalMs = settings.reportingIntervalMs;
    return { settings, entries };
  }

  /** Handle one report: the actions to send (possibly none). Throws RlqsInputError for bad input. */
  async report(report: RlqsReport): Promise<RlqsAction[]> {
    const config = this.#o.config();
    const { settings, entries } = this.#check(report, config);
    const rules = config.rules.domains.get(settings.domain);
    this.#o.events?.rlqsUsage(settings.domain, report.usages.length);
    const now = this.#o.clock.now();
    const work = report.usages.map(async (u, i): Promise<RlqsAction | undefined> => {
      const id = canonical(u.bucket);
      let state = this.#buckets.get(id);
      const count = u.allowed + u.denied;
      const fresh = state === undefined;
      if (state === undefined) {
        state = {
          bucket: u.bucket,
          lastReportAt: now,
          idleReports: 0,
          sent: undefined,
          share: undefined,
          ttlMs: settings.ttlMs,
        };
        this.#buckets.set(id, state);
      }
      state.ttlMs = settings.ttlMs;
      const interval = settings.reportingIntervalMs;
      // Envoy reports every interval on its own timer: a report arriving within half an interval
      // of that covers one interval (the arrival time adds only network and scheduling jitter,
      // which would otherwise read as demand noise); others are measured on our clock.
      const measured = fresh ? (u.elapsedMs > 0 ? u.elapsedMs : interval) : now - state.lastReportAt;
      const elapsed = Math.abs(measured - interval) <= interval / 2 ? interval : measured;
      state.lastReportAt = now;
      state.idleReports = count === 0 ? state.idleReports + 1 : 0;
      if (state.idleReports >= settings.idleIntervals) return this.#abandon(id, state, settings);
      const demand = (count * 1000) / Math.max(elapsed, interval / 2);
      const resolution = resolveBucket(rules, config.tiers, entries[i] ?? []);
      const strategy = await this.#strategy(resolution, settings, state, id, demand);
      if (strategy === undefined) return undefined;
      return this.#assign(state, strategy, settings.domain, now);
    });
    const actions = await Promise.all(work);
    return actions.filter((a): a is RlqsAction => a !== undefined);
  }

  /**
   * Re-read the board for every unsettled share of this stream (`reads` shares the reads of one
   * tick across streams) and send those whose fair rate moved materially.
   */
  async rebalance(reads: TickReads): Promise<RlqsAction[]> {
    const actions: RlqsAction[] = [];
    for (const state of this.#buckets.values()) {
      const share = state.share;
      if (share?.unsettled !== true) continue;
      const tokenBucket = await rebalanceShare(this.#o, share, reads);
      if (tokenBucket === undefined || state.share !== share) continue;
      const action = this.#assign(state, { tokenBucket }, share.domain, this.#o.clock.now());
      if (action !== undefined) actions.push(action);
    }
    return actions;
  }

  /** The assignment to send for `strategy`, unless the same one went out less than TTL/2 ago. */
  #assign(state: BucketState, strategy: RlqsStrategy, domain: string, now: number): RlqsAction | undefined {
    const fp = fingerprint(strategy);
    if (state.sent !== undefined && state.sent.fingerprint === fp && now - state.sent.at < state.ttlMs / 2)
      return undefined;
    state.sent = { fingerprint: fp, at: now };
    this.#o.events?.rlqsAssignment(
      domain,
      "blanket" in strategy ? (strategy.blanket === "ALLOW_ALL" ? "allow_all" : "deny_all") : "token_bucket",
    );
    return { kind: "assign", bucket: state.bucket, ttlMs: state.ttlMs, strategy };
  }

  async #strategy(
    r: Resolution,
    settings: RlqsDomain,
    state: BucketState,
    id: string,
    demand: number,
  ): Promise<RlqsStrategy | undefined> {
    if (r.kind !== "limited") {
      state.share = undefined;
      return { blanket: r.kind === "allow_all" ? "ALLOW_ALL" : "DENY_ALL" };
    }
    const key = quotaKey(this.#o.keyPrefix, settings.domain, r.bucketEntries);
    const previous = state.share;
    if (previous !== undefined && previous.key !== key) void this.#leave(previous.key, id);
    const result = await reportShare(this.#o, {
      domain: settings.domain,
      key,
      participant: `${this.#o.participant}/${id}`,
      demand,
      previous: previous?.key === key ? previous.held : undefined,
      previousDemand: previous?.key === key ? previous.demand : undefined,
      before: previous?.key === key ? previous : undefined,
      limit: r.limit,
      minShare: settings.minShare,
      threshold: settings.reassignThreshold,
      staleMs: 3 * settings.reportingIntervalMs,
      policy: () =>
        r.rule.onStoreError ??
        this.#o.config().rules.domains.get(settings.domain)?.onStoreError ??
        this.#o.defaultPolicy,
    });
    state.share = result?.share ?? (previous?.key === key ? previous : undefined);
    if (result?.share === undefined && state.share !== undefined) state.share.unsettled = false;
    return result?.strategy;
  }

  #abandon(id: string, state: BucketState, settings: RlqsDomain): RlqsAction {
    this.#buckets.delete(id);
    if (state.share !== undefined) void this.#leave(state.share.key, id);
    this.#o.events?.rlqsAbandon(settings.domain);
    return { kind: "abandon", bucket: state.bucket };
  }

  async #leave(key: string, id: string): Promise<void> {
    const participant = `${this.#o.participant}/${id}`;
    await Promise.all([
      this.#o.board.leave(key, participant),
      this.#o.localBoard.leave(key, participant),
    ]).catch(() => {});
  }

  /** The stream ended: take this stream's participations off the boards (best effort). */
  async close(): Promise<void> {
    const leaving = [...this.#buckets].map(([id, s]) =>
      s.share === undefined ? undefined : this.#leave(s.share.key, id),
    );
    this.#buckets.clear();
    await Promise.all(leaving);
  }
}
