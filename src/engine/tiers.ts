/**
 * Tier lookup: limits live in config, not in keys. A domain's `tiers` section gives limits per
 * tier × route_class; the tenants file maps tenant → tier. A descriptor that carries the tenant key
 * but no `tier` entry and that the descriptor tree does not match is answered by the tier of its
 * tenant (an unknown tenant, or a tier this domain does not define, gets the default tier).
 *
 * The bucket entries are the descriptor's own (tenant and route_class), never the tier: moving a
 * tenant to another tier or changing a tier's limit reuses the same bucket, so no key migrates.
 */
import type { Entry, Rule } from "./types.js";

/** Limits of one tier. */
export interface TierLimits {
  readonly name: string;
  /** route_class value → rule. */
  readonly byClass: ReadonlyMap<string, Rule>;
  /** Rule of any other route_class, and of descriptors without one; undefined = no limit. */
  readonly fallback: Rule | undefined;
}

/** The compiled `tiers` section of one domain. */
export interface TierTable {
  readonly domain: string;
  /** Descriptor key naming the tenant. @default "tenant" */
  readonly tenantKey: string;
  /** Descriptor key naming the route class. @default "route_class" */
  readonly classKey: string;
  readonly defaultTier: string;
  readonly tiers: ReadonlyMap<string, TierLimits>;
}

/** Tenant → tier name, from the tenants file. */
export type TenantTiers = ReadonlyMap<string, string>;

/** Everything the lookup needs; swapped as one value on reload. */
export interface Tiers {
  /** Domain → its tiers section. */
  readonly tables: ReadonlyMap<string, TierTable>;
  readonly tenants: TenantTiers;
}

/** What a tier lookup resolved: the rule and the entries that name the bucket. */
export interface TierMatch {
  readonly rule: Rule;
  readonly tier: string;
  readonly bucketEntries: readonly Entry[];
}

/** No tiers anywhere. */
export const NO_TIERS: Tiers = Object.freeze({ tables: new Map(), tenants: new Map() });

/**
 * Resolve a descriptor through the domain's tiers section. Handles `[tenant]` and
 * `[tenant, route_class]` descriptors (either order); anything else — a descriptor that carries a
 * `tier` entry (the tier is given, the tree decides) or any other key — is left alone (undefined).
 */
export function matchTier(tiers: Tiers, domain: string, entries: readonly Entry[]): TierMatch | undefined {
  const table = tiers.tables.get(domain);
  if (table === undefined || entries.length === 0 || entries.length > 2) return undefined;
  let tenant: string | undefined;
  let routeClass: string | undefined;
  for (const e of entries) {
    if (e.key === table.tenantKey && tenant === undefined) tenant = e.value;
    else if (e.key === table.classKey && routeClass === undefined) routeClass = e.value;
    else return undefined;
  }
  if (tenant === undefined) return undefined;
  const name = tiers.tenants.get(tenant);
  const limits =
    (name === undefined ? undefined : table.tiers.get(name)) ?? table.tiers.get(table.defaultTier);
  if (limits === undefined) return undefined;
  const listed = routeClass === undefined ? undefined : limits.byClass.get(routeClass);
  const rule = listed ?? limits.fallback;
  if (rule === undefined) return undefined;
  // The bucket is named in a fixed order (tenant, then class), whatever order Envoy's actions sent
  // the entries in, so one tenant's quota is never split in two. Classes the tier does not list
  // share one fallback bucket (`*`): invented route_class values get no fresh quota.
  const bucketEntries: Entry[] = [{ key: table.tenantKey, value: tenant }];
  if (routeClass !== undefined) bucketEntries.push({ key: table.classKey, value: listed ? routeClass : "*" });
  return { rule, tier: limits.name, bucketEntries };
}

/** The tier a tenant is served by in a domain (for `/v1/quota` and `explain`); undefined without tiers. */
export function tierOf(tiers: Tiers, domain: string, tenant: string): string | undefined {
  const table = tiers.tables.get(domain);
  if (table === undefined) return undefined;
  const name = tiers.tenants.get(tenant);
  return name !== undefined && table.tiers.has(name) ? name : table.defaultTier;
}

/**
 * `base` with the admin API's per-tenant overrides laid over its tenants file (an override wins);
 * `base` itself when there are none. Builds a new map: call it when either side changes, not per
 * request (src/tenant-tiers.ts caches it).
 */
export function withOverrides(base: Tiers, overrides: TenantTiers): Tiers {
  if (overrides.size === 0) return base;
  const tenants = new Map(base.tenants);
  for (const [tenant, tier] of overrides) tenants.set(tenant, tier);
  return Object.freeze({ tables: base.tables, tenants });
}

/** Every tier name some domain's `tiers` section defines, sorted. */
export function tierNames(tiers: Tiers): string[] {
  const names = new Set<string>();
  for (const table of tiers.tables.values()) for (const name of table.tiers.keys()) names.add(name);
  return [...names].sort();
}
