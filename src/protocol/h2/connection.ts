/**
 * The server side of one HTTP/2 connection (RFC 9113), just what a gRPC server needs: streams the
 * client opens, their header blocks (HPACK), request DATA, and answers of HEADERS, DATA and trailers,
 * given at once (unary) or piece by piece (streaming calls: `openAnswer`, `write`, `finish`). No
 * server push, no priorities (PRIORITY is read and ignored), no HTTP/1 upgrade.
 *
 * Why not node:http2: it builds a Duplex stream, a header object round trip and several events and
 * ticks per request (docs/decisions/http2-transport.md has the measurements). Here a request is a
 * small record, its frames are parsed straight from the socket's chunks, and every answer of a turn
 * is written into one buffer that goes out in one socket write (at `setImmediate`, the point where
 * node:http2 writes too).
 *
 * Flow control: the peer can never send more request bytes than the connection will hold (RecvFlow:
 * a per-connection bound and a process-wide pool); each stream keeps the default 65,535 and its window
 * reopens only as its call takes the bytes. Sending honours the peer's connection and stream windows
 * and its SETTINGS_MAX_FRAME_SIZE; DATA that does not fit waits (with the trailers behind it) for the
 * peer's WINDOW_UPDATE: only streams held up by the connection window wait in line for it, so no control
 * frame walks every waiting stream. Output is paused on socket backpressure: the connection stops
 * reading until the socket drains.
 *
 * Streaming calls (RLQS): request bytes are held like a unary call's until the call reports a
 * message consumed (`consumed`), which reopens their window; responses written while the windows are
 * shut park behind each other (in order) and go out on WINDOW_UPDATE; parked bytes count against the
 * unsent-answer budget, and `room` tells the call how much it may still park so it can end its own
 * stream first (the connection is cut only past the budget). A streaming stream is under the
 * request-arrival deadline until its call took a first message, then long-lived; client
 * resets of open streaming answers are budgeted like resets of unanswered streams.
 *
 * Hardening (limits.ts, docs/security.md): budgets of client resets and refused header blocks, bounds
 * on header blocks, SETTINGS entries, queued ACKs, unsent answers and streams, and deadlines for the
 * handshake, a header block and a request; a request's call runs only once the frames of the chunk
 * that completed it are read, so a stream reset in the same chunk is never decoded nor decided.
 *
 * Errors: a connection error sends GOAWAY with its code and ends the connection; a stream error
 * resets that stream (RST_STREAM). Either is reported to `onError` and never throws out.
 *
 * Stream states (RFC 9113 §5.1): an answer sent before the client finished sending leaves the stream
 * half-closed (local); closed streams go to a bounded record (history.ts) that decides what a late
 * frame on them gets (streams.ts).
 *
 * The parts, one concept a file, each plain functions over the connection's state (state.ts, one
 * class of plain fields that only this class holds): frame dispatch and input slicing (input.ts), the
 * request frames HEADERS/CONTINUATION/DATA (request.ts), the stream table and how streams and the
 * connection end (streams.ts, history.ts), sending, send flow control and streaming output (send.ts),
 * receive flow control (recv-flow.ts), the deadline tick (deadlines.ts), bounds and budgets (limits.ts),
 * the output buffer (writer.ts). This file is the public face: the socket's events and the calls'
 * entry points (StreamOwner).
 */
import type { Socket } from "node:net";
import { onTick } from "./deadlines.js";
import { onData } from "./input.js";
import { consumed, finish, openAnswer, respond, room, write } from "./send.js";
import { type H2ConnectionOptions, H2State } from "./state.js";
import type { H2Stream, StreamOwner } from "./stream.js";
import { close, destroy, onClose, onEnd, reset } from "./streams.js";

export type { H2Headers } from "./fields.js";
export { BufferPool, DEFAULT_LIMITS, type H2Limits } from "./limits.js";
export type { H2ConnectionOptions } from "./state.js";
export { H2Stream, type StreamHandler } from "./stream.js";

/** One server connection on `socket`; see the module comment. */
export class H2Connection implements StreamOwner {
  readonly remoteAddress: string | undefined;
  readonly #c: H2State;
  constructor(socket: Socket, opts: H2ConnectionOptions) {
    const c = new H2State(socket, opts, this);
    this.#c = c;
    c.timer = setInterval(() => onTick(c), c.tickPeriod);
    c.timer.unref();
    this.remoteAddress = socket.remoteAddress;
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => onData(c, chunk));
    socket.on("end", () => onEnd(c));
    socket.on("error", (err) => {
      if (!c.dead) c.opts.onError(err, "session");
      socket.destroy();
    });
    socket.on("close", () => onClose(c));
    socket.on("drain", () => {
      c.stallTick = -1;
      if (!c.dead && !c.slicing) socket.resume();
    });
  }

  /** Frames received so far: the idle sweep compares it between sweeps. */
  get activity(): number {
    return this.#c.activity;
  }

  /** Streams open now. */
  get streamCount(): number {
    return this.#c.streams.size;
  }

  /** The socket is gone. */
  get closed(): boolean {
    return this.#c.socket.destroyed;
  }

  onClose(listener: () => void): void {
    if (this.#c.socket.destroyed) listener();
    else this.#c.closeListeners.push(listener);
  }

  /** Graceful close: GOAWAY, no new streams; ends once the open ones finish (at once without any). */
  close(): void {
    close(this.#c);
  }

  /** Cut at once: its streams are closed before this returns. */
  destroy(): void {
    destroy(this.#c);
  }

  /** Send an answer on `s` (see H2Stream.respond). */
  respond(
    s: H2Stream,
    headerBlock: Buffer,
    body: Buffer | undefined,
    trailerBlock: Buffer | undefined,
  ): void {
    respond(this.#c, s, headerBlock, body, trailerBlock);
  }

  /** A streaming answer on `s`: the response HEADERS now, DATA through `write`, trailers by `finish`. */
  openAnswer(s: H2Stream, headerBlock: Buffer): void {
    openAnswer(this.#c, s, headerBlock);
  }

  /**
   * DATA of an open streaming answer: what the windows allow goes now, the rest parks behind what is
   * parked already (order kept) until WINDOW_UPDATE. False when anything is parked.
   */
  write(s: H2Stream, data: Buffer): boolean {
    return write(this.#c, s, data);
  }

  /** End an open streaming answer with `trailerBlock`: now, or once its parked DATA is sent. */
  finish(s: H2Stream, trailerBlock: Buffer): void {
    finish(this.#c, s, trailerBlock);
  }

  /** The streaming call on `s` consumed `n` request bytes: they leave the connection's hold. */
  consumed(s: H2Stream, n: number): void {
    consumed(this.#c, s, n);
  }

  /**
   * Bytes `s` may still write before the unsent-answer budget is passed: what may park, plus what the
   * windows take at once when nothing of it is parked.
   */
  room(s: H2Stream): number {
    return room(this.#c, s);
  }

  /** RST_STREAM `code` on `s` and close it (no-op when already closed). */
  reset(s: H2Stream, code: number): void {
    const c = this.#c;
    if (s.isClosed || c.dead) return;
    reset(c, s, code);
  }
}
