/**
 * Instance heartbeat registry: each tollgate instance keeps its id in a Redis sorted set, scored with
 * its last heartbeat time, and counts the members seen within the TTL. The `local` failure policy
 * divides limits by that count. During an outage the last count seen is kept (a heartbeat that fails
 * changes nothing); a setting can pin the count instead.
 *
 * One MULTI per beat: ZADD self, ZREMRANGEBYSCORE the stale, ZCARD, PEXPIRE the set. Scores are this
 * instance's clock, so instances' clocks must agree to well within the TTL (NTP does).
 */
import { instancesKey } from "../../engine/keys.js";
import type { Clock } from "../../engine/types.js";
import type { InstanceCount } from "../guard/fallback.js";

/** The ioredis surface the registry needs (a `Redis` or `Cluster` fits). */
export interface HeartbeatRedis {
  multi(): HeartbeatPipeline;
  zrem(key: string, member: string): Promise<unknown>;
}

/** The chained MULTI commands used (ioredis `ChainableCommander` fits). */
export interface HeartbeatPipeline {
  zadd(key: string, score: number, member: string): HeartbeatPipeline;
  zremrangebyscore(key: string, min: string, max: number): HeartbeatPipeline;
  zcard(key: string): HeartbeatPipeline;
  pexpire(key: string, ms: number): HeartbeatPipeline;
  exec(): Promise<[error: Error | null, result: unknown][] | null>;
}

/** Options of {@link InstanceRegistry}. */
export interface InstanceRegistryOptions {
  readonly redis: HeartbeatRedis;
  /** This instance's id (e.g. hostname and pid); unique per process. */
  readonly id: string;
  readonly clock: Clock;
  /** Sorted-set key; hash-tagged so it lives in one slot. @default instancesKey("") (engine/keys.ts) */
  readonly key?: string;
  /** An instance not seen for this long is not live, ms. @default 15000 */
  readonly ttlMs?: number;
  /** Heartbeat period of `start()`, ms. @default 5000 */
  readonly intervalMs?: number;
  /** Use this count and never ask Redis (the "pin" setting). */
  readonly pinned?: number;
  /** Called with each new count (the `tollgate_instances` gauge). */
  readonly onCount?: (count: number) => void;
}

/** Live-instance count through a Redis heartbeat; see the module comment. */
export class InstanceRegistry implements InstanceCount {
  readonly #o: Required<Omit<InstanceRegistryOptions, "pinned" | "onCount">>;
  readonly #pinned: number | undefined;
  readonly #onCount: (count: number) => void;
  #last = 1;
  /** Whether `onCount` has been told any count yet (the first beat reports even an unchanged 1). */
  #reported = false;
  #timer: NodeJS.Timeout | undefined;
  #inFlight: Promise<number> | undefined;

  constructor(opts: InstanceRegistryOptions) {
    this.#o = {
      redis: opts.redis,
      id: opts.id,
      clock: opts.clock,
      key: opts.key ?? instancesKey(""),
      ttlMs: opts.ttlMs ?? 15_000,
      intervalMs: opts.intervalMs ?? 5_000,
    };
    this.#pinned = opts.pinned === undefined ? undefined : Math.max(1, Math.floor(opts.pinned));
    this.#onCount = opts.onCount ?? (() => {});
    if (this.#pinned !== undefined) this.#last = this.#pinned;
  }

  /** Live instances: the pinned count, else the last count Redis gave (1 before the first beat). */
  count(): number {
    return this.#last;
  }

  /**
   * Register this instance now and refresh the count. Resolves with the count; on a Redis failure it
   * rejects and the last count stays. Concurrent calls share one round trip.
   */
  beat(): Promise<number> {
    if (this.#pinned !== undefined) return Promise.resolve(this.#pinned);
    this.#inFlight ??= this.#beatOnce().finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  /**
   * Beat now and every `intervalMs` (failures are kept silent: the last count stays). A pinned count
   * is reported once here, as it never changes.
   */
  start(): void {
    if (this.#pinned !== undefined && !this.#reported) {
      this.#reported = true;
      this.#onCount(this.#pinned);
    }
    if (this.#timer !== undefined || this.#pinned !== undefined) return;
    const tick = () => {
      this.beat().catch(() => {});
    };
    tick();
    this.#timer = setInterval(tick, this.#o.intervalMs);
    this.#timer.unref();
  }

  /** Stop beating and deregister (best effort: an unreachable Redis lets the entry age out). */
  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#pinned !== undefined) return;
    await this.#o.redis.zrem(this.#o.key, this.#o.id).catch(() => {});
  }

  async #beatOnce(): Promise<number> {
    const { redis, key, id, ttlMs, clock } = this.#o;
    const now = Math.floor(clock.now());
    const replies = await redis
      .multi()
      .zadd(key, now, id)
      .zremrangebyscore(key, "-inf", now - ttlMs)
      .zcard(key)
      .pexpire(key, ttlMs * 2)
      .exec();
    const card = replies?.[2];
    if (card === undefined || card[0] !== null || typeof card[1] !== "number") {
      throw new Error(
        `instance heartbeat on ${key} got no count (${String(card?.[0] ?? "transaction aborted")})`,
      );
    }
    const count = Math.max(1, card[1]);
    if (count !== this.#last || !this.#reported) this.#onCount(count);
    this.#reported = true;
    this.#last = count;
    return count;
  }
}
