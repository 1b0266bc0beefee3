/**
 * The only place tollgate's Redis keys are built, and {@link parseKey} reads every one of them back.
 *
 *   <prefix>tl:v1:{<domain>|<k>=<v>,<k2>=<v2>[#<shard>]}:<alg><limitIndex>
 *
 * - `tl:v1:` versions the layout: a future change of state format takes a new version, never a reuse.
 * - The part in braces is the Redis Cluster hash tag (Redis hashes only the text between the first
 *   `{` and the next `}`): every limit of one descriptor lands in one slot, so one script call charges
 *   them together; each shard of a hot key has its own tag (`#n` inside the braces) so shards spread
 *   over the masters. Different descriptors of one request may sit in different slots; the Redis
 *   store groups takes by slot.
 * - Every component is percent-escaped (`%`, `{`, `}`, `=`, `,`, `|`, `:`, `#` and control bytes), so
 *   `a_b=c` and `a=b_c` — or values containing the delimiters — can never collide or break the tag.
 *   The deployment prefix is kept readable: only `%`, `{` and `}` are escaped in it, so a prefix can
 *   never open a hash tag of its own.
 * - Limits live in config, never in keys: the key names the descriptor and which limit of its rule
 *   (`g0` = GCRA limit 0, `f1` = fixed-window limit 1), not the rate. The one exception is a
 *   request-supplied limit override: it has its own bucket, named by the override
 *   (`og100_minute` = GCRA, 100 per minute), so its state is never read with a configured limit's
 *   math or the reverse.
 *
 * Hot path: {@link keyTail} (algorithm, index, shard) is computed when a rule is compiled
 * (`Rule.plan`), {@link keyHead} (prefix + domain) once per domain by the planner; only
 * {@link entriesPart} is built per request, once per entry values (engine/key-cache.ts).
 */

import type { Algorithm, Entry, LimitOverride, Unit } from "./types.js";
import { UNIT_MS } from "./types.js";

