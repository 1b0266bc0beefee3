/**
 * Builds the configured store: `memory`, or Redis (single / Sentinel / Cluster) wrapped by the guard
 * (deadline, circuit breaker, failure policy with an in-process fallback whose limits are divided by
 * the live instance count from a Redis heartbeat).
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import { instancesKey } from "../engine/keys.js";
import type { Clock, FailurePolicy } from "../engine/types.js";
import type { TollgateMetrics } from "../metrics/metrics.js";
import type { BreakerSettings } from "./guard/breaker.js";
import { GuardedStore } from "./guard/guarded-store.js";
import { PartitionedGuard } from "./guard/partitioned.js";
import { InstanceRegistry } from "./instances/registry.js";
import { LeasedStore } from "./lease/leased-store.js";
import { MemoryStore } from "./memory/memory-store.js";
import { createRedisClient } from "./redis/client.js";
import { RedisStore } from "./redis/redis-store.js";
import { parseRedisUrl } from "./redis/url.js";
import type { UsageBoard } from "./rlqs/board.js";
import { LazyUsageBoard } from "./rlqs/lazy-board.js";
import { MemoryUsageBoard } from "./rlqs/memory-board.js";
import { RedisUsageBoard } from "./rlqs/redis-board.js";
import type { Store } from "./store.js";

export interface StoreSettings {
  /** `memory` or a Redis URL. */
  readonly store: string;
  readonly memoryMaxBuckets: number;
  readonly redisCommandTimeout: number;
  readonly redisBatchMax: number;
  readonly redisTlsCaFile: string;
  readonly storeDeadline: number;
  readonly onStoreError: FailurePolicy;
  readonly breakerFailures: number;
  readonly breakerOpen: number;
  readonly breakerOpenMax: number;
  readonly breakerFailurePercent: number;
  readonly breakerWindow: number;
  readonly breakerMinCalls: number;
  readonly instances: number;
  /** `--key-prefix`: the heartbeat key is per deployment too. */
  readonly keyPrefix: string;
  /** Default lease size (0 = off) and ttl in ms, for rules without `lease`. */
  readonly leaseSize: number;
  readonly leaseTtl: number;
}

export interface BuiltStore {
  readonly store: Store;
  /** Present for Redis-backed stores. */
  readonly guard: GuardedStore | PartitionedGuard | undefined;
  /**
   * The RLQS usage board: in-process on memory, Redis (its own client, connected on first use) on
   * Redis stores.
   */
  readonly rlqsBoard: UsageBoard;
  /** Live tollgate instances (1 on memory): the `local` failure policy divides limits by it. */
  instances(): number;
  /** Start background work (heartbeat). */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** The circuit breaker settings of `s` (`--breaker-*`). */
export function breakerSettingsOf(
  s: Pick<
    StoreSettings,
    | "breakerFailures"
    | "breakerFailurePercent"
    | "breakerWindow"
    | "breakerMinCalls"
    | "breakerOpen"
    | "breakerOpenMax"
  >,
): Partial<BreakerSettings> {
  return {
    consecutiveFailures: s.breakerFailures,
    failureRatio: s.breakerFailurePercent / 100,
    windowMs: s.breakerWindow,
    minRequests: s.breakerMinCalls,
    baseMs: s.breakerOpen,
    maxMs: s.breakerOpenMax,
  };
}

export function createStore(
  s: StoreSettings,
  deps: { clock: Clock; metrics: TollgateMetrics; logger: Logger },
): BuiltStore {
  if (s.store === "memory") {
    const store = new MemoryStore({ clock: deps.clock, maxBuckets: s.memoryMaxBuckets });
    const rlqsBoard = new MemoryUsageBoard({ clock: deps.clock });
    return {
      store,
      guard: undefined,
      rlqsBoard,
      instances: () => 1,
      start: async () => {},
      close: () => Promise.all([store.close(), rlqsBoard.close()]).then(() => {}),
    };
  }
  const log = deps.logger.child({ component: "store" });
  const redis = new RedisStore({
    url: s.store,
    metrics: deps.metrics,
    commandTimeoutMs: s.redisCommandTimeout,
    batchMaxCalls: s.redisBatchMax,
    ...(s.redisTlsCaFile ? { tlsCaFile: s.redisTlsCaFile } : {}),
    onConnectionError: (err) => log.debug({ code: err.code, err: err.message }, "redis connection error"),
  });
  const heartbeatClient = createRedisClient(parseRedisUrl(s.store), {
    commandTimeoutMs: s.redisCommandTimeout,
    ...(s.redisTlsCaFile ? { tlsCaFile: s.redisTlsCaFile } : {}),
  });
  heartbeatClient.on("error", () => {});
  const registry = new InstanceRegistry({
    redis: heartbeatClient,
    id: randomUUID(),
    key: instancesKey(s.keyPrefix),
    clock: deps.clock,
    ...(s.instances > 0 ? { pinned: s.instances } : {}),
    onCount: (n) => deps.metrics.instances(n),
  });
  const fallback = new MemoryStore({ clock: deps.clock, maxBuckets: s.memoryMaxBuckets });
  const guardFor = (node: string) => {
    const guard = new GuardedStore({
      inner: redis,
      fallback,
      instances: registry,
      deadlineMs: s.storeDeadline,
      breaker: breakerSettingsOf(s),
      defaultPolicy: s.onStoreError,
      clock: deps.clock,
      logger: node ? log.child({ node }) : log,
      events: deps.metrics,
    });
    // The client (re)connected: probe now rather than at the end of the open time. A cluster master's
    // own reconnect reaches only its guard; the cluster client's reaches every node's.
    redis.onReady((ready) => {
      if (ready === "" || ready === node) guard.storeReady();
    });
    return guard;
  };
  // In a cluster, one breaker per master: a master that goes away must not take the live ones'
  // keys off Redis with it.
  const guard =
    redis.kind === "redis-cluster"
      ? new PartitionedGuard({ inner: redis, nodeOf: (key) => redis.nodeOf(key), guardFor })
      : guardFor("");
  // Two-tier limiting sits above the guard: leased tokens keep serving while Redis is away, then
  // takes fall through to the guard's failure policy.
  const store = new LeasedStore({
    inner: guard,
    backend: redis,
    clock: deps.clock,
    metrics: deps.metrics,
    available: () => guard.state === "closed",
    grantDeadlineMs: s.storeDeadline,
    ...(s.leaseSize > 1 ? { defaultLease: { size: s.leaseSize, ttlMs: s.leaseTtl } } : {}),
  });
  const rlqsBoard = new LazyUsageBoard(
    () =>
      new RedisUsageBoard({
        url: s.store,
        commandTimeoutMs: s.redisCommandTimeout,
        ...(s.redisTlsCaFile ? { tlsCaFile: s.redisTlsCaFile } : {}),
      }),
  );
  return {
    store,
    guard,
    rlqsBoard,
    instances: () => registry.count(),
    start: async () => {
      registry.start();
    },
    close: async () => {
      await registry.stop().catch(() => {});
      heartbeatClient.disconnect();
      await rlqsBoard.close();
      await store.close();
    },
  };
}
