/**
 * Tenant tier overrides in Redis: one hash (`tenantTiersKey`), changed only by
 * lua/tenant_tier_change.lua (sent through the script runner like every script: script-runner.ts),
 * which also PUBLISHes the tenant on `tenantTiersChannel` in the same atomic step, so a change and its
 * notice cannot be separated. Every instance subscribes on a connection of its own and reloads the hash
 * (HGETALL) on each notice: a change is applied everywhere within one round trip of the publish
 * (test/store/tenants/overrides-redis.test.ts holds it to 1 s). Notices sent while an instance was
 * disconnected are lost, so it also reloads on every (re)subscribe and every `resyncMs`.
 * Redis Cluster: PUBLISH reaches the subscribers of every node; the hash lives in one slot.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Cluster, Redis } from "ioredis";
import { tenantTiersChannel, tenantTiersKey } from "../../engine/keys.js";
import { systemTimers, type TimerHandle, type Timers } from "../../engine/types.js";
import { classifyRedisError } from "../redis/errors.js";
import { runnerFor, type Script, type ScriptRunner, scriptOf } from "../redis/script-runner.js";
import { DEFAULT_SCRIPTS_DIR } from "../redis/scripts.js";
import type { OverrideTable, TenantOverrideStore } from "./overrides.js";

/** Options of {@link RedisTenantOverrides}. */
export interface RedisOverridesOptions {
  /** Connection for commands (HGETALL, the change script). */
  readonly client: Redis | Cluster;
  /** A second connection, used only to subscribe. */
  readonly subscriber: Redis | Cluster;
  /** `--key-prefix`. */
  readonly keyPrefix: string;
  /** Directory of lua/. @default the package's */
  readonly scriptsDir?: string;
  /** Reload the whole table this often even without notices. @default 30000 (ms) */
  readonly resyncMs?: number;
  /** Timers of the resync (tests pass the fake clock). @default systemTimers */
  readonly timers?: Timers;
  /** A reload failed (the last table stays in force). */
  readonly onError?: (err: unknown) => void;
}

/** The Redis-backed {@link TenantOverrideStore}. */
export class RedisTenantOverrides implements TenantOverrideStore {
  readonly kind = "redis";
  readonly #o: RedisOverridesOptions;
  /** lua/tenant_tier_change.lua, on `client`'s runner (no shared turn: admin calls are rare). */
  readonly #runner: ScriptRunner;
  readonly #script: Script;
  readonly #key: string;
  readonly #channel: string;
  readonly #timers: Timers;
  #timer: TimerHandle | undefined;
  #onChange: ((table: OverrideTable) => void) | undefined;
  #loading: Promise<void> | undefined;
  #again = false;

  constructor(o: RedisOverridesOptions) {
    this.#o = o;
    this.#timers = o.timers ?? systemTimers;
    this.#key = tenantTiersKey(o.keyPrefix);
    this.#channel = tenantTiersChannel(o.keyPrefix);
    this.#runner = runnerFor(o.client, { shareTurn: false });
    const file = "tenant_tier_change.lua";
    this.#script = scriptOf(file, readFileSync(join(o.scriptsDir ?? DEFAULT_SCRIPTS_DIR, file), "utf8"));
  }

  /**
   * Subscribe and read the table. A Redis that is unreachable or failing over at start (a transient
   * error) does not stop the service: it starts on the tenants file alone, like the store's breaker
   * starts open, and the table is read as soon as the subscriber is ready (and every `resyncMs`).
   * A permanent error (the key holds something that is not a hash) fails the start.
   */
  async open(onChange: (table: OverrideTable) => void): Promise<OverrideTable> {
    const { subscriber } = this.#o;
    this.#onChange = onChange;
    subscriber.on("message", (channel: string) => {
      if (channel === this.#channel) this.#reload();
    });
    // A resubscribe after a reconnect may have missed notices: read the whole table again. A
    // subscription that failed at start is made here (ioredis renews only the ones that succeeded).
    subscriber.on("ready", () => {
      subscriber.subscribe(this.#channel).catch((err: unknown) => this.#o.onError?.(err));
      this.#reload();
    });
    this.#resyncLater();
    try {
      await subscriber.subscribe(this.#channel);
      return await this.#read();
    } catch (err) {
      const e = classifyRedisError(err, "tenant overrides read");
      if (!e.transient) throw e;
      this.#o.onError?.(e);
      return new Map();
    }
  }

  async set(tenant: string, tier: string): Promise<string | undefined> {
    return this.#change(tenant, tier);
  }

  async delete(tenant: string): Promise<string | undefined> {
    return this.#change(tenant, "");
  }

  async close(): Promise<void> {
    this.#onChange = undefined;
    this.#timers.clear(this.#timer);
    this.#timer = undefined;
    await Promise.allSettled([this.#o.subscriber.quit(), this.#o.client.quit()]);
  }

  async #change(tenant: string, tier: string): Promise<string | undefined> {
    let old: unknown;
    try {
      old = await this.#runner.run(this.#script, [this.#key], [tenant, tier, this.#channel]);
    } catch (err) {
      throw classifyRedisError(err, "tenant override change");
    }
    // The runner hands replies over as RESP gives them: a bulk string is a Buffer.
    if (Buffer.isBuffer(old)) return old.toString("utf8");
    return typeof old === "string" ? old : undefined;
  }

  async #read(): Promise<OverrideTable> {
    const all = await this.#o.client.hgetall(this.#key);
    return new Map(Object.entries(all));
  }

  /** Reload every `resyncMs` until closed (systemTimers do not hold the process open). */
  #resyncLater(): void {
    this.#timer = this.#timers.set(() => {
      if (this.#onChange === undefined) return;
      this.#reload();
      this.#resyncLater();
    }, this.#o.resyncMs ?? 30_000);
  }

  /** Reload and hand the table on; a notice during a reload runs one more after it. */
  #reload(): void {
    if (this.#loading !== undefined) {
      this.#again = true;
      return;
    }
    this.#loading = (async () => {
      do {
        this.#again = false;
        try {
          const table = await this.#read();
          this.#onChange?.(table);
        } catch (err) {
          this.#o.onError?.(err);
        }
      } while (this.#again);
      this.#loading = undefined;
    })();
  }
}
