/**
 * The `ShouldRateLimit` method for the gRPC transport: codec in, engine call, codec out.
 */
import type { RateLimitAnswer, RateLimitQuery } from "../engine/types.js";
import { DEFAULT_BOUNDS, decodeQuery, encodeAnswer, type QueryBounds } from "./codec.js";
import type { CallContext, UnaryMethod } from "./grpc/server.js";
import { toGrpcError } from "./store-errors.js";

/** The gRPC path Envoy's rate limit filter calls. */
export const RLS_PATH = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";

/** Decides one query (the engine); may throw StoreError or GrpcError. */
export type RlsHandler = (query: RateLimitQuery, ctx: CallContext) => Promise<RateLimitAnswer>;

/**
 * The ShouldRateLimit UnaryMethod: decodes and bounds-checks the request (INVALID_ARGUMENT naming the
 * problem), calls `handler`, encodes the answer. A StoreError becomes UNAVAILABLE and any other
 * non-GrpcError INTERNAL, so Envoy never sees UNKNOWN (which it reads as OK).
 */
export function rlsMethod(
  handler: RlsHandler,
  bounds: QueryBounds = DEFAULT_BOUNDS,
): UnaryMethod<RateLimitQuery, RateLimitAnswer> {
  return {
    path: RLS_PATH,
    decode: (bytes) => decodeQuery(bytes, bounds),
    encode: encodeAnswer,
    handle: (query, ctx) => handler(query, ctx).catch(toGrpcError),
  };
}
