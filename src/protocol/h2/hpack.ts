/**
 * HPACK (RFC 7541) header block decoder for the HTTP/2 server, plus the Huffman code of Appendix B.
 *
 * Hot path: every request's HEADERS block goes through {@link HpackDecoder.decode}. It works on the
 * caller's bytes in place, keeps its cursor in a field (no result objects or closures per field), keeps
 * the dynamic table in a growable ring of two string arrays, and decodes Huffman strings with a byte-
 * at-a-time state machine (one table lookup per input octet) whose entries are derived on first use
 * from a 4-bit table built at module load.
 *
 * Header field octets are Latin-1: each octet becomes one UTF-16 code unit (0–255), and the table's
 * octet counts (RFC 7541 §4.1) are string lengths. Names are not checked for case or characters here
 * (RFC 7540 §8.1.2 is the HTTP/2 layer's job).
 */

/** A malformed header block: the connection must end with COMPRESSION_ERROR (RFC 7540 §4.3). */
export class HpackError extends Error {
  override readonly name = "HpackError";
}

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
// Huffman code (RFC 7541 Appendix B)
// ---------------------------------------------------------------------------------------------------

/**
 * Code length in bits of symbols 0..255 and EOS (256), RFC 7541 Appendix B. The code is canonical
 * (codes of equal length are consecutive in symbol order, shorter codes sort first), so the codes
 * themselves follow from the lengths; the build below checks the result is a complete prefix code and
 * that EOS is the all-ones 30-bit code, and the tests check every code against Appendix B.
 */
const CODE_LENGTHS = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28,
  28, 28, 28, 28, 28, 6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7,
  8, 15, 6, 12, 10, 13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19,
  13, 14, 6, 15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13,
  28, 20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21,
  22, 23, 22, 23, 23, 24, 22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23,
  22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, 26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
  19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, 20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25,
  25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, 30,
];

const EOS = 256;
/** Code of each symbol (right-aligned in `CODE_LENGTHS[sym]` bits). */
const CODES = new Uint32Array(257);
/** Code lengths as a typed array for the encoder. */
const LENGTHS = new Uint8Array(CODE_LENGTHS);

/**
 * Decoder state machine. A state is an internal node of the code tree (256 of them, the root is 0).
 * `DECODE[(state << 8) | octet]` is the result of feeding the octet's 8 bits from that node: bits 0–7
 * the first symbol emitted, 8–15 the next state (already in place for the next index), 16–23 the
 * second symbol (at most two fit in 8 bits, as the shortest code is 5 bits), 24–25 how many were
 * emitted, bit 26 set when EOS was met. Building all 65536 entries up front would cost several
 * milliseconds of module load, so an entry is computed from two `NIBBLE` steps the first time it is
 * used; 0 marks an entry not computed yet (no real entry is 0: 8 bits from any node either emit a
 * symbol or end below the root).
 */
const DECODE = new Uint32Array(256 * 256);
/**
 * The same for 4 bits, `NIBBLE[(state << 4) | bits]`, built at module load: bits 0–7 the next state,
 * 8–15 the symbol, bit 24 set if one was emitted (at most one), bit 26 EOS.
 */
const NIBBLE = new Uint32Array(256 * 16);
const DECODE_EOS = 1 << 26;
const ONE_SYMBOL = 1 << 24;

/** Compute and store `DECODE[index]` from the two nibbles of its octet. */
function decodeEntry(index: number): number {
  const a = NIBBLE[index >>> 4] as number; // (state << 4) | high nibble
  const b = NIBBLE[((a & 0xff) << 4) | (index & 0xf)] as number;
  const next = (b & 0xff) << 8;
  let e: number;
  if (((a | b) & DECODE_EOS) !== 0) e = DECODE_EOS;
  else if ((a & ONE_SYMBOL) === 0) e = (b & ONE_SYMBOL) | next | ((b >>> 8) & 0xff);
  else if ((b & ONE_SYMBOL) === 0) e = ONE_SYMBOL | next | ((a >>> 8) & 0xff);
  else e = (2 << 24) | ((b & 0xff00) << 8) | next | ((a >>> 8) & 0xff);
  DECODE[index] = e;
  return e;
}

/**
 * States in which a string may end: the bits since the last symbol are a prefix of EOS (all ones) no
 * longer than 7 (RFC 7541 §5.2), i.e. the root and the first 7 nodes down the all-ones path.
 */
const ACCEPT = new Uint8Array(256);

