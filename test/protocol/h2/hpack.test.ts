/**
 * HPACK decoder (RFC 7541): the Appendix C examples, the Appendix B Huffman code symbol by symbol,
 * malformed input, a long run of requests from an independent table-tracking encoder, and header
 * blocks written by Node's own HTTP/2 client (nghttp2's encoder).
 */
import { connect, sensitiveHeaders } from "node:http2";
import { type AddressInfo, createServer, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import {
  HpackDecoder,
  HpackError,
  huffmanDecode,
  huffmanEncode,
  STATIC_TABLE,
} from "../../../src/protocol/h2/hpack.js";
import { Prng } from "../../fuzz/prng.js";

type Field = readonly [name: string, value: string];

/** Bytes of a hex dump as printed in RFC 7541 (whitespace ignored). */
function hex(text: string): Uint8Array {
  const digits = text.replace(/\s+/g, "");
  return Uint8Array.from(Buffer.from(digits, "hex"));
}

function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

function decodeAll(decoder: HpackDecoder, block: Uint8Array, start = 0, end = block.length): Field[] {
  const fields: Field[] = [];
  decoder.decode(block, start, end, (name, value) => {
    fields.push([name, value]);
  });
  return fields;
}

/**
 * The dynamic table, newest first, read through indexed representations 62, 63, ... until one is past
 * the end (which must be an HpackError). Indexed fields do not change the table.
 */
function dynamicTable(decoder: HpackDecoder): Field[] {
  const entries: Field[] = [];
  for (let index = 62; index < 10_000; index++) {
    const block: number[] = [];
    pushInt(block, index, 7, 0x80);
    try {
      entries.push(...decodeAll(decoder, Uint8Array.from(block)));
    } catch (err) {
      expect(err).toBeInstanceOf(HpackError);
      expect((err as Error).message).toMatch(/past the end/);
      return entries;
    }
  }
  throw new Error("dynamic table has no end");
}

function expectHpackError(fn: () => unknown, message?: RegExp): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(HpackError);
  if (message) expect((caught as Error).message).toMatch(message);
}

