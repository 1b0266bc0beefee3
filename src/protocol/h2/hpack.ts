/**
 * HPACK (RFC 7541) header block decoder for the HTTP/2 server (the Huffman code is in huffman.ts).
 *
 * Hot path: every request's HEADERS block goes through {@link HpackDecoder.decode}. It works on the
 * caller's bytes in place, keeps its cursor in a field (no result objects or closures per field), keeps
 * the dynamic table in a growable ring of two string arrays, and decodes Huffman strings with
 * huffman.ts's byte-at-a-time state machine.
 *
 * Header field octets are Latin-1: each octet becomes one UTF-16 code unit (0–255), and the table's
 * octet counts (RFC 7541 §4.1) are string lengths. Names are not checked for case or characters here
 * (RFC 7540 §8.1.2 is the HTTP/2 layer's job).
 */

import { checkRange, decodeHuffman, HpackError, latin1 } from "./huffman.js";

export { HpackError, huffmanDecode, huffmanEncode } from "./huffman.js";

/**
 * RFC 7541 Appendix A, index 1..61. Entry 0 is omitted: `STATIC_TABLE[i - 1]` is HPACK index `i`
 * (so the array has 61 entries and iterating it sees only real entries).
 */
export const STATIC_TABLE: readonly (readonly [name: string, value: string])[] = Object.freeze(
  (
    [
      [":authority", ""],
      [":method", "GET"],
      [":method", "POST"],
      [":path", "/"],
      [":path", "/index.html"],
      [":scheme", "http"],
      [":scheme", "https"],
      [":status", "200"],
      [":status", "204"],
      [":status", "206"],
      [":status", "304"],
      [":status", "400"],
      [":status", "404"],
      [":status", "500"],
      ["accept-charset", ""],
      ["accept-encoding", "gzip, deflate"],
      ["accept-language", ""],
      ["accept-ranges", ""],
      ["accept", ""],
      ["access-control-allow-origin", ""],
      ["age", ""],
      ["allow", ""],
      ["authorization", ""],
      ["cache-control", ""],
      ["content-disposition", ""],
      ["content-encoding", ""],
      ["content-language", ""],
      ["content-length", ""],
      ["content-location", ""],
      ["content-range", ""],
      ["content-type", ""],
      ["cookie", ""],
      ["date", ""],
      ["etag", ""],
      ["expect", ""],
      ["expires", ""],
      ["from", ""],
      ["host", ""],
      ["if-match", ""],
      ["if-modified-since", ""],
      ["if-none-match", ""],
      ["if-range", ""],
      ["if-unmodified-since", ""],
      ["last-modified", ""],
      ["link", ""],
      ["location", ""],
      ["max-forwards", ""],
      ["proxy-authenticate", ""],
      ["proxy-authorization", ""],
      ["range", ""],
      ["referer", ""],
      ["refresh", ""],
      ["retry-after", ""],
      ["server", ""],
      ["set-cookie", ""],
      ["strict-transport-security", ""],
      ["transfer-encoding", ""],
      ["user-agent", ""],
      ["vary", ""],
      ["via", ""],
      ["www-authenticate", ""],
    ] as const
  ).map((entry) => Object.freeze(entry)),
);

const STATIC_COUNT = 61;
/** Static names and values indexed by HPACK index (slot 0 unused), for the decoder's lookups. */
const STATIC_NAMES: string[] = [""];
const STATIC_VALUES: string[] = [""];
for (const [name, value] of STATIC_TABLE) {
  STATIC_NAMES.push(name);
  STATIC_VALUES.push(value);
}

/** RFC 7541 §4.1: the per-entry overhead counted in the dynamic table size. */
const ENTRY_OVERHEAD = 32;
/** Largest integer accepted in a representation (index, string length, table size). */
const MAX_INTEGER = 0x7fff_ffff;

// ---------------------------------------------------------------------------------------------------
// Decoder
// ---------------------------------------------------------------------------------------------------

/** Decodes the header blocks of one HTTP/2 connection (it owns that connection's dynamic table). */
export class HpackDecoder {
  /** The SETTINGS_HEADER_TABLE_SIZE this endpoint advertised: the largest size update allowed. */
  private readonly maxTableSize: number;
  /** Current maximum size of the dynamic table (the last size update, initially `maxTableSize`). */
  private capacity: number;
  /** Current size in octets (RFC 7541 §4.1). */
  private used = 0;
  /**
   * The dynamic table: a ring of `mask + 1` slots (a power of two) in two parallel arrays; the newest
   * entry is at `head - 1`, the oldest at `head - count` (mod ring size). Grows by doubling.
   */
  private names: string[];
  private values: string[];
  private mask: number;
  private head = 0;
  private count = 0;
  /** Read cursor, shared by {@link decode} and its helpers. */
  private pos = 0;

