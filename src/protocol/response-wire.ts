/**
 * The hot-path encoder of `RateLimitResponse`: writes the wire format straight from a domain
 * `RateLimitAnswer` into one exactly-sized Buffer (a size pass, then a write pass), optionally after
 * room for the gRPC frame header so the framed message is written once. The reflective protobuf-es
 * `create` + `toBinary` cost several times as much (docs/decisions/protobuf-wire-codecs.md). The bytes
 * are identical to `toBinary(RateLimitResponseSchema, toResponse(answer))`: proto3 implicit presence
 * (zero scalars and empty strings omitted), message fields written when present even if empty, fields
 * in number order. A test keeps the two byte-equal.
 *
 * Field numbers (envoy/service/ratelimit/v3/rls.proto, envoy/config/core/v3/base.proto,
 * google/protobuf/duration.proto), as `(number << 3) | wire type` tags:
 * - RateLimitResponse: overall_code = 1, statuses = 2, response_headers_to_add = 3
 * - DescriptorStatus: code = 1, current_limit = 2, limit_remaining = 3, duration_until_reset = 4
 * - RateLimit: requests_per_unit = 1, unit = 2, name = 3
 * - HeaderValue: key = 1, value = 2
 * - Duration: seconds = 1
 */
import type { Code, DescriptorStatus, RateLimitAnswer, ReportedLimit, Unit } from "../engine/types.js";
import {
  RateLimitResponse_Code,
  RateLimitResponse_RateLimit_Unit,
} from "../gen/envoy/service/ratelimit/v3/rls_pb.js";
import { utf8Length } from "../utf8.js";

/** Domain Unit → RateLimitResponse.RateLimit.Unit (which has WEEK = 7). */
export const RESPONSE_UNITS: Readonly<Record<Unit, RateLimitResponse_RateLimit_Unit>> = Object.freeze({
  second: RateLimitResponse_RateLimit_Unit.SECOND,
  minute: RateLimitResponse_RateLimit_Unit.MINUTE,
  hour: RateLimitResponse_RateLimit_Unit.HOUR,
  day: RateLimitResponse_RateLimit_Unit.DAY,
  week: RateLimitResponse_RateLimit_Unit.WEEK,
  month: RateLimitResponse_RateLimit_Unit.MONTH,
  year: RateLimitResponse_RateLimit_Unit.YEAR,
});

/** Domain code → wire code. Never UNKNOWN (Envoy reads UNKNOWN as OK). */
export function responseCode(code: Code): RateLimitResponse_Code {
  return code === "OK" ? RateLimitResponse_Code.OK : RateLimitResponse_Code.OVER_LIMIT;
}

/** Whole non-negative seconds as sent in `duration_until_reset` (Envoy drops nanos). */
export function wholeSeconds(sec: number): number {
  return sec > 0 ? Math.ceil(sec) : 0;
}

const VARINT = 0;
const LEN = 2;
const tag = (field: number, type: number) => (field << 3) | type;

