/**
 * The Huffman code of HPACK (RFC 7541 §5.2, Appendix B) and the octets-to-string step of the header
 * decoder (src/protocol/h2/hpack.ts). Decoding is a byte-at-a-time state machine (one table lookup per
 * input octet) whose entries are derived on first use from a 4-bit table built at module load.
 */

/** A malformed header block: the connection must end with COMPRESSION_ERROR (RFC 7540 §4.3). */
export class HpackError extends Error {
  override readonly name = "HpackError";
}

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
export function decodeHuffman(bytes: Uint8Array, start: number, end: number): string {
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
export function latin1(b: Uint8Array, s: number, e: number): string {
  const n = e - s;
  if (n > 16) return latin1Slice.call(b, s, e);
  let out = "";
  for (let i = s; i < e; i++) out += CHARS[b[i] as number] as string;
  return out;
}

/** Throws RangeError unless `[start, end)` lies within `bytes`. */
export function checkRange(bytes: Uint8Array, start: number, end: number): void {
  if (!(start >= 0 && start <= end && end <= bytes.length)) {
    throw new RangeError(`hpack: range [${start}, ${end}) is outside the ${bytes.length}-byte input`);
  }
}