  /** `maxTableSize`: the SETTINGS_HEADER_TABLE_SIZE this endpoint advertised (default 4096); a dynamic table size update above it is an error. */
  constructor(maxTableSize = 4096) {
    if (!Number.isInteger(maxTableSize) || maxTableSize < 0 || maxTableSize > MAX_INTEGER) {
      throw new RangeError(`hpack: invalid maximum table size ${maxTableSize}`);
    }
    this.maxTableSize = maxTableSize;
    this.capacity = maxTableSize;
    // Room for the entries of a table full of small fields, up to 128 (default 4096 / 32); grows beyond.
    let slots = 16;
    while (slots < 128 && slots * ENTRY_OVERHEAD < maxTableSize) slots *= 2;
    this.names = new Array<string>(slots).fill("");
    this.values = new Array<string>(slots).fill("");
    this.mask = slots - 1;
  }

  /** Current dynamic table size in octets (RFC 7541 §4.1: name + value lengths + 32 per entry). */
  get size(): number {
    return this.used;
  }

  /**
   * Decode one complete header block (HEADERS + CONTINUATION payloads joined), `block[start..end)`,
   * calling `emit(name, value)` for each field in order. Throws HpackError on any malformed input; the
   * fields before the error have been emitted and the dynamic table may have changed, so the
   * connection must not decode further blocks (COMPRESSION_ERROR). An exception thrown by `emit`
   * propagates and likewise leaves the block partly decoded.
   *
   * `maxOctets` bounds the header list (RFC 9113 §6.5.2 octets: name + value + 32 per field): once a
   * field would pass it, nothing more is emitted and the rest of the block is only parsed for what
   * the dynamic table needs (literals that are not indexed are skipped undecoded), so a block that
   * references one large entry thousands of times costs a loop step per reference. Returns false
   * when the bound was passed (the caller refuses the request).
   */
  decode(
    block: Uint8Array,
    start: number,
    end: number,
    emit: (name: string, value: string) => void,
    maxOctets = Number.POSITIVE_INFINITY,
  ): boolean {
    checkRange(block, start, end);
    let fields = false;
    let octets = 0;
    this.pos = start;
    while (this.pos < end) {
      const b = block[this.pos] as number;
      this.pos++;
      let name: string;
      let value: string;
      if (b >= 0x80) {
        // Indexed field (§6.1): 1xxxxxxx, 7-bit index.
        let index = b & 0x7f;
        if (index === 0x7f) index = this.readIntTail(block, end, index);
        fields = true;
        if (index <= STATIC_COUNT) {
          if (index === 0) throw new HpackError("indexed field with index 0");
          name = STATIC_NAMES[index] as string;
          value = STATIC_VALUES[index] as string;
        } else {
          const k = index - STATIC_COUNT - 1;
          if (k >= this.count) throw new HpackError(`index ${index} is past the end of the table`);
          const slot = (this.head - 1 - k) & this.mask;
          name = this.names[slot] as string;
          value = this.values[slot] as string;
        }
      } else if (b >= 0x40) {
        // Literal with incremental indexing (§6.2.1): 01xxxxxx, 6-bit name index.
        let index = b & 0x3f;
        if (index === 0x3f) index = this.readIntTail(block, end, index);
        name = index === 0 ? this.readString(block, end) : this.nameAt(index);
        value = this.readString(block, end);
        fields = true;
        this.insert(name, value);
      } else if (b >= 0x20) {
        // Dynamic table size update (§6.3): 001xxxxx, 5-bit size; only before the first field.
        if (fields) throw new HpackError("dynamic table size update after a header field");
        let size = b & 0x1f;
        if (size === 0x1f) size = this.readIntTail(block, end, size);
        if (size > this.maxTableSize) {
          throw new HpackError(`dynamic table size update to ${size} above the limit ${this.maxTableSize}`);
        }
        this.capacity = size;
        while (this.used > size) this.evict();
        continue;
      } else {
        // Literal without indexing (0000xxxx, §6.2.2) or never indexed (0001xxxx, §6.2.3): 4-bit index.
        let index = b & 0x0f;
        if (index === 0x0f) index = this.readIntTail(block, end, index);
        name = index === 0 ? this.readString(block, end) : this.nameAt(index);
        value = this.readString(block, end);
        fields = true;
      }
      octets += name.length + value.length + ENTRY_OVERHEAD;
      if (octets > maxOctets) {
        // Past the bound: the rest only for the table, in a loop of its own (keeps this one small).
        this.skim(block, end);
        return false;
      }
      emit(name, value);
    }
    return true;
  }