function buildHuffman(): void {
  if (LENGTHS.length !== 257) throw new Error("hpack: Huffman table must have 257 code lengths");
  // Canonical code assignment: by length, then symbol.
  const order = Array.from({ length: 257 }, (_, i) => i).sort(
    (a, b) => (LENGTHS[a] as number) - (LENGTHS[b] as number) || a - b,
  );
  let code = 0;
  let prevLen = 0;
  for (const sym of order) {
    const len = LENGTHS[sym] as number;
    code = code * 2 ** (len - prevLen);
    prevLen = len;
    CODES[sym] = code;
    code++;
  }
  if (code !== 2 ** 30 || CODES[EOS] !== 0x3fff_ffff) throw new Error("hpack: Huffman code is not complete");

  // Code tree: child slots of internal node n at 2n (bit 0) and 2n+1 (bit 1); a child is another
  // internal node (>= 0) or a leaf, -(symbol + 1). EMPTY marks a slot not yet filled.
  const EMPTY = 0x7fff;
  const child = new Int16Array(512).fill(EMPTY);
  let nodes = 1;
  for (let sym = 0; sym <= EOS; sym++) {
    const len = LENGTHS[sym] as number;
    const c = CODES[sym] as number;
    let node = 0;
    for (let i = len - 1; i >= 0; i--) {
      const slot = 2 * node + ((c >>> i) & 1);
      if (i === 0) {
        if (child[slot] !== EMPTY) throw new Error("hpack: Huffman code is not a prefix code");
        child[slot] = -(sym + 1);
      } else {
        let next = child[slot] as number;
        if (next === EMPTY) {
          if (nodes === 256) throw new Error("hpack: Huffman tree has too many nodes");
          next = nodes++;
          child[slot] = next;
        } else if (next < 0) {
          throw new Error("hpack: Huffman code is not a prefix code");
        }
        node = next;
      }
    }
  }
  if (nodes !== 256 || child.includes(EMPTY)) throw new Error("hpack: Huffman tree is not complete");

  // Feeding 4 bits from each state: at most one symbol, as no code is shorter than 5 bits.
  for (let state = 0; state < 256; state++) {
    for (let bits = 0; bits < 16; bits++) {
      let node = state;
      let out = 0;
      for (let bit = 3; bit >= 0; bit--) {
        const next = child[2 * node + ((bits >> bit) & 1)] as number;
        if (next >= 0) {
          node = next;
        } else if (next === -(EOS + 1)) {
          out = DECODE_EOS;
          break;
        } else {
          out = (1 << 24) | ((-next - 1) << 8);
          node = 0;
        }
      }
      NIBBLE[(state << 4) | bits] = out | node;
    }
  }

  let node = 0;
  ACCEPT[0] = 1;
  for (let depth = 1; depth <= 7; depth++) {
    node = child[2 * node + 1] as number;
    ACCEPT[node] = 1;
  }
}
buildHuffman();

/** Output of Huffman decoding, grown on demand up to {@link SCRATCH_MAX} octets (never shrinks). */
let scratch = new Uint8Array(1024);
/** Longer outputs get a buffer of their own, so one huge header does not pin memory for good. */
const SCRATCH_MAX = 64 * 1024;

/** Decode Huffman-coded `bytes[start..end)` (RFC 7541 §5.2, Appendix B). Throws HpackError. */
export function huffmanDecode(bytes: Uint8Array, start: number, end: number): string {
  checkRange(bytes, start, end);
  return decodeHuffman(bytes, start, end);
}

/** {@link huffmanDecode} of a range already checked. */
function decodeHuffman(bytes: Uint8Array, start: number, end: number): string {
  // At most 8/5 symbols per octet; +1 for the second symbol slot written past the last one.
  const need = 2 * (end - start) + 2;
  let out = scratch;
  if (out.length < need) {
    out = new Uint8Array(need <= SCRATCH_MAX ? Math.min(Math.max(need, 2 * out.length), SCRATCH_MAX) : need);
    if (need <= SCRATCH_MAX) scratch = out;
  }
  let o = 0;
  let e = 0; // entry of the last octet; bits 8-15 hold the state (0: the root)
  let flags = 0;
  for (let i = start; i < end; i++) {
    const index = (e & 0xff00) | (bytes[i] as number);
    e = DECODE[index] as number;
    if (e === 0) e = decodeEntry(index);
    // Both symbol slots are written (a Uint8Array store keeps the low 8 bits); the count says how many
    // are real. EOS is checked once at the end: the entry that met it leads back to the root, so the
    // loop goes on harmlessly.
    out[o] = e;
    out[o + 1] = e >>> 16;
    o += (e >>> 24) & 3;
    flags |= e;
  }
  if ((flags & DECODE_EOS) !== 0) throw new HpackError("EOS symbol in a Huffman-coded string");
  if (ACCEPT[(e >>> 8) & 0xff] === 0) {
    throw new HpackError("invalid Huffman padding (more than 7 bits, or not a prefix of EOS)");
  }
  return latin1(out, 0, o);
}

