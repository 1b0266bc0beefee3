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
 * half-closed (local): it stays open here, its frames are still checked (flow control, content-length,
 * trailers), its DATA is dropped, and once the client has sent half a window more it is asked to stop
 * (RST_STREAM NO_ERROR, §8.1). Closed streams go to a bounded record (history.ts) that decides what a
 * late frame on them gets.
 */
import type { Socket } from "node:net";
import { MAX_HEADER_LIST, MAX_HEADER_PAIRS, RequestFields } from "./fields.js";
import {
  CANCEL,
  COMPRESSION_ERROR,
  CONTINUATION,
  DATA,
  DEFAULT_MAX_FRAME,
  DEFAULT_WINDOW,
  ENABLE_PUSH,
  ENHANCE_YOUR_CALM,
  FLAG_ACK,
  FLAG_END_HEADERS,
  FLAG_END_STREAM,
  FLAG_PADDED,
  FLAG_PRIORITY,
  FLOW_CONTROL_ERROR,
  FRAME_SIZE_ERROR,
  GOAWAY,
  H2Error,
  HEADER_TABLE_SIZE,
  HEADERS,
  INITIAL_WINDOW_SIZE,
  MAX_CONCURRENT_STREAMS,
  MAX_FRAME_LIMIT,
  MAX_FRAME_SIZE,
  MAX_WINDOW,
  NO_ERROR,
  PING,
  PREFACE,
  PRIORITY,
  PROTOCOL_ERROR,
  PUSH_PROMISE,
  REFUSED_STREAM,
  RST_STREAM,
  SETTINGS,
  SETTINGS_TIMEOUT,
  STREAM_CLOSED,
  WINDOW_UPDATE,
} from "./frames.js";
import { type ClosedFate, closedStreamAction, DEFAULT_STREAM_HISTORY, StreamHistory } from "./history.js";
import { HpackDecoder, HpackError } from "./hpack.js";
import { BufferPool, type H2Limits, limitsWith, RateBudget } from "./limits.js";
import { RecvFlow } from "./recv-flow.js";
import { H2Stream, type StreamOwner } from "./stream.js";
import { FrameWriter } from "./writer.js";

export type { H2Headers } from "./fields.js";
export { BufferPool, DEFAULT_LIMITS, type H2Limits } from "./limits.js";
export { H2Stream, type StreamHandler } from "./stream.js";

export interface H2ConnectionOptions {
  /** A new stream with its request headers; set `stream.handler` to hear its data, or answer it. */
  readonly onStream: (stream: H2Stream) => void;
  /** Connection and stream errors of the peer (the connection or stream is cut; nothing throws). */
  readonly onError: (err: unknown, where: "session" | "stream") => void;
  /** Closed streams remembered (a power of two; see history.ts). @default DEFAULT_STREAM_HISTORY */
  readonly streamHistory?: number;
  /** Bounds (limits.ts); unset fields keep their defaults. */
  readonly limits?: Partial<H2Limits>;
  /** The process-wide pool of buffered request bytes (shared by a server's connections). */
  readonly pool?: BufferPool;
}

/** Streams a connection opens per slice of its input before the other connections get a turn. */
const STREAMS_PER_SLICE = 64;
/** Frames read per slice of a connection's input before the other connections get a turn. */
const FRAMES_PER_SLICE = 1024;
/** Input bytes read per slice before the other connections get a turn. */
const BYTES_PER_SLICE = 256 * 1024;
/** The pool of connections created without one. */
const defaultPool = new BufferPool(128 << 20);
const EMPTY = Buffer.alloc(0);
/** Not a wire flag (those are 8 bits): a HEADERS frame whose priority names its own stream. */
const SELF_DEPENDENT = 0x100;
/** HPACK dynamic table size update to 0 (RFC 7541 §6.3). */
const TABLE_SIZE_ZERO = Buffer.from([0x20]);

