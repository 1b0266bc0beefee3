/** One client-initiated HTTP/2 stream, as the connection (connection.ts) keeps it and a call sees it. */
import type { H2Headers } from "./fields.js";
import { DEFAULT_WINDOW } from "./frames.js";

/** What a stream reports to whoever took it (a gRPC call). */
export interface StreamHandler {
  /** A chunk of request DATA (a view into the connection's input: read it before returning or copy). */
  push(chunk: Buffer): void;
  /** The client ended its side (END_STREAM). */
  run(): void;
  /** A long-lived (streaming) call: client resets of its stream are budgeted even once answered. */
  readonly longLived?: boolean;
  /**
   * The stream is gone for the call: answered (even while the client is still sending: the connection
   * then keeps the half-closed stream itself and drops the rest), reset by either side, or its
   * connection ended.
   */
  closed(): void;
}

/** The side of the connection a stream answers and resets through. */
export interface StreamOwner {
  readonly remoteAddress: string | undefined;
  respond(s: H2Stream, headerBlock: Buffer, body: Buffer | undefined, trailerBlock: Buffer | undefined): void;
  reset(s: H2Stream, code: number): void;
  /** A streaming answer: the response HEADERS now; the stream stays open for DATA. */
  openAnswer(s: H2Stream, headerBlock: Buffer): void;
  /** More DATA of an open answer, within the windows; the rest parks. False when some of it parked. */
  write(s: H2Stream, data: Buffer): boolean;
  /** End an open answer with trailers (after whatever is parked). */
  finish(s: H2Stream, trailerBlock: Buffer): void;
  /** The streaming call consumed `n` request bytes (a complete message): their window reopens. */
  consumed(s: H2Stream, n: number): void;
  /** Bytes `s` may still write before the connection's unsent-answer budget would be passed. */
  room(s: H2Stream): number;
}

/** One client-initiated stream. */
export class H2Stream {
  handler: StreamHandler | undefined = undefined;
  /** Our send window on this stream. */
  sendWindow: number;
  /** What the client may still send before our next WINDOW_UPDATE. */
  recvWindow = DEFAULT_WINDOW;
  /** `content-length` bytes of DATA still due from the client; -1 without one (RFC 9113 §8.1.1). */
  contentLeft = -1;
  remoteEnded = false;
  localEnded = false;
  isClosed = false;
  headersSent = false;
  /** DATA waiting for window, and what follows it. */
  pending: Buffer | undefined = undefined;
  pendingEnd = false;
  pendingTrailers: Buffer | undefined = undefined;
  /** In the connection's list of streams waiting for connection window (their own is open). */
  queued = false;
  /** Request bytes received and not yet consumed by the call (the connection's RecvFlow holds them). */
  held = 0;
  /**
   * The connection's deadline tick when the stream opened (its request must arrive in time); -1 once
   * a streaming call took its first message: long-lived, no longer under the request deadline.
   * (No field of its own: a unary stream stays the size it was.)
   */
  openedTick = 0;

  constructor(
    readonly id: number,
    readonly connection: StreamOwner,
    readonly headers: H2Headers,
    sendWindow: number,
  ) {
    this.sendWindow = sendWindow;
  }

  /** Nothing more can be sent on it. */
  get destroyed(): boolean {
    return this.isClosed || this.localEnded;
  }

  get peer(): string | undefined {
    return this.connection.remoteAddress;
  }

  /**
   * Answer: HEADERS with `headerBlock`, then `body` as DATA (if any), then `trailerBlock` as a HEADERS
   * frame that ends the stream; without trailers the last frame sent carries END_STREAM.
   */
  respond(headerBlock: Buffer, body: Buffer | undefined, trailerBlock: Buffer | undefined): void {
    this.connection.respond(this, headerBlock, body, trailerBlock);
  }

  /** Reset the stream (RST_STREAM CANCEL, or `code`). */
  destroy(code = 0x8): void {
    this.connection.reset(this, code);
  }
}