/** Huffman-encode a string (Latin-1/ASCII octets) — used by tests and maybe by an encoder. */
export function huffmanEncode(s: string): Uint8Array {
  let bits = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 0xff) throw new RangeError(`huffmanEncode: character ${c} at ${i} is not a Latin-1 octet`);
    bits += LENGTHS[c] as number;
  }
  const out = new Uint8Array(Math.ceil(bits / 8));
  let acc = 0; // pending bits, right-aligned; fewer than 8 between steps, so `acc` stays within 23 bits
  let n = 0;
  let o = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const len = LENGTHS[c] as number;
    const code = CODES[c] as number;
    if (len > 16) {
      // The high `len - 16` bits first.
      acc = (acc << (len - 16)) | (code >>> 16);
      n += len - 16;
      while (n >= 8) {
        n -= 8;
        out[o++] = acc >>> n;
      }
      acc &= (1 << n) - 1;
    }
    const low = len > 16 ? 16 : len;
    acc = (acc << low) | (code & ((1 << low) - 1));
    n += low;
    while (n >= 8) {
      n -= 8;
      out[o++] = acc >>> n;
    }
    acc &= (1 << n) - 1;
  }
  // Pad with the most significant bits of EOS (all ones).
  if (n > 0) out[o] = (acc << (8 - n)) | (0xff >>> n);
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Octets to string
// ---------------------------------------------------------------------------------------------------

type Latin1Slice = (this: Uint8Array, start: number, end: number) => string;
const nativeLatin1Slice = (Buffer.prototype as unknown as { latin1Slice?: Latin1Slice }).latin1Slice;
const latin1Slice: Latin1Slice =
  typeof nativeLatin1Slice === "function"
    ? nativeLatin1Slice
    : function (this: Uint8Array, start: number, end: number): string {
        return Buffer.from(this.buffer, this.byteOffset, this.byteLength).toString("latin1", start, end);
      };

/** One-character strings of every octet. */
const CHARS: string[] = Array.from({ length: 256 }, (_, c) => String.fromCharCode(c));

/**
 * Octets `b[s..e)` as a Latin-1 string. Up to 16 octets are joined from a table of one-character
 * strings (cheaper than a native call for the short names and values of a request); longer ones use
 * Buffer's native latin1Slice, which works on any Uint8Array but costs some 45 ns of call overhead.
 */
function latin1(b: Uint8Array, s: number, e: number): string {
  const n = e - s;
  if (n > 16) return latin1Slice.call(b, s, e);
  let out = "";
  for (let i = s; i < e; i++) out += CHARS[b[i] as number] as string;
  return out;
}

function checkRange(bytes: Uint8Array, start: number, end: number): void {
  if (!(start >= 0 && start <= end && end <= bytes.length)) {
    throw new RangeError(`hpack: range [${start}, ${end}) is outside the ${bytes.length}-byte input`);
  }
}

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
   */
  decode(block: Uint8Array, start: number, end: number, emit: (name: string, value: string) => void): void {
    checkRange(block, start, end);
    let fields = false;
    this.pos = start;
    while (this.pos < end) {
      const b = block[this.pos] as number;
      this.pos++;
      if (b >= 0x80) {
        // Indexed field (§6.1): 1xxxxxxx, 7-bit index.
        let index = b & 0x7f;
        if (index === 0x7f) index = this.readIntTail(block, end, index);
        fields = true;
        if (index <= STATIC_COUNT) {
          if (index === 0) throw new HpackError("indexed field with index 0");
          emit(STATIC_NAMES[index] as string, STATIC_VALUES[index] as string);
        } else {
          const k = index - STATIC_COUNT - 1;
          if (k >= this.count) throw new HpackError(`index ${index} is past the end of the table`);
          const slot = (this.head - 1 - k) & this.mask;
          emit(this.names[slot] as string, this.values[slot] as string);
        }
      } else if (b >= 0x40) {
        // Literal with incremental indexing (§6.2.1): 01xxxxxx, 6-bit name index.
        let index = b & 0x3f;
        if (index === 0x3f) index = this.readIntTail(block, end, index);
        const name = index === 0 ? this.readString(block, end) : this.nameAt(index);
        const value = this.readString(block, end);
        fields = true;
        this.insert(name, value);
        emit(name, value);
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
      } else {
        // Literal without indexing (0000xxxx, §6.2.2) or never indexed (0001xxxx, §6.2.3): 4-bit index.
        let index = b & 0x0f;
        if (index === 0x0f) index = this.readIntTail(block, end, index);
        const name = index === 0 ? this.readString(block, end) : this.nameAt(index);
        const value = this.readString(block, end);
        fields = true;
        emit(name, value);
      }
    }
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