export class H2Connection implements StreamOwner {
  /** Frames received so far: the idle sweep compares it between sweeps. */
  activity = 0;
  readonly remoteAddress: string | undefined;
  readonly #socket: Socket;
  readonly #opts: H2ConnectionOptions;
  readonly #decoder = new HpackDecoder(4096);
  readonly #streams = new Map<number, H2Stream>();
  readonly #history: StreamHistory;
  #input: Buffer | undefined = undefined;
  #prefaceSeen = false;
  #settingsSeen = false;
  #lastStreamId = 0;
  /** GOAWAY sent: no new streams; the connection ends when the last one closes. */
  #goingAway = false;
  #dead = false;
  #closeHandled = false;
  #peerEnded = false;
  #peerInitialWindow = DEFAULT_WINDOW;
  #peerMaxFrame = DEFAULT_MAX_FRAME;
  #sendWindow = DEFAULT_WINDOW;
  readonly #flow: RecvFlow;
  readonly #limits: H2Limits;
  readonly #resets: RateBudget;
  readonly #refusedBlocks: RateBudget;
  /** Reading in slices (#slice): the socket is paused until the rest of the input is read. */
  #slicing = false;
  /** Input bytes read since the last slice. */
  #readBytes = 0;
  /** Calls whose request completed in the chunk being read: run once the chunk is read. */
  #ready: H2Stream[] = [];
  /** Answer bytes waiting for the peer's window. */
  #unsent = 0;
  /** PING/SETTINGS ACKs written while the socket had output queued. */
  #acks = 0;
  /** Deadline ticks: the timer, its count, its period in ticks per request deadline. */
  readonly #timer: NodeJS.Timeout;
  #tick = 0;
  readonly #requestTicks: number;
  readonly #startedAt = Date.now();
  #blockTick = 0;
  /** Tick at which the socket was first seen not draining (-1: it drains). */
  #stallTick = -1;
  /** Header block in progress (HEADERS without END_HEADERS, then CONTINUATION). */
  #blockStream = 0;
  #blockFlags = 0;
  #blockParts: Buffer[] = [];
  #blockBytes = 0;
  #blocked: H2Stream[] = [];
  #closeListeners: (() => void)[] = [];
  /** The client changed SETTINGS_HEADER_TABLE_SIZE: our next header block starts with a size update. */
  #tableSizeUpdate = false;
  #peerTableSize = 4096;
  #blockFrames = 0;
  readonly #request = new RequestFields();
  readonly #w: FrameWriter;
  constructor(socket: Socket, opts: H2ConnectionOptions) {
    this.#socket = socket;
    this.#w = new FrameWriter(socket);
    this.#opts = opts;
    this.#history = new StreamHistory(opts.streamHistory ?? DEFAULT_STREAM_HISTORY);
    const limits = limitsWith(opts.limits);
    this.#limits = limits;
    this.#flow = new RecvFlow(opts.pool ?? defaultPool, limits.connectionWindow);
    this.#resets = new RateBudget(limits.resetBurst, limits.resetRate);
    this.#refusedBlocks = new RateBudget(limits.refusedBlockBurst, limits.refusedBlockRate);
    const period = Math.max(10, Math.min(limits.handshakeTimeoutMs, limits.requestTimeoutMs) / 4);
    this.#requestTicks = Math.ceil(limits.requestTimeoutMs / period);
    this.#timer = setInterval(() => this.#onTick(), period);
    this.#timer.unref();
    this.remoteAddress = socket.remoteAddress;
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => this.#onData(chunk));
    socket.on("end", () => this.#onEnd());
    socket.on("error", (err) => {
      if (!this.#dead) this.#opts.onError(err, "session");
      socket.destroy();
    });
    socket.on("close", () => this.#onClose());
    socket.on("drain", () => {
      this.#stallTick = -1;
      if (!this.#dead && !this.#slicing) socket.resume();
    });
    // Our SETTINGS: the defaults, and a stream bound. The connection window stays the default
    // 65,535 and grows only as request bytes are held (RecvFlow).
    this.#w.frameHeader(6, SETTINGS, 0, 0);
    this.#w.u16(MAX_CONCURRENT_STREAMS);
    this.#w.u32(limits.maxStreams);
  }

  /** Streams open now. */
  get streamCount(): number {
    return this.#streams.size;
  }

  /** The socket is gone. */
  get closed(): boolean {
    return this.#socket.destroyed;
  }

  onClose(listener: () => void): void {
    if (this.#socket.destroyed) listener();
    else this.#closeListeners.push(listener);
  }

  /** Graceful close: GOAWAY, no new streams; ends once the open ones finish (at once without any). */
  close(): void {
    if (this.#dead) return;
    if (!this.#goingAway) {
      this.#goingAway = true;
      this.#goaway(NO_ERROR);
    }
    this.#stopUploads();
    if (this.#streams.size === 0) this.#end();
  }

  /** Cut at once: its streams are closed before this returns. */
  destroy(): void {
    this.#dead = true;
    this.#socket.destroy();
    this.#onClose();
  }

  // ---- input ----

  #onData(chunk: Buffer): void {
    if (this.#dead) return;
    let buf = chunk;
    const rest = this.#input;
    if (rest !== undefined) {
      buf = Buffer.concat([rest, chunk]);
      this.#input = undefined;
    }
    let pos = 0;
    try {
      if (!this.#prefaceSeen) {
        const n = Math.min(buf.length, PREFACE.length);
        if (buf.compare(PREFACE, 0, n, 0, n) !== 0)
          throw new H2Error(PROTOCOL_ERROR, "bad connection preface");
        if (buf.length < PREFACE.length) {
          this.#input = buf;
          return;
        }
        this.#prefaceSeen = true;
        pos = PREFACE.length;
      }
      const len = buf.length;
      const opened = this.#lastStreamId;
      let frames = 0;
      while (len - pos >= 9) {
        const size =
          (buf[pos] as number) * 65536 + ((buf[pos + 1] as number) << 8) + (buf[pos + 2] as number);
        if (size > DEFAULT_MAX_FRAME)
          throw new H2Error(FRAME_SIZE_ERROR, `frame of ${size} bytes exceeds SETTINGS_MAX_FRAME_SIZE`);
        const end = pos + 9 + size;
        if (end > len) break;
        const type = buf[pos + 3] as number;
        const flags = buf[pos + 4] as number;
        const id = buf.readUInt32BE(pos + 5) & 0x7fffffff;
        this.#frame(type, flags, id, buf, pos + 9, end);
        pos = end;
        if (this.#dead) return;
        // Fairness: input that opens many streams (or is many frames) is read in slices, the other
        // connections' input between them, so one peer's burst cannot hold the event loop.
        if (
          (++frames >= FRAMES_PER_SLICE || this.#lastStreamId - opened >= STREAMS_PER_SLICE * 2) &&
          pos < len &&
          this.#blockStream === 0
        ) {
          this.#input = buf.subarray(pos);
          this.#slice();
          break;
        }
      }
      if (pos < len && this.#input === undefined) this.#input = pos === 0 ? buf : buf.subarray(pos);
      if (this.#ready.length > 0) this.#runReady();
      // Bulk input (large uploads) yields too, once per slice of bytes: libuv hands over up to
      // 32 reads of one socket in a row, which would otherwise keep the other connections waiting.
      this.#readBytes += chunk.length;
      if (this.#readBytes >= BYTES_PER_SLICE && !this.#slicing && !this.#dead) {
        this.#readBytes = 0;
        this.#slice();
      }
    } catch (err) {
      this.#connectionError(err);
    }
  }

  /** Stop reading; read the rest of the input at the next turn (then read the socket again). */
  #slice(): void {
    this.#slicing = true;
    this.#socket.pause();
    setImmediate(() => {
      this.#slicing = false;
      if (this.#dead) return;
      const rest = this.#input;
      this.#input = undefined;
      if (rest !== undefined) this.#onData(rest);
      if (!this.#slicing && !this.#dead && !this.#socket.writableNeedDrain) this.#socket.resume();
    });
  }

  /** Run the calls whose request completed in this chunk and were not reset meanwhile. */
  #runReady(): void {
    const ready = this.#ready;
    this.#ready = [];
    for (let i = 0; i < ready.length; i++) {
      const s = ready[i] as H2Stream;
      if (s.isClosed) continue;
      s.handler?.run();
      // The call has its message now: the bytes it held are consumed.
      if (s.held > 0) {
        this.#flow.release(s.held);
        s.held = 0;
      }
    }
    this.#windowUpdate0();
  }

  /** Give the peer back the connection window its consumed bytes freed, when due. */
  #windowUpdate0(): void {
    const increment = this.#flow.update();
    if (increment > 0) {
      this.#w.frameHeader(4, WINDOW_UPDATE, 0, 0);
      this.#w.u32(increment);
    }
  }

  #frame(type: number, flags: number, id: number, buf: Buffer, start: number, end: number): void {
    if (!this.#settingsSeen) {
      if (type !== SETTINGS || (flags & FLAG_ACK) !== 0)
        throw new H2Error(PROTOCOL_ERROR, "the first frame of a connection must be SETTINGS");
      this.#settingsSeen = true;
    }
    if (this.#blockStream !== 0 && (type !== CONTINUATION || id !== this.#blockStream))
      throw new H2Error(PROTOCOL_ERROR, "expected CONTINUATION of the open header block");
    switch (type) {
      case DATA:
        this.#data(flags, id, buf, start, end);
        return;
      case HEADERS:
        this.#headers(flags, id, buf, start, end);
        return;
      case CONTINUATION:
        this.#continuation(flags, id, buf, start, end);
        return;
      case RST_STREAM: {
        if (id === 0) throw new H2Error(PROTOCOL_ERROR, "RST_STREAM on stream 0");
        if (end - start !== 4) throw new H2Error(FRAME_SIZE_ERROR, "RST_STREAM must be 4 bytes");
        if (this.#idle(id)) throw new H2Error(PROTOCOL_ERROR, "RST_STREAM on an idle stream");
        const s = this.#streams.get(id);
        if (s === undefined) return;
        // Rapid reset (CVE-2023-44487): streams the client resets before their answer are budgeted,
        // and open streaming answers (their headers go out at once; Envoy rarely resets them).
        if ((!s.headersSent || s.handler?.longLived === true) && !this.#resets.take())
          throw new H2Error(ENHANCE_YOUR_CALM, "too many streams reset by the client");
        this.#closeStream(s, "reset-received");
        return;
      }
      case SETTINGS:
        this.#settings(flags, id, buf, start, end);
        return;
      case PING:
        if (id !== 0) throw new H2Error(PROTOCOL_ERROR, "PING on a stream");
        if (end - start !== 8) throw new H2Error(FRAME_SIZE_ERROR, "PING must be 8 bytes");
        if ((flags & FLAG_ACK) === 0) {
          this.#countAck();
          this.#w.frameHeader(8, PING, FLAG_ACK, 0);
          this.#w.bytes(buf, start, end);
        }
        return;
      case GOAWAY:
        if (id !== 0) throw new H2Error(PROTOCOL_ERROR, "GOAWAY on a stream");
        if (end - start < 8) throw new H2Error(FRAME_SIZE_ERROR, "GOAWAY shorter than 8 bytes");
        this.#peerEnded = true;
        this.#stopUploads();
        if (this.#streams.size === 0) this.close();
        return;
      case WINDOW_UPDATE:
        this.#windowUpdate(id, buf, start, end);
        return;
      case PUSH_PROMISE:
        throw new H2Error(PROTOCOL_ERROR, "a client must not send PUSH_PROMISE");
      case PRIORITY:
        // Read and ignored (RFC 9113 deprecates the scheme); only its shape is checked, in any state.
        if (id === 0) throw new H2Error(PROTOCOL_ERROR, "PRIORITY on stream 0");
        if (end - start !== 5) this.#streamError(id, FRAME_SIZE_ERROR, "PRIORITY frame not 5 bytes");
        else if ((buf.readUInt32BE(start) & 0x7fffffff) === id)
          this.#streamError(id, PROTOCOL_ERROR, "PRIORITY: a stream cannot depend on itself");
        return;
      default:
        return; // unknown frame types are ignored
    }
  }

  #data(flags: number, id: number, buf: Buffer, start: number, end: number): void {
    if (id === 0) throw new H2Error(PROTOCOL_ERROR, "DATA on stream 0");
    this.activity++;
    let from = start;
    let to = end;
    if ((flags & FLAG_PADDED) !== 0) {
      // Checked first: a frame-level error whatever the stream's state (RFC 9113 §6.1).
      if (end === start) throw new H2Error(PROTOCOL_ERROR, "PADDED DATA without a pad length");
      const pad = buf[start] as number;
      from = start + 1;
      to = end - pad;
      if (to < from) throw new H2Error(PROTOCOL_ERROR, "DATA padding longer than the frame");
    }
    const size = end - start;
    const flow = this.#flow;
    if (!flow.receive(size)) throw new H2Error(FLOW_CONTROL_ERROR, "DATA past the connection window");
    const s = this.#streams.get(id);
    if (s === undefined) {
      if (this.#idle(id)) throw new H2Error(PROTOCOL_ERROR, "DATA on an idle stream");
      // A stream closed (answered or reset) while the client was still sending: not kept.
      flow.discard(size);
      this.#windowUpdate0();
      this.#notOpen(DATA, id);
      return;
    }
    if (s.remoteEnded) {
      flow.discard(size);
      this.#reset(s, STREAM_CLOSED);
      return;
    }
    s.recvWindow -= size;
    if (s.recvWindow < 0) {
      flow.discard(size);
      this.#reset(s, FLOW_CONTROL_ERROR);
      return;
    }
    const ended = (flags & FLAG_END_STREAM) !== 0;
    if (s.contentLeft >= 0) {
      s.contentLeft -= to - from;
      if (s.contentLeft < 0 || (ended && s.contentLeft !== 0)) {
        flow.discard(size);
        this.#reset(s, PROTOCOL_ERROR, "DATA does not add up to the request's content-length");
        return;
      }
    }
    const n = to - from;
    flow.discard(size - n); // padding
    if (n > 0 && s.handler !== undefined) {
      // The call keeps the bytes until its message is complete: a copy unless it completes now, so
      // a slow stream does not pin the whole input chunk.
      flow.hold(n);
      s.held += n;
      s.handler.push(ended ? buf.subarray(from, to) : Buffer.from(buf.subarray(from, to)));
    } else flow.discard(n);
    if (ended) this.#remoteEnd(s);
    else if (!s.isClosed && s.recvWindow < DEFAULT_WINDOW / 2) {
      if (s.localEnded) {
        // Answered already: rather than take another window of DATA to drop, ask the client to stop.
        this.#stopUpload(s);
        this.#windowUpdate0();
        return;
      }
      // The call took the bytes: the stream may send more.
      this.#w.frameHeader(4, WINDOW_UPDATE, 0, id);
      this.#w.u32(DEFAULT_WINDOW - s.recvWindow);
      s.recvWindow = DEFAULT_WINDOW;
    }
    this.#windowUpdate0();
  }

  #headers(flags: number, id: number, buf: Buffer, start: number, end: number): void {
    if (id === 0) throw new H2Error(PROTOCOL_ERROR, "HEADERS on stream 0");
    this.activity++;
    let from = start;
    let to = end;
    if ((flags & FLAG_PADDED) !== 0) {
      if (end === start) throw new H2Error(PROTOCOL_ERROR, "PADDED HEADERS without a pad length");
      const pad = buf[start] as number;
      from++;
      to -= pad;
    }
    let blockFlags = flags;
    if ((flags & FLAG_PRIORITY) !== 0) {
      if (to - from >= 5 && (buf.readUInt32BE(from) & 0x7fffffff) === id) blockFlags |= SELF_DEPENDENT;
      from += 5;
    }
    if (to < from) throw new H2Error(PROTOCOL_ERROR, "HEADERS padding longer than the frame");
    if ((flags & FLAG_END_HEADERS) !== 0) {
      this.#headerBlock(blockFlags, id, buf, from, to);
      return;
    }
    this.#blockStream = id;
    this.#blockFlags = blockFlags;
    this.#blockParts = [Buffer.from(buf.subarray(from, to))];
    this.#blockBytes = to - from;
    this.#blockFrames = 0;
    this.#blockTick = this.#tick;
  }

  #continuation(flags: number, id: number, buf: Buffer, start: number, end: number): void {
    if (this.#blockStream === 0 || id !== this.#blockStream)
      throw new H2Error(PROTOCOL_ERROR, "CONTINUATION without an open header block");
    this.#blockBytes += end - start;
    const { maxHeaderBlock, maxContinuations } = this.#limits;
    if (this.#blockBytes > maxHeaderBlock)
      throw new H2Error(ENHANCE_YOUR_CALM, `header block larger than ${maxHeaderBlock} bytes`);
    if (++this.#blockFrames > maxContinuations)
      throw new H2Error(
        ENHANCE_YOUR_CALM,
        `header block of more than ${maxContinuations} CONTINUATION frames`,
      );
    if (end > start) this.#blockParts.push(Buffer.from(buf.subarray(start, end)));
    if ((flags & FLAG_END_HEADERS) === 0) return;
    const block = Buffer.concat(this.#blockParts);
    this.#blockParts = [];
    this.#blockStream = 0;
    this.#headerBlock(this.#blockFlags, id, block, 0, block.length);
  }

  /** A complete header block on stream `id`: a new request, or the trailers of an open one. */
  #headerBlock(flags: number, id: number, block: Buffer, start: number, end: number): void {
    // Always decode: the HPACK table must follow every block, wanted or not.
    const request = this.#request;
    request.begin();
    // The decoder is the one counter of the header list's octets (RequestFields counts fields only).
    const maxList = this.#limits.maxHeaderList;
    let fits: boolean;
    try {
      fits = this.#decoder.decode(
        block,
        start,
        end,
        request.emit,
        maxList < MAX_HEADER_LIST ? maxList : MAX_HEADER_LIST,
      );
    } catch (err) {
      if (err instanceof HpackError) throw new H2Error(COMPRESSION_ERROR, err.message);
      throw err;
    }
    // HPACK bomb: a block past the header-list bound was only skimmed; such blocks are budgeted.
    if (!fits && !this.#refusedBlocks.take())
      throw new H2Error(ENHANCE_YOUR_CALM, "too many header blocks past the header-list bound");
    const ended = (flags & FLAG_END_STREAM) !== 0;
    const open = this.#streams.get(id);
    if (open !== undefined) {
      // Trailers: they must end the stream. Their fields mean nothing to a unary call.
      if (open.remoteEnded) this.#reset(open, STREAM_CLOSED, "HEADERS after the request's END_STREAM");
      else if (!ended) this.#reset(open, PROTOCOL_ERROR, "trailers without END_STREAM");
      else if ((flags & SELF_DEPENDENT) !== 0) this.#reset(open, PROTOCOL_ERROR, "stream depends on itself");
      else if (request.trailersProblem() !== "")
        this.#reset(open, PROTOCOL_ERROR, `malformed trailers: ${request.trailersProblem()}`);
      else if (open.contentLeft > 0)
        this.#reset(open, PROTOCOL_ERROR, "DATA does not add up to the request's content-length");
      else this.#remoteEnd(open);
      return;
    }
    if ((id & 1) === 0) throw new H2Error(PROTOCOL_ERROR, `client stream ${id} has an even id`);
    if (id <= this.#lastStreamId) {
      this.#notOpen(HEADERS, id);
      return;
    }
    this.#lastStreamId = id;
    this.#history.opened(id);
    if (this.#goingAway || this.#peerEnded || this.#streams.size >= this.#limits.maxStreams) {
      this.#resetId(id, REFUSED_STREAM);
      this.#history.closed(id, "reset-sent");
      return;
    }
    if ((flags & SELF_DEPENDENT) !== 0) {
      this.#opts.onError(new H2Error(PROTOCOL_ERROR, `stream ${id} depends on itself`), "stream");
      this.#resetId(id, PROTOCOL_ERROR);
      this.#history.closed(id, "reset-sent");
      return;
    }
    const fields = request.fields;
    const s = new H2Stream(id, this, fields, this.#peerInitialWindow);
    s.openedTick = this.#tick;
    this.#streams.set(id, s);
    if (!fits) {
      this.#reset(s, REFUSED_STREAM);
      return;
    }
    if (request.count > MAX_HEADER_PAIRS) {
      this.#reset(s, ENHANCE_YOUR_CALM);
      return;
    }
    const problem = request.requestProblem();
    if (problem !== "") {
      this.#reset(s, PROTOCOL_ERROR, `malformed request: ${problem}`);
      return;
    }
    s.contentLeft = request.contentLength;
    if (ended) {
      if (s.contentLeft > 0) {
        this.#reset(s, PROTOCOL_ERROR, "END_STREAM before the request's content-length");
        return;
      }
      s.remoteEnded = true;
    }
    this.#opts.onStream(s);
    if (ended && !s.isClosed && s.handler !== undefined) this.#ready.push(s);
  }

  /** The request of `s` is complete: its call runs once the chunk is read. */
  #remoteEnd(s: H2Stream): void {
    s.remoteEnded = true;
    if (s.localEnded) this.#closeStream(s, "ended");
    else if (s.handler !== undefined) this.#ready.push(s);
  }

  /** Stream `id` is idle: above the highest the client opened, or even (we never push). */
  #idle(id: number): boolean {
    return id > this.#lastStreamId || (id & 1) === 0;
  }

  /** DATA or HEADERS on a client stream that is closed or was never opened (history.ts says how). */
  #notOpen(type: typeof DATA | typeof HEADERS, id: number): void {
    const fate = this.#history.fate(id);
    const action = closedStreamAction(type, fate);
    if (action === "ignore") return;
    const what = `${type === DATA ? "DATA" : "HEADERS"} on stream ${id}`;
    if (action === "reset-stream-closed") {
      this.#opts.onError(new H2Error(STREAM_CLOSED, `${what} after the client reset it`), "stream");
      this.#resetId(id, STREAM_CLOSED);
      this.#history.closed(id, "reset-sent");
      return;
    }
    if (action === "connection-protocol-error")
      throw new H2Error(PROTOCOL_ERROR, `${what}, below the last opened stream ${this.#lastStreamId}`);
    throw new H2Error(
      STREAM_CLOSED,
      fate === "ended" ? `${what} after its END_STREAM` : `${what}, which was never opened`,
    );
  }

  /**
   * A stream error on `id` in whatever state it is: an open stream is reset; a closed one gets
   * RST_STREAM unless we reset it already; an idle one cannot take RST_STREAM (RFC 9113 §6.4), so the
   * connection ends with `code`.
   */
  #streamError(id: number, code: number, why: string): void {
    const s = this.#streams.get(id);
    if (s !== undefined) {
      this.#reset(s, code, why);
      return;
    }
    if (this.#idle(id)) throw new H2Error(code, `${why} (idle stream ${id})`);
    if (this.#history.fate(id) === "reset-sent") return;
    this.#opts.onError(new H2Error(code, `${why} (stream ${id})`), "stream");
    this.#resetId(id, code);
    this.#history.closed(id, "reset-sent");
  }

  #settings(flags: number, id: number, buf: Buffer, start: number, end: number): void {
    if (id !== 0) throw new H2Error(PROTOCOL_ERROR, "SETTINGS on a stream");
    if ((flags & FLAG_ACK) !== 0) {
      if (end !== start) throw new H2Error(FRAME_SIZE_ERROR, "SETTINGS ACK with a payload");
      return;
    }
    if ((end - start) % 6 !== 0) throw new H2Error(FRAME_SIZE_ERROR, "SETTINGS length not a multiple of 6");
    const entries = (end - start) / 6;
    if (entries > this.#limits.maxSettingsEntries)
      throw new H2Error(ENHANCE_YOUR_CALM, `SETTINGS frame of ${entries} entries`);
    let initialWindow = -1;
    for (let p = start; p < end; p += 6) {
      const key = buf.readUInt16BE(p);
      const value = buf.readUInt32BE(p + 2);
      if (key === INITIAL_WINDOW_SIZE) {
        if (value > MAX_WINDOW)
          throw new H2Error(FLOW_CONTROL_ERROR, "SETTINGS_INITIAL_WINDOW_SIZE too large");
        initialWindow = value; // applied once, below: the last value of the frame counts
      } else if (key === MAX_FRAME_SIZE) {
        if (value < DEFAULT_MAX_FRAME || value > MAX_FRAME_LIMIT)
          throw new H2Error(PROTOCOL_ERROR, `SETTINGS_MAX_FRAME_SIZE ${value} out of range`);
        this.#peerMaxFrame = value;
      } else if (key === ENABLE_PUSH) {
        if (value > 1) throw new H2Error(PROTOCOL_ERROR, `SETTINGS_ENABLE_PUSH ${value}`);
      } else if (key === HEADER_TABLE_SIZE && value !== this.#peerTableSize) {
        // We never index, but the peer's decoder wants its new size acknowledged by a size update at
        // the start of our next block (RFC 7541 §4.2): we send 0, valid under any maximum.
        this.#peerTableSize = value;
        this.#tableSizeUpdate = true;
      }
    }
    this.#countAck();
    this.#w.frameHeader(0, SETTINGS, FLAG_ACK, 0);
    if (initialWindow >= 0 && initialWindow !== this.#peerInitialWindow) this.#initialWindow(initialWindow);
  }

  /** The peer's SETTINGS_INITIAL_WINDOW_SIZE changed: one pass over the streams (RFC 9113 §6.9.2). */
  #initialWindow(value: number): void {
    const delta = value - this.#peerInitialWindow;
    this.#peerInitialWindow = value;
    const waiting: H2Stream[] = [];
    for (const s of this.#streams.values()) {
      s.sendWindow += delta;
      if (s.sendWindow > MAX_WINDOW) throw new H2Error(FLOW_CONTROL_ERROR, "stream window overflow");
      if (delta > 0 && s.pending !== undefined && !s.queued) waiting.push(s);
    }
    for (const s of waiting) this.#resume(s);
  }

  /** A PING or SETTINGS ACK is due: a peer that sends them faster than it reads ours is cut. */
  #countAck(): void {
    if (this.#socket.writableLength === 0) this.#acks = 0;
    else if (++this.#acks > this.#limits.maxQueuedAcks)
      throw new H2Error(ENHANCE_YOUR_CALM, "PING/SETTINGS acknowledgements not read");
  }

  #windowUpdate(id: number, buf: Buffer, start: number, end: number): void {
    if (end - start !== 4) throw new H2Error(FRAME_SIZE_ERROR, "WINDOW_UPDATE must be 4 bytes");
    const increment = buf.readUInt32BE(start) & 0x7fffffff;
    if (id === 0) {
      if (increment === 0) throw new H2Error(PROTOCOL_ERROR, "WINDOW_UPDATE of 0");
      this.#sendWindow += increment;
      if (this.#sendWindow > MAX_WINDOW) throw new H2Error(FLOW_CONTROL_ERROR, "connection window overflow");
      this.#resumeBlocked();
      return;
    }
    const s = this.#streams.get(id);
    if (s === undefined) {
      if (this.#idle(id)) throw new H2Error(PROTOCOL_ERROR, "WINDOW_UPDATE on an idle stream");
      return; // closed: it may have crossed our END_STREAM or RST_STREAM
    }
    if (increment === 0) {
      this.#reset(s, PROTOCOL_ERROR);
      return;
    }
    s.sendWindow += increment;
    if (s.sendWindow > MAX_WINDOW) {
      this.#reset(s, FLOW_CONTROL_ERROR);
      return;
    }
    // A stream in the connection window's line waits there; one held up by its own window goes on.
    if (s.pending !== undefined && !s.queued) this.#resume(s);
  }

  #onEnd(): void {
    // The peer sent FIN: an HTTP/2 client that is done (or gone). Say goodbye and end; its calls
    // still in flight are cancelled when the socket closes.
    this.#peerEnded = true;
    if (this.#dead) return;
    if (!this.#goingAway) {
      this.#goingAway = true;
      this.#goaway(NO_ERROR);
    }
    this.#end();
  }

  #onClose(): void {
    this.#dead = true;
    if (this.#closeHandled) return;
    this.#closeHandled = true;
    clearInterval(this.#timer);
    this.#flow.close();
    this.#ready = [];
    const streams = [...this.#streams.values()];
    this.#streams.clear();
    this.#blocked = [];
    for (const s of streams) {
      s.isClosed = true;
      s.handler?.closed();
    }
    const listeners = this.#closeListeners;
    this.#closeListeners = [];
    for (const l of listeners) l();
  }

  /**
   * The deadlines, checked a few times per deadline: the preface and first SETTINGS, a started header
   * block, requests still arriving (reset), and a socket that does not drain (a peer that stopped
   * reading while we have output for it).
   */
  #onTick(): void {
    if (this.#dead) return;
    const tick = ++this.#tick;
    const limits = this.#limits;
    const late = tick - this.#requestTicks;
    try {
      if (!this.#settingsSeen) {
        if (Date.now() - this.#startedAt >= limits.handshakeTimeoutMs)
          throw new H2Error(
            SETTINGS_TIMEOUT,
            `no client preface and SETTINGS in ${limits.handshakeTimeoutMs} ms`,
          );
        return;
      }
      if (this.#blockStream !== 0 && this.#blockTick < late)
        throw new H2Error(ENHANCE_YOUR_CALM, `header block not finished in ${limits.requestTimeoutMs} ms`);
      if (this.#socket.writableNeedDrain) {
        if (this.#stallTick < 0) this.#stallTick = tick;
        else if (this.#stallTick < late)
          throw new H2Error(ENHANCE_YOUR_CALM, `output not read for ${limits.requestTimeoutMs} ms`);
      }
    } catch (err) {
      this.#connectionError(err);
      // A peer that does not read would not read the GOAWAY either.
      this.destroy();
      return;
    }
    // Requests that did not finish arriving in time (streams are in the order they opened).
    const expired: H2Stream[] = [];
    for (const s of this.#streams.values()) {
      if (s.openedTick >= late) break;
      if (!s.remoteEnded && s.openedTick >= 0) expired.push(s); // -1: a long-lived stream
    }
    for (const s of expired) this.reset(s, CANCEL);
  }

  #connectionError(err: unknown): void {
    if (this.#dead) return;
    this.#opts.onError(err, "session");
    const code = err instanceof H2Error ? err.code : 0x2;
    this.#goaway(code);
    this.#w.flush();
    this.#dead = true;
    this.#socket.end();
    // A peer that never reads must not hold the socket.
    setTimeout(() => this.#socket.destroy(), 1000).unref();
  }

  // ---- output ----

  /** Send an answer on `s` (see H2Stream.respond). */
  respond(
    s: H2Stream,
    headerBlock: Buffer,
    body: Buffer | undefined,
    trailerBlock: Buffer | undefined,
  ): void {
    if (s.isClosed || s.localEnded || this.#dead) return;
    s.headersSent = true;
    const headersEnd = body === undefined && trailerBlock === undefined;
    this.#headerFrames(s.id, headerBlock, headersEnd);
    if (headersEnd) {
      this.#localEnd(s);
      return;
    }
    if (body !== undefined && body.length > 0) {
      const endWithData = trailerBlock === undefined;
      s.pendingTrailers = trailerBlock;
      this.#sendData(s, body, endWithData);
      if (s.pending !== undefined) return;
      s.pendingTrailers = undefined;
      if (endWithData) return;
    }
    if (trailerBlock !== undefined) this.#headerFrames(s.id, trailerBlock, true);
    else this.#w.data(s.id, EMPTY, 0, 0, true);
    this.#localEnd(s);
  }

  /** A streaming answer on `s`: the response HEADERS now, DATA through `write`, trailers by `finish`. */
  openAnswer(s: H2Stream, headerBlock: Buffer): void {
    if (s.isClosed || s.localEnded || s.headersSent || this.#dead) return;
    s.headersSent = true;
    this.#headerFrames(s.id, headerBlock, false);
  }

  /**
   * DATA of an open streaming answer: what the windows allow goes now, the rest parks behind what is
   * parked already (order kept) until WINDOW_UPDATE. False when anything is parked.
   */
  write(s: H2Stream, data: Buffer): boolean {
    if (s.isClosed || s.localEnded || this.#dead || s.pendingTrailers !== undefined) return false;
    const parked = s.pending;
    this.#sendData(s, parked === undefined ? data : Buffer.concat([parked, data]), false);
    return s.pending === undefined;
  }

  /** End an open streaming answer with `trailerBlock`: now, or once its parked DATA is sent. */
  finish(s: H2Stream, trailerBlock: Buffer): void {
    if (s.isClosed || s.localEnded || this.#dead || s.pendingTrailers !== undefined) return;
    if (s.pending !== undefined) {
      s.pendingTrailers = trailerBlock;
      return;
    }
    this.#headerFrames(s.id, trailerBlock, true);
    this.#localEnd(s);
  }

  /** The streaming call on `s` consumed `n` request bytes: they leave the connection's hold. */
  consumed(s: H2Stream, n: number): void {
    s.openedTick = -1; // long-lived now: out of the request deadline
    const k = Math.min(n, s.held);
    if (k <= 0) return;
    s.held -= k;
    this.#flow.release(k);
    this.#windowUpdate0();
  }

  /**
   * Bytes `s` may still write before the unsent-answer budget is passed: what may park, plus what the
   * windows take at once when nothing of it is parked.
   */
  room(s: H2Stream): number {
    const parkable = Math.max(0, this.#limits.maxUnsentBytes - this.#unsent);
    if (s.pending !== undefined) return parkable;
    return parkable + Math.max(0, Math.min(this.#sendWindow, s.sendWindow));
  }

  /** RST_STREAM `code` on `s` and close it (no-op when already closed). */
  reset(s: H2Stream, code: number): void {
    if (s.isClosed || this.#dead) return;
    this.#reset(s, code);
  }

  #reset(s: H2Stream, code: number, why = `code ${code}`): void {
    this.#opts.onError(new H2Error(code, `stream ${s.id} reset: ${why}`), "stream");
    this.#resetId(s.id, code);
    this.#closeStream(s, "reset-sent");
  }

  /** RST_STREAM NO_ERROR on a stream we answered while the client was still sending (RFC 9113 §8.1). */
  #stopUpload(s: H2Stream): void {
    this.#resetId(s.id, NO_ERROR);
    this.#closeStream(s, "reset-sent");
  }

  /** Going away: answered streams whose client is still sending are stopped rather than waited for. */
  #stopUploads(): void {
    for (const s of this.#streams.values()) if (s.localEnded) this.#stopUpload(s);
  }

  #resetId(id: number, code: number): void {
    this.#w.frameHeader(4, RST_STREAM, 0, id);
    this.#w.u32(code);
  }

  /** Send what fits of `data` now; the rest waits in `s.pending` for window. */
  #sendData(s: H2Stream, data: Buffer, end: boolean): void {
    let off = 0;
    const len = data.length;
    while (off < len) {
      const room = Math.min(this.#sendWindow, s.sendWindow, this.#peerMaxFrame, len - off);
      if (room <= 0) break;
      const last = off + room === len;
      this.#w.data(s.id, data, off, off + room, last && end);
      this.#sendWindow -= room;
      s.sendWindow -= room;
      off += room;
    }
    const before = s.pending === undefined ? 0 : s.pending.length;
    if (off < len) {
      s.pending = off === 0 ? data : data.subarray(off);
      s.pendingEnd = end;
      this.#unsent += len - off - before;
      // Only a stream held up by the connection window waits in its line; one held up by its own
      // window goes on at its own WINDOW_UPDATE (or SETTINGS).
      if (!s.queued && s.sendWindow > 0) {
        s.queued = true;
        this.#blocked.push(s);
      }
      if (this.#unsent > this.#limits.maxUnsentBytes) {
        // Not destroyed here (an answer is being written): the GOAWAY goes out, the socket is cut
        // a second later if the peer does not close it.
        this.#connectionError(
          new H2Error(ENHANCE_YOUR_CALM, `more than ${this.#limits.maxUnsentBytes} answer bytes not read`),
        );
      }
      return;
    }
    this.#unsent -= before;
    s.pending = undefined;
    if (end) this.#localEnd(s);
  }

  /** The connection window grew: streams waiting for it go on, in order, while it lasts. */
  #resumeBlocked(): void {
    if (this.#blocked.length === 0) return;
    const blocked = this.#blocked;
    this.#blocked = [];
    let i = 0;
    for (; i < blocked.length && this.#sendWindow > 0 && !this.#dead; i++) {
      const s = blocked[i] as H2Stream;
      s.queued = false;
      this.#resume(s);
    }
    // Those not reached stay queued, ahead of any that queued again meanwhile.
    if (i < blocked.length) this.#blocked = blocked.slice(i).concat(this.#blocked);
  }

  /** Send what the windows now allow of `s`'s waiting DATA, then its trailers. */
  #resume(s: H2Stream): void {
    const data = s.pending;
    if (data === undefined || s.isClosed) return;
    this.#sendData(s, data, s.pendingEnd);
    if (s.pending !== undefined) return;
    const trailers = s.pendingTrailers;
    if (trailers !== undefined) {
      s.pendingTrailers = undefined;
      this.#headerFrames(s.id, trailers, true);
      this.#localEnd(s);
    }
  }

  #localEnd(s: H2Stream): void {
    s.localEnded = true;
    if (s.remoteEnded) {
      this.#closeStream(s, "ended");
      return;
    }
    // Answered before the client finished sending: half-closed (local). The call is over; the stream
    // stays open to check what the client still sends (see the file comment).
    const handler = s.handler;
    s.handler = undefined;
    handler?.closed();
    if (this.#goingAway || this.#peerEnded) this.#stopUpload(s);
  }

  #closeStream(s: H2Stream, fate: ClosedFate): void {
    if (s.isClosed) return;
    s.isClosed = true;
    this.#history.closed(s.id, fate);
    if (s.pending !== undefined) this.#unsent -= s.pending.length;
    if (s.held > 0) {
      this.#flow.release(s.held);
      s.held = 0;
      this.#windowUpdate0();
    }
    s.pending = undefined;
    s.pendingTrailers = undefined;
    if (s.queued) {
      s.queued = false;
      const at = this.#blocked.indexOf(s);
      if (at >= 0) this.#blocked.splice(at, 1);
    }
    this.#streams.delete(s.id);
    s.handler?.closed();
    if (this.#streams.size === 0 && (this.#goingAway || this.#peerEnded)) this.close();
  }

  #headerFrames(id: number, block: Buffer, endStream: boolean): void {
    if (this.#tableSizeUpdate) {
      this.#tableSizeUpdate = false;
      this.#w.headers(id, Buffer.concat([TABLE_SIZE_ZERO, block]), endStream, this.#peerMaxFrame);
    } else this.#w.headers(id, block, endStream, this.#peerMaxFrame);
  }

  #goaway(code: number): void {
    this.#w.frameHeader(8, GOAWAY, 0, 0);
    this.#w.u32(this.#lastStreamId);
    this.#w.u32(code);
  }

  #end(): void {
    if (this.#dead) return;
    this.#w.flush();
    this.#dead = true;
    this.#socket.end();
    setTimeout(() => this.#socket.destroy(), 1000).unref();
  }
}
