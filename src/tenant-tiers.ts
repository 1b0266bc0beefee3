/**
 * The tenant → tier map a running process serves: the tenants file (reloaded with the config) with
 * the admin API's overrides over it (src/store/tenants/). The merged view is rebuilt only when the
 * config or the overrides change, never per request.
 */
import { type Tiers, tierNames, withOverrides } from "./engine/tiers.js";
import type { OverrideTable, TenantOverrideStore } from "./store/tenants/overrides.js";

/** Options of {@link TenantTierState}. */
export interface TenantTierOptions {
  readonly store: TenantOverrideStore;
  /** The config's tiers (tenants file included), as currently loaded. */
  readonly base: () => Tiers;
}

/** Who changed what, for the audit log line. */
export interface TierChange {
  readonly tenant: string;
  /** Override before the change (undefined: none). */
  readonly old: string | undefined;
  /** Override after the change (undefined: removed). */
  readonly new: string | undefined;
}

/** Overrides in force, and the tiers with them applied. */
export class TenantTierState {
  readonly #o: TenantTierOptions;
  #overrides: OverrideTable = new Map();
  #merged: { base: Tiers; overrides: OverrideTable; tiers: Tiers } | undefined;

  constructor(o: TenantTierOptions) {
    this.#o = o;
  }

  /** `memory` (per process) or `redis` (shared by every instance). */
  get kind(): "memory" | "redis" {
    return this.#o.store.kind;
  }

  /** Load the overrides and follow changes (the startup step "tenant overrides"). */
  async open(): Promise<void> {
    this.#overrides = await this.#o.store.open((table) => {
      this.#overrides = table;
    });
  }

  close(): Promise<void> {
    return this.#o.store.close();
  }

  /** The tiers to decide with: the config's, overrides applied. */
  current(): Tiers {
    const base = this.#o.base();
    const m = this.#merged;
    if (m !== undefined && m.base === base && m.overrides === this.#overrides) return m.tiers;
    const tiers = withOverrides(base, this.#overrides);
    this.#merged = { base, overrides: this.#overrides, tiers };
    return tiers;
  }

  /** Tier names the config defines (what an override may name). */
  known(): string[] {
    return tierNames(this.#o.base());
  }

  /** `tenant`'s override and its tenants-file tier. */
  lookup(tenant: string): { override: string | undefined; file: string | undefined } {
    return { override: this.#overrides.get(tenant), file: this.#o.base().tenants.get(tenant) };
  }

  /** Set an override (the tier must be known: the caller checks). */
  async set(tenant: string, tier: string): Promise<TierChange> {
    const old = await this.#o.store.set(tenant, tier);
    // Read your own write now; the store's notice brings the same table a moment later.
    this.#overrides = new Map(this.#overrides).set(tenant, tier);
    return { tenant, old, new: tier };
  }

  /** Remove an override. */
  async delete(tenant: string): Promise<TierChange> {
    const old = await this.#o.store.delete(tenant);
    const next = new Map(this.#overrides);
    next.delete(tenant);
    this.#overrides = next;
    return { tenant, old, new: undefined };
  }

  /** `/rlconfig` lines: one per override, sorted by tenant. */
  describe(): string[] {
    const lines = [...this.#overrides]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([tenant, tier]) => `# tenant override (${this.kind}): ${JSON.stringify(tenant)} → ${tier}`);
    return lines;
  }
}
