/**
 * The `ShouldRateLimit` method for the gRPC transport: codec in, engine call, codec out.
 */
import type { RateLimitAnswer, RateLimitQuery } from "../engine/types.js";
import { decodeQuery, encodeAnswer, type QueryBounds } from "./codec.js";
import type { CallContext, UnaryMethod } from "./grpc/server.js";
import { toGrpcError } from "./store-errors.js";

export const RLS_PATH = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";

export type RlsHandler = (query: RateLimitQuery, ctx: CallContext) => Promise<RateLimitAnswer>;

export function rlsMethod(
  handler: RlsHandler,
  bounds: QueryBounds,
): UnaryMethod<RateLimitQuery, RateLimitAnswer> {
  return {
    path: RLS_PATH,
    decode: (bytes) => decodeQuery(bytes, bounds),
    encode: encodeAnswer,
    handle: (query, ctx) => handler(query, ctx).catch(toGrpcError),
  };
}
