/**
 * HTTP/2 wire facts (RFC 9113): frame types, flags, settings and error codes, the client preface, and
 * the few header-block encodings a gRPC server sends (RFC 7541: literals without indexing, so the
 * peer's decoder table is never touched and nothing has to track it).
 */

export const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
export const FRAME_HEADER = 9;

/** Frame types. */
export const DATA = 0x0;
export const HEADERS = 0x1;
export const PRIORITY = 0x2;
export const RST_STREAM = 0x3;
export const SETTINGS = 0x4;
export const PUSH_PROMISE = 0x5;
export const PING = 0x6;
export const GOAWAY = 0x7;
export const WINDOW_UPDATE = 0x8;
export const CONTINUATION = 0x9;

/** Frame flags. */
export const FLAG_END_STREAM = 0x1;
export const FLAG_ACK = 0x1;
export const FLAG_END_HEADERS = 0x4;
export const FLAG_PADDED = 0x8;
export const FLAG_PRIORITY = 0x20;

/** Settings identifiers. */
export const HEADER_TABLE_SIZE = 0x1;
export const ENABLE_PUSH = 0x2;
export const MAX_CONCURRENT_STREAMS = 0x3;
export const INITIAL_WINDOW_SIZE = 0x4;
export const MAX_FRAME_SIZE = 0x5;
export const MAX_HEADER_LIST_SIZE = 0x6;

/** Error codes. */
export const NO_ERROR = 0x0;
export const PROTOCOL_ERROR = 0x1;
export const INTERNAL_ERROR = 0x2;
export const FLOW_CONTROL_ERROR = 0x3;
export const SETTINGS_TIMEOUT = 0x4;
export const STREAM_CLOSED = 0x5;
export const FRAME_SIZE_ERROR = 0x6;
export const REFUSED_STREAM = 0x7;
export const CANCEL = 0x8;
export const COMPRESSION_ERROR = 0x9;
export const ENHANCE_YOUR_CALM = 0xb;

/** The largest flow-control window (2^31 - 1). */
export const MAX_WINDOW = 0x7fffffff;
/** Default SETTINGS_INITIAL_WINDOW_SIZE and connection window. */
export const DEFAULT_WINDOW = 65_535;
/** Default (and smallest allowed) SETTINGS_MAX_FRAME_SIZE. */
export const DEFAULT_MAX_FRAME = 16_384;
export const MAX_FRAME_LIMIT = 16_777_215;

/** A connection error: GOAWAY with `code`, then the connection ends. */
export class H2Error extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = "H2Error";
  }
}

/** Bytes of HPACK integer `value` with an `n`-bit prefix whose high bits are `mask`. */
function hpackInt(value: number, n: number, mask: number): number[] {
  const max = (1 << n) - 1;
  if (value < max) return [mask | value];
  const out = [mask | max];
  let v = value - max;
  while (v >= 128) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}

function latin1Bytes(s: string): number[] {
  const out: number[] = new Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i) & 0xff;
  return out;
}

/** A string literal, not Huffman-coded. */
function literal(s: string): number[] {
  const bytes = latin1Bytes(s);
  return [...hpackInt(bytes.length, 7, 0), ...bytes];
}

/** Static-table indexes (RFC 7541 Appendix A) of the names a server sends. */
const STATUS_NAME = 8; // ":status" (":status: 200" is index 8 itself)
const CONTENT_TYPE_NAME = 31;

/** `name: value` as a literal without indexing (new name, or static name index `nameIndex`). */
export function literalField(name: string, value: string, nameIndex = 0): number[] {
  if (nameIndex > 0) return [...hpackInt(nameIndex, 4, 0x00), ...literal(value)];
  return [0x00, ...literal(name), ...literal(value)];
}

/** The header block of a response's HEADERS: `:status` then `fields` (lower-case names). */
export function responseBlock(status: number, fields: readonly (readonly [string, string])[]): Buffer {
  const bytes: number[] = status === 200 ? [0x80 | 8] : literalField(":status", String(status), STATUS_NAME);
  for (const [name, value] of fields)
    bytes.push(...literalField(name, value, name === "content-type" ? CONTENT_TYPE_NAME : 0));
  return Buffer.from(bytes);
}

/** A header block of fields only (trailers). */
export function fieldsBlock(fields: readonly (readonly [string, string])[]): Buffer {
  const bytes: number[] = [];
  for (const [name, value] of fields) bytes.push(...literalField(name, value));
  return Buffer.from(bytes);
}
