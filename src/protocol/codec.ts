/**
 * RLS codec: protobuf RateLimitRequest → domain RateLimitQuery (with input bounds) and domain
 * RateLimitAnswer → protobuf RateLimitResponse, plus the proto3-JSON twins used by `POST /json`.
 * Only protocol/ imports generated code; the engine sees plain values.
 */
import { create, fromJsonString, toJsonString } from "@bufbuild/protobuf";
import type { Entry, QueryDescriptor, RateLimitAnswer, RateLimitQuery, Unit } from "../engine/types.js";
import {
  type RateLimitRequest,
  RateLimitRequestSchema,
  type RateLimitResponse,
  RateLimitResponseSchema,
} from "../gen/envoy/service/ratelimit/v3/rls_pb.js";
import { RateLimitUnit } from "../gen/envoy/type/v3/ratelimit_unit_pb.js";
import { FRAME_HEADER_BYTES, writeFrameHeader } from "./grpc/framing.js";
import { GrpcError, Status } from "./grpc/status.js";
import { readRequest } from "./request-wire.js";
import { RESPONSE_UNITS, responseCode, wholeSeconds, writeResponse } from "./response-wire.js";

/** Input bounds (settings `--max-descriptors`, `--max-entries`, `--max-key-value-bytes`). */
export interface QueryBounds {
  /** Descriptors per request. @default 64 */
  readonly maxDescriptors: number;
  /** Entries per descriptor. @default 16 */
  readonly maxEntries: number;
  /** UTF-8 bytes of the domain and of each entry key and value. @default 256 */
  readonly maxKeyValueBytes: number;
}

/** Defaults of the input bounds settings. */
export const DEFAULT_BOUNDS: QueryBounds = Object.freeze({
  maxDescriptors: 64,
  maxEntries: 16,
  maxKeyValueBytes: 256,
});

/**
 * Largest `hits_addend` accepted, request-level or per descriptor: Envoy's own bound on the hits a
 * rate limit action may add (`MAX_HITS_ADDEND` in its ratelimit filter config). Above it a request is
 * refused INVALID_ARGUMENT rather than charging billions of hits (the wire types allow 2^32 - 1 and 2^64 - 1).
 */
export const MAX_HITS_ADDEND = 1_000_000_000;

/** envoy.type.v3.RateLimitUnit (no WEEK) → domain Unit. */
const OVERRIDE_UNITS: Readonly<Record<number, Unit>> = {
  [RateLimitUnit.SECOND]: "second",
  [RateLimitUnit.MINUTE]: "minute",
  [RateLimitUnit.HOUR]: "hour",
  [RateLimitUnit.DAY]: "day",
  [RateLimitUnit.MONTH]: "month",
  [RateLimitUnit.YEAR]: "year",
};

const invalid = (message: string) => new GrpcError(Status.INVALID_ARGUMENT, message);

/**
 * Bytes bound of a key, value or domain. Text is valid UTF-8 by then: request-wire.ts refuses invalid
 * bytes, and protobuf-es' JSON parser refuses a lone surrogate (`"\ud800"`).
 */
function checkText(text: string, where: string, bounds: QueryBounds): void {
  // Fast path: ASCII length bounds the byte length from below; only long or non-ASCII text is measured.
  if (text.length * 3 > bounds.maxKeyValueBytes) {
    const bytes = Buffer.byteLength(text, "utf8");
    if (bytes > bounds.maxKeyValueBytes)
      throw invalid(`${where} is ${bytes} bytes, more than the limit of ${bounds.maxKeyValueBytes}`);
  }
}

/** What {@link toQuery} reads: a protobuf-es RateLimitRequest or request-wire's plain twin. */
interface RequestLike {
  readonly domain: string;
  readonly descriptors: readonly DescriptorLike[];
  readonly hitsAddend: number;
}

interface DescriptorLike {
  readonly entries: readonly { readonly key: string; readonly value: string }[];
  readonly limit?: { readonly requestsPerUnit: number; readonly unit: number } | undefined;
  readonly hitsAddend?: bigint | undefined;
  readonly isNegativeHits?: boolean;
}

