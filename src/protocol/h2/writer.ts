/**
 * The output side of one HTTP/2 connection: frames are written into one buffer, and every connection
 * with output this turn is flushed at `setImmediate` in one socket write (where node:http2 writes
 * too). While the socket's buffer is full the connection stops reading (backpressure).
 */
import type { Socket } from "node:net";
import { CONTINUATION, FLAG_END_HEADERS, FLAG_END_STREAM, HEADERS } from "./frames.js";

const EMPTY = Buffer.alloc(0);

/** Writers with output this turn, flushed together. */
const due: { writers: FrameWriter[]; scheduled: boolean } = { writers: [], scheduled: false };

function flushDue(): void {
  const list = due.writers;
  due.scheduled = false;
  due.writers = [];
  for (let i = 0; i < list.length; i++) (list[i] as FrameWriter).flush();
}

export class FrameWriter {
  readonly #socket: Socket;
  #out: Buffer = Buffer.allocUnsafe(16_384);
  #len = 0;
  /** Size of the buffer to allocate at the next write. */
  #nextSize = 16_384;
  #due = false;

  constructor(socket: Socket) {
    this.#socket = socket;
  }

  /** A frame header; its payload (`length` bytes) must follow through u16/u32/bytes. */
  frameHeader(length: number, type: number, flags: number, id: number): void {
    this.#reserve(9 + length);
    const out = this.#out;
    let p = this.#len;
    out[p++] = length >>> 16;
    out[p++] = (length >>> 8) & 0xff;
    out[p++] = length & 0xff;
    out[p++] = type;
    out[p++] = flags;
    out.writeUInt32BE(id, p);
    this.#len = p + 4;
    this.#schedule();
  }

  u16(value: number): void {
    this.#reserve(2);
    this.#out.writeUInt16BE(value, this.#len);
    this.#len += 2;
  }

  u32(value: number): void {
    this.#reserve(4);
    this.#out.writeUInt32BE(value >>> 0, this.#len);
    this.#len += 4;
  }

  bytes(src: Uint8Array, from: number, to: number): void {
    const n = to - from;
    this.#reserve(n);
    if (n < 64) {
      const out = this.#out;
      let p = this.#len;
      for (let i = from; i < to; i++) out[p++] = src[i] as number;
    } else this.#out.set(src.subarray(from, to), this.#len);
    this.#len += n;
  }

  /** DATA with `data[from..to)`. */
  data(id: number, data: Uint8Array, from: number, to: number, endStream: boolean): void {
    this.frameHeader(to - from, 0x0, endStream ? FLAG_END_STREAM : 0, id);
    this.bytes(data, from, to);
  }

  /** A header block as HEADERS, split into CONTINUATION frames past `maxFrame` bytes. */
  headers(id: number, block: Uint8Array, endStream: boolean, maxFrame: number): void {
    const endFlag = endStream ? FLAG_END_STREAM : 0;
    if (block.length <= maxFrame) {
      this.frameHeader(block.length, HEADERS, FLAG_END_HEADERS | endFlag, id);
      this.bytes(block, 0, block.length);
      return;
    }
    this.frameHeader(maxFrame, HEADERS, endFlag, id);
    this.bytes(block, 0, maxFrame);
    for (let off = maxFrame; off < block.length; off += maxFrame) {
      const to = Math.min(block.length, off + maxFrame);
      this.frameHeader(to - off, CONTINUATION, to === block.length ? FLAG_END_HEADERS : 0, id);
      this.bytes(block, off, to);
    }
  }

  /** Write what this turn gathered in one socket write (also called at the end of a connection). */
  flush(): void {
    this.#due = false;
    const n = this.#len;
    if (n === 0 || this.#socket.destroyed) {
      this.#len = 0;
      return;
    }
    const chunk = this.#out.subarray(0, n);
    // The next turn's buffer is allocated when it is written to, sized by this turn's output.
    this.#nextSize = Math.max(16_384, Math.min(n * 2, 1 << 20));
    this.#out = EMPTY;
    this.#len = 0;
    if (!this.#socket.write(chunk)) this.#socket.pause();
  }

  #reserve(n: number): void {
    const need = this.#len + n;
    if (need <= this.#out.length) return;
    const grown = Buffer.allocUnsafe(Math.max(need, this.#out.length * 2, this.#nextSize));
    this.#out.copy(grown, 0, 0, this.#len);
    this.#out = grown;
  }

  #schedule(): void {
    if (this.#due) return;
    this.#due = true;
    due.writers.push(this);
    if (!due.scheduled) {
      due.scheduled = true;
      setImmediate(flushDue);
    }
  }
}
