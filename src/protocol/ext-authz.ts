/**
 * `envoy.service.auth.v3.Authorization/Check`: tollgate as an Envoy ext_authz server. Descriptors
 * are built server-side from the request attributes (engine/extract, rules from the `ext_authz`
 * config section) and decided by the same engine as ShouldRateLimit.
 *
 * Answers: within limits → status OK with the X-RateLimit-* headers in
 * `ok_response.response_headers_to_add`; over limit → RESOURCE_EXHAUSTED with a 429
 * `denied_response`; a required value missing → INVALID_ARGUMENT with a 400 naming it. A store
 * failure under policy `error` (a StoreError reaching here) becomes gRPC UNAVAILABLE, so Envoy's
 * `failure_mode_allow` decides: never an OK status by accident.
 */
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { DOMAIN_CONTEXT_KEY, type ExtAuthzRules } from "../engine/extract/rules.js";
import { extractDescriptors } from "../engine/extract.js";
import type { RateLimitAnswer, RateLimitQuery } from "../engine/types.js";
import {
  type CheckRequest,
  CheckRequestSchema,
  type CheckResponse,
  CheckResponseSchema,
} from "../gen/envoy/service/auth/v3/external_auth_pb.js";
import { requestAttributes } from "./ext-authz/attributes.js";
import { allowResponse, badRequestResponse, overLimitResponse } from "./ext-authz/response.js";
import type { UnaryMethod } from "./grpc/server.js";
import { toGrpcError } from "./store-errors.js";

/** gRPC method path Envoy calls. */
export const CHECK_PATH = "/envoy.service.auth.v3.Authorization/Check";

/** The part of the engine Check needs (`Engine` in engine/decide.ts). */
export interface RateLimitDecider {
  shouldRateLimit(query: RateLimitQuery): RateLimitAnswer | Promise<RateLimitAnswer>;
}

/** Options of `createCheckMethod`. */
export interface CheckMethodOptions {
  readonly engine: RateLimitDecider;
  /** Current extraction rules; read on every request, so a reload swaps them. */
  readonly rules: () => ExtAuthzRules;
}

/** Decide one Check request. Throws StoreError when the store failed under policy `error`. */
export async function decideCheck(request: CheckRequest, opts: CheckMethodOptions): Promise<CheckResponse> {
  const attrs = requestAttributes(request.attributes);
  const rules = opts.rules();
  const domain = attrs.contextExtensions.get(DOMAIN_CONTEXT_KEY) ?? rules.defaultDomain;
  if (domain === undefined) {
    return badRequestResponse(
      `no rate limit domain: set context_extensions "${DOMAIN_CONTEXT_KEY}" on the route or mark one ext_authz section default`,
    );
  }
  const extraction = rules.domains.get(domain);
  if (extraction === undefined) return badRequestResponse(`domain "${domain}" has no ext_authz section`);
  const built = extractDescriptors(extraction, attrs, { maxValueBytes: rules.maxValueBytes });
  if (!built.ok) return badRequestResponse(built.missing.reason, built.missing);
  // Every descriptor skipped: nothing to limit (as Envoy does when no rate_limits action applies).
  if (built.descriptors.length === 0) return allowResponse([]);
  const answer = await opts.engine.shouldRateLimit({ domain, descriptors: built.descriptors, hitsAddend: 1 });
  return answer.overallCode === "OVER_LIMIT"
    ? overLimitResponse(answer)
    : allowResponse(answer.responseHeaders);
}

/** The Check method for the gRPC transport: codec in, extraction and engine call, codec out. */
export function createCheckMethod(opts: CheckMethodOptions): UnaryMethod<CheckRequest, CheckResponse> {
  return {
    path: CHECK_PATH,
    decode: (bytes) => fromBinary(CheckRequestSchema, bytes),
    encode: (response) => toBinary(CheckResponseSchema, response),
    // StoreError → UNAVAILABLE, anything else → INTERNAL: never UNKNOWN, which Envoy may read as OK.
    handle: (request) => decideCheck(request, opts).catch(toGrpcError),
  };
}