  /**
   * The rest of a block past the header-list bound (after at least one field): parsed only for what
   * the dynamic table needs, nothing emitted. Indexed fields are checked, not read; incrementally
   * indexed literals are decoded and inserted; other literals are stepped over undecoded. Throws
   * HpackError on malformed input, as {@link decode} does.
   */
  private skim(block: Uint8Array, end: number): void {
    while (this.pos < end) {
      const b = block[this.pos] as number;
      this.pos++;
      if (b >= 0x80) {
        let index = b & 0x7f;
        if (index === 0x7f) index = this.readIntTail(block, end, index);
        if (index === 0) throw new HpackError("indexed field with index 0");
        if (index > STATIC_COUNT && index - STATIC_COUNT - 1 >= this.count)
          throw new HpackError(`index ${index} is past the end of the table`);
      } else if (b >= 0x40) {
        let index = b & 0x3f;
        if (index === 0x3f) index = this.readIntTail(block, end, index);
        const name = index === 0 ? this.readString(block, end) : this.nameAt(index);
        this.insert(name, this.readString(block, end));
      } else if (b >= 0x20) {
        throw new HpackError("dynamic table size update after a header field");
      } else {
        let index = b & 0x0f;
        if (index === 0x0f) index = this.readIntTail(block, end, index);
        if (index === 0) this.skipString(block, end);
        else this.nameAt(index);
        this.skipString(block, end);
      }
    }
  }

  /** Step over a string literal (§5.2) at `pos` without decoding it. */
  private skipString(block: Uint8Array, end: number): void {
    if (this.pos >= end) throw new HpackError("truncated header field (missing string)");
    const b = block[this.pos] as number;
    this.pos++;
    let len = b & 0x7f;
    if (len === 0x7f) len = this.readIntTail(block, end, len);
    if (len > end - this.pos)
      throw new HpackError(`string of ${len} octets is longer than the rest of the block`);
    this.pos += len;
  }

  /** Name of the entry at `index` (>= 1) of the static or dynamic table. */
  private nameAt(index: number): string {
    if (index <= STATIC_COUNT) return STATIC_NAMES[index] as string;
    const k = index - STATIC_COUNT - 1;
    if (k >= this.count) throw new HpackError(`name index ${index} is past the end of the table`);
    return this.names[(this.head - 1 - k) & this.mask] as string;
  }

  /**
   * The rest of an integer whose `prefix` bits were all ones (§5.1): continuation octets from `pos`,
   * 7 bits each, least significant first. At most 5 of them (they cannot add up to more than 2^35,
   * and anything past MAX_INTEGER is rejected anyway).
   */
  private readIntTail(block: Uint8Array, end: number, prefix: number): number {
    let value = prefix;
    let p = this.pos;
    for (let shift = 0; ; shift += 7) {
      if (p >= end) throw new HpackError("truncated integer");
      if (shift > 28) throw new HpackError("integer too large");
      const b = block[p++] as number;
      value += (b & 0x7f) * 2 ** shift;
      if (value > MAX_INTEGER) throw new HpackError("integer too large");
      if (b < 0x80) break;
    }
    this.pos = p;
    return value;
  }

  /** A string literal (§5.2) at `pos`: H bit, 7-bit prefix length, octets (Huffman-coded if H). */
  private readString(block: Uint8Array, end: number): string {
    if (this.pos >= end) throw new HpackError("truncated header field (missing string)");
    const b = block[this.pos] as number;
    this.pos++;
    let len = b & 0x7f;
    if (len === 0x7f) len = this.readIntTail(block, end, len);
    const s = this.pos;
    if (len > end - s) throw new HpackError(`string of ${len} octets is longer than the rest of the block`);
    this.pos = s + len;
    return b >= 0x80 ? decodeHuffman(block, s, s + len) : latin1(block, s, s + len);
  }

  /** Add an entry (§4.4): evict from the oldest until it fits; one larger than the table empties it. */
  private insert(name: string, value: string): void {
    const size = name.length + value.length + ENTRY_OVERHEAD;
    if (size > this.capacity) {
      while (this.count > 0) this.evict();
      return;
    }
    while (this.used + size > this.capacity) this.evict();
    if (this.count > this.mask) this.grow();
    this.names[this.head] = name;
    this.values[this.head] = value;
    this.head = (this.head + 1) & this.mask;
    this.count++;
    this.used += size;
  }

  private evict(): void {
    const slot = (this.head - this.count) & this.mask;
    const name = this.names[slot] as string;
    const value = this.values[slot] as string;
    this.used -= name.length + value.length + ENTRY_OVERHEAD;
    // Drop the references so evicted strings can be collected.
    this.names[slot] = "";
    this.values[slot] = "";
    this.count--;
  }

  /** Double the ring (only when full), copying the entries oldest first to slots 0..count-1. */
  private grow(): void {
    const slots = (this.mask + 1) * 2;
    const names = new Array<string>(slots).fill("");
    const values = new Array<string>(slots).fill("");
    for (let i = 0; i < this.count; i++) {
      const slot = (this.head - this.count + i) & this.mask;
      names[i] = this.names[slot] as string;
      values[i] = this.values[slot] as string;
    }
    this.names = names;
    this.values = values;
    this.mask = slots - 1;
    this.head = this.count;
  }
}
