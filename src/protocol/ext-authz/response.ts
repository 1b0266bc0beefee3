/**
 * ext_authz answers: the CheckResponse for an allowed request (X-RateLimit-* headers for the
 * client), a 429 (Retry-After, X-RateLimit-*, a JSON body naming only the binding limit) and a 400
 * for a request missing a required descriptor value.
 */
import { create } from "@bufbuild/protobuf";
import type { MissingValue } from "../../engine/extract.js";
import type { DescriptorStatus, Header, RateLimitAnswer } from "../../engine/types.js";
import {
  type HeaderValueOption,
  HeaderValueOption_HeaderAppendAction,
  HeaderValueOptionSchema,
} from "../../gen/envoy/config/core/v3/base_pb.js";
import { type CheckResponse, CheckResponseSchema } from "../../gen/envoy/service/auth/v3/external_auth_pb.js";
import { StatusCode } from "../../gen/envoy/type/v3/http_status_pb.js";
import { Status } from "../grpc/status.js";
import { limitJson } from "../limit-json.js";

/** Headers replace any the upstream or client set, so a client cannot spoof our quota headers. */
function headerOptions(headers: readonly Header[]): HeaderValueOption[] {
  return headers.map((h) =>
    create(HeaderValueOptionSchema, {
      header: { key: h.key, value: h.value },
      appendAction: HeaderValueOption_HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD,
    }),
  );
}

const JSON_TYPE: Header = { key: "content-type", value: "application/json" };

/** Allow, telling the client its quota through `response_headers_to_add`. */
export function allowResponse(headers: readonly Header[]): CheckResponse {
  return create(CheckResponseSchema, {
    status: { code: Status.OK },
    httpResponse: { case: "okResponse", value: { responseHeadersToAdd: headerOptions(headers) } },
  });
}

function denied(
  grpcCode: number,
  http: StatusCode,
  message: string,
  headers: readonly Header[],
  body: object,
) {
  return create(CheckResponseSchema, {
    status: { code: grpcCode, message },
    httpResponse: {
      case: "deniedResponse",
      value: {
        status: { code: http },
        headers: headerOptions([...headers, JSON_TYPE]),
        body: JSON.stringify(body),
      },
    },
  });
}

/** The status that binds: the over-limit one the client must wait longest for. */
function bindingStatus(statuses: readonly DescriptorStatus[]): DescriptorStatus | undefined {
  let best: DescriptorStatus | undefined;
  for (const s of statuses) {
    if (s.code !== "OVER_LIMIT") continue;
    if (best === undefined || (s.durationUntilResetSec ?? 0) > (best.durationUntilResetSec ?? 0)) best = s;
  }
  return best;
}

/**
 * Deny with HTTP 429. The engine's headers are kept; `Retry-After` (whole seconds, at least 1) is
 * added when the configured header format did not already include it. The body names the binding
 * limit only, never the caller's other limits or descriptor values.
 */
export function overLimitResponse(answer: RateLimitAnswer): CheckResponse {
  const binding = bindingStatus(answer.statuses);
  const retryAfter =
    binding?.durationUntilResetSec === undefined ? undefined : Math.max(1, binding.durationUntilResetSec);
  const headers = [...answer.responseHeaders];
  if (retryAfter !== undefined && !headers.some((h) => h.key.toLowerCase() === "retry-after")) {
    headers.push({ key: "retry-after", value: String(retryAfter) });
  }
  const limit = binding?.currentLimit;
  const body = {
    error: "too_many_requests",
    limit: limit === undefined ? undefined : limitJson(limit),
    retryAfterSeconds: retryAfter,
  };
  return denied(Status.RESOURCE_EXHAUSTED, StatusCode.TooManyRequests, "over rate limit", headers, body);
}

/** Deny with HTTP 400: a request the rules cannot place (required value missing, no domain). */
export function badRequestResponse(reason: string, missing?: MissingValue): CheckResponse {
  const body = { error: "bad_request", reason, descriptor: missing?.descriptor, key: missing?.key };
  return denied(Status.INVALID_ARGUMENT, StatusCode.BadRequest, reason, [], body);
}
