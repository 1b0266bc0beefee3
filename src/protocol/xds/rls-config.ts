/**
 * The resources of an xDS `DiscoveryResponse` for the rate limit service: `Any`s of type
 * `type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig` (envoyproxy/ratelimit's
 * rls_conf.proto), decoded and turned into the YAML shape of a config file (`domain`, `descriptors`,
 * `rate_limit`, … snake_case keys, lower-case units), so that config/ validates and compiles them
 * exactly like files. Proto3 cannot tell an absent scalar from its default: an empty `value` or
 * `name` is left out, an UNKNOWN unit too (reported as missing unless `unlimited`),
 * `requests_per_unit` is always written (0 blocks every request, as in the reference).
 */
import { fromBinary } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import {
  type RateLimitConfig,
  RateLimitConfigSchema,
  type RateLimitDescriptor,
  type RateLimitPolicy,
  RateLimitUnit,
} from "../../gen/ratelimit/config/ratelimit/v3/rls_conf_pb.js";

/** The resource type the rate limit service subscribes to. */
export const RLS_CONFIG_TYPE_URL = "type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig";

/** One decoded resource: its name and the config document it stands for. */
export interface RlsConfigResource {
  readonly name: string;
  readonly config: Readonly<Record<string, unknown>>;
}

function policy(p: RateLimitPolicy): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (p.unit !== RateLimitUnit.UNKNOWN) out.unit = (RateLimitUnit[p.unit] ?? String(p.unit)).toLowerCase();
  out.requests_per_unit = p.requestsPerUnit;
  if (p.unlimited) out.unlimited = true;
  if (p.name !== "") out.name = p.name;
  if (p.replaces.length > 0) out.replaces = p.replaces.map((r) => ({ name: r.name }));
  return out;
}

function descriptor(d: RateLimitDescriptor): Record<string, unknown> {
  const out: Record<string, unknown> = { key: d.key };
  if (d.value !== "") out.value = d.value;
  if (d.rateLimit !== undefined) out.rate_limit = policy(d.rateLimit);
  if (d.descriptors.length > 0) out.descriptors = d.descriptors.map(descriptor);
  if (d.shadowMode) out.shadow_mode = true;
  if (d.detailedMetric) out.detailed_metric = true;
  if (d.quotaMode) out.quota_mode = true;
  return out;
}

/** A RateLimitConfig as a config document. */
export function configDocument(c: RateLimitConfig): Record<string, unknown> {
  return { domain: c.domain, descriptors: c.descriptors.map(descriptor) };
}

/**
 * Decode the resources of one response. Throws with the reason (sent back as the NACK's
 * error_detail) when one has another type or does not decode.
 */
export function decodeRlsConfigs(resources: readonly Any[]): RlsConfigResource[] {
  return resources.map((any, i) => {
    if (any.typeUrl !== RLS_CONFIG_TYPE_URL)
      throw new Error(
        `resources[${i}] has type ${JSON.stringify(any.typeUrl)}, expected ${RLS_CONFIG_TYPE_URL}`,
      );
    let config: RateLimitConfig;
    try {
      config = fromBinary(RateLimitConfigSchema, any.value);
    } catch (err) {
      throw new Error(`resources[${i}] is not a RateLimitConfig: ${(err as Error).message}`);
    }
    return { name: config.name === "" ? `#${i}` : config.name, config: configDocument(config) };
  });
}
