/**
 * `Store` on Redis (single node or Sentinel) or Redis Cluster, with the bucket math in lua/ and Redis
 * `TIME` as the only clock.
 *
 * One `take` call becomes one script call per (slot, algorithm) group, all sent at once. A group's
 * script is all-or-nothing on its own. Across groups (different slots in a cluster, or GCRA and fixed
 * window buckets in one call) all-or-nothing is kept by compensation: when any group denies, the
 * groups that charged are refunded. So the store never admits more than a bucket's capacity; while a
 * refund is in flight a concurrent request may see those tokens as spent (brief under-admission).
 */

import type { Cluster, Redis } from "ioredis";
import { type EngineMetrics, noopMetrics } from "../../engine/metrics-port.js";
import { systemTimers, type Timers } from "../../engine/types.js";
import type { Grant, LeaseBackend } from "../lease/backend.js";
import { isForced, type Outcome, reportOnce, type Store, type StoreError, type Take } from "../store.js";
import { type Batch, TakeBatcher } from "./batch.js";
import { createRedisClient, type RedisClientOptions, resolveClientOptions } from "./client.js";
import { sendClusterBatches } from "./cluster-batches.js";
import { withDeadline } from "./deadline.js";
import { classifyRedisError } from "./errors.js";
import { groupKeysBySlot, groupTakes, type TakeGroup, uncharged } from "./groups.js";
import { RoundTripMeter } from "./round-trips.js";
import { runnerFor } from "./script-runner.js";
import { Scripts } from "./scripts.js";
import { keySlot } from "./slot.js";
import { parseRedisUrl, redactUrl } from "./url.js";
import { waitUntilReady } from "./wait-ready.js";

/** Options of a Redis store: the URL plus connection tuning (see `RedisClientOptions`). */
export interface RedisStoreOptions extends RedisClientOptions {
  /** `redis://…`, `rediss://…`, `redis-sentinel://…` or `redis-cluster://…` (see url.ts). */
  readonly url: string;
  /** @default noopMetrics */
  readonly metrics?: EngineMetrics;
  /** Directory holding gcra.lua, fixed_window.lua and refund.lua. @default `<package>/lua` */
  readonly scriptsDir?: string;
  /**
   * How long `ready()` waits for the connection before failing.
   * @default 5000 (milliseconds)
   */
  readonly readyTimeoutMs?: number;
  /**
   * Hard deadline of one script call, including ioredis' own retries and redirections (see
   * deadline.ts). @default 4 × commandTimeoutMs (milliseconds)
   */
  readonly callTimeoutMs?: number;
  /** Timers of the call deadline (tests pass the fake clock). @default systemTimers */
  readonly timers?: Timers;
  /** Called with every background connection error (already classified), e.g. to log it. */
  readonly onConnectionError?: (err: StoreError) => void;
}

/** A Redis or Redis Cluster backed `Store`. */
export class RedisStore implements Store, LeaseBackend {
  readonly kind: "redis" | "redis-cluster";
  /** The URL with credentials replaced by `***`, safe to log. */
  readonly redactedUrl: string;
  readonly #client: Redis | Cluster;
  readonly #scripts: Scripts;
  readonly #metrics: EngineMetrics;
  readonly #meter: RoundTripMeter;
  readonly #readyTimeoutMs: number;
  readonly #callTimeoutMs: number;
  readonly #timers: Timers;
  readonly #cluster: boolean;
  readonly #readyListeners: ((node: string) => void)[] = [];
  readonly #batcher: TakeBatcher | undefined;

