/**
 * The hot-path decoder of `RateLimitRequest`: reads the wire format straight into plain values, the
 * twin of response-wire.ts. The reflective protobuf-es `fromBinary` cost several times as much
 * (docs/decisions/protobuf-wire-codecs.md). The byte cursor is wire-reader.ts.
 *
 * Semantics are protobuf's (and `fromBinary`'s, a test keeps the two in agreement): fields in any
 * order; a repeated scalar occurrence replaces the earlier one, a repeated message occurrence merges
 * into it; unknown fields of every wire type are skipped, groups included, however deep (iteratively);
 * a known field number with an unexpected wire type is skipped as unknown, as the reference
 * implementations do; a message present but empty is present. One difference, on purpose: text
 * must be valid UTF-8 (proto3 `string`), and invalid bytes are refused naming the field, where
 * `fromBinary` silently substitutes U+FFFD — so a real U+FFFD in a value is accepted here.
 *
 * Field numbers (envoy/service/ratelimit/v3/rls.proto, envoy/extensions/common/ratelimit/v3/
 * ratelimit.proto, google/protobuf/wrappers.proto):
 * - RateLimitRequest: domain = 1 (string), descriptors = 2 (message), hits_addend = 3 (uint32)
 * - RateLimitDescriptor: entries = 1 (message), limit = 2 (message), hits_addend = 3 (UInt64Value),
 *   is_negative_hits = 4 (bool)
 * - Entry: key = 1, value = 2 (string)
 * - RateLimitOverride: requests_per_unit = 1 (uint32), unit = 2 (enum, int32)
 * - UInt64Value: value = 1 (uint64)
 */
import { GrpcError, Status } from "./grpc/status.js";
import { LEN, Reader, VARINT, WireError } from "./wire-reader.js";

/** A decoded RateLimitRequest, shaped like the protobuf-es message the codec also accepts. */
export interface WireRequest {
  domain: string;
  descriptors: WireDescriptor[];
  hitsAddend: number;
}

export interface WireDescriptor {
  entries: { key: string; value: string }[];
  limit: { requestsPerUnit: number; unit: number } | undefined;
  hitsAddend: bigint | undefined;
  isNegativeHits: boolean;
}

// Tags (fieldNo << 3 | wire type) of the fields read; anything else is skipped.
const DOMAIN_TAG = (1 << 3) | LEN;
const DESCRIPTORS_TAG = (2 << 3) | LEN;
const REQUEST_HITS_TAG = (3 << 3) | VARINT;
const ENTRIES_TAG = (1 << 3) | LEN;
const LIMIT_TAG = (2 << 3) | LEN;
const DESCRIPTOR_HITS_TAG = (3 << 3) | LEN;
const NEGATIVE_HITS_TAG = (4 << 3) | VARINT;
const KEY_TAG = (1 << 3) | LEN;
const VALUE_TAG = (2 << 3) | LEN;
const RPU_TAG = (1 << 3) | VARINT;
const UNIT_TAG = (2 << 3) | VARINT;
const WRAPPER_VALUE_TAG = (1 << 3) | VARINT;

const notUtf8 = (where: string) => new GrpcError(Status.INVALID_ARGUMENT, `${where} is not valid UTF-8`);

function readEntry(r: Reader, i: number, j: number): { key: string; value: string } {
  let key = "";
  let value = "";
  const outer = r.enter();
  while (r.pos < r.end) {
    const tag = r.tag();
    if (tag === KEY_TAG) {
      const text = r.text();
      if (text === undefined) throw notUtf8(`descriptors[${i}].entries[${j}].key`);
      key = text;
    } else if (tag === VALUE_TAG) {
      const text = r.text();
      if (text === undefined) throw notUtf8(`descriptors[${i}].entries[${j}].value`);
      value = text;
    } else r.skip(tag);
  }
  r.leave(outer);
  return { key, value };
}

function readLimit(r: Reader, into: { requestsPerUnit: number; unit: number }): void {
  const outer = r.enter();
  while (r.pos < r.end) {
    const tag = r.tag();
    if (tag === RPU_TAG) into.requestsPerUnit = r.varint32();
    else if (tag === UNIT_TAG) into.unit = r.varint32() | 0;
    else r.skip(tag);
  }
  r.leave(outer);
}

function readUInt64Value(r: Reader, current: bigint | undefined): bigint {
  let value = current ?? 0n;
  const outer = r.enter();
  while (r.pos < r.end) {
    const tag = r.tag();
    if (tag === WRAPPER_VALUE_TAG) value = r.varint64();
    else r.skip(tag);
  }
  r.leave(outer);
  return value;
}

function readDescriptor(r: Reader, i: number): WireDescriptor {
  const d: WireDescriptor = { entries: [], limit: undefined, hitsAddend: undefined, isNegativeHits: false };
  const outer = r.enter();
  while (r.pos < r.end) {
    const tag = r.tag();
    if (tag === ENTRIES_TAG) d.entries.push(readEntry(r, i, d.entries.length));
    else if (tag === LIMIT_TAG) {
      d.limit ??= { requestsPerUnit: 0, unit: 0 };
      readLimit(r, d.limit);
    } else if (tag === DESCRIPTOR_HITS_TAG) d.hitsAddend = readUInt64Value(r, d.hitsAddend);
    // A bool is any varint, true when not 0 in all 64 bits (as protobuf-es reads it).
    else if (tag === NEGATIVE_HITS_TAG) d.isNegativeHits = r.varint64() !== 0n;
    else r.skip(tag);
  }
  r.leave(outer);
  return d;
}

/**
 * Decode RateLimitRequest bytes. Throws GrpcError INVALID_ARGUMENT: "cannot decode
 * RateLimitRequest: <reason>" for bytes that are not one, "<field> is not valid UTF-8" for bad text.
 */
export function readRequest(bytes: Uint8Array): WireRequest {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const r = new Reader(buf, buf.length);
  const req: WireRequest = { domain: "", descriptors: [], hitsAddend: 0 };
  try {
    while (r.pos < r.end) {
      const tag = r.tag();
      if (tag === DOMAIN_TAG) {
        const text = r.text();
        if (text === undefined) throw notUtf8("domain");
        req.domain = text;
      } else if (tag === DESCRIPTORS_TAG) req.descriptors.push(readDescriptor(r, req.descriptors.length));
      else if (tag === REQUEST_HITS_TAG) req.hitsAddend = r.varint32();
      else r.skip(tag);
    }
  } catch (err) {
    if (err instanceof WireError)
      throw new GrpcError(Status.INVALID_ARGUMENT, `cannot decode RateLimitRequest: ${err.message}`);
    throw err;
  }
  return req;
}
