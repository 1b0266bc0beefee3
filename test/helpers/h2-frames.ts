/**
 * HTTP/2 frames built by hand for the frame-level tests of the own transport (test/protocol/h2/
 * raw-h2.ts's RawConnection, the attack kit's RawPeer): the RFC 9113 numbers, written here
 * independently of src/protocol/h2/frames.ts, and the frame, SETTINGS and request header block
 * builders.
 */
import { literalField } from "../../src/protocol/h2/frames.js";

// Frame types.
export const DATA = 0;
export const HEADERS = 1;
export const PRIORITY = 2;
export const RST_STREAM = 3;
export const SETTINGS = 4;
export const PING = 6;
export const GOAWAY = 7;
export const WINDOW_UPDATE = 8;
export const CONTINUATION = 9;
// Flags.
export const END_STREAM = 0x1;
export const END_HEADERS = 0x4;
export const PADDED = 0x8;
// Error codes.
export const REFUSED_STREAM = 0x7;
export const CANCEL = 0x8;
export const ENHANCE_YOUR_CALM = 0xb;
// SETTINGS parameters.
export const INITIAL_WINDOW_SIZE = 0x4;

/** A frame: 9-byte header and `payload`. */
export function frame(
  type: number,
  flags: number,
  id: number,
  payload: Uint8Array = Buffer.alloc(0),
): Buffer {
  const out = Buffer.alloc(9 + payload.length);
  out.writeUIntBE(payload.length, 0, 3);
  out[3] = type;
  out[4] = flags;
  out.writeUInt32BE(id, 5);
  out.set(payload, 9);
  return out;
}

/** A SETTINGS frame with `pairs` (identifier, value). */
export function settings(pairs: readonly (readonly [number, number])[] = []): Buffer {
  const p = Buffer.alloc(6 * pairs.length);
  pairs.forEach(([k, v], i) => {
    p.writeUInt16BE(k, 6 * i);
    p.writeUInt32BE(v, 6 * i + 2);
  });
  return frame(SETTINGS, 0, 0, p);
}

export function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

/** A header block of literals without indexing (no HPACK state). */
export function headerBlock(fields: readonly (readonly [string, string])[]): Buffer {
  return Buffer.from(fields.flatMap(([n, v]) => literalField(n, v)));
}

/** A gRPC request header block (literals without indexing, no HPACK state) for `path`. */
export function requestBlock(
  path = "/test.Echo/Say",
  extra: readonly [string, string][] = [],
  authority = "localhost",
): Buffer {
  const fields: [string, string][] = [
    [":method", "POST"],
    [":scheme", "http"],
    [":path", path],
    [":authority", authority],
    ["content-type", "application/grpc"],
    ["te", "trailers"],
    ...extra,
  ];
  return headerBlock(fields);
}