  constructor(options: RedisStoreOptions) {
    const target = parseRedisUrl(options.url);
    this.#cluster = target.mode === "cluster";
    this.kind = this.#cluster ? "redis-cluster" : "redis";
    this.redactedUrl = redactUrl(options.url);
    this.#metrics = options.metrics ?? noopMetrics;
    this.#readyTimeoutMs = options.readyTimeoutMs ?? 5000;
    this.#timers = options.timers ?? systemTimers;
    this.#callTimeoutMs =
      options.callTimeoutMs ?? 4 * resolveClientOptions(options, { cluster: this.#cluster }).commandTimeoutMs;
    this.#meter = new RoundTripMeter(this.#metrics, {
      pipelined: resolveClientOptions(options, { cluster: this.#cluster }).autoPipelining,
    });
    const client = createRedisClient(target, options);
    this.#client = client;
    const { batchMaxCalls, autoPipelining } = resolveClientOptions(options, { cluster: this.#cluster });
    const runnerOptions = { shareTurn: autoPipelining };
    this.#scripts = new Scripts(runnerFor(client, runnerOptions), options.scriptsDir);
    // A cluster always goes through the batcher: a turn's take calls leave in one corked write per
    // master (cluster-batches.ts), merged or not.
    this.#batcher =
      batchMaxCalls <= 1 && !this.#cluster
        ? undefined
        : new TakeBatcher((batches) => this.#sendBatches(batches), Math.max(1, batchMaxCalls));
    const onError = options.onConnectionError;
    // A listener is required: without one ioredis prints every reconnect error to stderr.
    this.#client.on("error", (err: unknown) => onError?.(classifyRedisError(err, "connection")));
    this.#client.on("ready", () => this.#readied(""));
    if (this.#cluster) {
      // Each master connection of a cluster client is its own ioredis client (created again after it
      // ended): its "ready" is that node's return.
      this.#client.on("+node", (node: Redis) => {
        node.on("ready", () => this.#readied(`${node.options.host}:${node.options.port}`));
      });
    }
  }

  /**
   * `listener` hears every (re)connect that is ready to serve: `""` for the client as a whole (single
   * node, Sentinel master, or the cluster client), a master's `host:port` (as `nodeOf` names it) for
   * one cluster node.
   */
  onReady(listener: (node: string) => void): void {
    this.#readyListeners.push(listener);
  }

  #readied(node: string): void {
    for (const l of this.#readyListeners) l(node);
  }

  /** Round trips made so far (see RoundTripMeter). */
  get roundTrips(): number {
    return this.#meter.total;
  }

  async ready(): Promise<void> {
    try {
      await waitUntilReady(this.#client, this.#readyTimeoutMs);
      this.#meter.note(this.#node(-1));
      await this.#client.ping();
    } catch (err) {
      throw this.#fail(err, "ready");
    }
  }

  take(takes: readonly Take[]): Promise<Outcome[]> {
    if (takes.length === 0) return Promise.resolve([]);
    return this.#timed("take", () => {
      const groups = groupTakes(takes, { bySlot: this.#cluster });
      if (groups.length > 1) return this.#takeGroups(groups, takes);
      // One script call (most requests on one node; each master's part in a cluster): it is
      // all-or-nothing on its own, so there is nothing to compensate, and its takes are in order.
      const [g] = groups as [TakeGroup];
      return this.#takeGroup(g);
    });
  }

  #takeGroup(g: TakeGroup): Promise<Outcome[]> {
    const batcher = this.#batcher;
    return batcher
      ? batcher.take(g.algorithm, g.takes, g.slot)
      : this.#send(g.slot, () => this.#scripts.take(g.algorithm, g.takes));
  }

  /** A call spanning script calls (slots, algorithms): all-or-nothing by compensation. */
  async #takeGroups(groups: readonly TakeGroup[], takes: readonly Take[]): Promise<Outcome[]> {
    const settled = await Promise.allSettled(groups.map((g) => this.#takeGroup(g)));
    const replies = settled.map((s) => (s.status === "fulfilled" ? s.value : undefined));
    const failed = settled.find((s) => s.status === "rejected");
    const allAllowed = failed === undefined && replies.every((r) => r?.every((o) => o.allowed));
    if (!allAllowed) await this.#compensate(groups, replies);
    if (failed) throw failed.reason;
    const out: Outcome[] = new Array(takes.length);
    groups.forEach((g, gi) => {
      const reply = replies[gi] ?? [];
      // A denying script already reports its buckets uncharged; a group that charged and was
      // refunded reported itself charged, so show it as it is again (forced takes stay charged).
      const refunded = !allAllowed && reply.every((o) => o.allowed);
      g.indexes.forEach((index, i) => {
        const o = reply[i];
        if (o) out[index] = refunded ? uncharged(o, g.takes[i]) : o;
      });
    });
    return out;
  }

  /**
   * The node that owns `key` now (`host:port` of its slot's master in a cluster, `""` on a single node
   * or while the slot map is not known yet): the guard keeps one circuit breaker per node.
   */
  nodeOf(key: string): string {
    if (!this.#cluster) return "";
    return (this.#client as Cluster).slots[keySlot(key)]?.[0] ?? "";
  }

  /** Take up to `take.cost` tokens of one bucket for a local lease (two-tier limiting). */
  grant(take: Take): Promise<Grant> {
    return this.#timed("lease", async () => {
      const [group] = groupTakes([take], { bySlot: this.#cluster });
      return this.#send(group?.slot ?? -1, () => this.#scripts.lease(take));
    });
  }

  /** Give `cost` tokens back to each bucket (lease returns); never below empty or above full. */
  refund(takes: readonly Take[]): Promise<void> {
    return this.#timed("refund", async () => {
      const groups = groupTakes(takes, { bySlot: this.#cluster });
      await Promise.all(groups.map((g) => this.#send(g.slot, () => this.#scripts.refund(g.takes))));
    });
  }

  reset(keys: readonly string[]): Promise<void> {
    return this.#timed("reset", async () => {
      const groups = groupKeysBySlot(keys, { bySlot: this.#cluster });
      await Promise.all(groups.map((g) => this.#send(g.slot, () => this.#client.del(...g.keys))));
    });
  }

  async close(): Promise<void> {
    try {
      await this.#client.quit();
    } catch {
      this.#client.disconnect();
    }
  }

  /**
   * Refund the ordinary takes (cost > 0, not forced) of every group that charged (all its takes
   * allowed). Forced takes (refunds, overdraft charges) stay applied, as in one script call.
   */
  async #compensate(groups: readonly TakeGroup[], replies: readonly (Outcome[] | undefined)[]) {
    const refunds: { slot: number; takes: Take[] }[] = [];
    groups.forEach((g, gi) => {
      if (!replies[gi]?.every((o) => o.allowed)) return;
      const takes = g.takes.filter((t) => t.cost > 0 && !isForced(t));
      if (takes.length > 0) refunds.push({ slot: g.slot, takes });
    });
    if (refunds.length === 0) return;
    await Promise.all(
      refunds.map((g) =>
        this.#send(g.slot, () => this.#scripts.refund(g.takes)).catch((err: unknown) => {
          // The request is denied either way; a failed refund only under-admits until the TTL.
          reportOnce(classifyRedisError(err, "refund"), this.#metrics);
        }),
      ),
    );
  }

  /**
   * The merged calls of one turn. A single node gets each as one command, written at once; a cluster
   * each as one command routed to its slot's master, a master's leaving in one write
   * (cluster-batches.ts).
   */
  #sendBatches(batches: readonly Batch[]): Promise<(Outcome[] | Error)[]>[] {
    if (!this.#cluster)
      return batches.map((b) => this.#send(-1, () => this.#scripts.takeBatch(b.algorithm, b.calls)));
    return sendClusterBatches(
      this.#client as Cluster,
      this.#scripts,
      (slot, run, sharedWrite) => this.#send(slot, run, sharedWrite),
      batches,
    );
  }

  /**
   * Run one command to the node owning `slot`, counting its round trip (`sharedWrite`: shared with
   * the node's other commands of this turn, see RoundTripMeter).
   */
  #send<T>(slot: number, run: () => Promise<T>, sharedWrite?: boolean): Promise<T> {
    this.#meter.note(this.#node(slot), sharedWrite);
    return withDeadline(run(), this.#callTimeoutMs, this.#timers).catch((err: unknown) => {
      // A silent or vanished node: relearn the slot map now rather than at the next MOVED.
      if (this.#cluster && classifyRedisError(err, "take").transient) {
        (this.#client as Cluster).refreshSlotsCache();
      }
      throw err;
    });
  }

  /**
   * Time an operation into `storeSeconds` and classify its failure. A promise chain rather than an
   * async function: every take passes here, and each async frame costs a promise and a microtask.
   */
  #timed<T>(operation: string, run: () => Promise<T>): Promise<T> {
    const started = performance.now();
    let pending: Promise<T>;
    try {
      pending = run();
    } catch (err) {
      pending = Promise.reject(err);
    }
    return pending.then(
      (value) => {
        this.#metrics.storeSeconds(operation, (performance.now() - started) / 1000);
        return value;
      },
      (err: unknown) => {
        const e = this.#fail(err, operation);
        this.#metrics.storeSeconds(operation, (performance.now() - started) / 1000);
        throw e;
      },
    );
  }

  #node(slot: number): string {
    if (!this.#cluster || slot < 0) return "";
    return (this.#client as Cluster).slots[slot]?.[0] ?? `slot:${slot}`;
  }

  #fail(err: unknown, operation: string): StoreError {
    const e = classifyRedisError(err, operation);
    reportOnce(e, this.#metrics);
    return e;
  }
}
