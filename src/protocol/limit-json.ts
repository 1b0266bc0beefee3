/**
 * A reported limit in the JSON of tollgate's HTTP answers (`/v1/quota`, the ext_authz 429 body):
 * exactly the proto3 JSON of `RateLimitResponse.RateLimit`, as `POST /json` reports
 * `currentLimit`: `{"requestsPerUnit":10,"unit":"MINUTE","name":"per_tenant"}` (no `name` when unset).
 * Every JSON object tollgate writes uses proto3 JSON names (lowerCamelCase).
 */
import { create, type JsonValue, toJson } from "@bufbuild/protobuf";
import type { ReportedLimit } from "../engine/types.js";
import { RateLimitResponse_RateLimitSchema } from "../gen/envoy/service/ratelimit/v3/rls_pb.js";
import { RESPONSE_UNITS } from "./response-wire.js";

/** `limit` as proto3 JSON. */
export function limitJson(limit: ReportedLimit): JsonValue {
  return toJson(
    RateLimitResponse_RateLimitSchema,
    create(RateLimitResponse_RateLimitSchema, {
      name: limit.name ?? "",
      requestsPerUnit: limit.requestsPerUnit,
      unit: RESPONSE_UNITS[limit.unit],
    }),
  );
}