/** Bytes of a varint for a non-negative integer below 2^53. */
function varintSize(n: number): number {
  let size = 1;
  while (n >= 128) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

function writeVarint(buf: Buffer, pos: number, n: number): number {
  while (n >= 128) {
    buf[pos++] = (n % 128) | 128;
    n = Math.floor(n / 128);
  }
  buf[pos++] = n;
  return pos;
}

/** A length-delimited field's total size (tag byte + length varint + body) for a field below 16. */
const lenField = (body: number) => 1 + varintSize(body) + body;
const strField = (bytes: number) => (bytes === 0 ? 0 : lenField(bytes));

/**
 * The `current_limit` body of a reported limit, one char per byte (latin1). A configured limit
 * carries it from compile time (`ReportedLimit.wire`, config/hot-path.ts); a request-supplied
 * override's is written here per response.
 */
export function encodeLimitBody(l: ReportedLimit): string {
  const nameBytes = l.name ? utf8Length(l.name) : 0;
  const size = (l.requestsPerUnit === 0 ? 0 : 1 + varintSize(l.requestsPerUnit)) + 2 + strField(nameBytes);
  const body = Buffer.alloc(size);
  let pos = 0;
  if (l.requestsPerUnit !== 0) {
    body[pos++] = tag(1, VARINT);
    pos = writeVarint(body, pos, l.requestsPerUnit);
  }
  body[pos++] = tag(2, VARINT);
  body[pos++] = RESPONSE_UNITS[l.unit];
  writeString(body, pos, 3, l.name, nameBytes);
  return body.toString("latin1");
}

const limitBody = (l: ReportedLimit): string => l.wire ?? encodeLimitBody(l);

function statusSize(s: DescriptorStatus): number {
  let size = 2; // code: never 0
  if (s.currentLimit) size += lenField(limitBody(s.currentLimit).length);
  if (s.limitRemaining !== 0) size += 1 + varintSize(s.limitRemaining);
  if (s.durationUntilResetSec !== undefined) {
    const sec = wholeSeconds(s.durationUntilResetSec);
    size += lenField(sec === 0 ? 0 : 1 + varintSize(sec));
  }
  return size;
}

/** Write a string field whose UTF-8 length is `bytes` (nothing when empty). */
function writeString(
  buf: Buffer,
  pos: number,
  field: number,
  text: string | undefined,
  bytes: number,
): number {
  if (!text) return pos;
  buf[pos++] = tag(field, LEN);
  pos = writeVarint(buf, pos, bytes);
  if (bytes !== text.length) return pos + buf.write(text, pos);
  for (let i = 0; i < bytes; i++) buf[pos + i] = text.charCodeAt(i);
  return pos + bytes;
}

function writeStatus(buf: Buffer, pos: number, s: DescriptorStatus, size: number): number {
  buf[pos++] = tag(2, LEN);
  pos = writeVarint(buf, pos, size);
  buf[pos++] = tag(1, VARINT);
  buf[pos++] = responseCode(s.code);
  const limit = s.currentLimit;
  if (limit) {
    const body = limitBody(limit);
    buf[pos++] = tag(2, LEN);
    pos = writeVarint(buf, pos, body.length);
    // A few bytes: a loop is cheaper than a native copy.
    for (let i = 0; i < body.length; i++) buf[pos + i] = body.charCodeAt(i);
    pos += body.length;
  }
  if (s.limitRemaining !== 0) {
    buf[pos++] = tag(3, VARINT);
    pos = writeVarint(buf, pos, s.limitRemaining);
  }
  if (s.durationUntilResetSec !== undefined) {
    const sec = wholeSeconds(s.durationUntilResetSec);
    buf[pos++] = tag(4, LEN);
    if (sec === 0) buf[pos++] = 0;
    else {
      buf[pos++] = 1 + varintSize(sec);
      buf[pos++] = tag(1, VARINT);
      pos = writeVarint(buf, pos, sec);
    }
  }
  return pos;
}

/** Sizes of one answer's statuses and header strings, reused between calls (one call at a time). */
const scratch: number[] = [];

/**
 * Encode `answer` as RateLimitResponse wire bytes. Counts must be integers in uint32 range, as the
 * engine produces them; `durationUntilResetSec` is rounded up to whole seconds. With `offset` the
 * message starts that many bytes into the buffer (room for the gRPC frame header, written by the
 * caller), so the bytes are written once.
 */
export function writeResponse(answer: RateLimitAnswer, offset = 0): Buffer {
  const statuses = answer.statuses;
  const headers = answer.responseHeaders;
  const sizes = scratch; // only the slots written below are read
  let size = 2;
  for (let i = 0; i < statuses.length; i++) {
    const n = statusSize(statuses[i] as DescriptorStatus);
    sizes[i] = n;
    size += lenField(n);
  }
  const h0 = statuses.length;
  for (let i = 0; i < headers.length; i++) {
    const h = headers[i] as { key: string; value: string };
    const k = utf8Length(h.key);
    const v = utf8Length(h.value);
    sizes[h0 + 2 * i] = k;
    sizes[h0 + 2 * i + 1] = v;
    size += lenField(strField(k) + strField(v));
  }
  const buf = Buffer.allocUnsafe(offset + size);
  buf[offset] = tag(1, VARINT);
  buf[offset + 1] = responseCode(answer.overallCode);
  let pos = offset + 2;
  for (let i = 0; i < statuses.length; i++)
    pos = writeStatus(buf, pos, statuses[i] as DescriptorStatus, sizes[i] as number);
  for (let i = 0; i < headers.length; i++) {
    const h = headers[i] as { key: string; value: string };
    const k = sizes[h0 + 2 * i] as number;
    const v = sizes[h0 + 2 * i + 1] as number;
    buf[pos++] = tag(3, LEN);
    pos = writeVarint(buf, pos, strField(k) + strField(v));
    pos = writeString(buf, pos, 1, h.key, k);
    pos = writeString(buf, pos, 2, h.value, v);
  }
  if (pos !== offset + size)
    throw new Error(`RateLimitResponse encoder wrote ${pos - offset} of ${size} bytes`);
  return buf;
}
