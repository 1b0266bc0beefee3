/**
 * A cursor over protobuf wire-format bytes for the hand-written decoder of request-wire.ts: varints,
 * length-delimited fields, strings (short ASCII ones interned), nested messages, and skipping any
 * field, groups included, however deep (iteratively). Errors are {@link WireError}s; the decoder turns
 * them into INVALID_ARGUMENT.
 */

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

export const VARINT = 0;
const FIXED64 = 1;
export const LEN = 2;
const START_GROUP = 3;
const END_GROUP = 4;
const FIXED32 = 5;

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** A decode failure; the codec prefixes "cannot decode RateLimitRequest: ". */
/** A decode failure; the decoder prefixes "cannot decode RateLimitRequest: ". */
export class WireError extends Error {}

/** Cursor over one message's bytes; `end` is the end of the message being read. */
export class Reader {
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
