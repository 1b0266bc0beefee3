/**
 * One RLQS stream's state machine (docs/rlqs.md): plain values in (decoded usage reports), plain
 * actions out (assignments and abandons), a clock and a usage board injected. No protobuf here.
 *
 * Per report and bucket: resolve the BucketId through the rules; for a shared limit, record this
 * Envoy's demand and held rate on the board (one call) and compute its fair rate from everybody's;
 * send an assignment when the bucket is new on this stream, when the strategy changed, or when half
 * the TTL has passed since the last one (so it never expires while the stream lives). A bucket
 * with no requests for `idle_intervals` reports is abandoned.
 */
import type { UsageBoard } from "../../store/rlqs/board.js";
import { quotaKey } from "../keys.js";
import type { Tiers } from "../tiers.js";
import type { Clock, FailurePolicy, RuleSet } from "../types.js";
import { nextRate, type Participant } from "./allocator.js";
import { BucketIdError, bucketEntries, type Resolution, resolveBucket, type SharedLimit } from "./resolve.js";
import { rateOf, type TokenBucketSpec, tokenBucketFor } from "./token-bucket.js";
import type { RlqsDomain, RlqsRules } from "./types.js";

/** One BucketQuotaUsage, decoded. */
export interface RlqsUsage {
  readonly bucket: ReadonlyMap<string, string>;
  /** `time_elapsed` in ms (Envoy sends whole seconds: 0 for a new bucket's first report). */
  readonly elapsedMs: number;
  readonly allowed: number;
  readonly denied: number;
}

/** One RateLimitQuotaUsageReports, decoded. */
export interface RlqsReport {
  /** Empty when absent. */
  readonly domain: string;
  readonly usages: readonly RlqsUsage[];
}

export type RlqsStrategy =
  | { readonly blanket: "ALLOW_ALL" | "DENY_ALL" }
  | { readonly tokenBucket: TokenBucketSpec };

/** One BucketAction to send. */
export type RlqsAction =
  | {
      readonly kind: "assign";
      readonly bucket: ReadonlyMap<string, string>;
      readonly ttlMs: number;
      readonly strategy: RlqsStrategy;
    }
  | { readonly kind: "abandon"; readonly bucket: ReadonlyMap<string, string> };

/** What made an assignment, for metrics (bounded). */
export type AssignmentKind = "allow_all" | "deny_all" | "token_bucket" | "fallback";

/** Metrics the session reports (TollgateMetrics.rlqs implements them). */
export interface RlqsEvents {
  rlqsUsage(domain: string, buckets: number): void;
  rlqsAssignment(domain: string, kind: AssignmentKind): void;
  rlqsAbandon(domain: string): void;
  rlqsBoardError(domain: string, policy: FailurePolicy): void;
}

/** Invalid input: the stream ends INVALID_ARGUMENT with this message. */
export class RlqsInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RlqsInputError";
  }
}

/** What a session reads on every report (swapped by reference on reload). */
export interface RlqsConfigView {
  readonly rules: RuleSet;
  readonly tiers: Tiers;
  readonly rlqs: RlqsRules;
}

/** Options of {@link RlqsSession}. */
export interface RlqsSessionOptions {
  readonly config: () => RlqsConfigView;
  /** The shared board (Redis on Redis stores, in-process on memory). */
  readonly board: UsageBoard;
  /** In-process board used by the `local` failure policy while the shared one fails. */
  readonly localBoard: UsageBoard;
  /** Live tollgate instances: the `local` policy divides limits by it. */
  readonly instances: () => number;
  readonly clock: Clock;
  /** Unique across instances and time: instance id and stream number. */
  readonly participant: string;
  /** Failure policy of rules and domains that set no `on_store_error`. */
  readonly defaultPolicy: FailurePolicy;
  /** `--key-prefix`. */
  readonly keyPrefix: string;
  readonly events?: RlqsEvents;
}

interface BucketState {
  readonly bucket: ReadonlyMap<string, string>;
  lastReportAt: number;
  idleReports: number;
  /** Fingerprint and time of the last assignment sent. */
  sent: { fingerprint: string; at: number } | undefined;
  /** The rate (req/s) of the token bucket last sent; undefined for none. */
  held: number | undefined;
  /** Usage hash this bucket reported to (to leave it). */
  boardKey: string | undefined;
  /** The board's answer to the last report (predicts a decrease before the next write). */
  view: readonly Participant[] | undefined;
}

