/**
 * The state of one server HTTP/2 connection (connection.ts), in plain fields of one class so every part
 * of the connection sees the same shape: frame dispatch (input.ts), request frames (request.ts), the
 * stream table (streams.ts), sending and streaming output (send.ts) and the deadlines (deadlines.ts) are
 * plain functions taking it. Only H2Connection holds it (in a private field); callers never see it.
 *
 * Also here: the frames every part writes (RST_STREAM, GOAWAY, the connection WINDOW_UPDATE, answer
 * header blocks) and the two ways the connection ends (a connection error, or its last frame sent).
 */
import type { Socket } from "node:net";
import { RequestFields } from "./fields.js";
import {
  DEFAULT_MAX_FRAME,
  DEFAULT_WINDOW,
  ENHANCE_YOUR_CALM,
  GOAWAY,
  H2Error,
  MAX_CONCURRENT_STREAMS,
  RST_STREAM,
  SETTINGS,
  WINDOW_UPDATE,
} from "./frames.js";
import { DEFAULT_STREAM_HISTORY, StreamHistory } from "./history.js";
import { HpackDecoder } from "./hpack.js";
import { BufferPool, type H2Limits, limitsWith, RateBudget } from "./limits.js";
import { RecvFlow } from "./recv-flow.js";
import type { H2Stream, StreamOwner } from "./stream.js";
import { FrameWriter } from "./writer.js";

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

/** The pool of connections created without one. */
const defaultPool = new BufferPool(128 << 20);
/** HPACK dynamic table size update to 0 (RFC 7541 §6.3). */
const TABLE_SIZE_ZERO = Buffer.from([0x20]);

/** Everything one connection knows; see the module comment. */
export class H2State {
  /** Frames received so far: the idle sweep compares it between sweeps. */
  activity = 0;
  readonly decoder = new HpackDecoder(4096);
  /** Open streams, in the order they opened (the request deadline relies on it). */
  readonly streams = new Map<number, H2Stream>();
  readonly history: StreamHistory;
  /** Input not read yet: a partial frame, or the rest of a slice. */
  input: Buffer | undefined = undefined;
  prefaceSeen = false;
  settingsSeen = false;
  lastStreamId = 0;
  /** GOAWAY sent: no new streams; the connection ends when the last one closes. */
  goingAway = false;
  dead = false;
  closeHandled = false;
  peerEnded = false;
  peerInitialWindow = DEFAULT_WINDOW;
  peerMaxFrame = DEFAULT_MAX_FRAME;
  /** Our send window on the connection. */
  sendWindow = DEFAULT_WINDOW;
  readonly flow: RecvFlow;
  readonly limits: H2Limits;
  readonly resets: RateBudget;
  readonly refusedBlocks: RateBudget;
  /** Reading in slices (input.ts): the socket is paused until the rest of the input is read. */
  slicing = false;
  /** Input bytes read since the last slice. */
  readBytes = 0;
  /** Calls whose request completed in the chunk being read: run once the chunk is read. */
  ready: H2Stream[] = [];
  /** Answer bytes waiting for the peer's window. */
  unsent = 0;
  /** PING/SETTINGS ACKs written while the socket had output queued. */
  acks = 0;
  /** Deadline ticks (deadlines.ts): the timer (set by the connection), its count, ticks per request deadline. */
  timer: NodeJS.Timeout | undefined = undefined;
  tick = 0;
  readonly tickPeriod: number;
  readonly requestTicks: number;
  readonly startedAt = Date.now();
  blockTick = 0;
  /** Tick at which the socket was first seen not draining (-1: it drains). */
  stallTick = -1;
  /** Header block in progress (HEADERS without END_HEADERS, then CONTINUATION). */
  blockStream = 0;
  blockFlags = 0;
  blockParts: Buffer[] = [];
  blockBytes = 0;
  blockFrames = 0;
  /** Streams whose DATA waits for the connection window, in line. */
  blocked: H2Stream[] = [];
  closeListeners: (() => void)[] = [];
  /** The client changed SETTINGS_HEADER_TABLE_SIZE: our next header block starts with a size update. */
  tableSizeUpdate = false;
  peerTableSize = 4096;
  readonly request = new RequestFields();
  readonly w: FrameWriter;

