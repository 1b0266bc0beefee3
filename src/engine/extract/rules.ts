/**
 * Compiled ext_authz extraction rules: how each descriptor entry gets its value from the request.
 * Built and frozen by config/sections/ext-authz, read by `extract.ts`.
 */
import type { RouteClassTable } from "./route-class.js";

/** Where a JWT claim comes from, most trusted first. */
export interface JwtClaimSource {
  readonly kind: "jwt_claim";
  /** Claim name as written in config, e.g. `tenant` or `org.id`. */
  readonly claim: string;
  /** `claim` split on `.`: the path into the payload object. */
  readonly claimPath: readonly string[];
  /** Header Envoy's jwt_authn `claim_to_headers` writes the verified claim to (preferred). */
  readonly claimHeader: string | undefined;
  /** jwt_authn `payload_in_metadata` key in `metadataNamespace` (used next). */
  readonly payloadMetadataKey: string | undefined;
  /** @default "envoy.filters.http.jwt_authn" */
  readonly metadataNamespace: string;
  /** Header holding `Bearer <jwt>`. @default "authorization" */
  readonly tokenHeader: string;
  /** Whether to decode the bearer token itself (signature NOT verified). @default true */
  readonly decodeToken: boolean;
}

/** The one source of an entry's value. */
export type ValueSource =
  | { readonly kind: "header"; readonly name: string }
  | JwtClaimSource
  | { readonly kind: "source_ip" }
  | { readonly kind: "source_subnet"; readonly ipv4Prefix: number; readonly ipv6Prefix: number }
  | { readonly kind: "route_class"; readonly table: RouteClassTable }
  | { readonly kind: "context_extension"; readonly name: string }
  | { readonly kind: "literal"; readonly value: string }
  /** The raw path: only when a rule asks for it explicitly. */
  | { readonly kind: "raw_path"; readonly includeQuery: boolean };

/** One entry of a descriptor: the descriptor key and where its value comes from. */
export interface EntryRule {
  readonly key: string;
  readonly source: ValueSource;
}

/** One descriptor to send to the engine. */
export interface DescriptorRule {
  readonly entries: readonly EntryRule[];
  /** When a value is missing: false skips the descriptor, true denies the request (HTTP 400). */
  readonly required: boolean;
}

/** The extraction rules of one domain. */
export interface DomainExtraction {
  readonly domain: string;
  readonly descriptors: readonly DescriptorRule[];
}

/** Every domain's extraction rules, frozen; swapped with the RuleSet on reload. */
export interface ExtAuthzRules {
  readonly domains: ReadonlyMap<string, DomainExtraction>;
  /** Domain used when the Check carries no `domain` context extension. */
  readonly defaultDomain: string | undefined;
  /** Longest value (UTF-8 bytes) an entry may carry; longer values count as missing. @default 256 */
  readonly maxValueBytes: number;
}

/** Context extension naming the domain of a Check (set per route in Envoy). */
export const DOMAIN_CONTEXT_KEY = "domain";

/** Human description of a source, for deny reasons and docs: `header "x-tenant"`. */
export function describeSource(s: ValueSource): string {
  switch (s.kind) {
    case "header":
      return `header "${s.name}"`;
    case "jwt_claim":
      return `JWT claim "${s.claim}"`;
    case "source_ip":
      return "source IP";
    case "source_subnet":
      return "source subnet";
    case "route_class":
      return "route class";
    case "context_extension":
      return `context extension "${s.name}"`;
    case "literal":
      return "literal";
    case "raw_path":
      return "path";
  }
}
