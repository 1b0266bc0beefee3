/**
 * What the gRPC server (server.ts) and its two HTTP/2 transports (node-transport.ts over node:http2,
 * h2-transport.ts over protocol/h2) share: the stream a transport hands over, the connection view the
 * idle sweep and drain use, and the hooks a transport calls.
 */
import type { CallHeaders, CallStream } from "./call.js";

/** TLS for the gRPC port. Without `clientCa` any client may connect; with it, mTLS is required. */
export interface TlsOptions {
  /** PEM certificate chain of the server. */
  readonly cert: string | Buffer;
  /** PEM private key of the server. */
  readonly key: string | Buffer;
  /** PEM CA bundle: when set, clients must present a certificate it signed (mTLS). */
  readonly clientCa?: string | Buffer;
}

/**
 * The response side of a long-lived (server- or bidirectional-streaming) call: headers once, any
 * number of framed messages, then trailers. Both transports offer it.
 */
export interface StreamWire {
  /** `:status 200`, gRPC content-type; the stream stays open. Idempotent. */
  open(): void;
  /** One framed message; false when the stream's write buffer is over its high-water mark. */
  write(framed: Buffer): boolean;
  /** Bytes written and not yet sent (flow control: the peer reads slowly or not at all). */
  readonly buffered: number;
  /**
   * Bytes that may still be written before the transport's own bound on unsent answers would be
   * passed (the own transport's per-connection budget; unbounded on node:http2, whose stream buffer
   * the call bounds itself).
   */
  readonly room: number;
  /**
   * The call consumed `n` request bytes (a whole message): the transport may let the peer send more
   * (the own transport holds request bytes until then; node:http2 manages its window itself).
   */
  consumed(n: number): void;
  /** End the stream with trailers (or trailers-only when `open` was never called). */
  finish(fields: readonly (readonly [string, string])[]): void;
  /** The connection the stream belongs to (identity only: per-connection stream caps). */
  readonly connection: object;
}

/** A CallStream that can also answer plain HTTP (the 415 to a non-gRPC content-type). */
export interface AcceptStream extends CallStream {
  respondText(status: number, body: string): void;
  /** The response side of a streaming call. */
  streamWire(): StreamWire;
}

/** What a transport feeds an accepted stream's request side into (a unary or a streaming call). */
export interface AcceptedCall {
  /** A chunk of request DATA (a view that may be reused after return: copy what is kept). */
  push(chunk: Buffer): void;
  /** The client ended its side. */
  run(): void;
  /** A long-lived (streaming) call: its stream's client resets are budgeted even once answered. */
  readonly longLived?: boolean;
  /** The stream is gone: answered and closed, reset by either side, or its connection ended. */
  closed(): void;
}

/** What the idle sweep and drain need of a connection, whichever transport carries it. */
export interface Connection {
  /** Grows with the connection's traffic. */
  activity(): number;
  readonly closed: boolean;
  /** GOAWAY; ends once its calls finish. */
  close(): void;
  destroy(): void;
  onClose(listener: () => void): void;
  /** The idle sweep's last look: the activity count, and when it first saw that count. */
  seen?: { count: number; at: number };
}

/** What a transport calls back into the server with. */
export interface TransportHooks {
  /** A new stream's headers checked: its call, or undefined when it was answered (refused) already. */
  readonly accept: (stream: AcceptStream, headers: CallHeaders) => AcceptedCall | undefined;
  /** A new connection, for the idle sweep and drain. */
  readonly addConnection: (c: Connection) => void;
  readonly onError: (err: unknown, where: string) => void;
}