  constructor(
    readonly socket: Socket,
    readonly opts: H2ConnectionOptions,
    /** What new streams answer through (the H2Connection). */
    readonly owner: StreamOwner,
  ) {
    this.w = new FrameWriter(socket);
    this.history = new StreamHistory(opts.streamHistory ?? DEFAULT_STREAM_HISTORY);
    const limits = limitsWith(opts.limits);
    this.limits = limits;
    this.flow = new RecvFlow(opts.pool ?? defaultPool, limits.connectionWindow);
    this.resets = new RateBudget(limits.resetBurst, limits.resetRate);
    this.refusedBlocks = new RateBudget(limits.refusedBlockBurst, limits.refusedBlockRate);
    const period = Math.max(10, Math.min(limits.handshakeTimeoutMs, limits.requestTimeoutMs) / 4);
    this.tickPeriod = period;
    this.requestTicks = Math.ceil(limits.requestTimeoutMs / period);
    // Our SETTINGS: the defaults, and a stream bound. The connection window stays the default
    // 65,535 and grows only as request bytes are held (RecvFlow).
    this.w.frameHeader(6, SETTINGS, 0, 0);
    this.w.u16(MAX_CONCURRENT_STREAMS);
    this.w.u32(limits.maxStreams);
  }
}

/** Give the peer back the connection window its consumed bytes freed, when due. */
export function windowUpdate0(c: H2State): void {
  const increment = c.flow.update();
  if (increment > 0) {
    c.w.frameHeader(4, WINDOW_UPDATE, 0, 0);
    c.w.u32(increment);
  }
}

export function resetId(c: H2State, id: number, code: number): void {
  c.w.frameHeader(4, RST_STREAM, 0, id);
  c.w.u32(code);
}

/** An answer's header block (headers or trailers) on stream `id`, split to the peer's frame size. */
export function headerFrames(c: H2State, id: number, block: Buffer, endStream: boolean): void {
  if (c.tableSizeUpdate) {
    c.tableSizeUpdate = false;
    c.w.headers(id, Buffer.concat([TABLE_SIZE_ZERO, block]), endStream, c.peerMaxFrame);
  } else c.w.headers(id, block, endStream, c.peerMaxFrame);
}

/** A PING or SETTINGS ACK is due: a peer that sends them faster than it reads ours is cut. */
export function countAck(c: H2State): void {
  if (c.socket.writableLength === 0) c.acks = 0;
  else if (++c.acks > c.limits.maxQueuedAcks)
    throw new H2Error(ENHANCE_YOUR_CALM, "PING/SETTINGS acknowledgements not read");
}

export function goaway(c: H2State, code: number): void {
  c.w.frameHeader(8, GOAWAY, 0, 0);
  c.w.u32(c.lastStreamId);
  c.w.u32(code);
}

/** GOAWAY with `err`'s code (INTERNAL_ERROR if it has none), reported; the connection ends. */
export function connectionError(c: H2State, err: unknown): void {
  if (c.dead) return;
  c.opts.onError(err, "session");
  const code = err instanceof H2Error ? err.code : 0x2;
  goaway(c, code);
  c.w.flush();
  c.dead = true;
  c.socket.end();
  // A peer that never reads must not hold the socket.
  setTimeout(() => c.socket.destroy(), 1000).unref();
}

/** Send what is written and end the socket (cut a second later if the peer does not close it). */
export function end(c: H2State): void {
  if (c.dead) return;
  c.w.flush();
  c.dead = true;
  c.socket.end();
  setTimeout(() => c.socket.destroy(), 1000).unref();
}
