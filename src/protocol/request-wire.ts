/**
 * The hot-path decoder of `RateLimitRequest`: reads the wire format straight into plain values, the
 * twin of response-wire.ts. The reflective protobuf-es `fromBinary` cost several times as much
 * (docs/decisions/protobuf-wire-codecs.md).
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

/**
 * Short ASCII strings are interned: descriptor keys repeat on every request and values (tenants,
 * route classes, addresses) repeat across requests, and making a string from bytes is a native call
 * (~200 ns here) where hashing and comparing a few bytes in JS is a fraction of that. The table is
 * fixed-size and direct-mapped (a colliding string just replaces the slot), so its memory is bounded
 * whatever the traffic; an interned string also carries its hash already for the Maps downstream.
 */
const INTERN_SLOTS = 4096;
const INTERN_MAX_BYTES = 48;
const internTable: (string | undefined)[] = new Array<string | undefined>(INTERN_SLOTS).fill(undefined);

/** The string of `buf[start, end)` when every byte is ASCII, from the table when there; else undefined. */
function internAscii(buf: Buffer, start: number, end: number): string | undefined {
  let h = end - start;
  for (let i = start; i < end; i++) {
    const b = buf[i] as number;
    if (b >= 0x80) return undefined;
    h = Math.imul(h ^ b, 0x01000193);
  }
  const slot = (h >>> 0) & (INTERN_SLOTS - 1);
  const hit = internTable[slot];
  const n = end - start;
  if (hit !== undefined && hit.length === n) {
    let i = 0;
    while (i < n && hit.charCodeAt(i) === buf[start + i]) i++;
    if (i === n) return hit;
  }
  const text = buf.toString("latin1", start, end);
  internTable[slot] = text;
  return text;
}

const VARINT = 0;
const FIXED64 = 1;
const LEN = 2;
const START_GROUP = 3;
const END_GROUP = 4;
const FIXED32 = 5;

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

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** A decode failure; the codec prefixes "cannot decode RateLimitRequest: ". */
class WireError extends Error {}

/** Cursor over one message's bytes; `end` is the end of the message being read. */
class Reader {
  pos = 0;
  constructor(
    readonly buf: Buffer,
    public end: number,
  ) {}

  private byte(): number {
    if (this.pos >= this.end) throw new WireError("premature end of input");
    return this.buf[this.pos++] as number;
  }

  /** A varint's low 32 bits, unsigned (how uint32, enum and tag fields read any varint). */
  varint32(): number {
    let result = 0;
    for (let i = 0; i < 10; i++) {
      const b = this.byte();
      if (i < 4) result |= (b & 0x7f) << (7 * i);
      else if (i === 4) result |= (b & 0x0f) << 28;
      if (b < 0x80) return result >>> 0;
    }
    throw new WireError("invalid varint");
  }

  /** A varint as an exact unsigned 64-bit integer. */
  varint64(): bigint {
    let result = 0n;
    for (let i = 0; i < 10; i++) {
      const b = this.byte();
      result |= BigInt(b & 0x7f) << BigInt(7 * i);
      if (b < 0x80) return BigInt.asUintN(64, result);
    }
    throw new WireError("invalid varint");
  }

  /** Read a length prefix; returns the field's end, `pos` at its first byte. */
  length(): number {
    const n = this.varint32();
    const end = this.pos + n;
    if (end > this.end) throw new WireError("premature end of input");
    return end;
  }

  /** A string field; undefined when its bytes are not UTF-8 (the caller names the field). */
  text(): string | undefined {
    const end = this.length();
    const buf = this.buf;
    const start = this.pos;
    this.pos = end;
    if (end - start <= INTERN_MAX_BYTES) {
      const interned = internAscii(buf, start, end);
      if (interned !== undefined) return interned;
    }
    let i = start;
    while (i < end && (buf[i] as number) < 0x80) i++;
    if (i === end) return buf.toString("latin1", start, end);
    try {
      return utf8.decode(buf.subarray(start, end));
    } catch {
      return undefined;
    }
  }

  /** A tag, as fieldNo * 8 + wireType. */
  tag(): number {
    const tag = this.varint32();
    if (tag < 8) throw new WireError("invalid field number 0");
    if ((tag & 7) === END_GROUP) throw new WireError("unexpected end group tag");
    return tag;
  }

  /** Skip the field whose `tag` was just read (a group with everything it nests). */
  skip(tag: number): void {
    const wireType = tag & 7;
    if (wireType === VARINT) this.varint32();
    else if (wireType === FIXED64) this.advance(8);
    else if (wireType === FIXED32) this.advance(4);
    else if (wireType === LEN) this.pos = this.length();
    else if (wireType === START_GROUP) this.skipGroup(tag >>> 3);
    else throw new WireError(`invalid wire type ${wireType}`);
  }

  /** Enter a nested message: returns the outer end to restore with {@link leave}. */
  enter(): number {
    const inner = this.length();
    const outer = this.end;
    this.end = inner;
    return outer;
  }

  leave(outer: number): void {
    this.pos = this.end;
    this.end = outer;
  }

  private advance(n: number): void {
    if (this.pos + n > this.end) throw new WireError("premature end of input");
    this.pos += n;
  }

  /** Skip to the END_GROUP that closes `fieldNo`, iteratively (nesting depth costs no stack). */
  private skipGroup(fieldNo: number): void {
    const open = [fieldNo];
    while (open.length > 0) {
      if (this.pos >= this.end) throw new WireError("unterminated group");
      const tag = this.varint32();
      const wireType = tag & 7;
      if (wireType === START_GROUP) open.push(tag >>> 3);
      else if (wireType === END_GROUP) {
        if (open.pop() !== tag >>> 3) throw new WireError("invalid end group tag");
      } else this.skip(tag);
    }
  }
}

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