/** Canonical text of a BucketId: sorted pairs (Envoy hashes the map, order-free). */
function canonical(bucket: ReadonlyMap<string, string>): string {
  return JSON.stringify([...bucket].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
}

function fingerprint(s: RlqsStrategy): string {
  return "blanket" in s
    ? s.blanket
    : `${s.tokenBucket.maxTokens}/${s.tokenBucket.tokensPerFill}/${s.tokenBucket.fillIntervalSec}`;
}

/** See the module comment. */
export class RlqsSession {
  readonly #o: RlqsSessionOptions;
  #domain: string | undefined;
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
          held: undefined,
          boardKey: undefined,
          view: undefined,
        };
        this.#buckets.set(id, state);
      }
      const interval = settings.reportingIntervalMs;
      const elapsed = fresh ? (u.elapsedMs > 0 ? u.elapsedMs : interval) : now - state.lastReportAt;
      state.lastReportAt = now;
      state.idleReports = count === 0 ? state.idleReports + 1 : 0;
      if (state.idleReports >= settings.idleIntervals) return this.#abandon(id, state, settings);
      const demand = (count * 1000) / Math.max(elapsed, interval / 2);
      const resolution = resolveBucket(rules, config.tiers, entries[i] ?? []);
      const strategy = await this.#strategy(resolution, settings, state, id, demand);
      if (strategy === undefined) return undefined;
      const fp = fingerprint(strategy);
      if (
        state.sent !== undefined &&
        state.sent.fingerprint === fp &&
        now - state.sent.at < settings.ttlMs / 2
      )
        return undefined;
      state.sent = { fingerprint: fp, at: now };
      this.#o.events?.rlqsAssignment(
        settings.domain,
        "blanket" in strategy
          ? strategy.blanket === "ALLOW_ALL"
            ? "allow_all"
            : "deny_all"
          : "token_bucket",
      );
      return { kind: "assign", bucket: u.bucket, ttlMs: settings.ttlMs, strategy };
    });
    const actions = await Promise.all(work);
    return actions.filter((a): a is RlqsAction => a !== undefined);
  }

  async #strategy(
    r: Resolution,
    settings: RlqsDomain,
    state: BucketState,
    id: string,
    demand: number,
  ): Promise<RlqsStrategy | undefined> {
    if (r.kind === "allow_all") return { blanket: "ALLOW_ALL" };
    if (r.kind === "deny_all") return { blanket: "DENY_ALL" };
    const key = quotaKey(this.#o.keyPrefix, settings.domain, r.bucketEntries);
    if (state.boardKey !== undefined && state.boardKey !== key) void this.#leave(state.boardKey, id);
    state.boardKey = key;
    const participant = `${this.#o.participant}/${id}`;
    const params0 = {
      limit: r.limit.ratePerSec,
      minShare: settings.minShare,
      threshold: settings.reassignThreshold,
    };
    // A decrease the last view already implies is published in this same write, so the others can
    // grow into it one reporting interval sooner (one write per report either way).
    let published = state.held ?? 0;
    if (state.held !== undefined && state.view?.some((p) => p.id === participant) === true) {
      const predicted = nextRate(
        params0,
        state.view.map((p) => (p.id === participant ? { ...p, demand } : p)),
        participant,
        state.held,
      );
      published = Math.min(state.held, rateOf(tokenBucketFor(predicted, r.limit)));
    }
    const entry = { participant, demand, held: published };
    const staleMs = 3 * settings.reportingIntervalMs;
    let view: Awaited<ReturnType<UsageBoard["report"]>>;
    let limit: SharedLimit = r.limit;
    try {
      view = await this.#o.board.report(key, entry, staleMs);
    } catch {
      const policy =
        r.rule.onStoreError ??
        this.#o.config().rules.domains.get(settings.domain)?.onStoreError ??
        this.#o.defaultPolicy;
      this.#o.events?.rlqsBoardError(settings.domain, policy);
      if (policy === "allow") return { blanket: "ALLOW_ALL" };
      if (policy === "deny") return { blanket: "DENY_ALL" };
      if (policy === "error") return undefined;
      const n = Math.max(1, this.#o.instances());
      limit = { ratePerSec: r.limit.ratePerSec / n, burst: Math.max(1, Math.floor(r.limit.burst / n)) };
      view = await this.#o.localBoard.report(key, entry, staleMs);
    }
    const params = {
      limit: limit.ratePerSec,
      minShare: settings.minShare,
      threshold: settings.reassignThreshold,
    };
    const rate = nextRate(params, view, participant, state.held);
    const tokenBucket = tokenBucketFor(rate, limit);
    state.held = rateOf(tokenBucket);
    return { tokenBucket };
  }

  #abandon(id: string, state: BucketState, settings: RlqsDomain): RlqsAction {
    this.#buckets.delete(id);
    if (state.boardKey !== undefined) void this.#leave(state.boardKey, id);
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
      s.boardKey === undefined ? undefined : this.#leave(s.boardKey, id),
    );
    this.#buckets.clear();
    await Promise.all(leaving);
  }
}