function toDescriptor(d: DescriptorLike, i: number, bounds: QueryBounds, owned: boolean): QueryDescriptor {
  if (d.entries.length === 0) throw invalid(`descriptors[${i}] has no entries`);
  if (d.entries.length > bounds.maxEntries)
    throw invalid(
      `descriptors[${i}] has ${d.entries.length} entries, more than the limit of ${bounds.maxEntries}`,
    );
  // Owned entries (request-wire's fresh plain objects) are kept; messages' are copied to plain Entries.
  const entries: Entry[] = owned ? (d.entries as Entry[]) : new Array(d.entries.length);
  for (let j = 0; j < d.entries.length; j++) {
    const e = d.entries[j] as { key: string; value: string };
    if (e.key === "") throw invalid(`descriptors[${i}].entries[${j}].key is empty`);
    checkText(e.key, `descriptors[${i}].entries[${j}].key`, bounds);
    checkText(e.value, `descriptors[${i}].entries[${j}].value`, bounds);
    if (!owned) entries[j] = { key: e.key, value: e.value };
  }
  let limit: QueryDescriptor["limit"];
  if (d.limit) {
    const unit = OVERRIDE_UNITS[d.limit.unit];
    if (!unit)
      throw invalid(
        `descriptors[${i}].limit.unit is ${RateLimitUnit[d.limit.unit] ?? d.limit.unit}: name a unit`,
      );
    limit = { requestsPerUnit: d.limit.requestsPerUnit, unit };
  }
  let hitsAddend: number | undefined;
  if (d.hitsAddend !== undefined) {
    // A present per-descriptor hits_addend overrides the request's; a present 0 checks without consuming.
    if (d.hitsAddend > BigInt(MAX_HITS_ADDEND))
      throw invalid(
        `descriptors[${i}].hits_addend ${d.hitsAddend} is larger than ${MAX_HITS_ADDEND} (Envoy's bound)`,
      );
    hitsAddend = Number(d.hitsAddend);
  }
  // is_negative_hits: the same hits given back (a refund), bounded as charges are.
  return { entries, limit, hitsAddend, negativeHits: d.isNegativeHits === true };
}

/** Validate a decoded request against the bounds and turn it into a domain query. */
export function toQuery(req: RequestLike, bounds: QueryBounds, owned = false): RateLimitQuery {
  if (req.domain === "") throw invalid("domain is empty");
  checkText(req.domain, "domain", bounds);
  if (req.descriptors.length === 0) throw invalid("no descriptors");
  if (req.descriptors.length > bounds.maxDescriptors)
    throw invalid(`${req.descriptors.length} descriptors, more than the limit of ${bounds.maxDescriptors}`);
  if (req.hitsAddend > MAX_HITS_ADDEND)
    throw invalid(`hits_addend ${req.hitsAddend} is larger than ${MAX_HITS_ADDEND} (Envoy's bound)`);
  const descriptors = req.descriptors.map((d, i) => toDescriptor(d, i, bounds, owned));
  // Request-level hits_addend 0 means 1: the engine applies that, we pass it through.
  return { domain: req.domain, descriptors, hitsAddend: req.hitsAddend };
}

/** Domain answer → protobuf message (for JSON and tests; the binary path uses `encodeAnswer`). */
export function toResponse(answer: RateLimitAnswer): RateLimitResponse {
  return create(RateLimitResponseSchema, {
    overallCode: responseCode(answer.overallCode),
    statuses: answer.statuses.map((s) => ({
      code: responseCode(s.code),
      currentLimit: s.currentLimit
        ? {
            name: s.currentLimit.name ?? "",
            requestsPerUnit: s.currentLimit.requestsPerUnit,
            unit: RESPONSE_UNITS[s.currentLimit.unit],
          }
        : undefined,
      limitRemaining: s.limitRemaining,
      durationUntilReset:
        s.durationUntilResetSec === undefined
          ? undefined
          : { seconds: BigInt(wholeSeconds(s.durationUntilResetSec)), nanos: 0 },
    })),
    responseHeadersToAdd: answer.responseHeaders.map((h) => ({ key: h.key, value: h.value })),
  });
}

/** Decode binary RateLimitRequest bytes into a query (INVALID_ARGUMENT on bad bytes or input). */
export function decodeQuery(bytes: Uint8Array, bounds: QueryBounds): RateLimitQuery {
  // readRequest's objects are this call's own: their entry lists are reused as they are.
  return toQuery(readRequest(bytes), bounds, true);
}

/** Domain answer → RateLimitResponse wire bytes (the hot path; same bytes as `toResponse` + toBinary). */
export function encodeAnswer(answer: RateLimitAnswer): Uint8Array {
  return writeResponse(answer);
}

/** Domain answer → the whole gRPC frame (header and message) in one buffer. */
export function encodeAnswerFramed(answer: RateLimitAnswer): Buffer {
  return writeFrameHeader(writeResponse(answer, FRAME_HEADER_BYTES));
}

/** proto3-JSON RateLimitRequest → query; throws GrpcError INVALID_ARGUMENT with a one-line reason. */
export function parseJsonQuery(text: string, bounds: QueryBounds): RateLimitQuery {
  let req: RateLimitRequest;
  try {
    req = fromJsonString(RateLimitRequestSchema, text);
  } catch (err) {
    throw invalid(`invalid RateLimitRequest JSON: ${(err as Error).message.split("\n")[0]}`);
  }
  return toQuery(req, bounds);
}

/** Answer → proto3 JSON (camelCase field names, enums as names). */
export function answerToJson(answer: RateLimitAnswer): string {
  return toJsonString(RateLimitResponseSchema, toResponse(answer));
}
