/**
 * The only place bucket keys are built.
 *
 *   <prefix>tl:v1:{<domain>|<k>=<v>,<k2>=<v2>[#<shard>]}:<alg><limitIndex>
 *
 * - `tl:v1:` versions the layout: a future change of state format takes a new version, never a reuse.
 * - The part in braces is the Redis Cluster hash tag: every limit of one descriptor lands in one slot,
 *   so one script call charges them together; each shard of a hot key has its own tag (`#n` inside the
 *   braces) so shards spread over the masters. Different descriptors of one request may sit in
 *   different slots; the Redis store groups takes by slot.
 * - Every component is percent-escaped (`%`, `{`, `}`, `=`, `,`, `|`, `:`, `#` and control bytes), so
 *   `a_b=c` and `a=b_c` — or values containing the delimiters — can never collide or break the tag.
 * - Limits live in config, never in keys: the key names the descriptor and which limit of its rule
 *   (`g0` = GCRA limit 0, `f1` = fixed-window limit 1), not the rate.
 */
import type { Algorithm, Entry } from "./types.js";

// biome-ignore lint/suspicious/noControlCharactersInRegex: control bytes are escaped on purpose
const UNSAFE = /[%{}=,|:#\u0000-\u001f]/g;
const escapeChar = (c: string) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`;

/** Escape one key component. */
export function escapeComponent(text: string): string {
  UNSAFE.lastIndex = 0;
  return UNSAFE.test(text) ? text.replace(UNSAFE, escapeChar) : text;
}

function unescapeComponent(text: string): string {
  return text.replace(/%([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

export interface BucketKeyParts {
  /** Deployment prefix (setting `--key-prefix`), used verbatim. */
  readonly prefix: string;
  readonly domain: string;
  readonly entries: readonly Entry[];
  readonly limitIndex: number;
  readonly algorithm: Algorithm;
  /** Shard index when the rule is sharded. */
  readonly shard?: number | undefined;
}

/** The hash tag body (without braces) of a descriptor: `<domain>|k=v,k2=v2`. */
export function descriptorTag(domain: string, entries: readonly Entry[]): string {
  let tag = `${escapeComponent(domain)}|`;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as Entry;
    if (i > 0) tag += ",";
    tag += `${escapeComponent(e.key)}=${escapeComponent(e.value)}`;
  }
  return tag;
}

/** Build a full key from a precomputed tag body (hot path: the tag is built once per descriptor). */
export function keyFromTag(
  prefix: string,
  tag: string,
  algorithm: Algorithm,
  limitIndex: number,
  shard?: number,
): string {
  const shardPart = shard === undefined ? "" : `#${shard}`;
  return `${prefix}tl:v1:{${tag}${shardPart}}:${algorithm === "gcra" ? "g" : "f"}${limitIndex}`;
}

export function bucketKey(parts: BucketKeyParts): string {
  return keyFromTag(
    parts.prefix,
    descriptorTag(parts.domain, parts.entries),
    parts.algorithm,
    parts.limitIndex,
    parts.shard,
  );
}

const KEY = /^(.*)tl:v1:\{([^|{}]*)\|([^{}#]*)(?:#(\d+))?\}:([gf])(\d+)$/;

/** Inverse of `bucketKey`; undefined for a string that is not a tollgate v1 key. */
export function parseBucketKey(key: string): BucketKeyParts | undefined {
  const m = KEY.exec(key);
  if (!m) return undefined;
  const [, prefix = "", domain = "", body = "", shard, alg, index = "0"] = m;
  const entries: Entry[] = [];
  if (body !== "") {
    for (const pair of body.split(",")) {
      const eq = pair.indexOf("=");
      if (eq < 0) return undefined;
      entries.push({
        key: unescapeComponent(pair.slice(0, eq)),
        value: unescapeComponent(pair.slice(eq + 1)),
      });
    }
  }
  return {
    prefix,
    domain: unescapeComponent(domain),
    entries,
    limitIndex: Number(index),
    algorithm: alg === "g" ? "gcra" : "fixed_window",
    shard: shard === undefined ? undefined : Number(shard),
  };
}
