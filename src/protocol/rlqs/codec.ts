/**
 * RLQS protobuf ⇄ domain values (engine/rlqs/session.ts). Decoding checks what the official
 * proto's validation annotations require (bucket_id present with non-empty pairs; counts and
 * durations in range) and answers INVALID_ARGUMENT with the reason otherwise.
 */
import { create, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import type { Duration } from "@bufbuild/protobuf/wkt";
import type { RlqsAction, RlqsReport, RlqsUsage } from "../../engine/rlqs/messages.js";
import {
  type RateLimitQuotaResponse_BucketActionSchema,
  RateLimitQuotaResponseSchema,
  RateLimitQuotaUsageReportsSchema,
} from "../../gen/envoy/service/rate_limit_quota/v3/rlqs_pb.js";
import {
  RateLimitStrategy_BlanketRule,
  type RateLimitStrategySchema,
} from "../../gen/envoy/type/v3/ratelimit_strategy_pb.js";
import { GrpcError, Status } from "../grpc/status.js";

/** Buckets one report may carry. */
export const MAX_BUCKETS_PER_REPORT = 10_000;

const invalid = (message: string) => new GrpcError(Status.INVALID_ARGUMENT, message);

function durationMs(d: Duration | undefined, where: string): number {
  if (d === undefined) return 0;
  if (d.seconds < 0n || d.nanos < 0) throw invalid(`${where} is negative`);
  if (d.seconds > 315_576_000_000n) throw invalid(`${where} is out of range`);
  return Number(d.seconds) * 1000 + d.nanos / 1e6;
}

const count = (n: bigint) => (n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n));

/** Decode a RateLimitQuotaUsageReports; throws GrpcError INVALID_ARGUMENT with the reason. */
export function decodeReport(bytes: Uint8Array): RlqsReport {
  const m = fromBinary(RateLimitQuotaUsageReportsSchema, bytes);
  if (m.bucketQuotaUsages.length > MAX_BUCKETS_PER_REPORT)
    throw invalid(
      `bucket_quota_usages has ${m.bucketQuotaUsages.length} entries, limit ${MAX_BUCKETS_PER_REPORT}`,
    );
  const usages = m.bucketQuotaUsages.map((u, i): RlqsUsage => {
    const where = `bucket_quota_usages[${i}]`;
    if (u.bucketId === undefined) throw invalid(`${where}.bucket_id is required`);
    return {
      bucket: new Map(Object.entries(u.bucketId.bucket)),
      elapsedMs: durationMs(u.timeElapsed, `${where}.time_elapsed`),
      allowed: count(u.numRequestsAllowed),
      denied: count(u.numRequestsDenied),
    };
  });
  return { domain: m.domain, usages };
}

type BucketActionInit = MessageInitShape<typeof RateLimitQuotaResponse_BucketActionSchema>;

function actionInit(a: RlqsAction): BucketActionInit {
  const bucketId = { bucket: Object.fromEntries(a.bucket) };
  if (a.kind === "abandon") return { bucketId, bucketAction: { case: "abandonAction", value: {} } };
  const s = a.strategy;
  const strategy: MessageInitShape<typeof RateLimitStrategySchema>["strategy"] =
    "blanket" in s
      ? {
          case: "blanketRule",
          value:
            s.blanket === "ALLOW_ALL"
              ? RateLimitStrategy_BlanketRule.ALLOW_ALL
              : RateLimitStrategy_BlanketRule.DENY_ALL,
        }
      : {
          case: "tokenBucket",
          value: {
            maxTokens: s.tokenBucket.maxTokens,
            tokensPerFill: s.tokenBucket.tokensPerFill,
            fillInterval: { seconds: BigInt(s.tokenBucket.fillIntervalSec), nanos: 0 },
          },
        };
  return {
    bucketId,
    bucketAction: {
      case: "quotaAssignmentAction",
      value: {
        // Envoy reads whole seconds of the TTL (config requires whole seconds).
        assignmentTimeToLive: { seconds: BigInt(Math.floor(a.ttlMs / 1000)), nanos: 0 },
        rateLimitStrategy: { strategy },
      },
    },
  };
}

/** Encode the actions of one response. */
export function encodeResponse(actions: readonly RlqsAction[]): Uint8Array {
  return toBinary(
    RateLimitQuotaResponseSchema,
    create(RateLimitQuotaResponseSchema, { bucketAction: actions.map(actionInit) }),
  );
}