// biome-ignore lint/suspicious/noControlCharactersInRegex: control bytes are escaped on purpose
const UNSAFE = /[%{}=,|:#\u0000-\u001f\u007f]/g;
const UNSAFE_IN_PREFIX = /[%{}]/g;
const escapeChar = (c: string) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`;

/** The deployment prefix as it stands in a key: `%`, `{` and `}` escaped, so it never opens a hash tag. */
const prefixPart = (prefix: string): string => prefix.replace(UNSAFE_IN_PREFIX, escapeChar);

/** Char codes below 128 that UNSAFE matches (a per-character table: a regex test costs more per call). */
const UNSAFE_CODES = new Uint8Array(128);
for (let c = 0; c < 128; c++) if (new RegExp(UNSAFE.source).test(String.fromCharCode(c))) UNSAFE_CODES[c] = 1;

/** Escape one key component (domain, entry key or entry value). */
export function escapeComponent(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 128 && UNSAFE_CODES[c] === 1) return text.replace(UNSAFE, escapeChar);
  }
  return text;
}

const unescapeComponent = (text: string): string =>
  text.replace(/%([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));

/** Everything a bucket key is made of. */
export interface BucketKeyParts {
  /** Deployment prefix (setting `--key-prefix`); readable in the key, braces escaped. */
  readonly prefix: string;
  readonly domain: string;
  readonly entries: readonly Entry[];
  /** Index of the limit in its rule's `rate_limits` (0 for a single `rate_limit`; 0 for an override). */
  readonly limitIndex: number;
  readonly algorithm: Algorithm;
  /** Shard index when the rule is sharded. */
  readonly shard?: number | undefined;
  /** The request-supplied limit this bucket counts (never sharded); undefined for a configured limit. */
  readonly override?: LimitOverride | undefined;
}

/** The config-only start of every key of a domain: `<prefix>tl:v1:{<domain>|`. Cacheable. */
export function keyHead(prefix: string, domain: string): string {
  return `${prefixPart(prefix)}tl:v1:{${escapeComponent(domain)}|`;
}

/** The per-request middle of a key: the descriptor's entries, `k=v,k2=v2`, escaped. */
export function entriesPart(entries: readonly Entry[]): string {
  let part = "";
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as Entry;
    if (i > 0) part += ",";
    part += `${escapeComponent(e.key)}=${escapeComponent(e.value)}`;
  }
  return part;
}

/** The config-only end of a key: optional shard inside the tag, closing brace, limit. Cacheable. */
export function keyTail(algorithm: Algorithm, limitIndex: number, shard?: number): string {
  const shardPart = shard === undefined ? "" : `#${shard}`;
  return `${shardPart}}:${algorithm === "gcra" ? "g" : "f"}${limitIndex}`;
}

/** The end of an override's key: closing brace, `o`, algorithm, `requests_per_unit`, `_`, unit. */
export function overrideTail(algorithm: Algorithm, override: LimitOverride): string {
  return `}:o${algorithm === "gcra" ? "g" : "f"}${override.requestsPerUnit}_${override.unit}`;
}

/** Build one full bucket key. The planner assembles the same string from cached head and tail. */
export function bucketKey(parts: BucketKeyParts): string {
  return (
    keyHead(parts.prefix, parts.domain) +
    entriesPart(parts.entries) +
    (parts.override === undefined
      ? keyTail(parts.algorithm, parts.limitIndex, parts.shard)
      : overrideTail(parts.algorithm, parts.override))
  );
}

const KEY = /^(.*)tl:v1:\{([^|{}]*)\|([^{}#]*)(?:#(\d+))?\}:(?:([gf])(\d+)|o([gf])(\d+)_([a-z]+))$/s;
const isUnit = (u: string): u is Unit => Object.hasOwn(UNIT_MS, u);

/** Inverse of {@link bucketKey}; undefined for a string that is not a tollgate v1 key. */
export function parseBucketKey(key: string): BucketKeyParts | undefined {
  const m = KEY.exec(key);
  if (!m) return undefined;
  const [, prefix = "", domain = "", body = "", shard, alg, index = "0", oAlg, oRpu, oUnit = ""] = m;
  // An override bucket is never sharded, and its unit is one of ours.
  if (oAlg !== undefined && (shard !== undefined || !isUnit(oUnit))) return undefined;
  const entries = parseEntries(body);
  if (entries === undefined) return undefined;
  return {
    prefix: unescapeComponent(prefix),
    domain: unescapeComponent(domain),
    entries,
    limitIndex: Number(index),
    algorithm: (alg ?? oAlg) === "g" ? "gcra" : "fixed_window",
    shard: shard === undefined ? undefined : Number(shard),
    override:
      oAlg !== undefined && isUnit(oUnit) ? { requestsPerUnit: Number(oRpu), unit: oUnit } : undefined,
  };
}

/**
 * The Redis hash of per-tenant tier overrides (admin API, `PUT /v1/tenants/{tenant}`): one hash per
 * deployment, `tenant → tier`, in a slot of its own (`{tenant-tiers}` cannot clash with a domain's
 * `{domain|…}` tag, which always holds a `|`).
 */
export function tenantTiersKey(prefix: string): string {
  return `${prefixPart(prefix)}tl:v1:{tenant-tiers}`;
}

/** The pub/sub channel announcing a change of {@link tenantTiersKey} (message: the tenant). */
export function tenantTiersChannel(prefix: string): string {
  return `${tenantTiersKey(prefix)}:changed`;
}

/**
 * The RLQS usage hash of one shared bucket: `<prefix>tl:v1:{<domain>|<entries>}:q`. Same hash tag
 * as the bucket's limiter keys (one slot), its own suffix `q` (no limiter key ends so). Each field
 * is one Envoy's participation (docs/rlqs.md), written by lua/rlqs_usage.lua.
 */
export function quotaKey(prefix: string, domain: string, entries: readonly Entry[]): string {
  return `${keyHead(prefix, domain)}${entriesPart(entries)}}:q`;
}

/**
 * The sorted set of live tollgate instances (store/instances/registry.ts: member = instance id,
 * score = last heartbeat), in a slot of its own like {@link tenantTiersKey}.
 */
export function instancesKey(prefix: string): string {
  return `${prefixPart(prefix)}tl:v1:{instances}`;
}

/** A key {@link parseKey} read back: which builder of this module made it, and from what. */
export type ParsedKey =
  /** {@link bucketKey} of a configured limit (`override` undefined). */
  | { readonly kind: "bucket"; readonly parts: BucketKeyParts }
  /** {@link bucketKey} of a request-supplied limit override (`parts.override` set). */
  | { readonly kind: "override"; readonly parts: BucketKeyParts }
  /** {@link quotaKey}. */
  | {
      readonly kind: "quota";
      readonly prefix: string;
      readonly domain: string;
      readonly entries: readonly Entry[];
    }
  /** {@link tenantTiersKey}. */
  | { readonly kind: "tenant-tiers"; readonly prefix: string }
  /** {@link instancesKey}. */
  | { readonly kind: "instances"; readonly prefix: string };

const QUOTA_KEY = /^(.*)tl:v1:\{([^|{}]*)\|([^{}#]*)\}:q$/s;
const SINGLETON_KEY = /^(.*)tl:v1:\{(tenant-tiers|instances)\}$/s;

/** `k=v,k2=v2` (escaped) back to entries; undefined when a pair has no `=`. */
function parseEntries(body: string): Entry[] | undefined {
  const entries: Entry[] = [];
  if (body === "") return entries;
  for (const pair of body.split(",")) {
    const eq = pair.indexOf("=");
    if (eq < 0) return undefined;
    entries.push({ key: unescapeComponent(pair.slice(0, eq)), value: unescapeComponent(pair.slice(eq + 1)) });
  }
  return entries;
}

/**
 * Inverse of every key builder of this module ({@link bucketKey} with or without an override,
 * {@link quotaKey}, {@link tenantTiersKey}, {@link instancesKey}); undefined for a string that is not
 * a tollgate v1 key.
 */
export function parseKey(key: string): ParsedKey | undefined {
  const parts = parseBucketKey(key);
  if (parts !== undefined) return { kind: parts.override === undefined ? "bucket" : "override", parts };
  const q = QUOTA_KEY.exec(key);
  if (q) {
    const [, prefix = "", domain = "", body = ""] = q;
    const entries = parseEntries(body);
    if (entries === undefined) return undefined;
    return { kind: "quota", prefix: unescapeComponent(prefix), domain: unescapeComponent(domain), entries };
  }
  const one = SINGLETON_KEY.exec(key);
  if (!one) return undefined;
  const [, prefix = "", kind] = one;
  return { kind: kind === "instances" ? "instances" : "tenant-tiers", prefix: unescapeComponent(prefix) };
}
