/**
 * A raw HTTP/2 client for frame-level tests of the own transport: hand-built frames out (the
 * builders of test/helpers/h2-frames.ts, re-exported here), every frame the server sends parsed back
 * (connection.test.ts, conformance.test.ts, grpc/stream-h2.test.ts).
 */
import { connect, type Socket } from "node:net";
import { PREFACE } from "../../../src/protocol/h2/frames.js";
import { HpackDecoder } from "../../../src/protocol/h2/hpack.js";
import { DATA, GOAWAY, HEADERS, settings } from "../../helpers/h2-frames.js";

export * from "../../helpers/h2-frames.js";

export interface Frame {
  readonly type: number;
  readonly flags: number;
  readonly id: number;
  readonly payload: Buffer;
}

/** A raw HTTP/2 client connection: sends bytes, parses every frame the server sends. */
export class RawConnection {
  readonly frames: Frame[] = [];
  closed = false;
  #buf = Buffer.alloc(0);
  #waiters: (() => void)[] = [];
  readonly socket: Socket;

  constructor(port: number) {
    this.socket = connect(port, "127.0.0.1");
    this.socket.on("data", (d: Buffer) => {
      this.#buf = Buffer.concat([this.#buf, d]);
      while (this.#buf.length >= 9) {
        const len = this.#buf.readUIntBE(0, 3);
        if (this.#buf.length < 9 + len) break;
        this.frames.push({
          type: this.#buf[3] as number,
          flags: this.#buf[4] as number,
          id: this.#buf.readUInt32BE(5) & 0x7fffffff,
          payload: this.#buf.subarray(9, 9 + len),
        });
        this.#buf = this.#buf.subarray(9 + len);
      }
      this.#wake();
    });
    this.socket.on("error", () => {});
    this.socket.on("close", () => {
      this.closed = true;
      this.#wake();
    });
  }

  #wake(): void {
    const w = this.#waiters;
    this.#waiters = [];
    for (const f of w) f();
  }

  send(...bufs: Buffer[]): void {
    this.socket.write(Buffer.concat(bufs));
  }

  /** Preface and an empty SETTINGS (or `first`). */
  open(first: Buffer = settings()): void {
    this.send(PREFACE, first);
  }

  /** Wait (bounded) until `cond` holds over the frames received. */
  async until(cond: (frames: readonly Frame[]) => boolean, what: string): Promise<void> {
    const deadline = Date.now() + 3000;
    while (!cond(this.frames)) {
      if (this.closed || Date.now() > deadline) throw new Error(`no ${what}; got ${this.describe()}`);
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  of(id: number): Frame[] {
    return this.frames.filter((f) => f.id === id);
  }

  describe(): string {
    return this.frames.map((f) => `${f.type}/${f.flags}@${f.id}(${f.payload.length})`).join(" ");
  }

  close(): void {
    this.socket.destroy();
  }
}

/**
 * Decoded fields of the server's HEADERS frames, in order: of `frames` (one stream's, when the server
 * indexes nothing), or with `stream` of that stream only, decoding every block of the connection's
 * `frames` in order (one HPACK context, as a server that indexes fields, like node:http2, needs).
 */
export function headerLists(
  frames: readonly Frame[],
  decoder = new HpackDecoder(),
  stream?: number,
): Record<string, string>[] {
  const out: Record<string, string>[] = [];
  for (const f of frames) {
    if (f.type !== HEADERS) continue;
    const fields: Record<string, string> = {};
    decoder.decode(f.payload, 0, f.payload.length, (n, v) => {
      fields[n] = v;
    });
    if (stream === undefined || f.id === stream) out.push(fields);
  }
  return out;
}

export const hasEnd = (id: number) => (fs: readonly Frame[]) =>
  fs.some((f) => f.id === id && (f.type === HEADERS || f.type === DATA) && (f.flags & 1) !== 0);
export const goaway = (fs: readonly Frame[]) => fs.some((f) => f.type === GOAWAY);
export const goawayCode = (c: RawConnection) =>
  c.frames.find((f) => f.type === GOAWAY)?.payload.readUInt32BE(4);
