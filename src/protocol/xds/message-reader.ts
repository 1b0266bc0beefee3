/**
 * gRPC length-prefixed messages of a streaming response, reassembled from DATA chunks: each complete
 * message is handed out as it arrives. Compressed messages are refused (tollgate never asks for
 * compression, so a server must not send it).
 */

/** Collects chunks and returns the complete messages they finish. */
export class MessageReader {
  #pending: Buffer = Buffer.alloc(0);

  constructor(private readonly maxBytes: number) {}

  /** Add a chunk; returns the messages it completes. Throws on a compressed or oversized message. */
  push(chunk: Buffer): Uint8Array[] {
    this.#pending = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    const out: Uint8Array[] = [];
    while (this.#pending.length >= 5) {
      if (this.#pending[0] !== 0) throw new Error("the server sent a compressed message (not requested)");
      const length = this.#pending.readUInt32BE(1);
      if (length > this.maxBytes) throw new Error(`message of ${length} bytes, more than ${this.maxBytes}`);
      if (this.#pending.length < 5 + length) break;
      out.push(this.#pending.subarray(5, 5 + length));
      this.#pending = this.#pending.subarray(5 + length);
    }
    return out;
  }

  /** Bytes of a message begun but not finished (a stream that ends here was cut). */
  get buffered(): number {
    return this.#pending.length;
  }
}
