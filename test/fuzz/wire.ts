/**
 * RateLimitRequest bytes written field by field, so a fuzz case can put any bytes where a string
 * belongs (invalid UTF-8) or repeat fields past what the generated code would build comfortably.
 * Field numbers: RateLimitRequest{domain=1, descriptors=2, hits_addend=3};
 * RateLimitDescriptor{entries=1}; Entry{key=1, value=2} (envoy rls.proto / ratelimit.proto).
 */
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";

/** A string field's raw bytes: a JS string (UTF-8 encoded) or bytes as given. */
export type Text = string | Uint8Array;

export interface RawEntry {
  readonly key: Text;
  readonly value: Text;
}

export interface RawRequest {
  readonly domain: Text;
  readonly descriptors: readonly (readonly RawEntry[])[];
}

const bytesOf = (t: Text): Uint8Array => (typeof t === "string" ? Buffer.from(t, "utf8") : t);

/** Encode `req` as RateLimitRequest wire bytes. */
export function writeRequest(req: RawRequest): Uint8Array {
  const w = new BinaryWriter();
  w.tag(1, WireType.LengthDelimited).bytes(bytesOf(req.domain));
  for (const entries of req.descriptors) {
    w.tag(2, WireType.LengthDelimited).fork();
    for (const e of entries) {
      w.tag(1, WireType.LengthDelimited).fork();
      w.tag(1, WireType.LengthDelimited).bytes(bytesOf(e.key));
      w.tag(2, WireType.LengthDelimited).bytes(bytesOf(e.value));
      w.join();
    }
    w.join();
  }
  return w.finish();
}

/** `depth` nested StartGroup tags of an unknown field (no EndGroup): a deep, unterminated group. */
export function deepGroups(depth: number): Uint8Array {
  // Tag of field 15, wire type 3 (StartGroup): (15 << 3) | 3 = 0x7b, one byte.
  return Buffer.alloc(depth, 0x7b);
}

/** `depth` nested length-delimited unknown fields (field 15), each wrapping the next. */
export function deepMessages(depth: number): Uint8Array {
  let inner: Uint8Array = new Uint8Array(0);
  for (let i = 0; i < depth; i++)
    inner = new BinaryWriter().tag(15, WireType.LengthDelimited).bytes(inner).finish();
  return inner;
}
