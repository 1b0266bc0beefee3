/**
 * Build the ioredis client of a Redis store, configured for a hot path: a rate limit decision that
 * waits for a reconnect is worse than a fast, classified failure the guard can act on. So no offline
 * queue, an explicit per-command timeout, bounded retries, and auto-pipelining so that concurrent
 * requests share round trips.
 */
import { readFileSync } from "node:fs";
import { Cluster, type ClusterOptions, Redis, type RedisOptions } from "ioredis";
import type { RedisTarget } from "./url.js";

/** Connection tuning of a Redis store. Every field is optional; defaults suit a same-zone Redis. */
export interface RedisClientOptions {
  /**
   * Fail a command that got no reply after this long (ioredis `commandTimeout`).
   * @default 250 (milliseconds)
   */
  readonly commandTimeoutMs?: number;
  /**
   * Give up a TCP/TLS connect attempt after this long (ioredis `connectTimeout`).
   * @default 2000 (milliseconds)
   */
  readonly connectTimeoutMs?: number;
  /**
   * Retries of one command across reconnects before it fails (ioredis `maxRetriesPerRequest`).
   * Kept small: the guard decides what a failure means, not a queue.
   * @default 1 (retries)
   */
  readonly maxRetriesPerRequest?: number;
  /**
   * Queue commands while disconnected instead of failing them at once (ioredis `enableOfflineQueue`).
   * @default false
   */
  readonly enableOfflineQueue?: boolean;
  /**
   * Send all commands issued in one event-loop tick as one pipeline per node (ioredis
   * `enableAutoPipelining`; the script runner's `run` calls of one turn likewise leave in one write
   * per node, script-runner.ts `shareTurn`). In a cluster this also turns ioredis' delayed retries
   * (failover, CLUSTERDOWN, TRYAGAIN) off (see createRedisClient).
   * @default true
   */
  readonly autoPipelining?: boolean;
  /**
   * Take calls of one algorithm (and cluster slot) merged into one script call per event-loop turn
   * (batch.ts); in a cluster a turn's merged calls to one master leave in one corked write
   * (cluster-batches.ts), each routed by the script runner. 1 sends every call on its own. @default 64
   */
  readonly batchMaxCalls?: number;
  /**
   * Longest pause between reconnect attempts; attempts back off 50 ms, 100 ms, … up to this. It bounds
   * how long a returning Redis goes unnoticed (the breaker probes on the reconnect, see
   * `Store.onReady`), so it is kept well under the 2 s recovery target; an attempt against a dead
   * host is one refused or timed-out connect per client every half second.
   * @default 500 (milliseconds)
   */
  readonly maxReconnectDelayMs?: number;
  /** PEM CA bundle file for `rediss://` (default: Node's built-in CAs). */
  readonly tlsCaFile?: string;
}

/** The effective client options after defaults. */
export type ResolvedClientOptions = Required<Omit<RedisClientOptions, "tlsCaFile">> &
  Pick<RedisClientOptions, "tlsCaFile">;

/** Apply the documented defaults (`_target`: none depends on it today; kept for callers). */
export function resolveClientOptions(
  o: RedisClientOptions,
  _target: { cluster: boolean },
): ResolvedClientOptions {
  return {
    commandTimeoutMs: o.commandTimeoutMs ?? 250,
    connectTimeoutMs: o.connectTimeoutMs ?? 2000,
    maxRetriesPerRequest: o.maxRetriesPerRequest ?? 1,
    enableOfflineQueue: o.enableOfflineQueue ?? false,
    autoPipelining: o.autoPipelining ?? true,
    batchMaxCalls: o.batchMaxCalls ?? 64,
    maxReconnectDelayMs: o.maxReconnectDelayMs ?? 500,
    tlsCaFile: o.tlsCaFile,
  };
}

/** ioredis options shared by a single node, a Sentinel master and every cluster node. */
export function baseRedisOptions(o: ResolvedClientOptions): RedisOptions {
  return {
    lazyConnect: true,
    enableOfflineQueue: o.enableOfflineQueue,
    commandTimeout: o.commandTimeoutMs,
    connectTimeout: o.connectTimeoutMs,
    maxRetriesPerRequest: o.maxRetriesPerRequest,
    enableAutoPipelining: o.autoPipelining,
    retryStrategy: (attempt) => Math.min(attempt * 50, o.maxReconnectDelayMs),
    // Scripts are per node; a reconnect may land on a flushed or new node. The script runner's
    // EVALSHA→EVAL resend on NOSCRIPT covers it (script-runner.ts), so no eager SCRIPT LOAD is needed.
    enableReadyCheck: true,
  };
}

/** Create (without connecting) the ioredis client for a parsed store URL. */
export function createRedisClient(target: RedisTarget, options: RedisClientOptions = {}): Redis | Cluster {
  const o = resolveClientOptions(options, { cluster: target.mode === "cluster" });
  const base = baseRedisOptions(o);
  const auth = { username: target.username, password: target.password };
  if (target.mode === "single") {
    const tls = target.tls
      ? { servername: target.host, ...(o.tlsCaFile ? { ca: readFileSync(o.tlsCaFile) } : {}) }
      : undefined;
    return new Redis({ ...base, ...auth, host: target.host, port: target.port, db: target.db, tls });
  }
  if (target.mode === "sentinel") {
    return new Redis({
      ...base,
      ...auth,
      sentinels: target.sentinels.map((s) => ({ host: s.host, port: s.port })),
      name: target.masterName,
      db: target.db,
      // Subscribe to the sentinels' +switch-master and reconnect at once. Without it the client stays
      // on a demoted master that is still up (after SENTINEL FAILOVER) and keeps writing there until
      // the sentinel reconfigures it, up to ~10 s later (test/store/redis/redis-sentinel-failover.test.ts).
      failoverDetector: true,
    });
  }
  const clusterOptions: ClusterOptions = {
    lazyConnect: true,
    enableOfflineQueue: o.enableOfflineQueue,
    enableAutoPipelining: o.autoPipelining,
    scaleReads: "master",
    maxRedirections: 16,
    // ioredis 5.6 loses a cluster pipeline it retries after a delay (failover: "Connection is
    // closed." from a master that died; CLUSTERDOWN: a restarted master's first ~2 s; TRYAGAIN): the
    // first attempt's commandTimeout timer is not cleared, fires during the delay and counts as a
    // reply while none is pending, so the resent pipeline waits for one reply too many and never
    // settles. Auto-pipelining then queues every later command for that node behind it, for good
    // (test/store/redis/redis-cluster-node-loss.test.ts, test/chaos/cluster-master-kill.test.ts).
    // With no delayed retry the pipeline fails at once (a transient error the guard acts on);
    // RedisStore refreshes the slot map on that failure instead. (MOVED and ASK retry at once: safe.)
    retryDelayOnFailover: 0,
    retryDelayOnClusterDown: 0,
    retryDelayOnTryAgain: 0,
    slotsRefreshTimeout: o.connectTimeoutMs,
    clusterRetryStrategy: (attempt) => Math.min(attempt * 50, o.maxReconnectDelayMs),
    // ioredis forces retryStrategy null and an offline queue on node connections (the cluster client
    // owns reconnects and its own offline queue above), so only the per-command settings pass down.
    redisOptions: {
      ...auth,
      commandTimeout: o.commandTimeoutMs,
      connectTimeout: o.connectTimeoutMs,
      maxRetriesPerRequest: o.maxRetriesPerRequest,
    },
  };
  return new Cluster(
    target.seeds.map((s) => ({ host: s.host, port: s.port })),
    clusterOptions,
  );
}
