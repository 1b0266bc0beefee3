/**
 * tollgate's RLQS protos (proto/envoy/service/rate_limit_quota, envoy/type/v3 strategy and token
 * bucket) against the official Envoy API of @grpc/grpc-js-xds: same names, numbers, kinds and types.
 */
import type { DescMessage } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  BucketIdSchema,
  RateLimitQuotaResponse_BucketAction_AbandonActionSchema,
  RateLimitQuotaResponse_BucketAction_QuotaAssignmentActionSchema,
  RateLimitQuotaResponse_BucketActionSchema,
  RateLimitQuotaResponseSchema,
  RateLimitQuotaService,
  RateLimitQuotaUsageReports_BucketQuotaUsageSchema,
  RateLimitQuotaUsageReportsSchema,
} from "../../../src/gen/envoy/service/rate_limit_quota/v3/rlqs_pb.js";
import {
  RateLimitStrategy_BlanketRuleSchema,
  RateLimitStrategy_RequestsPerTimeUnitSchema,
  RateLimitStrategySchema,
} from "../../../src/gen/envoy/type/v3/ratelimit_strategy_pb.js";
import { TokenBucketSchema } from "../../../src/gen/envoy/type/v3/token_bucket_pb.js";
import { officialRegistry, fieldShape as shape } from "../../helpers/wire-compat.js";

const official = officialRegistry();

const MESSAGES: DescMessage[] = [
  RateLimitQuotaUsageReportsSchema,
  RateLimitQuotaUsageReports_BucketQuotaUsageSchema,
  RateLimitQuotaResponseSchema,
  RateLimitQuotaResponse_BucketActionSchema,
  RateLimitQuotaResponse_BucketAction_QuotaAssignmentActionSchema,
  RateLimitQuotaResponse_BucketAction_AbandonActionSchema,
  BucketIdSchema,
  RateLimitStrategySchema,
  RateLimitStrategy_RequestsPerTimeUnitSchema,
  TokenBucketSchema,
];

describe("tollgate's RLQS protos", () => {
  it.each(
    MESSAGES.map((m) => [m.typeName, m] as const),
  )("%s has exactly the official fields, numbers and types", (typeName, mine) => {
    const theirs = official().getMessage(typeName);
    if (theirs === undefined) throw new Error(`${typeName} missing from the official registry`);
    expect(shape(mine)).toEqual(shape(theirs));
  });

  it("declares the bidirectional StreamRateLimitQuotas method at the official path", () => {
    const service = official().getService("envoy.service.rate_limit_quota.v3.RateLimitQuotaService");
    const theirs = service?.methods.map((m) => `/${service.typeName}/${m.name} ${m.methodKind}`);
    const ours = Object.values(RateLimitQuotaService.method).map(
      (m) => `/${RateLimitQuotaService.typeName}/${m.name} ${m.methodKind}`,
    );
    expect(ours).toEqual(theirs);
    expect(ours).toEqual([
      "/envoy.service.rate_limit_quota.v3.RateLimitQuotaService/StreamRateLimitQuotas bidi_streaming",
    ]);
  });

  it("uses the official numbers of the blanket rules", () => {
    const theirs = official().getEnum("envoy.type.v3.RateLimitStrategy.BlanketRule");
    expect(RateLimitStrategy_BlanketRuleSchema.values.map((v) => `${v.name}=${v.number}`)).toEqual(
      theirs?.values.map((v) => `${v.name}=${v.number}`),
    );
  });
});
