/**
 * The `ShouldRateLimit` method for the gRPC transport: codec in, engine call, codec out.
 */
import type { RateLimitAnswer, RateLimitQuery } from "../engine/types.js";
import { DEFAULT_BOUNDS, decodeQuery, encodeAnswer, encodeAnswerFramed, type QueryBounds } from "./codec.js";
import type { CallContext, UnaryMethod } from "./grpc/server.js";
import { toGrpcError } from "./store-errors.js";

/** The gRPC path Envoy's rate limit filter calls. */
export const RLS_PATH = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";

/**
 * Decides one query (the engine): the answer, or a promise of it when the store must be asked; may
 * throw (or reject with) StoreError or GrpcError.
 */
export type RlsHandler = (
  query: RateLimitQuery,
  ctx: CallContext,
) => RateLimitAnswer | Promise<RateLimitAnswer>;

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
    encodeFramed: encodeAnswerFramed,
    handle: (query, ctx) => {
      let answer: RateLimitAnswer | Promise<RateLimitAnswer>;
      try {
        answer = handler(query, ctx);
      } catch (err) {
        return toGrpcError(err);
      }
      return answer instanceof Promise ? answer.catch(toGrpcError) : answer;
    },
  };
}
