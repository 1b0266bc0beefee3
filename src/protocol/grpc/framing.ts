/**
 * gRPC length-prefixed messages: 1 byte compressed flag, 4 bytes big-endian length, the message.
 */
import { gunzipSync } from "node:zlib";
import { GrpcError, Status } from "./status.js";

const EMPTY = Buffer.alloc(0);

/** Bytes of the gRPC frame header: compressed flag and big-endian length. */
export const FRAME_HEADER_BYTES = 5;

/**
 * Write the header of an uncompressed frame into the first 5 bytes of `buf`, whose message takes the
 * rest (an encoder that left the room: one allocation and no copy).
 */
export function writeFrameHeader(buf: Buffer): Buffer {
  buf[0] = 0;
  buf.writeUInt32BE(buf.length - FRAME_HEADER_BYTES, 1);
  return buf;
}

/** Frame one uncompressed message. */
export function frame(message: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(5 + message.length);
  out[0] = 0;
  out.writeUInt32BE(message.length, 1);
  out.set(message, 5);
  return out;
}

/**
 * Collects DATA chunks of a unary request and yields its one message. Rejects a declared length over
 * `maxBytes` as soon as the prefix arrives, before buffering the body.
 */
export class UnaryReader {
  /** The first chunk; most unary requests arrive in one. */
  private first: Buffer | undefined;
  /** All chunks, once a second one arrived. */
  private chunks: Buffer[] | undefined;
  private size = 0;
  private declared = -1;

  constructor(private readonly maxBytes: number) {}

  /** Add a chunk; throws RESOURCE_EXHAUSTED when the message is larger than allowed. */
  push(chunk: Buffer): void {
    if (this.first === undefined) this.first = chunk;
    else if (this.chunks === undefined) this.chunks = [this.first, chunk];
    else this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.declared < 0 && this.size >= 5) {
      const head = this.chunks === undefined ? chunk : Buffer.concat(this.chunks);
      this.declared = head.readUInt32BE(1);
      if (this.declared > this.maxBytes)
        throw new GrpcError(
          Status.RESOURCE_EXHAUSTED,
          `received message larger than max (${this.declared} vs. ${this.maxBytes})`,
        );
    }
    // Bounds what one stream can make us buffer: a second message is refused as it starts.
    if (this.declared >= 0 && this.size > 5 + this.declared)
      throw new GrpcError(Status.INTERNAL, "unary request carried more than one message");
  }

  /** The message, once the stream ended. `encoding` is the request's grpc-encoding. */
  finish(encoding: "identity" | "gzip"): Uint8Array {
    const all = this.chunks ? Buffer.concat(this.chunks) : (this.first ?? EMPTY);
    if (all.length < 5) throw new GrpcError(Status.INTERNAL, "request ended before a complete message");
    const length = all.readUInt32BE(1);
    if (all.length !== 5 + length)
      throw new GrpcError(
        Status.INTERNAL,
        all.length < 5 + length
          ? "request ended inside a message"
          : "unary request carried more than one message",
      );
    const body = all.subarray(5);
    if (all[0] === 0) return body;
    if (all[0] !== 1) throw new GrpcError(Status.INTERNAL, `invalid compressed flag ${all[0]}`);
    if (encoding !== "gzip")
      throw new GrpcError(Status.INTERNAL, "compressed flag set but no grpc-encoding was declared");
    try {
      return gunzipSync(body, { maxOutputLength: this.maxBytes });
    } catch (err) {
      const tooBig = (err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE";
      throw new GrpcError(
        tooBig ? Status.RESOURCE_EXHAUSTED : Status.INTERNAL,
        tooBig
          ? `decompressed message larger than max (${this.maxBytes})`
          : "invalid gzip-compressed message",
      );
    }
  }
}
