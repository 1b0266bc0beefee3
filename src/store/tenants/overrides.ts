/**
 * Per-tenant tier overrides (admin API `PUT`/`GET`/`DELETE /v1/tenants/{tenant}`): they sit above
 * the tenants file, which stays the base. Every instance keeps the whole table in memory (lookups on
 * the decision path never wait on I/O) and is told of changes by its store: on Redis through pub/sub
 * (redis-overrides.ts), on the memory store only within the process.
 */

/** tenant → tier of the overrides, as one immutable snapshot. */
export type OverrideTable = ReadonlyMap<string, string>;

/** Where overrides live, shared by every instance of a deployment (Redis) or one process (memory). */
export interface TenantOverrideStore {
  /** `memory` (per process) or `redis` (shared, notified). */
  readonly kind: "memory" | "redis";
  /**
   * Load the table and follow changes: `onChange` gets each new snapshot (another instance's change
   * included) until `close`. Resolves with the first snapshot.
   */
  open(onChange: (table: OverrideTable) => void): Promise<OverrideTable>;
  /** Set `tenant`'s override; resolves with the override it replaced (undefined: none). */
  set(tenant: string, tier: string): Promise<string | undefined>;
  /** Remove `tenant`'s override; resolves with the removed one (undefined: there was none). */
  delete(tenant: string): Promise<string | undefined>;
  /** Stop following changes and release connections. */
  close(): Promise<void>;
}

/** Overrides of one process (store `memory`): lost at restart, not seen by other instances. */
export class MemoryTenantOverrides implements TenantOverrideStore {
  readonly kind = "memory";
  #table: Map<string, string> = new Map();
  #onChange: ((table: OverrideTable) => void) | undefined;

  async open(onChange: (table: OverrideTable) => void): Promise<OverrideTable> {
    this.#onChange = onChange;
    return this.#table;
  }

  async set(tenant: string, tier: string): Promise<string | undefined> {
    const old = this.#table.get(tenant);
    this.#replace((t) => t.set(tenant, tier));
    return old;
  }

  async delete(tenant: string): Promise<string | undefined> {
    const old = this.#table.get(tenant);
    if (old !== undefined) this.#replace((t) => t.delete(tenant));
    return old;
  }

  async close(): Promise<void> {
    this.#onChange = undefined;
  }

  /** Copy on write: a snapshot handed out never changes. */
  #replace(change: (table: Map<string, string>) => void): void {
    const next = new Map(this.#table);
    change(next);
    this.#table = next;
    this.#onChange?.(next);
  }
}
