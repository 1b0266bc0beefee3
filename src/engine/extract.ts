/**
 * ext_authz descriptor extraction: request attributes + compiled rules → the descriptors of a
 * RateLimitQuery. Pure and synchronous; every rule was compiled when the config loaded.
 *
 * Like Envoy's `rate_limits` actions, a descriptor whose value is missing is skipped, unless its
 * rule is `required`, which turns the request into a deny (HTTP 400) naming what was missing.
 * Values over `maxValueBytes` count as missing, so a client cannot mint unbounded bucket keys.
 */
import type { RequestAttributes } from "./extract/attributes.js";
import { canonicalIp, maskedSubnet } from "./extract/ip.js";
import { jwtClaim } from "./extract/jwt.js";
import { routeClass } from "./extract/route-class.js";
import {
  type DescriptorRule,
  type DomainExtraction,
  describeSource,
  type ValueSource,
} from "./extract/rules.js";
import type { Entry, QueryDescriptor } from "./types.js";

export type { RequestAttributes } from "./extract/attributes.js";
export type {
  DescriptorRule,
  DomainExtraction,
  EntryRule,
  ExtAuthzRules,
  JwtClaimSource,
  ValueSource,
} from "./extract/rules.js";

/** A required descriptor that could not be built. */
export interface MissingValue {
  /** Index of the descriptor rule in the domain's list. */
  readonly descriptor: number;
  readonly key: string;
  /** E.g. `no value for "tenant" from JWT claim "tenant"`. */
  readonly reason: string;
}

/** The result of extraction: descriptors for the engine, or the reason to deny. */
export type Extraction =
  | { readonly ok: true; readonly descriptors: readonly QueryDescriptor[] }
  | { readonly ok: false; readonly missing: MissingValue };

/** The value of one source for this request; undefined when the request does not carry it. */
export function sourceValue(source: ValueSource, attrs: RequestAttributes): string | undefined {
  switch (source.kind) {
    case "header":
      return attrs.headers.get(source.name);
    case "jwt_claim":
      return jwtClaim(source, attrs);
    case "source_ip":
      return attrs.sourceIp === undefined ? undefined : canonicalIp(attrs.sourceIp);
    case "source_subnet":
      return attrs.sourceIp === undefined ? undefined : maskedSubnet(attrs.sourceIp, source);
    case "route_class":
      return routeClass(source.table, attrs.method, attrs.path);
    case "context_extension":
      return attrs.contextExtensions.get(source.name);
    case "literal":
      return source.value;
    case "raw_path":
      return source.includeQuery && attrs.query !== "" ? `${attrs.path}?${attrs.query}` : attrs.path;
  }
}

/** Options of `extractDescriptors`. */
export interface ExtractOptions {
  /** Longest value in UTF-8 bytes; longer counts as missing. @default 256 */
  readonly maxValueBytes?: number;
}

function buildDescriptor(
  rule: DescriptorRule,
  index: number,
  attrs: RequestAttributes,
  maxBytes: number,
): QueryDescriptor | MissingValue {
  const entries: Entry[] = [];
  for (const { key, source } of rule.entries) {
    const value = sourceValue(source, attrs);
    if (value === undefined || value === "") {
      return { descriptor: index, key, reason: `no value for "${key}" from ${describeSource(source)}` };
    }
    if (Buffer.byteLength(value, "utf8") > maxBytes) {
      return {
        descriptor: index,
        key,
        reason: `value for "${key}" from ${describeSource(source)} is longer than ${maxBytes} bytes`,
      };
    }
    entries.push({ key, value });
  }
  return { entries, limit: undefined, hitsAddend: undefined };
}

/** Build the domain's descriptors for one request. */
export function extractDescriptors(
  rules: DomainExtraction,
  attrs: RequestAttributes,
  opts: ExtractOptions = {},
): Extraction {
  const maxBytes = opts.maxValueBytes ?? 256;
  const descriptors: QueryDescriptor[] = [];
  for (const [i, rule] of rules.descriptors.entries()) {
    const built = buildDescriptor(rule, i, attrs, maxBytes);
    if ("entries" in built) descriptors.push(built);
    else if (rule.required) return { ok: false, missing: built };
  }
  return { ok: true, descriptors };
}