/** HPACK integer (§5.1) with an `n`-bit prefix under the high bits `mask`, appended to `out`. */
function pushInt(out: number[], value: number, n: number, mask: number): void {
  const max = (1 << n) - 1;
  if (value < max) {
    out.push(mask | value);
    return;
  }
  out.push(mask | max);
  let rest = value - max;
  while (rest >= 128) {
    out.push((rest % 128) | 0x80);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
}

/** String literal (§5.2), Huffman-coded when that is shorter. */
function pushString(out: number[], s: string, huffman: boolean): void {
  if (huffman) {
    const coded = huffmanEncode(s);
    pushInt(out, coded.length, 7, 0x80);
    out.push(...coded);
  } else {
    pushInt(out, s.length, 7, 0);
    for (let i = 0; i < s.length; i++) out.push(s.charCodeAt(i));
  }
}

/** Deterministic PRNG (mulberry32, the fuzz suite's) so failures reproduce. */
function prng(seed: number): () => number {
  const p = new Prng(seed);
  return () => p.next();
}

/**
 * A minimal HPACK encoder for the tests, written against the RFC independently of the decoder: it
 * models the dynamic table (newest first) and picks indexed, literal-with-indexing, without-indexing
 * or never-indexed representations, raw or Huffman strings, pseudo-randomly.
 */
class ModelEncoder {
  /** Newest first. */
  readonly entries: Field[] = [];
  size = 0;
  /** Fields sent as an index into the dynamic table. */
  dynamicHits = 0;
  private max: number;
  private readonly updates: number[] = [];

  constructor(max: number) {
    this.max = max;
  }

  setMaxSize(max: number): void {
    this.max = max;
    this.evictTo(max);
    this.updates.push(max);
  }

  encode(fields: readonly Field[], rand: () => number): Uint8Array {
    const out: number[] = [];
    for (const size of this.updates.splice(0)) pushInt(out, size, 5, 0x20);
    for (const [name, value] of fields) {
      const exact = this.find(name, value);
      if (exact > 0) {
        if (exact > 61) this.dynamicHits++;
        pushInt(out, exact, 7, 0x80);
        continue;
      }
      const nameIndex = this.find(name, undefined);
      const kind =
        name === "authorization" ? "never" : name === "x-big" || rand() < 0.8 ? "incremental" : "without";
      if (kind === "incremental") pushInt(out, nameIndex, 6, 0x40);
      else pushInt(out, nameIndex, 4, kind === "never" ? 0x10 : 0x00);
      if (nameIndex === 0) this.pushString(out, name, rand);
      this.pushString(out, value, rand);
      if (kind === "incremental") this.add(name, value);
    }
    return Uint8Array.from(out);
  }

  private pushString(out: number[], s: string, rand: () => number): void {
    pushString(out, s, rand() < 0.7 && huffmanEncode(s).length < s.length);
  }

  /** Index of the entry with this name and value (or just this name), 0 if none. */
  private find(name: string, value: string | undefined): number {
    const match = ([n, v]: Field) => n === name && (value === undefined || v === value);
    const s = STATIC_TABLE.findIndex(match);
    if (s >= 0) return s + 1;
    const d = this.entries.findIndex(match);
    return d >= 0 ? 62 + d : 0;
  }

  private add(name: string, value: string): void {
    const size = name.length + value.length + 32;
    if (size > this.max) {
      this.evictTo(0);
      return;
    }
    this.evictTo(this.max - size);
    this.entries.unshift([name, value]);
    this.size += size;
  }

  private evictTo(limit: number): void {
    while (this.size > limit) {
      const [name, value] = this.entries.pop() as Field;
      this.size -= name.length + value.length + 32;
    }
  }
}

/** RFC 7541 Appendix B: code of each symbol 0..255 and EOS, right-aligned, and its length in bits. */
const RFC_CODES = [
  0x1ff8, 0x7fffd8, 0xfffffe2, 0xfffffe3, 0xfffffe4, 0xfffffe5, 0xfffffe6, 0xfffffe7, 0xfffffe8, 0xffffea,
  0x3ffffffc, 0xfffffe9, 0xfffffea, 0x3ffffffd, 0xfffffeb, 0xfffffec, 0xfffffed, 0xfffffee, 0xfffffef,
  0xffffff0, 0xffffff1, 0xffffff2, 0x3ffffffe, 0xffffff3, 0xffffff4, 0xffffff5, 0xffffff6, 0xffffff7,
  0xffffff8, 0xffffff9, 0xffffffa, 0xffffffb, 0x14, 0x3f8, 0x3f9, 0xffa, 0x1ff9, 0x15, 0xf8, 0x7fa, 0x3fa,
  0x3fb, 0xf9, 0x7fb, 0xfa, 0x16, 0x17, 0x18, 0x0, 0x1, 0x2, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x5c,
  0xfb, 0x7ffc, 0x20, 0xffb, 0x3fc, 0x1ffa, 0x21, 0x5d, 0x5e, 0x5f, 0x60, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66,
  0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f, 0x70, 0x71, 0x72, 0xfc, 0x73, 0xfd, 0x1ffb, 0x7fff0,
  0x1ffc, 0x3ffc, 0x22, 0x7ffd, 0x3, 0x23, 0x4, 0x24, 0x5, 0x25, 0x26, 0x27, 0x6, 0x74, 0x75, 0x28, 0x29,
  0x2a, 0x7, 0x2b, 0x76, 0x2c, 0x8, 0x9, 0x2d, 0x77, 0x78, 0x79, 0x7a, 0x7b, 0x7ffe, 0x7fc, 0x3ffd, 0x1ffd,
  0xffffffc, 0xfffe6, 0x3fffd2, 0xfffe7, 0xfffe8, 0x3fffd3, 0x3fffd4, 0x3fffd5, 0x7fffd9, 0x3fffd6, 0x7fffda,
  0x7fffdb, 0x7fffdc, 0x7fffdd, 0x7fffde, 0xffffeb, 0x7fffdf, 0xffffec, 0xffffed, 0x3fffd7, 0x7fffe0,
  0xffffee, 0x7fffe1, 0x7fffe2, 0x7fffe3, 0x7fffe4, 0x1fffdc, 0x3fffd8, 0x7fffe5, 0x3fffd9, 0x7fffe6,
  0x7fffe7, 0xffffef, 0x3fffda, 0x1fffdd, 0xfffe9, 0x3fffdb, 0x3fffdc, 0x7fffe8, 0x7fffe9, 0x1fffde, 0x7fffea,
  0x3fffdd, 0x3fffde, 0xfffff0, 0x1fffdf, 0x3fffdf, 0x7fffeb, 0x7fffec, 0x1fffe0, 0x1fffe1, 0x3fffe0,
  0x1fffe2, 0x7fffed, 0x3fffe1, 0x7fffee, 0x7fffef, 0xfffea, 0x3fffe2, 0x3fffe3, 0x3fffe4, 0x7ffff0, 0x3fffe5,
  0x3fffe6, 0x7ffff1, 0x3ffffe0, 0x3ffffe1, 0xfffeb, 0x7fff1, 0x3fffe7, 0x7ffff2, 0x3fffe8, 0x1ffffec,
  0x3ffffe2, 0x3ffffe3, 0x3ffffe4, 0x7ffffde, 0x7ffffdf, 0x3ffffe5, 0xfffff1, 0x1ffffed, 0x7fff2, 0x1fffe3,
  0x3ffffe6, 0x7ffffe0, 0x7ffffe1, 0x3ffffe7, 0x7ffffe2, 0xfffff2, 0x1fffe4, 0x1fffe5, 0x3ffffe8, 0x3ffffe9,
  0xffffffd, 0x7ffffe3, 0x7ffffe4, 0x7ffffe5, 0xfffec, 0xfffff3, 0xfffed, 0x1fffe6, 0x3fffe9, 0x1fffe7,
  0x1fffe8, 0x7ffff3, 0x3fffea, 0x3fffeb, 0x1ffffee, 0x1ffffef, 0xfffff4, 0xfffff5, 0x3ffffea, 0x7ffff4,
  0x3ffffeb, 0x7ffffe6, 0x3ffffec, 0x3ffffed, 0x7ffffe7, 0x7ffffe8, 0x7ffffe9, 0x7ffffea, 0x7ffffeb,
  0xffffffe, 0x7ffffec, 0x7ffffed, 0x7ffffee, 0x7ffffef, 0x7fffff0, 0x3ffffee, 0x3fffffff,
];
const RFC_LENGTHS = [
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
/** RFC 7541 Appendix A, index 1..61. */
const RFC_STATIC: readonly Field[] = [
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
];

/** Huffman code of one symbol padded with ones to whole octets, from the RFC table. */
function rfcSymbolBytes(sym: number): number[] {
  const code = RFC_CODES[sym] as number;
  const bits = RFC_LENGTHS[sym] as number;
  const octets = Math.ceil(bits / 8);
  const pad = octets * 8 - bits;
  const value = code * 2 ** pad + (2 ** pad - 1);
  const out: number[] = [];
  for (let i = octets - 1; i >= 0; i--) out.push(Math.floor(value / 2 ** (8 * i)) % 256);
  return out;
}

/** Reference Huffman encoder straight from the RFC table, bit by bit. */
function rfcHuffman(s: string): number[] {
  const bits: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const sym = s.charCodeAt(i);
    const code = RFC_CODES[sym] as number;
    const len = RFC_LENGTHS[sym] as number;
    for (let b = len - 1; b >= 0; b--) bits.push(Math.floor(code / 2 ** b) % 2);
  }
  while (bits.length % 8 !== 0) bits.push(1);
  const out: number[] = [];
  for (let i = 0; i < bits.length; i += 8) {
    let octet = 0;
    for (let b = 0; b < 8; b++) octet = octet * 2 + (bits[i + b] as number);
    out.push(octet);
  }
  return out;
}

describe("STATIC_TABLE", () => {
  it("is RFC 7541 Appendix A with entry 0 omitted (STATIC_TABLE[i - 1] is index i)", () => {
    expect(STATIC_TABLE.length).toBe(61);
    expect(STATIC_TABLE.map(([name, value]) => [name, value])).toEqual(RFC_STATIC);
    expect(STATIC_TABLE[0]).toEqual([":authority", ""]);
    expect(STATIC_TABLE[60]).toEqual(["www-authenticate", ""]);
  });

  it("decodes every indexed static entry 1..61", () => {
    const decoder = new HpackDecoder();
    const block = Uint8Array.from({ length: 61 }, (_, i) => 0x80 | (i + 1));
    expect(decodeAll(decoder, block)).toEqual(RFC_STATIC);
    expect(decoder.size).toBe(0);
  });
});

describe("huffmanEncode / huffmanDecode (RFC 7541 Appendix B)", () => {
  it("encodes every symbol 0..255 to its Appendix B code padded with ones, and decodes it back", () => {
    for (let sym = 0; sym < 256; sym++) {
      const char = String.fromCharCode(sym);
      const expected = rfcSymbolBytes(sym);
      expect([sym, Array.from(huffmanEncode(char))]).toEqual([sym, expected]);
      expect([sym, huffmanDecode(Uint8Array.from(expected), 0, expected.length)]).toEqual([sym, char]);
    }
  });

  it("round-trips all 256 octets in one string (codes across octet boundaries)", () => {
    let all = "";
    for (let sym = 0; sym < 256; sym++) all += String.fromCharCode(sym);
    const reversed = all.split("").reverse().join("");
    for (const s of [all, reversed]) {
      const coded = huffmanEncode(s);
      expect(Array.from(coded)).toEqual(rfcHuffman(s));
      expect(huffmanDecode(coded, 0, coded.length)).toBe(s);
    }
  });

  it("round-trips random strings and matches a bit-by-bit reference encoder", () => {
    const rand = prng(7541);
    for (let n = 0; n < 500; n++) {
      const length = Math.floor(rand() * 80);
      const ascii = rand() < 0.5;
      let s = "";
      for (let i = 0; i < length; i++) {
        s += String.fromCharCode(ascii ? 0x20 + Math.floor(rand() * 95) : Math.floor(rand() * 256));
      }
      const coded = huffmanEncode(s);
      expect(Array.from(coded)).toEqual(rfcHuffman(s));
      // Decode from inside a larger buffer: start and end are honored.
      const framed = Uint8Array.from([0xaa, 0x55, ...coded, 0x00, 0xff]);
      expect(huffmanDecode(framed, 2, 2 + coded.length)).toBe(s);
    }
  });

  it("matches the Huffman-coded literals of RFC 7541 C.4 and C.6", () => {
    const vectors: [string, string][] = [
      ["www.example.com", "f1e3 c2e5 f23a 6ba0 ab90 f4ff"],
      ["no-cache", "a8eb 1064 9cbf"],
      ["custom-key", "25a8 49e9 5ba9 7d7f"],
      ["custom-value", "25a8 49e9 5bb8 e8b4 bf"],
      ["302", "6402"],
      ["307", "640e ff"],
      ["private", "aec3 771a 4b"],
      ["Mon, 21 Oct 2013 20:13:21 GMT", "d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff"],
      ["https://www.example.com", "9d29 ad17 1863 c78f 0b97 c8e9 ae82 ae43 d3"],
      ["gzip", "9bd9 ab"],
      [
        "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1",
        "94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07",
      ],
    ];
    expect(toHex(huffmanEncode("www.example.com"))).toBe("f1e3c2e5f23a6ba0ab90f4ff");
    for (const [text, coded] of vectors) {
      const bytes = hex(coded);
      expect(toHex(huffmanEncode(text))).toBe(toHex(bytes));
      expect(huffmanDecode(bytes, 0, bytes.length)).toBe(text);
    }
  });

  it("decodes the empty string", () => {
    expect(huffmanEncode("").length).toBe(0);
    expect(huffmanDecode(new Uint8Array(4), 2, 2)).toBe("");
  });

  it("accepts padding of 1..7 one bits", () => {
    // "0" is 00000 (5 bits) + 111; "00" is 10 bits + 111111; "a" (00011) + 111.
    expect(huffmanDecode(Uint8Array.of(0x07), 0, 1)).toBe("0");
    expect(huffmanDecode(Uint8Array.of(0x00, 0x3f), 0, 2)).toBe("00");
    expect(huffmanDecode(Uint8Array.of(0x1f), 0, 1)).toBe("a");
    // "aaa" is exactly 15 bits: one bit of padding.
    expect(Array.from(huffmanEncode("aaa"))).toEqual([0x18, 0xc7]);
    expect(huffmanDecode(Uint8Array.of(0x18, 0xc7), 0, 2)).toBe("aaa");
    // "00000000" is exactly 40 bits: no padding at all.
    expect(Array.from(huffmanEncode("00000000"))).toEqual([0, 0, 0, 0, 0]);
    expect(huffmanDecode(new Uint8Array(5), 0, 5)).toBe("00000000");
  });

  it("rejects padding longer than 7 bits", () => {
    expectHpackError(() => huffmanDecode(Uint8Array.of(0xff), 0, 1), /padding/); // 8 bits, no symbol
    expectHpackError(() => huffmanDecode(Uint8Array.of(0x1f, 0xff), 0, 2), /padding/); // "a" + 11 bits
    expectHpackError(() => huffmanDecode(Uint8Array.of(0x1f, 0xff, 0xff, 0xff), 0, 4), /padding/);
  });

  it("rejects padding that is not all ones", () => {
    expectHpackError(() => huffmanDecode(Uint8Array.of(0x00), 0, 1), /padding/); // "0" + 000
    expectHpackError(() => huffmanDecode(Uint8Array.of(0x1e), 0, 1), /padding/); // "a" + 110
    expectHpackError(() => huffmanDecode(Uint8Array.of(0x1d), 0, 1), /padding/); // "a" + 101
    // Ends inside a code: "a" (00011) then 010 left over.
    expectHpackError(() => huffmanDecode(Uint8Array.of(0x1a), 0, 1), /padding/);
    // "a", "a", "0" (00000), then a single 0 bit left over.
    expectHpackError(() => huffmanDecode(Uint8Array.of(0x18, 0xc0), 0, 2), /padding/);
  });

  it("rejects the EOS symbol inside a string", () => {
    // EOS (30 ones) + 2 bits of padding.
    expectHpackError(() => huffmanDecode(Uint8Array.of(0xff, 0xff, 0xff, 0xff), 0, 4), /EOS/);
    // "a" (00011), EOS, then more symbols: 00011 + 30 ones + 00011 ("a") + 11.
    const bits = `00011${"1".repeat(30)}0001111`;
    const bytes = Uint8Array.from({ length: bits.length / 8 }, (_, i) =>
      parseInt(bits.slice(8 * i, 8 * i + 8), 2),
    );
    expectHpackError(() => huffmanDecode(bytes, 0, bytes.length), /EOS/);
  });

  it("checks its range and its input characters", () => {
    expect(() => huffmanDecode(Uint8Array.of(0x1f), 0, 2)).toThrow(RangeError);
    expect(() => huffmanDecode(Uint8Array.of(0x1f), -1, 1)).toThrow(RangeError);
    expect(() => huffmanDecode(Uint8Array.of(0x1f), 1, 0)).toThrow(RangeError);
    expect(() => huffmanEncode("caf\u00e9 \u20ac")).toThrow(RangeError);
    const coded = huffmanEncode("caf\u00e9");
    expect(huffmanDecode(coded, 0, coded.length)).toBe("caf\u00e9");
  });
});

describe("HpackDecoder: RFC 7541 C.2 (header field representations)", () => {
  it("C.2.1 literal with indexing", () => {
    const decoder = new HpackDecoder();
    const block = hex("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572");
    expect(decodeAll(decoder, block)).toEqual([["custom-key", "custom-header"]]);
    expect(decoder.size).toBe(55);
    expect(dynamicTable(decoder)).toEqual([["custom-key", "custom-header"]]);
  });

  it("C.2.2 literal without indexing", () => {
    const decoder = new HpackDecoder();
    expect(decodeAll(decoder, hex("040c 2f73 616d 706c 652f 7061 7468"))).toEqual([
      [":path", "/sample/path"],
    ]);
    expect(decoder.size).toBe(0);
    expect(dynamicTable(decoder)).toEqual([]);
  });

  it("C.2.3 literal never indexed", () => {
    const decoder = new HpackDecoder();
    expect(decodeAll(decoder, hex("1008 7061 7373 776f 7264 0673 6563 7265 74"))).toEqual([
      ["password", "secret"],
    ]);
    expect(decoder.size).toBe(0);
    expect(dynamicTable(decoder)).toEqual([]);
  });

  it("C.2.4 indexed", () => {
    const decoder = new HpackDecoder();
    expect(decodeAll(decoder, hex("82"))).toEqual([[":method", "GET"]]);
    expect(decoder.size).toBe(0);
  });
});

interface Step {
  block: string;
  fields: Field[];
  table: Field[];
  size: number;
}

function runSteps(maxTableSize: number, steps: Step[]): void {
  const decoder = new HpackDecoder(maxTableSize);
  for (const [i, step] of steps.entries()) {
    const block = hex(step.block);
    expect([i, decodeAll(decoder, block)]).toEqual([i, step.fields]);
    expect([i, decoder.size]).toEqual([i, step.size]);
    expect([i, dynamicTable(decoder)]).toEqual([i, step.table]);
  }
}

const REQ1: Field[] = [
  [":method", "GET"],
  [":scheme", "http"],
  [":path", "/"],
  [":authority", "www.example.com"],
];
const REQ2: Field[] = [...REQ1, ["cache-control", "no-cache"]];
const REQ3: Field[] = [
  [":method", "GET"],
  [":scheme", "https"],
  [":path", "/index.html"],
  [":authority", "www.example.com"],
  ["custom-key", "custom-value"],
];
const REQ_TABLES: Field[][] = [
  [[":authority", "www.example.com"]],
  [
    ["cache-control", "no-cache"],
    [":authority", "www.example.com"],
  ],
  [
    ["custom-key", "custom-value"],
    ["cache-control", "no-cache"],
    [":authority", "www.example.com"],
  ],
];

const DATE1 = "Mon, 21 Oct 2013 20:13:21 GMT";
const DATE2 = "Mon, 21 Oct 2013 20:13:22 GMT";
const COOKIE = "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1";
const RESP1: Field[] = [
  [":status", "302"],
  ["cache-control", "private"],
  ["date", DATE1],
  ["location", "https://www.example.com"],
];
const RESP2: Field[] = [
  [":status", "307"],
  ["cache-control", "private"],
  ["date", DATE1],
  ["location", "https://www.example.com"],
];
const RESP3: Field[] = [
  [":status", "200"],
  ["cache-control", "private"],
  ["date", DATE2],
  ["location", "https://www.example.com"],
  ["content-encoding", "gzip"],
  ["set-cookie", COOKIE],
];
const RESP_TABLES: Field[][] = [
  [
    ["location", "https://www.example.com"],
    ["date", DATE1],
    ["cache-control", "private"],
    [":status", "302"],
  ],
  [
    [":status", "307"],
    ["location", "https://www.example.com"],
    ["date", DATE1],
    ["cache-control", "private"],
  ],
  [
    ["set-cookie", COOKIE],
    ["content-encoding", "gzip"],
    ["date", DATE2],
  ],
];

describe("HpackDecoder: RFC 7541 C.3-C.6 (one decoder per connection)", () => {
  it("C.3 requests without Huffman coding", () => {
    runSteps(4096, [
      {
        block: "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
        fields: REQ1,
        table: REQ_TABLES[0] as Field[],
        size: 57,
      },
      {
        block: "8286 84be 5808 6e6f 2d63 6163 6865",
        fields: REQ2,
        table: REQ_TABLES[1] as Field[],
        size: 110,
      },
      {
        block: "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65",
        fields: REQ3,
        table: REQ_TABLES[2] as Field[],
        size: 164,
      },
    ]);
  });

  it("C.4 requests with Huffman coding", () => {
    runSteps(4096, [
      {
        block: "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff",
        fields: REQ1,
        table: REQ_TABLES[0] as Field[],
        size: 57,
      },
      { block: "8286 84be 5886 a8eb 1064 9cbf", fields: REQ2, table: REQ_TABLES[1] as Field[], size: 110 },
      {
        block: "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf",
        fields: REQ3,
        table: REQ_TABLES[2] as Field[],
        size: 164,
      },
    ]);
  });

  it("C.5 responses without Huffman coding, 256-octet table (evictions)", () => {
    runSteps(256, [
      {
        block: `4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133
                2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70
                6c65 2e63 6f6d`,
        fields: RESP1,
        table: RESP_TABLES[0] as Field[],
        size: 222,
      },
      { block: "4803 3330 37c1 c0bf", fields: RESP2, table: RESP_TABLES[1] as Field[], size: 222 },
      {
        block: `88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d
                54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049
                5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e
                3d31`,
        fields: RESP3,
        table: RESP_TABLES[2] as Field[],
        size: 215,
      },
    ]);
  });

  it("C.6 responses with Huffman coding, 256-octet table (evictions)", () => {
    runSteps(256, [
      {
        block: `4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6
                2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3`,
        fields: RESP1,
        table: RESP_TABLES[0] as Field[],
        size: 222,
      },
      { block: "4883 640e ffc1 c0bf", fields: RESP2, table: RESP_TABLES[1] as Field[], size: 222 },
      {
        block: `88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab
                77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f
                9587 3160 65c0 03ed 4ee5 b106 3d50 07`,
        fields: RESP3,
        table: RESP_TABLES[2] as Field[],
        size: 215,
      },
    ]);
  });

  it("decodes block[start..end) of a larger buffer", () => {
    const decoder = new HpackDecoder();
    const block = hex("ffff 8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff 82");
    expect(decodeAll(decoder, block, 2, block.length - 1)).toEqual(REQ1);
    expect(decoder.size).toBe(57);
    // An empty range is an empty header block.
    expect(decodeAll(decoder, block, 3, 3)).toEqual([]);
  });
});

describe("HpackDecoder: dynamic table", () => {
  it("evicts on a size update and accepts several updates at the start of a block", () => {
    const decoder = new HpackDecoder();
    for (const block of [
      "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
      "8286 84be 5808 6e6f 2d63 6163 6865",
    ]) {
      decodeAll(decoder, hex(block));
    }
    decodeAll(decoder, hex("8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65"));
    expect(decoder.size).toBe(164);
    // Size update to 1337 (RFC 7541 C.1.2: 1f 9a 0a with a 5-bit prefix): nothing to evict.
    expect(decodeAll(decoder, hex("3f9a 0a 82"))).toEqual([[":method", "GET"]]);
    expect(decoder.size).toBe(164);
    // 110 (3f 4f): the oldest entry, :authority (57), goes.
    expect(decodeAll(decoder, hex("3f4f"))).toEqual([]);
    expect(decoder.size).toBe(107);
    expect(dynamicTable(decoder)).toEqual([
      ["custom-key", "custom-value"],
      ["cache-control", "no-cache"],
    ]);
    // 0 empties the table; then back to 4096 (3f e1 1f) in the same block, then a new entry.
    expect(decodeAll(decoder, hex("20 3fe1 1f 4081 f382 94e7"))).toEqual([["x", "foo"]]);
    expect(dynamicTable(decoder)).toEqual([["x", "foo"]]);
    expect(decoder.size).toBe(36);
    // The new maximum binds later insertions: 0 again, then an entry is dropped on insertion.
    expect(decodeAll(decoder, hex("20 4081 f382 94e7"))).toEqual([["x", "foo"]]);
    expect(decoder.size).toBe(0);
    expect(dynamicTable(decoder)).toEqual([]);
  });

  it("empties the table for an entry larger than it and does not add it (§4.4)", () => {
    const decoder = new HpackDecoder(256);
    decodeAll(
      decoder,
      hex(
        "4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
      ),
    );
    expect(decoder.size).toBe(222);
    const big = "v".repeat(256 - 32 - 4 + 1); // name "x-id" + this + 32 = 257 octets
    const block: number[] = [0x40];
    pushString(block, "x-id", false);
    pushString(block, big, true);
    expect(decodeAll(decoder, Uint8Array.from(block))).toEqual([["x-id", big]]);
    expect(decoder.size).toBe(0);
    expect(dynamicTable(decoder)).toEqual([]);
    // Exactly 256 octets fits.
    const fits = big.slice(1);
    const block2: number[] = [0x40];
    pushString(block2, "x-id", true);
    pushString(block2, fits, false);
    expect(decodeAll(decoder, Uint8Array.from(block2))).toEqual([["x-id", fits]]);
    expect(decoder.size).toBe(256);
    expect(dynamicTable(decoder)).toEqual([["x-id", fits]]);
  });

  it("adds an entry whose name refers to the entry its insertion evicts (§4.4)", () => {
    const decoder = new HpackDecoder(256);
    decodeAll(
      decoder,
      hex(
        "4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
      ),
    );
    // Table: location (63), date (65), cache-control (52), :status 302 (42) = 222. Index 65 is
    // :status 302, the oldest; adding :status 307 (42) must evict it first.
    expect(decodeAll(decoder, hex("7f02 0333 3037"))).toEqual([[":status", "307"]]);
    expect(decoder.size).toBe(222);
    expect(dynamicTable(decoder)).toEqual(RESP_TABLES[1]);
  });

  it("keeps the table across 1000 requests from an independent encoder (reuse, eviction, size updates)", () => {
    const rand = prng(2024);
    const encoder = new ModelEncoder(4096);
    const decoder = new HpackDecoder(4096);
    const paths = [
      "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit",
      "/envoy.service.auth.v3.Authorization/Check",
      "/grpc.health.v1.Health/Check",
    ];
    for (let i = 0; i < 1000; i++) {
      if (i === 300) encoder.setMaxSize(1024);
      if (i === 600) encoder.setMaxSize(0);
      if (i === 601) encoder.setMaxSize(4096);
      const fields: Field[] = [
        [":method", "POST"],
        [":scheme", "http"],
        [":path", paths[Math.floor(rand() * paths.length)] as string],
        [":authority", "127.0.0.1:8081"],
        ["content-type", "application/grpc"],
        ["te", "trailers"],
        ["grpc-timeout", `${1 + Math.floor(rand() * 20)}m`],
        ["user-agent", "grpc-node-js/1.14.7"],
        ["x-request-id", Math.floor(rand() * 2 ** 48).toString(16)],
      ];
      if (rand() < 0.2) fields.push(["authorization", `Bearer ${Math.floor(rand() * 1e9)}`]);
      if (rand() < 0.1) fields.push(["x-latin1", "caf\u00e9 \u00ff\u0080"]);
      if (i % 97 === 0) fields.push(["x-big", "b".repeat(4100)]);
      const block = encoder.encode(fields, rand);
      expect([i, decodeAll(decoder, block)]).toEqual([i, fields]);
      expect([i, decoder.size]).toEqual([i, encoder.size]);
    }
    expect(dynamicTable(decoder)).toEqual(encoder.entries);
    // The table was actually reused: most fields went as one-octet dynamic indexes.
    expect(encoder.dynamicHits).toBeGreaterThan(3000);
  });
});

describe("HpackDecoder: a table larger than the default", () => {
  it("grows its ring past 128 entries and keeps order across wrap-around and evictions", () => {
    const rand = prng(65536);
    const encoder = new ModelEncoder(65_536);
    const decoder = new HpackDecoder(65_536);
    let n = 0;
    for (let round = 0; round < 40; round++) {
      if (round === 20) encoder.setMaxSize(3000);
      if (round === 25) encoder.setMaxSize(65_536);
      const fields: Field[] = [];
      for (let i = 0; i < 60; i++) {
        // Mostly new entries; some repeats of recent ones, sent as dynamic indexes.
        const k = rand() < 0.2 && n > 10 ? n - 1 - Math.floor(rand() * 10) : n++;
        fields.push([`x-${k % 7}`, `value-${k}`]);
      }
      const block = encoder.encode(fields, rand);
      expect([round, decodeAll(decoder, block)]).toEqual([round, fields]);
      expect([round, decoder.size]).toEqual([round, encoder.size]);
      expect([round, dynamicTable(decoder)]).toEqual([round, encoder.entries]);
    }
    expect(encoder.entries.length).toBeGreaterThan(500);
    expect(encoder.dynamicHits).toBeGreaterThan(100);
  });
});

describe("HpackDecoder: malformed blocks throw HpackError", () => {
  it("index 0", () => {
    expectHpackError(() => decodeAll(new HpackDecoder(), hex("80")), /index 0/);
  });

  it("an index past the table", () => {
    expectHpackError(() => decodeAll(new HpackDecoder(), hex("be")), /index 62 is past the end/);
    const decoder = new HpackDecoder();
    decodeAll(decoder, hex("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572"));
    expect(decodeAll(decoder, hex("be"))).toEqual([["custom-key", "custom-header"]]);
    expectHpackError(() => decodeAll(decoder, hex("bf")), /index 63 is past the end/);
    // As the name of a literal, with each prefix size.
    expectHpackError(() => decodeAll(decoder, hex("7f00 0161")), /name index 63/);
    expectHpackError(() => decodeAll(decoder, hex("0f30 0161")), /name index 63/);
    expectHpackError(() => decodeAll(decoder, hex("1f30 0161")), /name index 63/);
    expect(decodeAll(decoder, hex("0f2f 0161"))).toEqual([["custom-key", "a"]]);
  });

  it("a truncated integer", () => {
    expectHpackError(() => decodeAll(new HpackDecoder(), hex("ff")), /truncated integer/);
    expectHpackError(() => decodeAll(new HpackDecoder(), hex("ff80")), /truncated integer/);
    expectHpackError(() => decodeAll(new HpackDecoder(), hex("0400 04")), /truncated/); // value missing
    expectHpackError(() => decodeAll(new HpackDecoder(), hex("047f")), /truncated integer/);
    // The integer may not run past `end` into the rest of the buffer.
    const buffer = hex("82ff 8001");
    expectHpackError(() => decodeAll(new HpackDecoder(), buffer, 0, 3), /truncated integer/);
  });

  it("an integer past 2^31 - 1, or longer than 5 continuation octets", () => {
    // 127 + 0x7fffff80 = 2^31 - 1: too large an index, but a valid integer.
    expectHpackError(() => decodeAll(new HpackDecoder(), hex("ff80 ffff ff07")), /index 2147483647 is past/);
    expectHpackError(() => decodeAll(new HpackDecoder(), hex("ff81 ffff ff07")), /too large/); // 2^31
    expectHpackError(() => decodeAll(new HpackDecoder(), hex("ffff ffff ffff 0f")), /too large/);
    // Zero-padded continuation: 5 octets are accepted, 6 are not.
    expectHpackError(() => decodeAll(new HpackDecoder(), hex("ff80 8080 8000")), /index 127 is past/);
    expectHpackError(() => decodeAll(new HpackDecoder(), hex("ff80 8080 8080 00")), /too large/);
    // A table size of 2^31 - 1 is representable.
    const decoder = new HpackDecoder(0x7fff_ffff);
    expect(decodeAll(decoder, hex("3fe0 ffff ff07 82"))).toEqual([[":method", "GET"]]);
  });

  it("a truncated string or one longer than the block", () => {
    expectHpackError(() => decodeAll(new HpackDecoder(), hex("04")), /truncated header field/);
    expectHpackError(() => decodeAll(new HpackDecoder(), hex("0001 61")), /truncated header field/);
    expectHpackError(() => decodeAll(new HpackDecoder(), hex("4005 6162 63")), /longer than the rest/);
    expectHpackError(() => decodeAll(new HpackDecoder(), hex("047f ffff ff07")), /longer than the rest/);
    expectHpackError(() => decodeAll(new HpackDecoder(), hex("0485 f1e3 c2e5")), /longer than the rest/);
    // Honors `end`: the string is in the buffer but past the block.
    const buffer = hex("0403 6162 63");
    expect(decodeAll(new HpackDecoder(), buffer)).toEqual([[":path", "abc"]]);
    expectHpackError(() => decodeAll(new HpackDecoder(), buffer, 0, 4), /longer than the rest/);
  });

  it("invalid Huffman padding or EOS in a header string", () => {
    expectHpackError(() => decodeAll(new HpackDecoder(), hex("0481 00")), /padding/); // not all ones
    expectHpackError(() => decodeAll(new HpackDecoder(), hex("0482 1fff")), /padding/); // 11 bits
    expectHpackError(() => decodeAll(new HpackDecoder(), hex("0484 ffff ffff")), /EOS/);
    expectHpackError(() => decodeAll(new HpackDecoder(), hex("0081 0001 61")), /padding/); // in a name
    expect(decodeAll(new HpackDecoder(), hex("0481 1f"))).toEqual([[":path", "a"]]);
  });

  it("a dynamic table size update above the advertised maximum", () => {
    expectHpackError(() => decodeAll(new HpackDecoder(256), hex("3fe2 01")), /257 above the limit 256/);
    expect(decodeAll(new HpackDecoder(256), hex("3fe1 01 82"))).toEqual([[":method", "GET"]]); // 256
    expectHpackError(() => decodeAll(new HpackDecoder(0), hex("21")), /above the limit 0/);
    expectHpackError(() => decodeAll(new HpackDecoder(), hex("3fe2 1f")), /4097 above the limit 4096/);
  });

  it("a dynamic table size update after a header field", () => {
    expectHpackError(() => decodeAll(new HpackDecoder(), hex("8220")), /after a header field/);
    expectHpackError(() => decodeAll(new HpackDecoder(), hex("2082 3f9a 0a")), /after a header field/);
    expectHpackError(() => decodeAll(new HpackDecoder(), hex("0401 6120")), /after a header field/);
    // Several at the start are fine; each block may start with one.
    const decoder = new HpackDecoder();
    expect(decodeAll(decoder, hex("2030 3fe1 1f 82"))).toEqual([[":method", "GET"]]);
    expect(decodeAll(decoder, hex("20 82"))).toEqual([[":method", "GET"]]);
  });

  it("rejects a bad range or table size with RangeError (caller bugs, not peer errors)", () => {
    const decoder = new HpackDecoder();
    expect(() => decoder.decode(hex("82"), 0, 2, () => {})).toThrow(RangeError);
    expect(() => decoder.decode(hex("82"), 1, 0, () => {})).toThrow(RangeError);
    expect(() => new HpackDecoder(-1)).toThrow(RangeError);
    expect(() => new HpackDecoder(1.5)).toThrow(RangeError);
    expect(() => new HpackDecoder(2 ** 31)).toThrow(RangeError);
  });

  it("lets an exception from emit propagate unchanged", () => {
    const boom = new Error("boom");
    expect(() =>
      new HpackDecoder().decode(hex("8286"), 0, 2, () => {
        throw boom;
      }),
    ).toThrow(boom);
  });
});

describe("HpackDecoder: header blocks from Node's HTTP/2 client (nghttp2's encoder)", () => {
  /**
   * A bare TCP server reads the client's connection preface and frames (it never answers, so the
   * client keeps the default 4096-octet table and 16384-octet frames) and decodes each HEADERS
   * (+ CONTINUATION) block with one decoder.
   */
  async function captureRequests(
    requests: Record<string, string>[],
    sensitive: string[],
  ): Promise<{ authority: string; blocks: Field[][]; continuations: number }> {
    const decoder = new HpackDecoder(4096);
    const blocks: Field[][] = [];
    let continuations = 0;
    let socket: Socket | undefined;
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const authority = `127.0.0.1:${port}`;
    const done = new Promise<void>((resolve, reject) => {
      server.on("connection", (sock) => {
        socket = sock;
        let buf = Buffer.alloc(0);
        let preface = false;
        let pending: Buffer[] = [];
        sock.on("data", (chunk: Buffer) => {
          buf = Buffer.concat([buf, chunk]);
          try {
            if (!preface) {
              if (buf.length < 24) return;
              expect(buf.subarray(0, 24).toString("latin1")).toBe("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
              buf = buf.subarray(24);
              preface = true;
            }
            while (buf.length >= 9) {
              const length = buf.readUIntBE(0, 3);
              if (buf.length < 9 + length) break;
              const type = buf[3] as number;
              const flags = buf[4] as number;
              let payload = buf.subarray(9, 9 + length);
              buf = buf.subarray(9 + length);
              if (type === 0x1) {
                // HEADERS: optional padding length and priority fields.
                let start = 0;
                let end = payload.length;
                if (flags & 0x8) {
                  start = 1;
                  end -= payload[0] as number;
                }
                if (flags & 0x20) start += 5;
                payload = payload.subarray(start, end);
                pending = [payload];
              } else if (type === 0x9) {
                continuations++;
                pending.push(payload);
              } else {
                continue;
              }
              if (flags & 0x4) {
                // END_HEADERS: decode the joined block, framed by junk to exercise start/end.
                const block = Buffer.concat([Buffer.of(0xff), ...pending, Buffer.of(0xff)]);
                blocks.push(decodeAll(decoder, block, 1, block.length - 1));
                if (blocks.length === requests.length) resolve();
              }
            }
          } catch (err) {
            reject(err);
          }
        });
      });
    });
    const client = connect(`http://${authority}`);
    client.on("error", () => {});
    try {
      for (const headers of requests) {
        const req = client.request({ ...headers, [sensitiveHeaders]: sensitive }, { endStream: true });
        req.on("error", () => {});
      }
      await done;
    } finally {
      client.destroy();
      socket?.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    return { authority, blocks, continuations };
  }

  it("decodes 60 gRPC-like requests identically, with table reuse, eviction, never-indexed and CONTINUATION", async () => {
    const rand = prng(42);
    const requests: Record<string, string>[] = [];
    for (let i = 0; i < 60; i++) {
      const headers: Record<string, string> = {
        ":method": "POST",
        ":path":
          i % 3 === 0
            ? "/envoy.service.auth.v3.Authorization/Check"
            : "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit",
        "content-type": "application/grpc",
        te: "trailers",
        "grpc-timeout": `${1 + (i % 7)}S`,
        "user-agent": "grpc-node-js/1.14.7",
        "x-request-id": Math.floor(rand() * 2 ** 48).toString(16),
        "x-secret": `token-${i}`,
      };
      if (i % 10 === 5) headers["x-latin1"] = "caf\u00e9 \u00ff";
      if (i % 20 === 7) headers["x-big"] = "z".repeat(5000); // larger than the table: empties it
      if (i === 33) {
        // Longer than a frame even Huffman-coded (5-6 bits per hex digit): CONTINUATION.
        let huge = "";
        while (huge.length < 30_000) huge += Math.floor(rand() * 2 ** 32).toString(16);
        headers["x-huge"] = huge;
      }
      requests.push(headers);
    }
    const { authority, blocks, continuations } = await captureRequests(requests, ["x-secret"]);
    expect(blocks.length).toBe(60);
    expect(continuations).toBeGreaterThan(0);
    for (const [i, fields] of blocks.entries()) {
      const expected = { ...requests[i], ":scheme": "http", ":authority": authority };
      expect([i, Object.fromEntries(fields)]).toEqual([i, expected]);
      expect([i, fields.length]).toEqual([i, Object.keys(expected).length]);
      // Pseudo-header fields come first.
      const firstRegular = fields.findIndex(([name]) => !name.startsWith(":"));
      expect(fields.slice(firstRegular).every(([name]) => !name.startsWith(":"))).toBe(true);
    }
  });
});
